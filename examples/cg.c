/* cg: malleable Conjugate Gradient (Jacobi-preconditioned) on a row-distributed CSR matrix.
 *
 * A lives in a libmal CSR matrix (nonzeros split by weight); x, r, p and q are dense
 * structures aligned to A's rows, so every rebalance, expansion or release moves them
 * with the matrix. The program calls mal_step() once per iteration; reconfigurations
 * come from MAL_PLAN, e.g.
 *   MAL_PLAN=5:+2,10:w=1:2:1:1,15:-@0 tools/malrun -n 2 build/examples/cg \
 *       --matrix data/matrices/bcsstk13.mtx --check
 *
 * The residual history is bit-identical to a static run, whatever the plan: each row of
 * A p is summed in the row's stored order, the vector updates and the preconditioner
 * (1 / diagonal) are element-wise, and the three dot products per iteration are rounded
 * once from their exact value (support/xsum.h),
 * so no result depends on which process holds which rows. --check proves it against a
 * serial run of the same iterations. --async makes expansions asynchronous
 * (mal_config_t.async): the new processes are spawned and receive the matrix while the
 * old ones go on iterating. */
#include "cli.h"
#include "mal.h"
#include "matrix_input.h"
#include "xsum.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *matrix, *history_file;
    FILE *history_out;    /* the data's stdout when history_file is "-" */
    int64_t iters;
    double tol;
    bool check, plain_dots, async;
} options_t;

static void usage(FILE *out);
static const cli_t cli = {"cg", mal_version, usage};

/* What an iteration reads; refresh() re-reads it after every reconfiguration. */
typedef struct {
    mal_csr_t *A;
    mal_array_t *x, *r, *p, *q;
    int64_t n;
    MPI_Comm comm;
    int rank, size;
    int64_t first, rows;
    int *counts, *displs; /* where each rank's rows of p go in MPI_Allgatherv */
    double *p_full;       /* all of p, for this rank's rows of A p            */
    double *dinv, *z;     /* local rows: 1 / diagonal, preconditioned residual */
} cg_t;

/* Carried to joining processes with mal_register_value. */
typedef struct {
    double rz;            /* r . z, z = r / diagonal                           */
    double *history;      /* ||r|| after each iteration, [0] = initial         */
} carried_t;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "cg: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    return p;
}

static void die_on(mal_status_t st, const char *what)
{
    if (st == MAL_OK)
        return;
    fprintf(stderr, "cg: %s: %s\n", what, mal_error_message());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
}

/* ---- the arithmetic, shared by the distributed and the serial run ------------------ */

static void spmv(const int64_t *rowptr, const mal_colind_t *colind, const double *vals,
                 int64_t rows, const double *p_full, double *q)
{
    for (int64_t i = 0; i < rows; i++) {
        double sum = 0.0;
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            sum += vals[k] * p_full[colind[k]];
        q[i] = sum;
    }
}

static void axpy(double alpha, const double *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
}

/* p = z + beta p */
static void update_direction(const double *z, double beta, double *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = z[i] + beta * p[i];
}

/* z = r / diagonal: the Jacobi preconditioner. */
static void precondition(const double *dinv, const double *r, double *z, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        z[i] = dinv[i] * r[i];
}

/* 1 / A(first + i, first + i), or 1 where the diagonal is missing or zero. */
static void inverse_diagonal(const int64_t *rowptr, const mal_colind_t *colind,
                             const double *vals, int64_t first, int64_t rows, double *dinv)
{
    for (int64_t i = 0; i < rows; i++) {
        dinv[i] = 1.0;
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (colind[k] == first + i && vals[k] != 0.0)
                dinv[i] = 1.0 / vals[k];
    }
}

/* --plain-dots: ordinary floating-point sums, to show what exact rounding buys. */
static bool plain_dots;

static double plain_dot(const double *x, const double *y, int64_t n, MPI_Comm comm)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += x[i] * y[i];
    if (comm != MPI_COMM_NULL)
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    return sum;
}

/* x . y over `comm` (MPI_COMM_NULL: local only), correctly rounded. */
static double dot(const double *x, const double *y, int64_t n, MPI_Comm comm)
{
    if (plain_dots)
        return plain_dot(x, y, n, comm);
    xsum_t acc;
    xsum_init(&acc);
    xsum_add_products(&acc, x, y, n);
    if (comm != MPI_COMM_NULL) {
        xsum_normalize(&acc);
        MPI_Allreduce(MPI_IN_PLACE, acc.word, XSUM_WORDS, MPI_INT64_T, MPI_SUM, comm);
    }
    return xsum_round(&acc);
}

/* ---- the distributed solver --------------------------------------------------------- */

static void refresh(cg_t *c)
{
    c->comm = mal_comm();
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    c->first = mal_csr_first_row(c->A);
    c->rows = mal_csr_local_rows(c->A);
    free(c->counts);
    free(c->displs);
    c->counts = xmalloc((size_t)c->size * sizeof *c->counts);
    c->displs = xmalloc((size_t)c->size * sizeof *c->displs);
    int mine = (int)c->rows;
    MPI_Allgather(&mine, 1, MPI_INT, c->counts, 1, MPI_INT, c->comm);
    for (int r = 0, at = 0; r < c->size; at += c->counts[r], r++)
        c->displs[r] = at;
    free(c->dinv);
    free(c->z);
    c->dinv = xmalloc((size_t)c->rows * sizeof *c->dinv);
    c->z = xmalloc((size_t)c->rows * sizeof *c->z);
    inverse_diagonal(mal_csr_rowptr(c->A), mal_csr_colind(c->A), mal_csr_values(c->A),
                     c->first, c->rows, c->dinv);
}

static double *local(mal_array_t *a)
{
    return mal_local_data(a);
}

/* One iteration: updates k->rz and returns ||r||. */
static double iterate_once(cg_t *c, carried_t *k)
{
    double *x = local(c->x), *r = local(c->r), *p = local(c->p), *q = local(c->q);
    MPI_Allgatherv(p, (int)c->rows, MPI_DOUBLE, c->p_full, c->counts, c->displs, MPI_DOUBLE,
                   c->comm);
    spmv(mal_csr_rowptr(c->A), mal_csr_colind(c->A), mal_csr_values(c->A), c->rows,
         c->p_full, q);
    double alpha = k->rz / dot(p, q, c->rows, c->comm);
    axpy(alpha, p, x, c->rows);
    axpy(-alpha, q, r, c->rows);
    precondition(c->dinv, r, c->z, c->rows);
    double rz_new = dot(r, c->z, c->rows, c->comm);
    update_direction(c->z, rz_new / k->rz, p, c->rows);
    k->rz = rz_new;
    return sqrt(dot(r, r, c->rows, c->comm));
}

/* x = 0, r = b = 1, p = z. */
static void start(cg_t *c, carried_t *k)
{
    double *x = local(c->x), *r = local(c->r), *p = local(c->p);
    for (int64_t i = 0; i < c->rows; i++) {
        x[i] = 0.0;
        r[i] = 1.0;
    }
    precondition(c->dinv, r, p, c->rows);
    k->rz = dot(r, p, c->rows, c->comm);
    k->history[0] = sqrt(dot(r, r, c->rows, c->comm));
}

static bool converged(const carried_t *k, int64_t it, double tol)
{
    return k->rz == 0.0 || k->history[it] <= tol * k->history[0];
}

/* The malleable loop; returns false when this process was released, and sets *done to
 * the iterations completed. */
static bool solve(cg_t *c, carried_t *k, const options_t *o, int64_t *done)
{
    int64_t it = mal_iteration();
    while (it < o->iters && !converged(k, it, o->tol)) {
        double norm = iterate_once(c, k);
        k->history[++it] = norm;
        /* Floating-point operations of this rank's iteration: the monitor's work. */
        mal_set_work(2.0 * (double)mal_csr_local_nnz(c->A) + 13.0 * (double)c->rows);
        mal_status_t st = mal_step();
        if (st == MAL_REMOVED)
            return false;
        if (st < 0 && c->rank == 0)
            fprintf(stderr, "cg: iteration %" PRId64 ": reconfiguration abandoned: %s\n", it,
                    mal_error_message());
        if (st == MAL_RECONFIGURED) {
            refresh(c);
            it = mal_iteration(); /* a process taken back from the pool (MAL_POOL=1)
                                   * resumes where the others are */
        }
    }
    *done = it;
    return true;
}

/* ---- the serial reference ------------------------------------------------------------ */

static double *serial_history(const mi_source_t *src, const options_t *o, int64_t iters)
{
    int64_t n = mi_rows(src), *rowptr;
    int32_t *colind;
    double *vals;
    char err[256];
    if (mi_block(src, 0, n, &rowptr, &colind, &vals, err, sizeof err) != 0) {
        fprintf(stderr, "cg: serial check: %s\n", err);
        return NULL;
    }
    double *x = xmalloc((size_t)n * sizeof *x), *r = xmalloc((size_t)n * sizeof *r);
    double *p = xmalloc((size_t)n * sizeof *p), *q = xmalloc((size_t)n * sizeof *q);
    double *z = xmalloc((size_t)n * sizeof *z), *dinv = xmalloc((size_t)n * sizeof *dinv);
    double *h = xmalloc(((size_t)o->iters + 1) * sizeof *h);
    inverse_diagonal(rowptr, colind, vals, 0, n, dinv);
    for (int64_t i = 0; i < n; i++) {
        x[i] = 0.0;
        r[i] = 1.0;
    }
    precondition(dinv, r, p, n);
    double rz = dot(r, p, n, MPI_COMM_NULL);
    h[0] = sqrt(dot(r, r, n, MPI_COMM_NULL));
    for (int64_t it = 0; it < iters; it++) {
        spmv(rowptr, colind, vals, n, p, q);
        double alpha = rz / dot(p, q, n, MPI_COMM_NULL);
        axpy(alpha, p, x, n);
        axpy(-alpha, q, r, n);
        precondition(dinv, r, z, n);
        double rz_new = dot(r, z, n, MPI_COMM_NULL);
        update_direction(z, rz_new / rz, p, n);
        rz = rz_new;
        h[it + 1] = sqrt(dot(r, r, n, MPI_COMM_NULL));
    }
    free(z);
    free(dinv);
    free(rowptr);
    free(colind);
    free(vals);
    free(x);
    free(r);
    free(p);
    free(q);
    return h;
}

/* Compare every iteration's residual; bit-identity is what the arithmetic promises,
 * 1e-12 relative is what a caller may rely on. */
static bool check_history(const mi_source_t *src, const options_t *o, const double *h,
                          int64_t iters)
{
    double *ref = serial_history(src, o, iters);
    if (ref == NULL)
        return false;
    double worst = 0.0;
    bool identical = memcmp(ref, h, ((size_t)iters + 1) * sizeof *h) == 0;
    for (int64_t i = 0; i <= iters; i++)
        worst = fmax(worst, fabs(h[i] - ref[i]) / fmax(fabs(ref[i]), DBL_MIN));
    bool pass = worst <= 1e-12;
    printf("cg: %s residual history %s the serial run over %" PRId64 " iterations "
           "(max relative difference %.3e)\n", pass ? "PASS" : "FAIL",
           identical ? "bit-identical to" : "differs from", iters, worst);
    free(ref);
    return pass;
}

/* Returns whether the history was written (a message on stderr otherwise). */
static bool write_history(const options_t *o, const double *h, int64_t iters)
{
    FILE *f = cli_open_output(&cli, o->history_file, "w", o->history_out);
    if (f == NULL)
        return false;
    for (int64_t i = 0; i <= iters; i++)
        fprintf(f, "%" PRId64 " %a %.17g\n", i, h[i], h[i]);
    return cli_close_output(&cli, o->history_file, f) == 0;
}

/* ||b - A x|| / ||b|| with b = 1, recomputed from x (not the recurrence). */
static double true_residual(cg_t *c)
{
    double *x = local(c->x), *q = local(c->q);
    MPI_Allgatherv(x, (int)c->rows, MPI_DOUBLE, c->p_full, c->counts, c->displs, MPI_DOUBLE,
                   c->comm);
    spmv(mal_csr_rowptr(c->A), mal_csr_colind(c->A), mal_csr_values(c->A), c->rows,
         c->p_full, q);
    for (int64_t i = 0; i < c->rows; i++)
        q[i] = 1.0 - q[i];
    return sqrt(dot(q, q, c->rows, c->comm) / (double)c->n);
}

static int report(cg_t *c, const mi_source_t *src, const carried_t *k, const options_t *o,
                  int64_t iters, double seconds)
{
    double res = true_residual(c);
    int failed = 0;
    if (c->rank == 0) {
        printf("cg: %s: %" PRId64 " iterations on %d processes at the end, %.3f s, "
               "||r||/||r0|| %.6e, true relative residual %.6e\n",
               mi_describe(src), iters, c->size, seconds, k->history[iters] / k->history[0],
               res);
        if (o->history_file)
            failed = !write_history(o, k->history, iters);
        if (o->check)
            failed |= !check_history(src, o, k->history, iters);
        fflush(stdout);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
    return failed;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: cg [--matrix SPEC] [--iters I] [--tol T] [--check] [--async]\n"
            "          [--history FILE] [--plain-dots]\n"
            "  --matrix   a Matrix Market file, poisson:N or poisson3d:N (default poisson:100)\n"
            "  --iters    iterations at most (default 300, at most 131071)\n"
            "  --tol      stop when ||r|| <= tol ||r0|| (default 0: run every iteration)\n"
            "  --check    rank 0 reruns serially and compares every residual\n"
            "  --history  rank 0 writes 'iteration residual(hex) residual' lines to FILE (-:\n"
            "             to stdout, and every other line to stderr)\n"
            "  --plain-dots  sum dot products in floating point (partition-dependent), to\n"
            "             compare with the default exactly rounded ones\n"
            "  --async    expand in the background while iterating (MPI_THREAD_MULTIPLE)\n"
            CLI_STANDARD_USAGE
            "  The reconfiguration plan comes from MAL_PLAN, e.g. 5:+2,10:-1,15:w=1:2:1\n"
            "Exit status: 0, 1 when the run, --history or --check fails, 2 for a usage "
            "error.\n");
}

/* Every process parses, before MPI starts (a spawned one gets the same arguments). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.matrix = "poisson:100", .iters = 300};
    static const struct option longopts[] = {
        {"matrix", required_argument, NULL, 'm'}, {"iters", required_argument, NULL, 'i'},
        {"tol", required_argument, NULL, 't'},    {"history", required_argument, NULL, 'H'},
        {"check", no_argument, NULL, 'c'},        {"plain-dots", no_argument, NULL, 'p'},
        {"async", no_argument, NULL, 'a'},        CLI_STANDARD_OPTIONS,
        {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        switch (c) {
        case 'm':
            o->matrix = optarg;
            break;
        case 'i': /* the history is a carried value: at most 1 MiB */
            o->iters = cli_integer(&cli, "--iters", optarg, 0, (1 << 17) - 2);
            break;
        case 't':
            o->tol = cli_number(&cli, "--tol", optarg, 0.0, HUGE_VAL);
            break;
        case 'H':
            o->history_file = optarg;
            break;
        case 'c':
            o->check = true;
            break;
        case 'p':
            o->plain_dots = true;
            break;
        case 'a':
            o->async = true;
            break;
        }
    }
    if (cli_is_stdout(o->history_file))
        o->history_out = cli_take_stdout(&cli);
}

static mi_source_t *open_matrix(const char *spec)
{
    mi_source_t *src = NULL;
    char err[512];
    if (mi_open(spec, &src, err, sizeof err) != 0) {
        fprintf(stderr, "cg: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    if (mi_rows(src) != mi_cols(src) || mi_rows(src) > INT_MAX) {
        fprintf(stderr, "cg: %s: CG needs a square matrix of at most %d rows\n",
                mi_describe(src), INT_MAX);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    return src;
}

/* Initial processes give their even block of rows; joiners receive theirs. */
static void load_matrix(cg_t *c, const mi_source_t *src)
{
    int64_t *rowptr;
    int32_t *colind;
    double *vals;
    char err[256];
    int64_t first = mal_csr_first_row(c->A), count = mal_csr_local_rows(c->A);
    if (mi_block(src, first, count, &rowptr, &colind, &vals, err, sizeof err) != 0) {
        fprintf(stderr, "cg: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    die_on(mal_csr_set_rows(c->A, count, rowptr[count], rowptr, colind, vals),
           "mal_csr_set_rows");
    free(rowptr);
    free(colind);
    free(vals);
}

static void allocate(cg_t *c, const mi_source_t *src)
{
    c->n = mi_rows(src);
    die_on(mal_alloc_csr("A", c->n, c->n, MPI_DOUBLE, &c->A), "mal_alloc_csr(A)");
    if (mal_is_initial_process())
        load_matrix(c, src);
    const char *names[4] = {"x", "r", "p", "q"};
    mal_array_t **vecs[4] = {&c->x, &c->r, &c->p, &c->q};
    for (int i = 0; i < 4; i++)
        die_on(mal_alloc_array_aligned(names[i], MPI_DOUBLE, 1, c->A, vecs[i]),
               "mal_alloc_array_aligned");
    c->p_full = xmalloc((size_t)c->n * sizeof *c->p_full);
}

/* --async's background thread makes MPI calls: it needs MPI_THREAD_MULTIPLE (without
 * it libmal expands synchronously, with a notice). Read before MPI starts. */
static void start_mpi(const options_t *o, int *argc, char ***argv)
{
    if (!o->async) {
        MPI_Init(argc, argv);
        return;
    }
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
}

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);
    start_mpi(&o, &argc, &argv);
    plain_dots = o.plain_dots;
    mal_config_t cfg;
    mal_config_init(&cfg);
    if (o.async)
        cfg.async = 1; /* else MAL_ASYNC from the environment decides */
    die_on(mal_init(MPI_COMM_WORLD, &cfg), "mal_init"); /* a spawned process joins here */
    mi_source_t *src = open_matrix(o.matrix);
    cg_t c = {0};
    allocate(&c, src);
    refresh(&c);
    carried_t k = {.history = xmalloc(((size_t)o.iters + 1) * sizeof *k.history)};
    die_on(mal_register_value("rz", &k.rz, sizeof k.rz), "mal_register_value(rz)");
    die_on(mal_register_value("history", k.history, ((size_t)o.iters + 1) * sizeof *k.history),
           "mal_register_value(history)");
    if (mal_is_initial_process())
        start(&c, &k);
    double t0 = MPI_Wtime();
    int64_t iters = 0;
    int status = 0;
    if (solve(&c, &k, &o, &iters))
        status = report(&c, src, &k, &o, iters, MPI_Wtime() - t0);
    free(c.counts);
    free(c.displs);
    free(c.p_full);
    free(c.dinv);
    free(c.z);
    free(k.history);
    mi_close(src);
    mal_finalize();
    MPI_Finalize();
    return status;
}
