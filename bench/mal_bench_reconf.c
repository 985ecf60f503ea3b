/* mal_bench_reconf: what an expansion (and the shrink back) costs the application end
 * to end, through the real mal_step path, each measurement in fresh processes: the
 * driver (run directly, not under mpiexec) launches this program again per method and
 * repetition through $MAL_LAUNCHER.
 *
 * libmal methods run a plan "1:+K,2:-K" (or "1:-K" when shrinking) over a dense block
 * structure (or a CSR matrix, --sparse) and report mal_last_reconfig()'s figures.
 * mam-baseline is the path of a malleability library without windows (MaM), written
 * here with MPI calls only: MPI_Comm_spawn over the old processes + MPI_Intercomm_merge,
 * then MPI_Alltoallv from the existing buffers into freshly allocated ones; the shrink
 * back moves the data home the same way, then the spawned processes disconnect.
 * Every row is checked after every reconfiguration. */
#define _POSIX_C_SOURCE 200809L
#include "bench_launch.h"
#include "mal.h"
#include "matrix_input.h"
#include "plain_redist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { M_RMA, M_RMA_GET, M_A2AV, M_P2P, M_MAM, NMETHODS };
static const char *method_names[NMETHODS] = {"rma", "rma-get", "alltoallv", "p2p",
                                             "mam-baseline"};
static const mal_redist_t method_redist[NMETHODS] = {
    MAL_REDIST_RMA, MAL_REDIST_RMA_GET, MAL_REDIST_ALLTOALLV, MAL_REDIST_P2P,
    MAL_REDIST_ALLTOALLV};

typedef struct {
    long long size;
    int from, to;
    const char *sparse;
    int method;          /* index, or -1 for all */
    int reps;
    const char *csv, *png;
    bool batched;
    const char *run;     /* --run FILE: one measurement (internal)  */
} options_t;

/* ---- data: a dense block structure of doubles, or a CSR matrix ------------------ */

static double dense_value(long long g) { return (double)g * 4.0 + 1.0; }
static double sparse_value(long long g, long long k) { return (double)(g * 64 + (k & 63)); }

/* The parts of the data as the baseline holds them: one array of doubles, or a
 * matrix's row ends (global nnz offsets), column indices and values. */
typedef struct {
    int n;
    long long esz[3];
    long long *b[3];   /* current bounds over the communicator in use */
    char *cur[3];
    mi_source_t *src;
} plain_t;

static int check(mal_status_t st, const char *what)
{
    if (st != MAL_OK)
        fprintf(stderr, "mal_bench_reconf: %s: %s\n", what, mal_error_message());
    return st != MAL_OK;
}

static void die(const char *what)
{
    fprintf(stderr, "mal_bench_reconf: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static mi_source_t *open_source(const char *spec)
{
    mi_source_t *src = NULL;
    char err[512];
    if (spec != NULL && mi_open(spec, &src, err, sizeof err) != 0)
        die(err);
    return src;
}

/* ---- libmal ------------------------------------------------------------------- */

typedef struct {
    mal_array_t *dense;
    mal_csr_t *csr;
    mi_source_t *src;
    int32_t *row;
} mal_data_t;

static void libmal_alloc(const options_t *o, mal_data_t *d)
{
    d->src = open_source(o->sparse);
    if (d->src == NULL) {
        if (check(mal_alloc_window("data", MPI_DOUBLE, o->size / 8, 1, MAL_BLOCK, &d->dense),
                  "mal_alloc_window"))
            MPI_Abort(MPI_COMM_WORLD, 2);
        if (mal_is_initial_process()) {
            double *v = mal_local_data(d->dense);
            for (long long r = 0; r < mal_local_rows(d->dense); r++)
                v[r] = dense_value(mal_first_row(d->dense) + r);
        }
        return;
    }
    d->row = malloc(((size_t)mi_max_row_nnz(d->src) + 1) * sizeof *d->row);
    if (check(mal_alloc_csr("data", mi_rows(d->src), mi_cols(d->src), MPI_DOUBLE, &d->csr),
              "mal_alloc_csr"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (!mal_is_initial_process())
        return;
    int64_t first = mal_csr_first_row(d->csr), count = mal_csr_local_rows(d->csr), *rp;
    int32_t *ci;
    double *v;
    char err[512];
    if (mi_block(d->src, first, count, &rp, &ci, &v, err, sizeof err) != 0)
        die(err);
    for (int64_t r = 0; r < count; r++)
        for (int64_t k = rp[r]; k < rp[r + 1]; k++)
            v[k] = sparse_value(first + r, k - rp[r]);
    if (check(mal_csr_set_rows(d->csr, count, rp[count], rp, ci, v), "mal_csr_set_rows"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    free(rp);
    free(ci);
    free(v);
}

static long long libmal_bad(const mal_data_t *d)
{
    long long bad = 0;
    if (d->dense != NULL) {
        const double *v = mal_local_data(d->dense);
        for (long long r = 0; r < mal_local_rows(d->dense); r++)
            bad += v[r] != dense_value(mal_first_row(d->dense) + r);
        return bad;
    }
    const int64_t *rp = mal_csr_rowptr(d->csr);
    const mal_colind_t *c = mal_csr_colind(d->csr);
    const double *v = mal_csr_values(d->csr);
    long long first = mal_csr_first_row(d->csr);
    for (long long r = 0; r < mal_csr_local_rows(d->csr); r++) {
        int64_t len = mi_row(d->src, first + r, d->row, NULL);
        bad += len != rp[r + 1] - rp[r];
        for (int64_t k = 0; k < len && len == rp[r + 1] - rp[r]; k++)
            bad += c[rp[r] + k] != d->row[k] || v[rp[r] + k] != sparse_value(first + r, k);
    }
    return bad;
}

/* The machine's memcpy bandwidth, the physical bound of a move: every initial process
 * copies `share` bytes at once between buffers touched beforehand; the best of three
 * rounds, in bytes per second over all of them. Measured before any reconfiguration,
 * while the processes are no more than the cores (afterwards a time-shared copy would
 * measure the oversubscription, not the memory). Collective over MPI_COMM_WORLD. */
static double copy_rate(long long share)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *src = malloc((size_t)share + 1), *dst = malloc((size_t)share + 1);
    if (src == NULL || dst == NULL)
        die("no memory for the memcpy bound");
    memset(src, 1, (size_t)share + 1);
    memset(dst, 2, (size_t)share + 1);
    __asm__ volatile("" : : "r"(src), "r"(dst) : "memory"); /* both touched before timing */
    double best = INFINITY;
    for (int round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        memcpy(dst, src, (size_t)share);
        __asm__ volatile("" : : "r"(dst) : "memory"); /* the copy must happen */
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        best = t < best ? t : best;
    }
    free(src);
    free(dst);
    return (double)share * size / best;
}

/* Set by the initial processes before anything moves; the others write no figures. */
static double machine_copy_rate;

static void write_line(const char *file, const char *action, int from, int to, int method,
                       long long bytes, double spawn, double windows, double redist,
                       double total, long long bad)
{
    FILE *f = fopen(file, "a");
    if (f == NULL)
        die("cannot write the result file");
    fprintf(f, "%s,%d,%d,%s,%lld,%.6f,%.6f,%.6f,%.6f,%lld,%.6f\n", action, from, to,
            method_names[method], bytes, spawn, windows, redist, total, bad,
            machine_copy_rate > 0 ? (double)bytes / machine_copy_rate : 0.0);
    fclose(f);
}

/* Every process of the new set checks its rows; rank 0 writes the figures. */
static int after_reconfig(const options_t *o, const mal_data_t *d)
{
    long long bad = libmal_bad(d);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, mal_comm());
    mal_reconfig_stats_t s;
    mal_last_reconfig(&s);
    int r;
    MPI_Comm_rank(mal_comm(), &r);
    if (r == 0)
        write_line(o->run, s.action == MAL_ACTION_EXPAND ? "expand" : "shrink",
                   s.procs_before, s.procs_after, o->method, (long long)s.bytes_moved,
                   s.process_seconds, s.window_seconds, s.redist_seconds, s.total_seconds,
                   bad);
    return bad != 0;
}

static int libmal_run(const options_t *o)
{
    int k = abs(o->to - o->from);
    char plan[64];
    if (o->to > o->from)
        snprintf(plan, sizeof plan, "1:+%d%s,2:-%d", k, o->batched ? "b" : "p", k);
    else
        snprintf(plan, sizeof plan, "1:-%d", k);
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.redist = method_redist[o->method];
    cfg.plan = plan;
    cfg.summary = false;
    if (check(mal_init(MPI_COMM_WORLD, &cfg), "mal_init"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (mal_is_initial_process())
        machine_copy_rate = copy_rate(o->size / o->from);
    mal_data_t d = {0};
    libmal_alloc(o, &d);
    /* A joiner's mal_init was the parents' MAL_RECONFIGURED: check with them. */
    int failed = mal_is_initial_process() ? 0 : after_reconfig(o, &d);
    for (int64_t it = mal_iteration(); it < 3 && !failed; it++) {
        mal_status_t st = mal_step();
        if (st == MAL_REMOVED)
            break;
        failed = st < 0 || (st == MAL_RECONFIGURED && after_reconfig(o, &d));
    }
    free(d.row);
    mi_close(d.src);
    mal_finalize();
    MPI_Finalize();
    return failed;
}

/* ---- the MaM-style baseline, plain MPI ------------------------------------------ */

/* Even layout of every part over the first `parts` of `size` ranks (the rest empty). */
static void plain_layout(const options_t *o, plain_t *pl, int parts, int size,
                         long long *out[3])
{
    double *w = calloc((size_t)size, sizeof *w);
    for (int r = 0; r < parts; r++)
        w[r] = 1.0;
    for (int k = 0; k < pl->n; k++)
        out[k] = malloc(((size_t)size + 1) * sizeof(long long));
    if (pl->src == NULL) {
        plain_bounds(w, size, o->size / 8, out[0]);
    } else {
        plain_nnz_bounds(pl->src, w, size, out[0], out[1]);
        memcpy(out[2], out[1], ((size_t)size + 1) * sizeof(long long));
    }
    free(w);
}

static long long part_bytes(const plain_t *pl, int k, long long *const b[3], int me)
{
    return (b[k][me + 1] - b[k][me]) * pl->esz[k];
}

/* The initial data, malloc'd and written (untimed: the application had it). */
static void plain_alloc(plain_t *pl, int me)
{
    for (int k = 0; k < pl->n; k++) {
        long long bytes = part_bytes(pl, k, pl->b, me);
        pl->cur[k] = malloc(bytes > 0 ? (size_t)bytes : 1);
        memset(pl->cur[k], 0, bytes > 0 ? (size_t)bytes : 1);
    }
    if (pl->src == NULL) {
        double *v = (double *)pl->cur[0];
        for (long long r = pl->b[0][me]; r < pl->b[0][me + 1]; r++)
            v[r - pl->b[0][me]] = dense_value(r);
        return;
    }
    int64_t *ends = (int64_t *)pl->cur[0];
    int32_t *cols = (int32_t *)pl->cur[1];
    double *vals = (double *)pl->cur[2];
    long long z = pl->b[1][me];
    for (long long r = pl->b[0][me]; r < pl->b[0][me + 1]; r++) {
        int64_t len = mi_row(pl->src, r, cols + (z - pl->b[1][me]), NULL);
        for (int64_t k = 0; k < len; k++)
            vals[z - pl->b[1][me] + k] = sparse_value(r, k);
        z += len;
        ends[r - pl->b[0][me]] = z;
    }
}

static long long plain_bad(const plain_t *pl, int me, int32_t *row)
{
    long long bad = 0;
    if (pl->src == NULL) {
        const double *v = (const double *)pl->cur[0];
        for (long long r = pl->b[0][me]; r < pl->b[0][me + 1]; r++)
            bad += v[r - pl->b[0][me]] != dense_value(r);
        return bad;
    }
    const int64_t *ends = (const int64_t *)pl->cur[0];
    const int32_t *cols = (const int32_t *)pl->cur[1];
    const double *vals = (const double *)pl->cur[2];
    long long z = pl->b[1][me];
    for (long long r = pl->b[0][me]; r < pl->b[0][me + 1]; r++) {
        int64_t len = mi_row(pl->src, r, row, NULL);
        bool ok = ends[r - pl->b[0][me]] == z + len;
        bad += !ok;
        for (int64_t k = 0; k < len && ok; k++)
            bad += cols[z - pl->b[1][me] + k] != row[k] ||
                   vals[z - pl->b[1][me] + k] != sparse_value(r, k);
        z += len;
    }
    return bad;
}

/* Move every part to the layout `nb` over `comm`: new buffers, MPI_Alltoallv, the old
 * ones freed. Returns the bytes moved over all ranks. */
static long long plain_move(plain_t *pl, MPI_Comm comm, long long *nb[3])
{
    int me;
    MPI_Comm_rank(comm, &me);
    long long in = 0;
    for (int k = 0; k < pl->n; k++) {
        long long bytes = part_bytes(pl, k, nb, me);
        char *dst = malloc(bytes > 0 ? (size_t)bytes : 1);
        in += plain_alltoallv(comm, pl->b[k], nb[k], pl->esz[k], pl->cur[k], dst);
        free(pl->cur[k]);
        free(pl->b[k]);
        pl->cur[k] = dst;
        pl->b[k] = nb[k];
    }
    MPI_Allreduce(MPI_IN_PLACE, &in, 1, MPI_LONG_LONG, MPI_SUM, comm);
    return in;
}

static void plain_init(const options_t *o, plain_t *pl)
{
    pl->src = open_source(o->sparse);
    pl->n = pl->src ? 3 : 1;
    pl->esz[0] = 8;
    pl->esz[1] = 4;
    pl->esz[2] = 8;
}

static void plain_free(plain_t *pl)
{
    for (int k = 0; k < pl->n; k++) {
        free(pl->cur[k]);
        free(pl->b[k]);
    }
    mi_close(pl->src);
}

static double max_in(MPI_Comm comm, double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    return t;
}

static long long bad_in(MPI_Comm comm, const plain_t *pl, int32_t *row)
{
    int me;
    MPI_Comm_rank(comm, &me);
    long long bad = plain_bad(pl, me, row);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, comm);
    return bad;
}

/* Expansion then the shrink back, on both sides (the children enter with `parent`). */
static int mam_grow_and_back(const options_t *o, plain_t *pl, MPI_Comm parent, int me_world,
                             int32_t *row, char **child_argv)
{
    MPI_Comm inter = parent, merged;
    bool child = parent != MPI_COMM_NULL;
    double t0 = MPI_Wtime();
    if (!child)
        MPI_Comm_spawn((char *)bench_self_path(), child_argv, o->to - o->from, MPI_INFO_NULL,
                       0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    MPI_Intercomm_merge(inter, child ? 1 : 0, &merged);
    double t1 = MPI_Wtime();
    long long *nb[3] = {0};
    /* The old layout over the merged ranks: the parents' parts, the children empty. */
    for (int k = 0; k < pl->n; k++)
        free(pl->b[k]);
    plain_layout(o, pl, o->from, o->to, pl->b);
    plain_layout(o, pl, o->to, o->to, nb);
    long long bytes = plain_move(pl, merged, nb);
    double t2 = MPI_Wtime();
    double spawn = max_in(merged, t1 - t0), redist = max_in(merged, t2 - t1);
    double total = max_in(merged, t2 - t0);
    long long bad = bad_in(merged, pl, row);
    if (me_world == 0 && !child)
        write_line(o->run, "expand", o->from, o->to, M_MAM, bytes, spawn, 0.0, redist,
                   total, bad);
    /* Shrink back: the data go home, then the children leave. */
    MPI_Barrier(merged);
    t0 = MPI_Wtime();
    plain_layout(o, pl, o->from, o->to, nb);
    bytes = plain_move(pl, merged, nb);
    t1 = MPI_Wtime();
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    t2 = MPI_Wtime();
    if (child)
        return 0;
    /* Parents' figures; the children's only work was the move, already waited for. */
    plain_layout(o, pl, o->from, o->from, nb);
    for (int k = 0; k < pl->n; k++) { /* same bounds, over the parents alone */
        free(pl->b[k]);
        pl->b[k] = nb[k];
    }
    redist = max_in(MPI_COMM_WORLD, t1 - t0);
    double proc = max_in(MPI_COMM_WORLD, t2 - t1);
    total = max_in(MPI_COMM_WORLD, t2 - t0);
    bad += bad_in(MPI_COMM_WORLD, pl, row);
    if (me_world == 0)
        write_line(o->run, "shrink", o->to, o->from, M_MAM, bytes, proc, 0.0, redist, total,
                   bad);
    return bad != 0;
}

/* A shrink from the start (to < from): ranks >= to give their rows away and leave. */
static int mam_shrink(const options_t *o, plain_t *pl, int me, int32_t *row)
{
    long long *nb[3] = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    plain_layout(o, pl, o->to, o->from, nb);
    long long bytes = plain_move(pl, MPI_COMM_WORLD, nb);
    double t1 = MPI_Wtime();
    MPI_Comm kept;
    MPI_Comm_split(MPI_COMM_WORLD, me < o->to ? 0 : MPI_UNDEFINED, me, &kept);
    double t2 = MPI_Wtime();
    double redist = max_in(MPI_COMM_WORLD, t1 - t0), proc = max_in(MPI_COMM_WORLD, t2 - t1);
    double total = max_in(MPI_COMM_WORLD, t2 - t0);
    long long bad = bad_in(MPI_COMM_WORLD, pl, row);
    if (me == 0)
        write_line(o->run, "shrink", o->from, o->to, M_MAM, bytes, proc, 0.0, redist, total,
                   bad);
    if (kept != MPI_COMM_NULL)
        MPI_Comm_free(&kept);
    return bad != 0;
}

static int mam_run(const options_t *o, char **child_argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    plain_t pl = {0};
    plain_init(o, &pl);
    int32_t *row = pl.src ? malloc(((size_t)mi_max_row_nnz(pl.src) + 1) * sizeof *row) : NULL;
    if (parent == MPI_COMM_NULL) {
        machine_copy_rate = copy_rate(o->size / o->from);
        plain_layout(o, &pl, o->from, o->from, pl.b);
        plain_alloc(&pl, me);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int k = 0; k < pl.n; k++) /* nothing held before the move */
            pl.cur[k] = malloc(1);
    }
    int failed = o->to > o->from ? mam_grow_and_back(o, &pl, parent, me, row, child_argv)
                                 : mam_shrink(o, &pl, me, row);
    free(row);
    plain_free(&pl);
    MPI_Finalize();
    return failed;
}

/* ---- the driver ------------------------------------------------------------------ */

typedef struct {
    double spawn[64], windows[64], redist[64], total[64], mem[64];
    int n;
    long long bytes, bad;
    int from, to;
} cell_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double c[64];
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    return n == 0 ? NAN : n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
}

/* Arguments of one run (also what the baseline's children get). */
static int run_args(const options_t *o, const char *file, int method, char bufs[][32],
                    char **args)
{
    int n = 0;
    args[n++] = "--run";
    args[n++] = (char *)file;
    args[n++] = "--method";
    args[n++] = (char *)method_names[method];
    args[n++] = "--from";
    snprintf(args[n++] = bufs[0], 32, "%d", o->from);
    args[n++] = "--to";
    snprintf(args[n++] = bufs[1], 32, "%d", o->to);
    args[n++] = o->sparse ? "--sparse" : "--size";
    if (o->sparse)
        args[n++] = (char *)o->sparse;
    else
        snprintf(args[n++] = bufs[2], 32, "%lld", o->size);
    args[n++] = "--spawn";
    args[n++] = o->batched ? "batched" : "per-call";
    args[n] = NULL;
    return n;
}

/* Add the lines the run appended since `seen` lines. */
static int collect(const char *file, int *seen, cell_t cells[2][NMETHODS])
{
    FILE *f = fopen(file, "r");
    char line[512];
    int n = 0, got = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (n++ < *seen)
            continue;
        char action[16], method[32];
        int from, to;
        long long bytes, bad;
        double sp, wi, re, to_s, mem;
        if (sscanf(line, "%15[^,],%d,%d,%31[^,],%lld,%lf,%lf,%lf,%lf,%lld,%lf", action, &from,
                   &to, method, &bytes, &sp, &wi, &re, &to_s, &bad, &mem) != 11)
            continue;
        int a = strcmp(action, "expand") == 0 ? 0 : 1, m = 0;
        while (m < NMETHODS && strcmp(method_names[m], method) != 0)
            m++;
        if (m == NMETHODS || cells[a][m].n == 64)
            continue;
        cell_t *c = &cells[a][m];
        c->spawn[c->n] = sp;
        c->windows[c->n] = wi;
        c->redist[c->n] = re;
        c->mem[c->n] = mem;
        c->total[c->n++] = to_s;
        c->bytes = bytes;
        c->bad += bad;
        c->from = from;
        c->to = to;
        got++;
    }
    if (f != NULL)
        fclose(f);
    *seen = n;
    return got;
}

static void plot(const options_t *o, const char *data)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "gnuplot -e \"set terminal pngcairo size 900,500; set output '%s'; "
             "set title 'mal\\_bench\\_reconf: %d -> %d, %s (median of %d fresh runs)'; "
             "set style data histograms; set style histogram rowstacked; "
             "set style fill solid 0.8 border -1; set boxwidth 0.7; set ylabel 'seconds'; "
             "set xtics rotate by -30; set key top left; set datafile separator ','; "
             "plot '%s' using 3:xtic(1) title 'spawn / process', '' using 4 title 'windows', "
             "'' using 5 title 'redistribution'\" 2>/dev/null",
             o->png, o->from, o->to, o->sparse ? o->sparse : "dense", o->reps, data);
    if (system(cmd) != 0)
        fprintf(stderr, "mal_bench_reconf: gnuplot could not draw %s (pngcairo)\n", o->png);
}

static void report(const options_t *o, cell_t cells[2][NMETHODS])
{
    FILE *csv = o->csv ? fopen(o->csv, "w") : NULL;
    char data[] = "/tmp/mal_bench_reconf_plot.XXXXXX";
    FILE *pd = NULL;
    if (o->png) {
        int fd = mkstemp(data);
        pd = fd >= 0 ? fdopen(fd, "w") : NULL;
    }
    if (csv)
        fprintf(csv, "action,from,to,method,bytes,spawn_s,windows_s,redist_s,total_s,"
                     "memcpy_s\n");
    printf("# mal_bench_reconf: %s, median of %d fresh runs per method, max over ranks; "
           "x_mam: baseline total / this total; data_GBps: bytes / (windows + redist); "
           "x_memcpy: that / the memcpy bound (the initial processes copying at once)\n",
           o->sparse ? o->sparse : "dense doubles", o->reps);
    printf("%-7s %4s %4s %-13s %10s %9s %9s %9s %9s %8s %9s %8s\n", "action", "from", "to",
           "method", "MiB", "spawn_s", "windows_s", "redist_s", "total_s", "x_mam",
           "data_GBps", "x_memcpy");
    for (int a = 0; a < 2; a++) {
        double mam = median(cells[a][M_MAM].total, cells[a][M_MAM].n);
        for (int m = 0; m < NMETHODS; m++) {
            cell_t *c = &cells[a][m];
            if (c->n == 0)
                continue;
            double sp = median(c->spawn, c->n), wi = median(c->windows, c->n);
            double re = median(c->redist, c->n), to = median(c->total, c->n);
            double mem = median(c->mem, c->n), data = wi + re;
            const char *act = a == 0 ? "expand" : "shrink";
            printf("%-7s %4d %4d %-13s %10.1f %9.3f %9.3f %9.3f %9.3f %8.2f %9.2f %8.2f\n",
                   act, c->from, c->to, method_names[m], c->bytes / 1048576.0, sp, wi, re, to,
                   mam / to, data > 0 ? (double)c->bytes / data / 1e9 : 0.0,
                   data > 0 ? mem / data : 0.0);
            if (csv)
                fprintf(csv, "%s,%d,%d,%s,%lld,%.6f,%.6f,%.6f,%.6f,%.6f\n", act, c->from,
                        c->to, method_names[m], c->bytes, sp, wi, re, to, mem);
            if (pd)
                fprintf(pd, "%s %s,%d,%.6f,%.6f,%.6f\n", act, method_names[m], m, sp, wi, re);
        }
    }
    if (csv)
        fclose(csv);
    if (pd) {
        fclose(pd);
        plot(o, data);
        unlink(data);
    }
}

static int driver(const options_t *o)
{
    if (bench_under_launcher()) {
        fprintf(stderr, "mal_bench_reconf: run it directly, not under mpiexec: it starts a "
                        "fresh MPI job per measurement ($MAL_LAUNCHER, e.g. "
                        "MAL_LAUNCHER=tools/malrun)\n");
        return 2;
    }
    char file[] = "/tmp/mal_bench_reconf.XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0) {
        perror("mal_bench_reconf: mkstemp");
        return 1;
    }
    close(fd);
    static cell_t cells[2][NMETHODS];
    int seen = 0, failed = 0;
    long long bad = 0;
    /* The method order rotates with the repetition: none always follows the same one. */
    for (int rep = 0; rep < o->reps && !failed; rep++)
        for (int i = 0, m; i < NMETHODS && !failed; i++) {
            m = (i + rep) % NMETHODS;
            if (o->method >= 0 && o->method != m && m != M_MAM)
                continue;
            char bufs[3][32], *args[24];
            args[0] = (char *)bench_self_path();
            run_args(o, file, m, bufs, args + 1);
            int rc = bench_launch(o->from, args);
            int got = collect(file, &seen, cells);
            if (rc != 0 || got != (o->to > o->from ? 2 : 1)) {
                fprintf(stderr, "mal_bench_reconf: %s run %d failed (exit %d, %d results)\n",
                        method_names[m], rep + 1, rc, got);
                failed = 1;
            }
        }
    unlink(file);
    for (int a = 0; a < 2; a++)
        for (int m = 0; m < NMETHODS; m++)
            bad += cells[a][m].bad;
    if (!failed)
        report(o, cells);
    if (bad)
        printf("VERIFICATION FAILED: %lld elements wrong\n", bad);
    return failed || bad ? 1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mal_bench_reconf [--size BYTES | --sparse SPEC] [--from P] [--to Q]\n"
            "                        [--method rma|rma-get|alltoallv|p2p|mam-baseline|all]\n"
            "                        [--reps R] [--spawn batched|per-call] [--csv FILE] "
            "[--png FILE]\n"
            "Run it directly (not under mpiexec): every measurement is a fresh MPI job of P\n"
            "processes started with $MAL_LAUNCHER (default mpiexec; tools/malrun has the\n"
            "project's settings). Defaults: 268435456 bytes of doubles, 2 -> 4, all methods\n"
            "(mam-baseline always runs: it is what x_mam divides by), 3 repetitions, batched.\n"
            "CSV: action,from,to,method,bytes,spawn_s,windows_s,redist_s,total_s,memcpy_s; the PNG\n"
            "stacks spawn, windows and redistribution per method (gnuplot).\n");
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.size = 256LL << 20, .from = 2, .to = 4, .method = -1, .reps = 3,
                     .batched = true};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0)
            return 1;
        if (val == NULL)
            return -1;
        i++;
        if (strcmp(arg, "--size") == 0)
            o->size = atoll(val);
        else if (strcmp(arg, "--from") == 0)
            o->from = atoi(val);
        else if (strcmp(arg, "--to") == 0)
            o->to = atoi(val);
        else if (strcmp(arg, "--sparse") == 0)
            o->sparse = val;
        else if (strcmp(arg, "--reps") == 0)
            o->reps = atoi(val);
        else if (strcmp(arg, "--csv") == 0)
            o->csv = val;
        else if (strcmp(arg, "--png") == 0)
            o->png = val;
        else if (strcmp(arg, "--run") == 0)
            o->run = val;
        else if (strcmp(arg, "--spawn") == 0 && (strcmp(val, "batched") == 0 ||
                                                 strcmp(val, "per-call") == 0))
            o->batched = strcmp(val, "batched") == 0;
        else if (strcmp(arg, "--method") == 0) {
            o->method = -2;
            for (int m = 0; m < NMETHODS; m++)
                if (strcmp(val, method_names[m]) == 0)
                    o->method = m;
            if (strcmp(val, "all") == 0)
                o->method = -1;
        } else
            return -1;
    }
    return o->from < 1 || o->to < 1 || o->from == o->to || o->reps < 1 || o->reps > 64 ||
                   o->method < -1 || o->size < 8 || (o->run && o->method < 0)
               ? -1
               : 0;
}

int main(int argc, char **argv)
{
    options_t o;
    int rc = parse(argc, argv, &o);
    if (rc != 0) {
        usage(rc > 0 ? stdout : stderr);
        return rc > 0 ? 0 : 2;
    }
    if (o.run == NULL)
        return driver(&o);
    MPI_Init(&argc, &argv);
    if (o.method != M_MAM)
        return libmal_run(&o);
    return mam_run(&o, argv + 1);
}
