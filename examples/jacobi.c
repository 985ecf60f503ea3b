/* jacobi: the malleable Jacobi example, used as a benchmark of mal_step overhead.
 *
 * Solves A x = b with a dense, diagonally dominant A held in block rows (mal_alloc_window)
 * and x replicated on every rank. The program only calls mal_step() once per iteration:
 * the reconfigurations come from the plan in MAL_PLAN (mal_config_t.plan), e.g.
 *   MAL_PLAN=5:+2,10:-1,15:w=1:2:1 tools/malrun -n 2 build/examples/jacobi --check
 *
 * Every row update sums in ascending column order, so x is bit-identical whatever the
 * partition and however often it changed: --check proves it against a serial run.
 * --async makes expansions asynchronous (mal_config_t.async): new processes are spawned
 * and receive A and b, which no iteration writes (MAL_READ_MOSTLY), while the old ones
 * go on iterating; x is the same as in a static run. */
/* nanosleep and access, for --resume-on */
#define _POSIX_C_SOURCE 200809L

#include "checksum.h"
#include "cli.h"
#include "mal.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int64_t n, iters;
    bool check, quiet, async;
    const char *times;     /* rank 0 writes "iteration,seconds,procs" lines here */
    FILE *times_out;       /* the data's stdout when times is "-"                */
    const char *mark;      /* rank 0 creates this file when mark_at iterations are done */
    int64_t mark_at;
    const char *resume_on; /* ... and then waits until this file exists              */
    bool times_init;       /* --times starts with a line 0: mal_init's seconds       */
    double init_seconds;   /* what mal_init took on this process                     */
} options_t;

static void usage(FILE *out);
static const cli_t cli = {"jacobi", mal_version, usage};

/* What a sweep reads. Everything but the handles changes at a reconfiguration (new
 * communicator, new windows, new rows), so refresh() re-reads it after each one. */
typedef struct {
    mal_array_t *A, *b, *x;
    int64_t n;
    MPI_Comm comm;
    int rank, size;
    int64_t first, rows;
    const double *a_rows, *b_rows;
    double *x_all;
    int *counts, *displs; /* where each rank's rows of x go in MPI_Allgatherv */
    double *x_new;        /* this rank's rows of the next x */
} jacobi_t;

/* Per-process sums; the mean over plain steps is mal_step's steady-state overhead,
 * the mean over all steps includes the reconfigurations this process took part in. */
typedef struct {
    double sweep, step, plain_step;
    int64_t sweeps, steps, plain_steps;
} timing_t;

static void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes > 0 ? bytes : 1);
    if (q == NULL) {
        fprintf(stderr, "jacobi: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    return q;
}

static void die_on(mal_status_t st, const char *what)
{
    if (st == MAL_OK)
        return;
    fprintf(stderr, "jacobi: %s: %s\n", what, mal_error_message());
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
}

static double matrix_entry(int64_t i, int64_t j, int64_t n)
{
    if (i == j)
        return (double)n;
    return 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
}

static double rhs_entry(int64_t i)
{
    return 1.0 + (double)(i % 7);
}

/* The one row update, shared by the distributed sweep and the serial check so both
 * perform the same operations in the same order. */
static double updated_x(const double *a_row, double b_i, const double *x, int64_t i,
                        int64_t n)
{
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++)
        if (j != i)
            sum += a_row[j] * x[j];
    return (b_i - sum) / a_row[i];
}

/* Generated from global indices, so the data do not depend on the initial partition. */
static void fill_initial(jacobi_t *j)
{
    double *a = mal_local_data(j->A), *b = mal_local_data(j->b), *x = mal_local_data(j->x);
    int64_t first = mal_first_row(j->A), rows = mal_local_rows(j->A);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < j->n; c++)
            a[r * j->n + c] = matrix_entry(first + r, c, j->n);
        b[r] = rhs_entry(first + r);
    }
    for (int64_t i = 0; i < j->n; i++)
        x[i] = 0.0;
}

static void refresh(jacobi_t *j)
{
    j->comm = mal_comm();
    MPI_Comm_rank(j->comm, &j->rank);
    MPI_Comm_size(j->comm, &j->size);
    j->first = mal_first_row(j->A);
    j->rows = mal_local_rows(j->A);
    /* A and b share row count and weights, so they must share the block layout. */
    if (mal_first_row(j->b) != j->first || mal_local_rows(j->b) != j->rows) {
        fprintf(stderr, "jacobi: rank %d: A holds rows %" PRId64 "+%" PRId64
                        " but b holds %" PRId64 "+%" PRId64 "\n",
                j->rank, j->first, j->rows, mal_first_row(j->b), mal_local_rows(j->b));
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    j->a_rows = mal_local_data(j->A);
    j->b_rows = mal_local_data(j->b);
    j->x_all = mal_local_data(j->x);
    j->counts = xrealloc(j->counts, (size_t)j->size * sizeof *j->counts);
    j->displs = xrealloc(j->displs, (size_t)j->size * sizeof *j->displs);
    j->x_new = xrealloc(j->x_new, (size_t)j->rows * sizeof *j->x_new);
    int mine = (int)j->rows;
    MPI_Allgather(&mine, 1, MPI_INT, j->counts, 1, MPI_INT, j->comm);
    for (int r = 0, at = 0; r < j->size; at += j->counts[r], r++)
        j->displs[r] = at;
}

static void sweep(jacobi_t *j)
{
    for (int64_t r = 0; r < j->rows; r++)
        j->x_new[r] =
            updated_x(j->a_rows + r * j->n, j->b_rows[r], j->x_all, j->first + r, j->n);
    MPI_Allgatherv(j->x_new, (int)j->rows, MPI_DOUBLE, j->x_all, j->counts, j->displs,
                   MPI_DOUBLE, j->comm);
}

static void account(timing_t *t, double sweep_s, double step_s, mal_status_t st)
{
    t->sweep += sweep_s;
    t->sweeps++;
    t->step += step_s;
    t->steps++;
    if (st == MAL_CONTINUE) {
        t->plain_step += step_s;
        t->plain_steps++;
    }
}

/* The malleable loop. Returns false when this process was released. */
/* --resume-on: the experiment's change (a load started, a file rewritten) is in place
 * before the next iteration; at most 60 s, then the run goes on with a notice. */
static void wait_for(const char *path)
{
    if (path == NULL)
        return;
    for (int ms = 0; access(path, F_OK) != 0; ms++) {
        if (ms == 60000) {
            fprintf(stderr, "jacobi: %s did not appear within 60 s; going on\n", path);
            return;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* Rank 0's record of each iteration, sweep and step together (--times), and the
 * marker an outside experiment waits for (--mark): the loaded-core benchmark starts its
 * load when the marker appears. */
static void record(const jacobi_t *j, const options_t *o, FILE *times, int64_t it,
                   double seconds)
{
    if (j->rank != 0)
        return;
    if (times != NULL)
        fprintf(times, "%" PRId64 ",%.9f,%d\n", it + 1, seconds, j->size);
    if (o->mark != NULL && it + 1 == o->mark_at) {
        FILE *m = fopen(o->mark, "w");
        if (m != NULL)
            fclose(m);
        wait_for(o->resume_on);
    }
}

/* Rank 0's --times file; false when it cannot be written (the run fails at once). */
static bool open_times(const options_t *o, FILE **times)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *times = NULL;
    if (o->times == NULL || rank != 0 || !mal_is_initial_process())
        return true;
    *times = cli_open_output(&cli, o->times, "w", o->times_out);
    if (*times != NULL && o->times_init) {
        int size;
        MPI_Comm_size(mal_comm(), &size);
        fprintf(*times, "0,%.9f,%d\n", o->init_seconds, size);
    }
    return *times != NULL;
}

static bool iterate(jacobi_t *j, const options_t *o, timing_t *t)
{
    FILE *times;
    if (!open_times(o, &times))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    bool kept = true;
    for (int64_t it = mal_iteration(); it < o->iters && kept; it++) {
        double t0 = MPI_Wtime();
        sweep(j);
        mal_set_work(2.0 * (double)j->rows * (double)j->n); /* the sweep's flops */
        double t1 = MPI_Wtime();
        mal_status_t st = mal_step();
        account(t, t1 - t0, MPI_Wtime() - t1, st);
        record(j, o, times, it, MPI_Wtime() - t0);
        if (st == MAL_REMOVED) {
            kept = false;
            break;
        }
        if (st < 0) {
            /* An abandoned reconfiguration left processes, layout and data as they
             * were: report it and keep iterating. */
            if (j->rank == 0)
                fprintf(stderr, "jacobi: iteration %" PRId64 ": reconfiguration abandoned: %s\n",
                        it + 1, mal_error_message());
            continue;
        }
        if (st == MAL_RECONFIGURED) {
            refresh(j);
            it = mal_iteration() - 1; /* a process taken back from the pool (MAL_POOL=1)
                                       * resumes where the others are */
        }
    }
    if (times != NULL && cli_close_output(&cli, o->times, times) != 0)
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    return kept;
}

static double residual_inf(const jacobi_t *j)
{
    double worst = 0.0;
    for (int64_t r = 0; r < j->rows; r++) {
        const double *a_row = j->a_rows + r * j->n;
        double ax = 0.0;
        for (int64_t c = 0; c < j->n; c++)
            ax += a_row[c] * j->x_all[c];
        worst = fmax(worst, fabs(j->b_rows[r] - ax));
    }
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, j->comm);
    return worst;
}

/* The same iterations on one process, from freshly generated data. */
static double *serial_solution(const options_t *o)
{
    int64_t n = o->n;
    double *a = xrealloc(NULL, (size_t)n * (size_t)n * sizeof *a);
    double *b = xrealloc(NULL, (size_t)n * sizeof *b);
    double *x = xrealloc(NULL, (size_t)n * sizeof *x);
    double *x_new = xrealloc(NULL, (size_t)n * sizeof *x_new);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t c = 0; c < n; c++)
            a[i * n + c] = matrix_entry(i, c, n);
        b[i] = rhs_entry(i);
        x[i] = 0.0;
    }
    for (int64_t it = 0; it < o->iters; it++) {
        for (int64_t i = 0; i < n; i++)
            x_new[i] = updated_x(a + i * n, b[i], x, i, n);
        memcpy(x, x_new, (size_t)n * sizeof *x);
    }
    free(a);
    free(b);
    free(x_new);
    return x;
}

static bool check_against_serial(const jacobi_t *j, const options_t *o)
{
    double *expected = serial_solution(o);
    size_t bytes = (size_t)o->n * sizeof *expected;
    bool pass = memcmp(expected, j->x_all, bytes) == 0;
    if (pass) {
        printf("jacobi: PASS x is bit-identical to the serial recomputation "
               "(n=%" PRId64 ", %" PRId64 " iterations)\n", o->n, o->iters);
    } else {
        int64_t differ = 0;
        double worst = 0.0;
        for (int64_t i = 0; i < o->n; i++)
            if (memcmp(&expected[i], &j->x_all[i], sizeof *expected) != 0) {
                differ++;
                worst = fmax(worst, fabs(expected[i] - j->x_all[i]));
            }
        printf("jacobi: FAIL %" PRId64 " of %" PRId64 " entries of x differ from the serial "
               "recomputation, max |diff| %.3e\n", differ, o->n, worst);
    }
    free(expected);
    return pass;
}

static void print_timing(const timing_t *t)
{
    if (t->sweeps == 0)
        return;
    double sweep = t->sweep / (double)t->sweeps, step = t->step / (double)t->steps;
    double plain = t->plain_steps ? t->plain_step / (double)t->plain_steps : 0.0;
    printf("jacobi: rank 0 over its %" PRId64 " iterations: mean sweep %.6f s, mean mal_step "
           "%.6f s with reconfigurations (%.1f%% of the iteration), %.3e s without (%.4f%%)\n",
           t->sweeps, sweep, step, 100.0 * step / (sweep + step), plain,
           100.0 * plain / (sweep + plain));
}

/* Final line, optional check; the verdict is shared so every remaining rank exits
 * with the same status. Returns the exit status. */
static int report(const jacobi_t *j, const options_t *o, const timing_t *t)
{
    double residual = residual_inf(j);
    int failed = 0;
    if (j->rank == 0) {
        uint64_t hash = checksum_fnv1a64(j->x_all, (size_t)o->n * sizeof *j->x_all);
        printf("jacobi: procs %d iterations %" PRId64 " n %" PRId64 " hash %016" PRIx64
               " residual %.6e\n",
               j->size, mal_iteration(), o->n, hash, residual);
        if (!o->quiet)
            print_timing(t);
        if (o->check)
            failed = !check_against_serial(j, o);
        fflush(stdout);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, j->comm);
    return failed;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: jacobi [--n N] [--iters I] [--check] [--quiet] [--async] [--times FILE]\n"
            "              [--mark FILE --mark-at I [--resume-on FILE]] [--times-init]\n"
            "  --n      matrix order (default 1536)\n"
            "  --iters  Jacobi iterations (default 40)\n"
            "  --check  rank 0 recomputes serially and compares x bit for bit\n"
            "  --quiet  no timing line\n"
            "  --async  expand in the background while iterating (MPI_THREAD_MULTIPLE)\n"
            "  --times  rank 0 writes iteration,seconds,procs per iteration to FILE (-: to\n"
            "           stdout, and every other line to stderr)\n"
            "  --mark   rank 0 creates FILE once --mark-at iterations are done\n"
            "  --resume-on  ... and then waits until FILE exists (at most 60 s)\n"
            "  --times-init  --times starts with 0,seconds,procs: what mal_init took\n"
            CLI_STANDARD_USAGE
            "  The reconfiguration plan comes from MAL_PLAN, e.g. 5:+2,10:-1,15:w=1:2:1\n"
            "Exit status: 0, 1 when the run or --check fails, 2 for a usage error.\n");
}

/* Every process parses, before MPI starts (a spawned one gets the same arguments). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.n = 1536, .iters = 40, .check = false, .quiet = false};
    static const struct option longopts[] = {
        {"n", required_argument, NULL, 'n'},        {"iters", required_argument, NULL, 'i'},
        {"check", no_argument, NULL, 'c'},          {"quiet", no_argument, NULL, 'q'},
        {"async", no_argument, NULL, 'a'},          {"times", required_argument, NULL, 't'},
        {"mark", required_argument, NULL, 'm'},     {"mark-at", required_argument, NULL, 'M'},
        {"resume-on", required_argument, NULL, 'R'}, {"times-init", no_argument, NULL, 'I'},
        CLI_STANDARD_OPTIONS,                       {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        switch (c) {
        case 'n': /* row counts travel as int in MPI_Allgatherv */
            o->n = cli_integer(&cli, "--n", optarg, 1, INT_MAX);
            break;
        case 'i':
            o->iters = cli_integer(&cli, "--iters", optarg, 0, INT64_MAX);
            break;
        case 'c':
            o->check = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'a':
            o->async = true;
            break;
        case 't':
            o->times = optarg;
            break;
        case 'm':
            o->mark = optarg;
            break;
        case 'M':
            o->mark_at = cli_integer(&cli, "--mark-at", optarg, 0, INT64_MAX);
            break;
        case 'R':
            o->resume_on = optarg;
            break;
        case 'I':
            o->times_init = true;
            break;
        }
    }
    if (cli_is_stdout(o->times))
        o->times_out = cli_take_stdout(&cli);
}

/* A and b are written once, before the first iteration: with --async an expansion
 * moves them in the background (MAL_READ_MOSTLY). x changes every iteration. */
static void allocate(jacobi_t *j, bool async)
{
    mal_distribution_t fixed =
        async ? (mal_distribution_t)(MAL_BLOCK | MAL_READ_MOSTLY) : MAL_BLOCK;
    die_on(mal_alloc_window("A", MPI_DOUBLE, j->n, j->n, fixed, &j->A),
           "mal_alloc_window(A)");
    die_on(mal_alloc_window("b", MPI_DOUBLE, j->n, 1, fixed, &j->b),
           "mal_alloc_window(b)");
    die_on(mal_alloc_window("x", MPI_DOUBLE, j->n, 1, MAL_REPLICATED, &j->x),
           "mal_alloc_window(x)");
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
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.iterations = o.iters; /* the policy's objective needs the run's length */
    if (o.async)
        cfg.async = 1; /* else MAL_ASYNC from the environment decides */
    double t0 = MPI_Wtime();
    die_on(mal_init(MPI_COMM_WORLD, &cfg), "mal_init"); /* a spawned process joins here */
    o.init_seconds = MPI_Wtime() - t0;
    jacobi_t j = {.n = o.n};
    allocate(&j, o.async);
    if (mal_is_initial_process()) /* joiners found their rows already in the windows */
        fill_initial(&j);
    refresh(&j);
    timing_t t = {0};
    int status = 0;
    if (iterate(&j, &o, &t))
        status = report(&j, &o, &t);
    free(j.counts);
    free(j.displs);
    free(j.x_new);
    mal_finalize();
    MPI_Finalize();
    return status;
}
