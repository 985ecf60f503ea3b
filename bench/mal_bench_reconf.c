/* mal_bench_reconf: what an expansion (and the shrink back) costs the application end
 * to end, through the real mal_step path, each measurement in fresh processes: the
 * driver (run directly, not under mpiexec) launches this program again per method, mode
 * and repetition through $MAL_LAUNCHER.
 *
 * libmal methods iterate a kernel over a dense block structure (or a CSR matrix,
 * --sparse) for --iters iterations, mal_step() after each, with the plan "10:+K" (or
 * "10:-K" when shrinking); the expansion's figures are mal_last_reconfig()'s, and the
 * stall is what the application lost: every iteration is timed (kernel + mal_step, the
 * maximum over the ranks) and compared with the undisturbed one (the median of those
 * before the plan's, at the initial process count). The shrink back is a separate
 * mal_shrink() after the loop, timed on its own. --mode chooses how the expansion gets
 * its processes: sync (spawned in mal_step), pool (prespawned into the pool at mal_init,
 * MAL_PREFETCH; mal_init's time is reported as init_s, not as stall) or async (spawned
 * and filled in the background while the old processes iterate, the data
 * MAL_READ_MOSTLY; the stall is then the extra time of every iteration from the plan's
 * to the switch) or reuse (the job starts with Q processes and the plan "3:-K,10:+K"
 * parks K of them, initial ones, in the pool and takes them back).
 * mam-baseline is the path of a malleability library without windows (MaM), written
 * here with MPI calls only: MPI_Comm_spawn over the old processes + MPI_Intercomm_merge,
 * then MPI_Alltoallv from the existing buffers into freshly allocated ones; the shrink
 * back moves the data home the same way, then the spawned processes disconnect. It does
 * not iterate: its stall is its whole expansion.
 * Every row is checked after every reconfiguration. */
#define _POSIX_C_SOURCE 200809L
#include "bench_launch.h"
#include "cli.h"
#include "mal.h"
#include "matrix_input.h"
#include "plain_redist.h"

#include <errno.h>
#include <limits.h>
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

/* How an expansion gets its processes (see the header comment). */
enum { MODE_SYNC, MODE_POOL, MODE_ASYNC, MODE_REUSE, NMODES };
static const char *mode_names[NMODES] = {"sync", "pool", "async", "reuse"};

/* The plan acts in the mal_step() that ends iteration PLAN_AT; the iterations before it
 * are the undisturbed ones. Under reuse, the job starts with the final processes and a
 * shrink at FILL_AT parks the extra ones in the pool: the undisturbed iterations are
 * those between the two. */
enum { FILL_AT = 3, PLAN_AT = 10 };

/* Element reads per iteration, over all ranks, when --sweeps is not given: 10 sweeps
 * of 64 MiB of doubles, about 27 ms per iteration at 2 ranks here, whatever the size. */
static const double kernel_reads = 10.0 * 8388608.0;

typedef struct {
    long long size;
    int from, to;
    const char *sparse;
    int method;          /* index, or -1 for all */
    int mode;            /* index, or -1 for all */
    int reps, iters, sweeps;
    const char *csv, *png, *timeline;
    FILE *csv_out, *timeline_out; /* the data's stdout for the one that is "-"  */
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
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
}

static void usage(FILE *f);
static const cli_t cli = {"mal_bench_reconf", mal_version, usage};

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

/* The kernel only reads the data: under async they may move in the background. */
static mal_distribution_t distribution(const options_t *o)
{
    return o->mode == MODE_ASYNC ? (mal_distribution_t)(MAL_BLOCK | MAL_READ_MOSTLY)
                                 : MAL_BLOCK;
}

static void libmal_alloc(const options_t *o, mal_data_t *d)
{
    d->src = open_source(o->sparse);
    if (d->src == NULL) {
        if (check(mal_alloc_window("data", MPI_DOUBLE, o->size / 8, 1, distribution(o),
                                   &d->dense),
                  "mal_alloc_window"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
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
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
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
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
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

/* One result line: a reconfiguration's figures and what the application lost. */
typedef struct {
    const char *action;
    int from, to, method, mode;
    long long bytes, bad;
    double spawn, windows, redist, total;
    double stall, run, iter, init; /* run and iter are 0 where nothing iterated */
} line_t;

static void write_line(const char *file, const line_t *l)
{
    FILE *f = fopen(file, "a");
    if (f == NULL)
        die("cannot write the result file");
    fprintf(f, "%s,%d,%d,%s,%s,%lld,%.6f,%.6f,%.6f,%.6f,%lld,%.6f,%.6f,%.6f,%.6f,%.6f\n",
            l->action, l->from, l->to, method_names[l->method], mode_names[l->mode], l->bytes,
            l->spawn, l->windows, l->redist, l->total, l->bad,
            machine_copy_rate > 0 ? (double)l->bytes / machine_copy_rate : 0.0, l->stall,
            l->run, l->iter, l->init);
    fclose(f);
}

/* The baseline's lines: a synchronous path that does not iterate, so the application
 * stalls for the whole reconfiguration. */
static void write_plain_line(const char *file, const char *action, int from, int to,
                             long long bytes, double process, double redist, double total,
                             long long bad)
{
    line_t l = {.action = action, .from = from, .to = to, .method = M_MAM, .mode = MODE_SYNC,
                .bytes = bytes, .bad = bad, .spawn = process, .redist = redist,
                .total = total, .stall = total};
    write_line(file, &l);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double c[64];
    n = n < 64 ? n : 64;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    return n == 0 ? NAN : n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
}

/* What every process of a libmal run records: each iteration's time (kernel + mal_step)
 * and mal_step's alone, the maximum over the ranks (index = iteration - 1), and the
 * reconfiguration's figures (identical on every rank). */
typedef struct {
    double *iter, *step;
    int64_t cap;          /* iterations the arrays hold                               */
    int64_t reconf_at;    /* index of the iteration whose mal_step reconfigured, or -1 */
    int calm_from;        /* first index of the undisturbed iterations                */
    mal_reconfig_stats_t stats;
    long long bad;        /* wrong elements after the latest reconfiguration          */
    double init;          /* mal_init on the initial processes (with the prespawn)    */
    int sweeps;           /* kernel passes per iteration                              */
    double result;        /* the kernel's per-rank sum                                */
} timeline_t;

/* The application's work: `sweeps` passes reading every local element into one sum
 * per rank (a chain of dependent additions). The data are only read, never written,
 * so an asynchronous expansion may move them in the background (MAL_READ_MOSTLY). */
static double kernel(const mal_data_t *d, int sweeps)
{
    const double *v = d->dense ? mal_local_data(d->dense) : mal_csr_values(d->csr);
    long long n = d->dense ? mal_local_rows(d->dense) : mal_csr_local_nnz(d->csr);
    double acc = 0.0;
    for (int s = 0; s < sweeps; s++) {
        double w = 1.0 / (double)(s + 1);
        for (long long i = 0; i < n; i++)
            acc += v[i] * w;
    }
    __asm__ volatile("" : "+m"(acc)); /* the sum is the result: every read must happen */
    return acc;
}

/* --sweeps, else as many as make kernel_reads element reads per iteration in all. */
static int sweeps_for(const options_t *o, const mal_data_t *d)
{
    if (o->sweeps > 0)
        return o->sweeps;
    double elements = d->dense ? (double)(o->size / 8) : (double)mal_csr_global_nnz(d->csr);
    double s = round(kernel_reads / elements);
    return s < 1 ? 1 : s > 1e6 ? 1000000 : (int)s;
}

/* Every process of the new set checks its rows and keeps the figures. */
static long long after_reconfig(const mal_data_t *d, timeline_t *tl)
{
    long long bad = libmal_bad(d);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, mal_comm());
    mal_last_reconfig(&tl->stats);
    tl->bad = bad;
    return bad;
}

/* One MPI_Allreduce per iteration, as an application's residual would be. */
static void record(timeline_t *tl, int64_t it, double t[2])
{
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, mal_comm());
    tl->iter[it] = t[0];
    tl->step[it] = t[1];
}

/* A joiner's mal_init was the others' MAL_RECONFIGURED: check with them, and take part
 * in the record of that iteration (which it did not run). */
static long long join(const mal_data_t *d, timeline_t *tl)
{
    tl->reconf_at = mal_iteration() - 1;
    long long bad = after_reconfig(d, tl);
    double none[2] = {0.0, 0.0};
    record(tl, tl->reconf_at, none);
    return bad;
}

/* Iterate until --iters iterations are done and the reconfiguration has happened (an
 * asynchronous expansion switches when its background is ready: the loop waits for it,
 * up to tl->cap iterations). Returns MAL_OK, MAL_REMOVED on a process a shrink
 * released, or the error of an abandoned reconfiguration. */
static mal_status_t iterate(const options_t *o, const mal_data_t *d, timeline_t *tl,
                            long long *bad)
{
    for (int64_t it = mal_iteration(); it < o->iters || tl->reconf_at < 0; it++) {
        if (it >= tl->cap) {
            fprintf(stderr, "mal_bench_reconf: no reconfiguration in %lld iterations\n",
                    (long long)tl->cap);
            return MAL_ERR_TIMEOUT;
        }
        double t0 = MPI_Wtime();
        tl->result += kernel(d, tl->sweeps);
        double t1 = MPI_Wtime();
        mal_status_t st = mal_step();
        double t[2] = {MPI_Wtime() - t0, MPI_Wtime() - t1};
        if (mal_iteration() != it + 1) { /* parked in the pool, back with the others */
            it = mal_iteration() - 1;
            t[0] = t[1] = 0.0;
        }
        if (st == MAL_REMOVED)
            return st;
        if (st < 0) {
            check(st, "mal_step");
            return st;
        }
        if (st == MAL_RECONFIGURED) {
            if (it >= PLAN_AT - 1) /* not reuse's shrink that fills the pool */
                tl->reconf_at = it;
            *bad += after_reconfig(d, tl);
        }
        record(tl, it, t);
    }
    return MAL_OK;
}

/* What the application lost to the reconfiguration. When it happened in the plan's
 * iteration (synchronous, or from the pool): that mal_step's extra time over an
 * undisturbed one. When it switched later (asynchronous): every iteration's extra time
 * over an undisturbed one, from the plan's (which started the background) to the
 * switch's included, i.e. the switch and the slowdown of the overlapped iterations.
 * Undisturbed: the median of the iterations before the plan's. */
static double stall(const timeline_t *tl)
{
    int64_t start = PLAN_AT - 1, end = tl->reconf_at;
    int calm = (int)start - tl->calm_from;
    if (end <= start)
        return tl->step[end] - median(tl->step + tl->calm_from, calm);
    double undisturbed = median(tl->iter + tl->calm_from, calm), lost = 0.0;
    for (int64_t i = start; i <= end; i++)
        lost += tl->iter[i] - undisturbed;
    return lost;
}

/* --timeline: every iteration of the run (the maximum over the ranks), appended, for a
 * look at what the stall sums; "reconfigured" marks the iteration whose mal_step
 * reconfigured (an asynchronous expansion's switch). */
static void write_timeline(const options_t *o, const timeline_t *tl)
{
    FILE *f = o->timeline ? cli_open_output(&cli, o->timeline, "a", NULL) : NULL;
    if (f == NULL)
        return;
    int64_t end = tl->reconf_at >= o->iters ? tl->reconf_at + 1 : o->iters;
    for (int64_t i = 0; i < end; i++)
        fprintf(f, "%s,%s,%lld,%.6f,%.6f,%d\n", method_names[o->method], mode_names[o->mode],
                (long long)i + 1, tl->iter[i], tl->step[i], i == tl->reconf_at);
    cli_close_output(&cli, o->timeline, f);
}

/* Says when an expansion did not get its processes the way its mode asks: the figures
 * of the line are then another mode's. */
static void check_mode(const options_t *o, const mal_reconfig_stats_t *s)
{
    if (s->action != MAL_ACTION_EXPAND)
        return;
    bool pooled = o->mode == MODE_POOL || o->mode == MODE_REUSE;
    if ((pooled && s->pooled < s->procs_after - s->procs_before) ||
        (o->mode == MODE_ASYNC && !s->async))
        fprintf(stderr, "mal_bench_reconf: %s: the expansion took %d processes from the pool, "
                        "spawned %d, %s\n", mode_names[o->mode], s->pooled, s->spawned,
                s->async ? "asynchronously" : "synchronously");
}

/* Rank 0 (an initial process, which ran every iteration) writes the planned
 * reconfiguration's line. */
static void write_reconfig(const options_t *o, const timeline_t *tl)
{
    const mal_reconfig_stats_t *s = &tl->stats;
    double run = 0.0;
    for (int64_t i = 0; i < o->iters; i++)
        run += tl->iter[i];
    int calm = PLAN_AT - 1 - tl->calm_from;
    line_t l = {.action = s->action == MAL_ACTION_EXPAND ? "expand" : "shrink",
                .from = s->procs_before, .to = s->procs_after, .method = o->method,
                .mode = o->mode, .bytes = (long long)s->bytes_moved, .bad = tl->bad,
                .spawn = s->process_seconds, .windows = s->window_seconds,
                .redist = s->redist_seconds, .total = s->total_seconds, .stall = stall(tl),
                .run = run, .iter = median(tl->iter + tl->calm_from, calm), .init = tl->init};
    write_line(o->run, &l);
    write_timeline(o, tl);
    check_mode(o, s);
}

static bool rank_zero(void)
{
    int r;
    MPI_Comm_rank(mal_comm(), &r);
    return r == 0;
}

/* The shrink back to the initial processes, after the measured loop: timed alone (the
 * maximum over the ranks), its own line. Returns MAL_REMOVED on the released
 * processes. */
static mal_status_t shrink_back(const options_t *o, const mal_data_t *d, timeline_t *tl,
                                long long *bad)
{
    MPI_Barrier(mal_comm());
    double t = MPI_Wtime();
    mal_status_t st = mal_shrink(o->to - o->from, NULL, NULL);
    t = MPI_Wtime() - t;
    if (st != MAL_RECONFIGURED) {
        if (st < 0)
            check(st, "mal_shrink");
        return st;
    }
    *bad += after_reconfig(d, tl);
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, mal_comm());
    const mal_reconfig_stats_t *s = &tl->stats;
    line_t l = {.action = "shrink", .from = s->procs_before, .to = s->procs_after,
                .method = o->method, .mode = o->mode, .bytes = (long long)s->bytes_moved,
                .bad = tl->bad, .spawn = s->process_seconds, .windows = s->window_seconds,
                .redist = s->redist_seconds, .total = s->total_seconds, .stall = t};
    if (rank_zero())
        write_line(o->run, &l);
    return MAL_OK;
}

/* The plan and the mode's settings: sync spawns in mal_step and ends released
 * processes; pool prespawns the K processes at mal_init; async spawns in the
 * background; reuse parks K of its processes and takes them back. */
static mal_config_t run_config(const options_t *o, char *plan, size_t len)
{
    int k = abs(o->to - o->from);
    bool grow = o->to > o->from;
    int at = 0;
    if (o->mode == MODE_REUSE)
        at = snprintf(plan, len, "%d:-%d,", FILL_AT, k);
    snprintf(plan + at, len - (size_t)at, "%d:%c%d%s", PLAN_AT, grow ? '+' : '-', k,
             grow ? (o->batched ? "b" : "p") : "");
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.redist = method_redist[o->method];
    cfg.plan = plan;
    cfg.summary = false;
    cfg.spawn_mode = o->batched ? MAL_SPAWN_BATCHED : MAL_SPAWN_PER_CALL;
    cfg.pool = o->mode == MODE_POOL || o->mode == MODE_REUSE;
    cfg.prefetch = o->mode == MODE_POOL && grow ? k : 0;
    cfg.async = o->mode == MODE_ASYNC;
    return cfg;
}

/* The processes a run in `mode` starts with: reuse starts with those it expands to. */
static int launched(const options_t *o, int mode)
{
    return mode == MODE_REUSE ? o->to : o->from;
}

static int libmal_run(const options_t *o)
{
    char plan[64];
    mal_config_t cfg = run_config(o, plan, sizeof plan);
    double init = MPI_Wtime();
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    init = MPI_Wtime() - init;
    if (st == MAL_REMOVED) { /* a prespawned process that no expansion took */
        mal_finalize();
        MPI_Finalize();
        return 0;
    }
    if (check(st, "mal_init"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    timeline_t tl = {.reconf_at = -1, .cap = 10LL * o->iters,
                     .calm_from = o->mode == MODE_REUSE ? FILL_AT : 0};
    tl.iter = calloc((size_t)tl.cap, sizeof *tl.iter);
    tl.step = calloc((size_t)tl.cap, sizeof *tl.step);
    if (tl.iter == NULL || tl.step == NULL)
        die("no memory for the timeline");
    if (mal_is_initial_process()) {
        MPI_Allreduce(&init, &tl.init, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        machine_copy_rate = copy_rate(o->size / launched(o, o->mode));
    }
    mal_data_t d = {0};
    libmal_alloc(o, &d);
    tl.sweeps = sweeps_for(o, &d);
    long long bad = mal_is_initial_process() ? 0 : join(&d, &tl);
    st = iterate(o, &d, &tl, &bad);
    if (st == MAL_OK && rank_zero())
        write_reconfig(o, &tl);
    if (st == MAL_OK && o->to > o->from)
        st = shrink_back(o, &d, &tl, &bad);
    free(tl.iter);
    free(tl.step);
    free(d.row);
    mi_close(d.src);
    mal_finalize();
    MPI_Finalize();
    return st < 0 || bad != 0;
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
        write_plain_line(o->run, "expand", o->from, o->to, bytes, spawn, redist,
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
        write_plain_line(o->run, "shrink", o->to, o->from, bytes, proc, redist, total,
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
        write_plain_line(o->run, "shrink", o->from, o->to, bytes, proc, redist, total,
                   bad);
    if (kept != MPI_COMM_NULL)
        MPI_Comm_free(&kept);
    return bad != 0;
}

/* The baseline's exit status where its MPI cannot spawn (MPICH 4.0's ch4:ucx): no
 * expansion to measure, said once, and the driver goes on without it. */
#define MAM_NO_SPAWN 3

static int mam_run(const options_t *o, char **child_argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *why = NULL;
    if (o->to > o->from && parent == MPI_COMM_NULL && !mal_spawn_supported(&why)) {
        if (me == 0)
            fprintf(stderr, "mal_bench_reconf: mam-baseline: no expansion to measure: %s\n",
                    why);
        MPI_Finalize();
        return MAM_NO_SPAWN;
    }
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
    double stall[64], run[64], iter[64], init[64];
    int n;
    long long bytes, bad;
    int from, to;
} cell_t;

/* Results by action (expand, shrink), mode and method. */
typedef cell_t cells_t[2][NMODES][NMETHODS];

/* Arguments of one run (also what the baseline's children get). */
static int run_args(const options_t *o, const char *file, int method, int mode,
                    char bufs[][32], char **args)
{
    int n = 0;
    args[n++] = "--run";
    args[n++] = (char *)file;
    args[n++] = "--method";
    args[n++] = (char *)method_names[method];
    args[n++] = "--mode";
    args[n++] = (char *)mode_names[mode];
    args[n++] = "--from";
    snprintf(args[n++] = bufs[0], 32, "%d", o->from);
    args[n++] = "--to";
    snprintf(args[n++] = bufs[1], 32, "%d", o->to);
    args[n++] = o->sparse ? "--sparse" : "--size";
    if (o->sparse)
        args[n++] = (char *)o->sparse;
    else
        snprintf(args[n++] = bufs[2], 32, "%lld", o->size);
    args[n++] = "--iters";
    snprintf(args[n++] = bufs[3], 32, "%d", o->iters);
    args[n++] = "--sweeps";
    snprintf(args[n++] = bufs[4], 32, "%d", o->sweeps);
    args[n++] = "--spawn";
    args[n++] = o->batched ? "batched" : "per-call";
    if (o->timeline) {
        args[n++] = "--timeline";
        args[n++] = (char *)o->timeline;
    }
    args[n] = NULL;
    return n;
}

static int index_of(const char *name, const char *const *names, int count)
{
    int i = 0;
    while (i < count && strcmp(names[i], name) != 0)
        i++;
    return i;
}

/* One line of a run into its cell; false if it is not a result line. */
static bool add_line(const char *line, cells_t cells)
{
    char action[16], method[32], mode[16];
    int from, to;
    long long bytes, bad;
    double sp, wi, re, to_s, mem, stall, run, iter, init;
    if (sscanf(line,
               "%15[^,],%d,%d,%31[^,],%15[^,],%lld,%lf,%lf,%lf,%lf,%lld,%lf,%lf,%lf,%lf,%lf",
               action, &from, &to, method, mode, &bytes, &sp, &wi, &re, &to_s, &bad, &mem,
               &stall, &run, &iter, &init) != 16)
        return false;
    int a = strcmp(action, "expand") == 0 ? 0 : 1;
    int m = index_of(method, method_names, NMETHODS), md = index_of(mode, mode_names, NMODES);
    if (m == NMETHODS || md == NMODES || cells[a][md][m].n == 64)
        return false;
    cell_t *c = &cells[a][md][m];
    c->spawn[c->n] = sp;
    c->windows[c->n] = wi;
    c->redist[c->n] = re;
    c->mem[c->n] = mem;
    c->stall[c->n] = stall;
    c->run[c->n] = run;
    c->iter[c->n] = iter;
    c->init[c->n] = init;
    c->total[c->n++] = to_s;
    c->bytes = bytes;
    c->bad += bad;
    c->from = from;
    c->to = to;
    return true;
}

/* Add the lines the run appended since `seen` lines. */
static int collect(const char *file, int *seen, cells_t cells)
{
    FILE *f = fopen(file, "r");
    char line[512];
    int n = 0, got = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (n++ >= *seen)
            got += add_line(line, cells);
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

/* One row of the table, the CSV and the plot's data (medians of the cell). */
static void report_cell(const char *act, int md, int m, const cell_t *c, double mam,
                        double sync_stall, FILE *csv, FILE *pd)
{
    double sp = median(c->spawn, c->n), wi = median(c->windows, c->n);
    double re = median(c->redist, c->n), to = median(c->total, c->n);
    double mem = median(c->mem, c->n), data = wi + re, st = median(c->stall, c->n);
    double run = median(c->run, c->n), it = median(c->iter, c->n);
    double init = median(c->init, c->n);
    printf("%-7s %4d %4d %-13s %-5s %8.1f %8.3f %9.3f %8.3f %8.3f %8.3f %7.2f %8.4f %7.3f "
           "%7.3f %6.2f %9.2f %8.2f\n",
           act, c->from, c->to, method_names[m], mode_names[md], c->bytes / 1048576.0, sp,
           wi, re, to, st, st > 0 ? sync_stall / st : NAN, it, run, init, mam / to,
           data > 0 ? (double)c->bytes / data / 1e9 : 0.0, data > 0 ? mem / data : 0.0);
    if (csv)
        fprintf(csv, "%s,%d,%d,%s,%s,%lld,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", act,
                c->from, c->to, method_names[m], mode_names[md], c->bytes, sp, wi, re, to,
                mem, st, run, it, init);
    if (pd)
        fprintf(pd, "%s %s %s,%d,%.6f,%.6f,%.6f\n", act, method_names[m], mode_names[md], m,
                sp, wi, re);
}

static void report(const options_t *o, cells_t cells, FILE *csv)
{
    char data[] = "/tmp/mal_bench_reconf_plot.XXXXXX";
    FILE *pd = NULL;
    if (o->png) {
        int fd = mkstemp(data);
        pd = fd >= 0 ? fdopen(fd, "w") : NULL;
    }
    if (csv)
        fprintf(csv, "action,from,to,method,mode,bytes,spawn_s,windows_s,redist_s,total_s,"
                     "memcpy_s,stall_s,run_s,iter_s,init_s\n");
    printf("# mal_bench_reconf: %s, median of %d fresh runs per method and mode, max over "
           "ranks; stall_s: what the application could not iterate (sync, pool: the "
           "reconfiguring mal_step over an undisturbed one; async: every iteration's extra "
           "time from the plan's to the switch); x_sync: sync stall / this stall (same "
           "method); iter_s: the undisturbed iteration; run_s: the %d iterations' time; "
           "init_s: mal_init (pool: with the prespawn); x_mam: baseline total / this total; "
           "data_GBps: bytes / (windows + redist); x_memcpy: that / the memcpy bound (the "
           "initial processes copying at once)\n",
           o->sparse ? o->sparse : "dense doubles", o->reps, o->iters);
    printf("%-7s %4s %4s %-13s %-5s %8s %8s %9s %8s %8s %8s %7s %8s %7s %7s %6s %9s %8s\n",
           "action", "from", "to", "method", "mode", "MiB", "spawn_s", "windows_s",
           "redist_s", "total_s", "stall_s", "x_sync", "iter_s", "run_s", "init_s", "x_mam",
           "data_GBps", "x_memcpy");
    for (int a = 0; a < 2; a++) {
        const cell_t *base = &cells[a][MODE_SYNC][M_MAM];
        double mam = median(base->total, base->n);
        for (int m = 0; m < NMETHODS; m++) {
            const cell_t *sync = &cells[a][MODE_SYNC][m];
            double sync_stall = median(sync->stall, sync->n);
            for (int md = 0; md < NMODES; md++)
                if (cells[a][md][m].n > 0)
                    report_cell(a == 0 ? "expand" : "shrink", md, m, &cells[a][md][m], mam,
                                sync_stall, csv, pd);
        }
    }
    if (pd) {
        fclose(pd);
        plot(o, data);
        unlink(data);
    }
}

/* One fresh MPI job; false when it failed or did not write its lines. */
static bool run_one(const options_t *o, const char *file, int m, int md, int rep, int *seen,
                    cells_t cells)
{
    char bufs[5][32], *args[32];
    args[0] = (char *)bench_self_path();
    run_args(o, file, m, md, bufs, args + 1);
    int rc = bench_launch(launched(o, md), args);
    int got = collect(file, seen, cells);
    if (rc == 0 && got == (o->to > o->from ? 2 : 1))
        return true;
    if (m == M_MAM && rc == MAM_NO_SPAWN && got == 0)
        return true; /* said by the run; x_mam stays empty */
    fprintf(stderr, "mal_bench_reconf: %s %s run %d failed (exit %d, %d results)\n",
            method_names[m], mode_names[md], rep + 1, rc, got);
    return false;
}

/* Every selected method and mode once per repetition (the baseline once, it has no
 * mode); the order rotates with the repetition, so none always follows the same one. */
static bool run_all(const options_t *o, const char *file, cells_t cells)
{
    int seen = 0;
    for (int rep = 0; rep < o->reps; rep++)
        for (int i = 0; i < NMETHODS; i++) {
            int m = (i + rep) % NMETHODS;
            if (o->method >= 0 && o->method != m && m != M_MAM)
                continue;
            for (int j = 0; j < NMODES; j++) {
                int md = (j + rep) % NMODES;
                if (m == M_MAM ? md != MODE_SYNC : o->mode >= 0 && o->mode != md)
                    continue;
                if (!run_one(o, file, m, md, rep, &seen, cells))
                    return false;
            }
        }
    return true;
}

/* The files the driver writes, opened (or tried) before it measures: a file that
 * cannot be written fails the run at once, not after the last measurement. The runs
 * append their timelines to a temporary file when the timeline goes to stdout. */
typedef struct {
    FILE *csv;
    char timeline[32];
} outputs_t;

static bool open_outputs(const options_t *o, outputs_t *out)
{
    *out = (outputs_t){NULL, ""};
    if (o->csv && (out->csv = cli_open_output(&cli, o->csv, "w", o->csv_out)) == NULL)
        return false;
    if (cli_is_stdout(o->timeline)) {
        snprintf(out->timeline, sizeof out->timeline, "/tmp/mal_bench_timeline.XXXXXX");
        int fd = mkstemp(out->timeline);
        if (fd < 0) {
            fprintf(stderr, "mal_bench_reconf: mkstemp: %s\n", strerror(errno));
            return false;
        }
        close(fd);
    } else if (o->timeline) {
        FILE *f = cli_open_output(&cli, o->timeline, "a", NULL);
        if (f == NULL || cli_close_output(&cli, o->timeline, f) != 0)
            return false;
    }
    return true;
}

/* The CSV closed, the runs' timelines copied to stdout; false after a message. */
static bool close_outputs(const options_t *o, outputs_t *out)
{
    bool ok = out->csv == NULL || cli_close_output(&cli, o->csv, out->csv) == 0;
    if (out->timeline[0] == '\0')
        return ok;
    FILE *in = fopen(out->timeline, "r");
    char buf[4096];
    for (size_t n; in != NULL && (n = fread(buf, 1, sizeof buf, in)) > 0;)
        fwrite(buf, 1, n, o->timeline_out);
    if (in != NULL)
        fclose(in);
    unlink(out->timeline);
    return cli_close_output(&cli, o->timeline, o->timeline_out) == 0 && in != NULL && ok;
}

static int driver(const options_t *o)
{
    if (bench_under_launcher()) {
        fprintf(stderr, "mal_bench_reconf: run it directly, not under mpiexec: it starts a "
                        "fresh MPI job per measurement ($MAL_LAUNCHER, e.g. "
                        "MAL_LAUNCHER=tools/malrun)\n");
        return CLI_EXIT_USAGE;
    }
    outputs_t out;
    if (!open_outputs(o, &out))
        return CLI_EXIT_FAILURE;
    options_t runs = *o;
    if (out.timeline[0] != '\0')
        runs.timeline = out.timeline;
    char file[] = "/tmp/mal_bench_reconf.XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0) {
        perror("mal_bench_reconf: mkstemp");
        return CLI_EXIT_FAILURE;
    }
    close(fd);
    static cells_t cells;
    bool ok = run_all(&runs, file, cells);
    unlink(file);
    long long bad = 0;
    for (int a = 0; a < 2; a++)
        for (int md = 0; md < NMODES; md++)
            for (int m = 0; m < NMETHODS; m++)
                bad += cells[a][md][m].bad;
    if (ok)
        report(o, cells, out.csv);
    if (bad)
        printf("VERIFICATION FAILED: %lld elements wrong\n", bad);
    ok = close_outputs(o, &out) && ok;
    return !ok || bad ? CLI_EXIT_FAILURE : 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mal_bench_reconf [--size BYTES | --sparse SPEC] [--from P] [--to Q]\n"
            "                        [--method rma|rma-get|alltoallv|p2p|mam-baseline|all]\n"
            "                        [--mode sync|pool|async|reuse|all] [--iters I]\n"
            "                        [--sweeps S] [--timeline FILE]\n"
            "                        [--reps R] [--spawn batched|per-call] [--csv FILE] "
            "[--png FILE]\n"
            "Run it directly (not under mpiexec): every measurement is a fresh MPI job of P\n"
            "processes started with $MAL_LAUNCHER (default mpiexec; tools/malrun has the\n"
            "project's settings). Defaults: 268435456 bytes of doubles, 2 -> 4, all methods\n"
            "(mam-baseline always runs: it is what x_mam divides by), mode sync, 40\n"
            "iterations with the reconfiguration planned at the 10th, kernel sweeps for\n"
            "about 80 Mi element reads per iteration, 3 repetitions, batched.\n"
            "Modes: sync spawns in mal_step; pool prespawns the processes at mal_init\n"
            "(MAL_PREFETCH); async spawns and fills them in the background (MAL_ASYNC, the\n"
            "data MAL_READ_MOSTLY, MPI_THREAD_MULTIPLE); reuse starts Q processes, parks\n"
            "Q - P of them in the pool at iteration 3 and expands from the pool at 10.\n"
            "CSV: action,from,to,method,mode,bytes,spawn_s,windows_s,redist_s,total_s,\n"
            "memcpy_s,stall_s,run_s,iter_s,init_s; the PNG stacks spawn, windows and\n"
            "redistribution per method and mode (gnuplot). --timeline appends every run's\n"
            "iterations: method,mode,iteration,iter_s,step_s,reconfigured.\n"
            "--csv - or --timeline - writes that CSV on stdout, and the table to stderr.\n"
            CLI_STANDARD_USAGE
            "Exit status: 0, 1 when a run or a verification fails, 2 for a usage error.\n");
}

static void set_option(options_t *o, int c, const char *val)
{
    static const char *const spawn_names[] = {"batched", "per-call"};
    switch (c) {
    case 's':
        o->size = cli_integer(&cli, "--size", val, 8, LLONG_MAX);
        break;
    case 'f':
        o->from = (int)cli_integer(&cli, "--from", val, 1, 4096);
        break;
    case 't':
        o->to = (int)cli_integer(&cli, "--to", val, 1, 4096);
        break;
    case 'r':
        o->reps = (int)cli_integer(&cli, "--reps", val, 1, 64);
        break;
    case 'i':
        o->iters = (int)cli_integer(&cli, "--iters", val, PLAN_AT + 1, 1000000);
        break;
    case 'w':
        o->sweeps = (int)cli_integer(&cli, "--sweeps", val, 0, INT_MAX);
        break;
    case 'b':
        o->batched = cli_choice(&cli, "--spawn", val, spawn_names, 2, false) == 0;
        break;
    case 'm':
        o->method = cli_choice(&cli, "--method", val, method_names, NMETHODS, true);
        break;
    case 'M':
        o->mode = cli_choice(&cli, "--mode", val, mode_names, NMODES, true);
        break;
    default:
        *(c == 'S' ? &o->sparse : c == 'C' ? &o->csv : c == 'P' ? &o->png
          : c == 'T' ? &o->timeline : &o->run) = val;
    }
}

/* Parsed before MPI starts (a run's options too). */
static void parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.size = 256LL << 20, .from = 2, .to = 4, .method = -1,
                     .mode = MODE_SYNC, .reps = 3, .iters = 40, .batched = true};
    static const struct option longopts[] = {
        {"size", required_argument, NULL, 's'},   {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},     {"sparse", required_argument, NULL, 'S'},
        {"reps", required_argument, NULL, 'r'},   {"iters", required_argument, NULL, 'i'},
        {"sweeps", required_argument, NULL, 'w'}, {"csv", required_argument, NULL, 'C'},
        {"png", required_argument, NULL, 'P'},    {"timeline", required_argument, NULL, 'T'},
        {"run", required_argument, NULL, 'R'},    {"spawn", required_argument, NULL, 'b'},
        {"method", required_argument, NULL, 'm'}, {"mode", required_argument, NULL, 'M'},
        CLI_STANDARD_OPTIONS,                     {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;)
        set_option(o, c, optarg);
    if (o->from == o->to)
        cli_usage_error(&cli, "--from and --to are both %d: nothing to reconfigure", o->from);
    if (o->run && (o->method < 0 || o->mode < 0))
        cli_usage_error(&cli, "--run measures one --method and one --mode, not all");
    if (o->mode == MODE_REUSE && o->to < o->from)
        cli_usage_error(&cli, "--mode reuse expands: --to must be above --from");
    if (cli_is_stdout(o->png))
        cli_usage_error(&cli, "--png needs a file (gnuplot writes it)");
    if (cli_is_stdout(o->csv) && cli_is_stdout(o->timeline))
        cli_usage_error(&cli, "--csv and --timeline cannot both go to stdout");
    if (o->run == NULL && (cli_is_stdout(o->csv) || cli_is_stdout(o->timeline)))
        *(cli_is_stdout(o->csv) ? &o->csv_out : &o->timeline_out) = cli_take_stdout(&cli);
}

/* An asynchronous expansion's background thread needs MPI_THREAD_MULTIPLE; without it
 * libmal expands synchronously and says so. */
static void init_mpi(const options_t *o, int *argc, char ***argv)
{
    if (o->method == M_MAM || o->mode != MODE_ASYNC) {
        MPI_Init(argc, argv);
        return;
    }
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
        fprintf(stderr, "mal_bench_reconf: MPI provides thread level %d, not "
                        "MPI_THREAD_MULTIPLE: the async run will be synchronous\n", provided);
}

int main(int argc, char **argv)
{
    options_t o;
    parse(argc, argv, &o);
    if (o.run == NULL)
        return driver(&o);
    init_mpi(&o, &argc, &argv);
    if (o.method != M_MAM)
        return libmal_run(&o);
    return mam_run(&o, argv + 1);
}
