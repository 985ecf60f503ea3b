/* mal-calibrate: measures the machine parameters of the prediction model
 * (predict_params_t, src/predict/predict.h) and writes them as a calibration file.
 *
 *   tools/malrun -n 2 build/apps/mal-calibrate [-o FILE] [--quick]
 *
 * Runs with exactly 2 initial processes. They first time point-to-point messages, a
 * local reduction, one-sided gets, memcpy, window creation and one libmal rebalance on a
 * duplicate of mal_comm(). Then, several times, mal_expand() adds one process,
 * mal_shrink() releases it into the pool, mal_expand() takes it back, mal_shrink()
 * parks it again and mal_pool_release() ends it; then two processes come in one spawn
 * call and are ended: libmal's own figures of those reconfigurations give
 * the spawn, per-host, wake and removal costs. Last, a compute + allreduce
 * kernel iterates while the plan's one entry adds a process asynchronously
 * (mal_config_t.async): its iterations while the expansion runs in the background, over
 * the undisturbed ones, give async_slowdown. A spawned process runs this same main()
 * with the same arguments: it joins inside mal_init(), skips every measurement
 * (mal_is_initial_process() is false), takes part in the loop from mal_iteration() on
 * until it is released, and leaves. Rank 0 prints a table and writes the file.
 *
 * Every figure is a median over repetitions, after a warm-up (these machines are small
 * and noisy); where both ranks work at once, each repetition counts the slower one. */
/* MADV_NOHUGEPAGE and MAP_ANONYMOUS (beside gethostname, gmtime_r, unsetenv). */
#define _DEFAULT_SOURCE

#include "cli.h"
#include "mal.h"
#include "predict.h"

#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

#define SMALLEST_MESSAGE ((size_t)8)
#define LARGEST_MESSAGE (4 * MIB)
#define SLOPE_FROM (64 * KIB)   /* ping-pong sizes that determine beta              */
#define MAX_SIZES 16
#define REDUCE_BYTES (16 * MIB)
#define GET_WINDOW_BYTES (64 * MIB)
#define GET_BYTES (32 * MIB)
#define LATENCY_BYTES 8
#define COPY_BYTES (64 * MIB)
#define WINDOW_SMALL_BYTES (64 * KIB) /* small enough that the intercept is not noise */
#define WINDOW_LARGE_BYTES (64 * MIB)
#define HEADROOM 0.5 /* libmal's default, which mal-calibrate runs with */
/* The transfer measurement: a structure of this many bytes split {1,1}, moved to {2,3}
 * and back, in place: one tenth of it crosses, nothing is copied locally. */
#define TRANSFER_BYTES (256 * MIB)
#define TRANSFER_BYTES_QUICK (64 * MIB)
#define EPOCH_ROWS 64
#define MAX_REPS 1000           /* bound of every repetition count in reps_t      */
#define MAX_CYCLES 64
#define WARMUP_ROUNDS 5         /* untimed ping-pongs and gets before each series  */
#define TAG 4242

#define DEFAULT_OUTPUT "mal-calibration.txt"
#define EXIT_FAILED CLI_EXIT_FAILURE

/* Repetitions of each measurement. */
typedef struct {
    int small_messages; /* ping-pongs per size below SLOPE_FROM                 */
    int large_messages; /* ping-pongs per size from SLOPE_FROM on               */
    int bulk;           /* reductions, memcpys and 32 MiB get epochs            */
    int latency;        /* 8-byte gets                                          */
    int windows;        /* window cycles per size                               */
    int epochs;         /* rebalances                                           */
    int resize_cycles;  /* spawn, release, take back from the pool, release, end;
                         * spawn 2 in one call, end them                           */
    int undisturbed;    /* kernel iterations before the asynchronous expansion     */
} reps_t;

static const reps_t FULL_REPS = {1000, 40, 15, 1000, 7, 20, 5, 200};
static const reps_t QUICK_REPS = {200, 10, 5, 200, 3, 8, 2, 40};

typedef struct {
    const char *output;
    FILE *output_stdout; /* the data's stdout when output is "-" */
    bool quick;
} options_t;

static void usage(FILE *out);
static const cli_t cli = {"mal-calibrate", mal_version, usage};

/* The parameters and what the table shows besides them. */
typedef struct {
    predict_params_t params;
    double window_small_seconds, window_large_seconds;
    double window_fresh_seconds;
    int64_t transfer_bytes;
    double transfer_cold_seconds, transfer_warm_seconds;
    int executor_link;          /* the link class measure_executors measured           */
    int spawn_samples, wake_samples, remove_samples;
    int host_samples;           /* expansions by two processes in one spawn call        */
    double pair_seconds;        /* their median                                        */
    bool thread_multiple;       /* MPI_Init_thread provided MPI_THREAD_MULTIPLE        */
    bool async_ran;             /* the expansion ran in the background                 */
    double undisturbed_seconds; /* kernel iteration, median, nothing in the background  */
    double disturbed_seconds;   /* mean, while the expansion ran in the background      */
    int disturbed_iterations;
    double background_seconds, switch_seconds; /* mal_last_reconfig()'s                 */
} results_t;

/* Remarks (clamped values, fallbacks) for the table and the file's header; rank 0. */
static char notes[2048];

static void add_note(const char *fmt, ...)
{
    size_t used = strlen(notes);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + used, sizeof notes - used, fmt, ap);
    va_end(ap);
    used = strlen(notes);
    if (used + 1 < sizeof notes)
        strcat(notes, "\n");
}

/* ---- small helpers ------------------------------------------------------------------ */

static int libmal_failed(const char *call, mal_status_t st)
{
    fprintf(stderr, "mal-calibrate: %s failed (%s): %s\n", call, mal_strerror(st),
            mal_error_message());
    return EXIT_FAILED;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double max_over_ranks(MPI_Comm comm, double local)
{
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_MAX, comm);
    return local;
}

static int rank_of(MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    return rank;
}

/* malloc on every rank or on none: a rank that cannot allocate must not leave the
 * other waiting in the next collective. */
static void *alloc_everywhere(MPI_Comm comm, size_t bytes, const char *what)
{
    void *p = malloc(bytes);
    int ok = p != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok)
        return p;
    free(p);
    if (rank_of(comm) == 0)
        fprintf(stderr, "mal-calibrate: cannot allocate %zu MiB for %s\n", bytes / MIB, what);
    return NULL;
}

/* Least-squares slope of y over x. */
static double fit_slope(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i] / n;
        my += y[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    return sxx > 0 ? sxy / sxx : 0.0;
}

/* The model needs some parameters strictly positive, others non-negative; noise can
 * push a fitted value below that. */
static void clamp_below(double *value, double floor, const char *name, const char *why)
{
    if (*value >= floor)
        return;
    add_note("%s came out %.3g (%s); clamped to %g", name, *value, why, floor);
    *value = floor;
}

/* Times fn on every rank at once: a barrier lines the ranks up, each repetition counts
 * the slowest rank, the first `warmups` calls are not counted (first touches, lazy
 * connections). fn returns 0, or nonzero on a failure all ranks share. */
static int time_together(MPI_Comm comm, int warmups, int reps, int (*fn)(void *), void *ctx,
                         double *median_seconds)
{
    double t[MAX_REPS];
    for (int i = -warmups; i < reps; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (fn(ctx) != 0)
            return EXIT_FAILED;
        double slowest = max_over_ranks(comm, MPI_Wtime() - t0);
        if (i >= 0)
            t[i] = slowest;
    }
    *median_seconds = median(t, reps);
    return 0;
}

/* ---- alpha, beta: ping-pong ---------------------------------------------------------- */

/* 8 B, then 16 B to 4 MiB in powers of 4. */
static int message_sizes(size_t *sizes)
{
    int n = 0;
    sizes[n++] = SMALLEST_MESSAGE;
    for (size_t s = 2 * SMALLEST_MESSAGE; s <= LARGEST_MESSAGE; s *= 4)
        sizes[n++] = s;
    return n;
}

/* Median one-way time (round trip / 2) of `bytes`-byte messages; valid on rank 0,
 * which starts each round trip. PMPI_ entry points: the monitor's wrappers (libmal-pmpi)
 * interpose MPI_Send and MPI_Recv and time the PMPI_ call inside, so that is the cost the
 * model must predict; through the wrapper alpha came out ~0.1 us (20%) higher here. */
static double one_way_seconds(MPI_Comm comm, char *buf, size_t bytes, int reps)
{
    double t[MAX_REPS];
    int rank = rank_of(comm), peer = 1 - rank, count = (int)bytes;
    for (int i = -WARMUP_ROUNDS; i < reps; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            PMPI_Send(buf, count, MPI_BYTE, peer, TAG, comm);
            PMPI_Recv(buf, count, MPI_BYTE, peer, TAG, comm, MPI_STATUS_IGNORE);
        } else {
            PMPI_Recv(buf, count, MPI_BYTE, peer, TAG, comm, MPI_STATUS_IGNORE);
            PMPI_Send(buf, count, MPI_BYTE, peer, TAG, comm);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) / 2;
    }
    return median(t, reps);
}

/* Hockney fit t = alpha + n beta. An ordinary least-squares line through all sizes is
 * dominated by the large messages (their times are ~1000x the small ones), so its
 * intercept is noise and can come out negative. Each parameter is taken from the sizes
 * that determine it instead: alpha is the time of the smallest message (pure latency),
 * beta the least-squares slope over the sizes >= 64 KiB, where the rendezvous protocol
 * is in use and time grows linearly with size. */
static void fit_hockney(const size_t *sizes, const double *one_way, int n, results_t *r)
{
    double x[MAX_SIZES], y[MAX_SIZES];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (sizes[i] >= SLOPE_FROM) {
            x[m] = (double)sizes[i];
            y[m++] = one_way[i];
        }
    r->params.alpha = one_way[0];
    r->params.beta = fit_slope(x, y, m);
    clamp_below(&r->params.alpha, 1e-9, "alpha", "timer resolution");
    clamp_below(&r->params.beta, 1e-12, "beta", "noisy large-message times");
}

static int measure_point_to_point(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    char *buf = alloc_everywhere(comm, LARGEST_MESSAGE, "the ping-pong buffer");
    if (buf == NULL)
        return EXIT_FAILED;
    memset(buf, 1, LARGEST_MESSAGE);
    size_t sizes[MAX_SIZES];
    double one_way[MAX_SIZES];
    int n = message_sizes(sizes);
    /* The first pass is a warm-up, discarded: right after the launch the first series
     * came out up to 6x slow in some runs (the two processes not yet settled on their
     * own cores), while the same size measured later never did. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            one_way[i] = one_way_seconds(comm, buf, sizes[i],
                                         sizes[i] >= SLOPE_FROM ? reps->large_messages
                                                                : reps->small_messages);
    free(buf);
    if (rank_of(comm) == 0)
        fit_hockney(sizes, one_way, n, r);
    return 0;
}

/* ---- gamma: local reduction ---------------------------------------------------------- */

typedef struct {
    double *in, *inout;
    int count;
} reduction_t;

static int reduce_once(void *arg)
{
    reduction_t *red = arg;
    MPI_Reduce_local(red->in, red->inout, red->count, MPI_DOUBLE, MPI_SUM);
    return 0;
}

/* Both ranks reduce at once, as they do inside a collective, sharing memory bandwidth. */
static int measure_reduction(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    reduction_t red = {.count = (int)(REDUCE_BYTES / sizeof(double))};
    red.in = alloc_everywhere(comm, REDUCE_BYTES, "the reduction input");
    if (red.in == NULL)
        return EXIT_FAILED;
    red.inout = alloc_everywhere(comm, REDUCE_BYTES, "the reduction output");
    if (red.inout == NULL) {
        free(red.in);
        return EXIT_FAILED;
    }
    for (int i = 0; i < red.count; i++) {
        red.in[i] = 1.0;
        red.inout[i] = 0.0;
    }
    double seconds;
    int rc = time_together(comm, 1, reps->bulk, reduce_once, &red, &seconds);
    r->params.gamma = seconds / (double)REDUCE_BYTES;
    free(red.in);
    free(red.inout);
    return rc;
}

/* ---- get_bandwidth, get_latency: one-sided gets ------------------------------------- */

typedef struct {
    MPI_Win win;
    char *dst;
    int peer, count;
} get_epoch_t;

static int get_in_epoch(void *arg)
{
    get_epoch_t *g = arg;
    MPI_Win_lock_all(0, g->win);
    MPI_Get(g->dst, g->count, MPI_BYTE, g->peer, 0, g->count, MPI_BYTE, g->win);
    MPI_Win_unlock_all(g->win);
    return 0;
}

/* Created and dynamic windows returned wrong data with osc ucx on merged communicators
 * (docs/design.md): check that the gets really delivered the peer's bytes. */
static int check_get_data(MPI_Comm comm, const get_epoch_t *g)
{
    char expected = (char)(g->peer + 1);
    int ok = g->dst[0] == expected && g->dst[g->count - 1] == expected;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok && rank_of(comm) == 0)
        fprintf(stderr, "mal-calibrate: MPI_Get delivered wrong data (is osc ucx in use? "
                        "run through tools/malrun)\n");
    return ok ? 0 : EXIT_FAILED;
}

/* One 8-byte get completed with a flush, inside one open epoch; both ranks at once (so
 * both are inside MPI, whatever progress the transport needs). Each rank's median, the
 * slower rank's. */
static double get_latency_seconds(MPI_Comm comm, const get_epoch_t *g, int reps)
{
    double t[MAX_REPS];
    char buf[LATENCY_BYTES];
    MPI_Barrier(comm);
    MPI_Win_lock_all(0, g->win);
    for (int i = -WARMUP_ROUNDS; i < reps; i++) {
        double t0 = MPI_Wtime();
        MPI_Get(buf, LATENCY_BYTES, MPI_BYTE, g->peer, 0, LATENCY_BYTES, MPI_BYTE, g->win);
        MPI_Win_flush(g->peer, g->win);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    MPI_Win_unlock_all(g->win);
    return max_over_ranks(comm, median(t, reps));
}

/* MPI_Win_allocate: the window kind that works with osc ucx (docs/design.md). */
static int measure_one_sided(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    get_epoch_t g = {.peer = 1 - rank_of(comm), .count = (int)GET_BYTES};
    g.dst = alloc_everywhere(comm, GET_BYTES, "the get destination");
    if (g.dst == NULL)
        return EXIT_FAILED;
    memset(g.dst, 0, GET_BYTES);
    char *base;
    MPI_Win_allocate((MPI_Aint)GET_WINDOW_BYTES, 1, MPI_INFO_NULL, comm, &base, &g.win);
    memset(base, rank_of(comm) + 1, GET_WINDOW_BYTES); /* resident pages, known bytes */
    MPI_Barrier(comm);
    double seconds;
    /* the warm-up epoch counts for nothing: the first epoch on a window is slow */
    int rc = time_together(comm, 1, reps->bulk, get_in_epoch, &g, &seconds);
    if (rc == 0)
        rc = check_get_data(comm, &g);
    r->params.get_bandwidth = (double)GET_BYTES / seconds;
    if (rc == 0)
        r->params.get_latency = get_latency_seconds(comm, &g, reps->latency);
    MPI_Win_free(&g.win);
    free(g.dst);
    return rc;
}

/* ---- copy_bandwidth: memcpy --------------------------------------------------------- */

typedef struct {
    char *src, *dst;
    size_t bytes;
} copy_t;

static volatile char copy_sink; /* a read of the copy, so it cannot be optimised away */

static int copy_once(void *arg)
{
    copy_t *c = arg;
    memcpy(c->dst, c->src, c->bytes);
    copy_sink = c->dst[c->bytes / 2];
    return 0;
}

static int measure_copy(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    copy_t c = {.bytes = COPY_BYTES};
    c.src = alloc_everywhere(comm, COPY_BYTES, "the memcpy source");
    if (c.src == NULL)
        return EXIT_FAILED;
    c.dst = alloc_everywhere(comm, COPY_BYTES, "the memcpy destination");
    if (c.dst == NULL) {
        free(c.src);
        return EXIT_FAILED;
    }
    memset(c.src, 7, COPY_BYTES); /* touched: page faults are not copy time */
    memset(c.dst, 0, COPY_BYTES);
    double seconds;
    int rc = time_together(comm, 1, reps->bulk, copy_once, &c, &seconds);
    r->params.copy_bandwidth = (double)COPY_BYTES / seconds;
    free(c.src);
    free(c.dst);
    return rc;
}

/* ---- window_seconds, window_byte_seconds: creating a structure's memory ------------- */

/* What a redistribution pays per buffer it creates, measured as libmal creates them
 * (mal_alloc_window: two buffers per rank, each populated, in whatever memory libmal
 * picks here: direct memory on one node, MPI windows otherwise). `hold`: every
 * structure stays allocated until all are timed, so each gets memory this process never
 * used; otherwise each is freed before the next, which then gets recycled memory, as a
 * running application mostly does (in these VMs memory freed recently is 10-25x cheaper
 * to populate than memory the host has reclaimed: docs/design.md, platform facts). */
static int time_allocs(MPI_Comm comm, int64_t bytes, int reps, bool hold, double *seconds)
{
    double t[MAX_REPS];
    mal_array_t *held[MAX_REPS + 1];
    int n = 0, rc = 0;
    for (int i = -1; i < reps && rc == 0; i++) {
        char name[32];
        snprintf(name, sizeof name, "mal_calibrate_alloc%d", n);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        mal_status_t st = mal_alloc_window(name, MPI_DOUBLE, bytes / (int64_t)sizeof(double),
                                           1, MAL_BLOCK, &held[n]);
        double slowest = max_over_ranks(comm, MPI_Wtime() - t0);
        if (st != MAL_OK)
            rc = libmal_failed("mal_alloc_window", st);
        else if (hold)
            n++;
        else
            mal_free_array(held[n]);
        if (i >= 0)
            t[i] = slowest;
    }
    while (n > 0)
        mal_free_array(held[--n]);
    *seconds = rc == 0 ? median(t, reps) : 0.0;
    return rc;
}

/* A line through two sizes: the intercept is the cost per buffer, the slope per byte
 * of buffer (two buffers per rank of (1 + headroom) times its half of the bytes). */
static int measure_windows(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    int rc = time_allocs(comm, WINDOW_SMALL_BYTES, reps->windows, false,
                         &r->window_small_seconds);
    if (rc == 0)
        rc = time_allocs(comm, WINDOW_LARGE_BYTES, reps->windows, false,
                         &r->window_large_seconds);
    if (rc == 0)
        rc = time_allocs(comm, WINDOW_LARGE_BYTES, reps->windows, true,
                         &r->window_fresh_seconds);
    double per_buffer = (1.0 + HEADROOM) / 2.0; /* of the structure's bytes, per rank */
    double small = (double)WINDOW_SMALL_BYTES * per_buffer;
    double large = (double)WINDOW_LARGE_BYTES * per_buffer;
    double slope = (r->window_large_seconds - r->window_small_seconds) / (2.0 * (large - small));
    r->params.window_byte_seconds = slope;
    r->params.window_seconds = r->window_small_seconds / 2.0 - slope * small;
    if (rank_of(comm) == 0) {
        clamp_below(&r->params.window_byte_seconds, 0.0, "window_byte_seconds",
                    "large structure no slower than small");
        clamp_below(&r->params.window_seconds, 0.0, "window_seconds", "negative intercept");
    }
    return rc;
}

/* ---- fault_byte_seconds: memory a reconfiguration maps ------------------------------ */

#define FAULT_BYTES ((size_t)64 << 20)

/* Memory a reconfiguration maps is not populated in advance: the move that writes it
 * faults it in, 4 KiB page by page (src/engine/transport/direct.c, map_lazily). Timed as
 * that: fresh 4 KiB pages written once, both ranks at once, the slower rank's time. */
static double fault_once(MPI_Comm comm)
{
    char *p = mmap(NULL, FAULT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    int ok = p != MAP_FAILED; /* agreed: a rank without the memory must not hang the other */
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        if (p != MAP_FAILED)
            munmap(p, FAULT_BYTES);
        return -1;
    }
    madvise(p, FAULT_BYTES, MADV_NOHUGEPAGE);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    memset(p, 1, FAULT_BYTES);
    double t = max_over_ranks(comm, MPI_Wtime() - t0);
    munmap(p, FAULT_BYTES);
    return t;
}

static int measure_faults(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    double t[MAX_REPS];
    int n = reps->windows < MAX_REPS ? reps->windows : MAX_REPS;
    for (int i = 0; i < n; i++)
        if ((t[i] = fault_once(comm)) < 0)
            return libmal_failed("mmap of the fault measurement", MAL_ERR_NOMEM);
    r->params.fault_byte_seconds = median(t, n) / (double)FAULT_BYTES;
    return 0;
}

/* ---- epoch_seconds: the fixed cost of one libmal rebalance -------------------------- */

typedef struct {
    int calls;
} rebalance_cycle_t;

/* Alternates two layouts so every call moves a few rows; the structure is tiny, so the
 * time is the rebalance's fixed part (agreement, epochs). */
static int rebalance_once(void *arg)
{
    static const double skewed[2] = {1, 3}, even[2] = {1, 1};
    rebalance_cycle_t *c = arg;
    mal_status_t st = mal_rebalance(c->calls++ % 2 == 0 ? skewed : even);
    return st == MAL_OK ? 0 : libmal_failed("mal_rebalance", st);
}

static int measure_epoch(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    mal_array_t *a;
    mal_status_t st = mal_alloc_window("mal_calibrate_epoch", MPI_DOUBLE, EPOCH_ROWS, 1,
                                       MAL_BLOCK, &a);
    if (st != MAL_OK)
        return libmal_failed("mal_alloc_window", st);
    rebalance_cycle_t c = {0};
    /* two warm-ups: the first layout change may have to grow the buffers */
    int rc = time_together(comm, 2, reps->epochs, rebalance_once, &c,
                           &r->params.epoch_seconds);
    /* freed before the resizes, so that they carry no data */
    st = mal_free_array(a);
    if (rc == 0 && st != MAL_OK)
        rc = libmal_failed("mal_free_array", st);
    return rc;
}

/* ---- get_bandwidth, cold_get_bandwidth: one-sided moves through libmal's memory ---- */

/* rma-get moves from {1,1} to {2,3} and back: rank 1's part gains (or gives) a tenth of
 * the rows at its front, which its headroom absorbs, so the move is in place (no local
 * copy) and its time is the agreement plus the pull. The first move, on memory fresh
 * from mal_alloc_window, is the cold one; the following ones are warm. */
/* One timed mal_rebalance to `weights`: the slowest rank's seconds, the bytes that
 * changed owner over all ranks, and whether the move was in place. */
static mal_status_t timed_rebalance(MPI_Comm comm, const double *weights, double *seconds,
                                    int64_t *moved, bool *in_place)
{
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    mal_status_t st = mal_rebalance(weights);
    *seconds = max_over_ranks(comm, MPI_Wtime() - t0);
    mal_rebalance_stats_t s;
    mal_last_rebalance(&s);
    *in_place = s.in_place;
    int64_t in = s.bytes_received;
    MPI_Allreduce(&in, moved, 1, MPI_INT64_T, MPI_SUM, comm);
    return st;
}

/* A structure of `bytes` of doubles for a transfer measurement, evenly split. */
static int transfer_array(const char *name, int64_t bytes, mal_array_t **a)
{
    mal_status_t st = mal_alloc_window(name, MPI_DOUBLE, bytes / (int64_t)sizeof(double), 1,
                                       MAL_BLOCK, a);
    return st != MAL_OK ? libmal_failed("mal_alloc_window", st) : 0;
}

static int measure_transfer(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    int64_t bytes = reps == &QUICK_REPS ? TRANSFER_BYTES_QUICK : TRANSFER_BYTES;
    static const double even[2] = {1, 1}, skewed[2] = {2, 3};
    mal_array_t *a;
    if (transfer_array("mal_calibrate_transfer", bytes, &a) != 0)
        return EXIT_FAILED;
    mal_redist_t was = mal_get_redist();
    mal_set_redist(MAL_REDIST_RMA_GET);
    double t[MAX_REPS], cold = 0;
    int rc = 0;
    bool in_place = true;
    int64_t moved = 0;
    for (int i = -1; i < reps->bulk && rc == 0; i++) {
        double slowest;
        bool here;
        /* i = -1: {1,1} -> {2,3} */
        mal_status_t st = timed_rebalance(comm, i % 2 == 0 ? even : skewed, &slowest, &moved,
                                          &here);
        if (st != MAL_OK)
            rc = libmal_failed("mal_rebalance", st);
        in_place &= here;
        if (i < 0)
            cold = slowest;
        else
            t[i] = slowest;
    }
    mal_set_redist(was);
    mal_free_array(a);
    if (rc != 0)
        return rc;
    double warm = median(t, reps->bulk), fixed = r->params.epoch_seconds;
    r->transfer_bytes = moved;
    r->transfer_cold_seconds = cold;
    r->transfer_warm_seconds = warm;
    r->params.get_bandwidth = (double)moved / (warm > fixed ? warm - fixed : warm);
    r->params.cold_get_bandwidth = (double)moved / (cold > fixed ? cold - fixed : cold);
    if (!in_place && rank_of(comm) == 0)
        add_note("the transfer measurement was not in place: its bandwidths include "
                 "local copies");
    return 0;
}

/* ---- redist_<link>_<state>_<executor>: what MAL_REDIST_AUTO chooses from ------------ */

/* The executors of predict_params_t.redist_bw, in its order. */
static const mal_redist_t executors[PREDICT_EXECUTORS] = {MAL_REDIST_RMA, MAL_REDIST_ALLTOALLV,
                                                          MAL_REDIST_P2P, MAL_REDIST_RMA_GET};

/* One executor on a structure of its own, fresh from mal_alloc_window: {1,1} -> {1,4}
 * (a part outgrows its spare, as in the benchmark's uniform-to-skewed) is the cold
 * move, then back and forth the warm ones. Bytes per second of each, or -1. */
static int measure_executor(MPI_Comm comm, const reps_t *reps, mal_redist_t m, int64_t bytes,
                            double *cold_bw, double *warm_bw, int *link)
{
    static const double even[2] = {1, 1}, skewed[2] = {1, 4};
    mal_array_t *a;
    if (transfer_array("mal_calibrate_executor", bytes, &a) != 0)
        return EXIT_FAILED;
    *link = strcmp(mal_memory_name(a), "direct") == 0 ? PREDICT_LINK_HOST : PREDICT_LINK_NET;
    mal_redist_t was = mal_get_redist();
    mal_set_redist(m);
    double t[MAX_REPS];
    int rc = 0, warm = 0;
    for (int i = 0; i < 2 * reps->bulk + 1 && rc == 0; i++) {
        double slowest;
        int64_t moved = 0;
        bool in_place;
        mal_status_t st = timed_rebalance(comm, i % 2 == 0 ? skewed : even, &slowest, &moved,
                                          &in_place);
        if (st != MAL_OK)
            rc = libmal_failed("mal_rebalance", st);
        else if (i == 0)
            *cold_bw = (double)moved / slowest;
        else if (i % 2 == 0) /* the same move as the cold one */
            t[warm++] = (double)moved / slowest;
    }
    mal_set_redist(was);
    mal_free_array(a);
    *warm_bw = rc == 0 ? median(t, warm) : -1;
    return rc;
}

static int measure_executors(MPI_Comm comm, const reps_t *reps, results_t *r)
{
    int64_t bytes = reps == &QUICK_REPS ? TRANSFER_BYTES_QUICK : TRANSFER_BYTES;
    int rc = 0, link = PREDICT_LINK_HOST;
    double cold[PREDICT_EXECUTORS], warm[PREDICT_EXECUTORS];
    for (int k = 0; k < PREDICT_EXECUTORS && rc == 0; k++)
        rc = measure_executor(comm, reps, executors[k], bytes, &cold[k], &warm[k], &link);
    if (rc != 0)
        return rc;
    /* Only the class this job measured: the other is 0 (not measured: libmal then takes
     * the documented defaults' choice for it). */
    memset(r->params.redist_bw, 0, sizeof r->params.redist_bw);
    for (int k = 0; k < PREDICT_EXECUTORS; k++) {
        r->params.redist_bw[link][PREDICT_COLD][k] = cold[k];
        r->params.redist_bw[link][PREDICT_WARM][k] = warm[k];
    }
    r->executor_link = link;
    return 0;
}

/* ---- cores -------------------------------------------------------------------------- */

static int count_cores(void)
{
    hwloc_topology_t topo;
    int cores = -1;
    if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0)
            cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_topology_destroy(topo);
    }
    if (cores >= 1)
        return cores;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    add_note("hwloc could not count the cores; used sysconf(_SC_NPROCESSORS_ONLN) = %ld",
             online);
    return online >= 1 ? (int)online : 1;
}

/* ---- the measurements on the initial processes -------------------------------------- */

typedef int (*measurement_t)(MPI_Comm, const reps_t *, results_t *);

static int measure_initial(const reps_t *reps, results_t *r)
{
    static const measurement_t measurements[] = {measure_point_to_point, measure_reduction,
                                                 measure_one_sided, measure_copy,
                                                 measure_windows, measure_faults,
                                                 measure_epoch,
                                                 measure_transfer, measure_executors};
    int size, rank = rank_of(mal_comm());
    MPI_Comm_size(mal_comm(), &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mal-calibrate: needs exactly 2 processes, got %d "
                            "(run: tools/malrun -n 2 mal-calibrate ...)\n", size);
        return CLI_EXIT_USAGE; /* launched wrongly: a usage error */
    }
    if (rank == 0)
        r->params.cores = count_cores();
    MPI_Comm comm;
    MPI_Comm_dup(mal_comm(), &comm);
    /* a failing MPI call in a measurement is unrecoverable: abort rather than hang */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof measurements / sizeof *measurements; i++)
        rc = measurements[i](comm, reps, r);
    MPI_Comm_free(&comm);
    return rc;
}

/* ---- spawn_seconds, pool_wake_seconds, remove_seconds: libmal's reconfigurations --- */

/* One cycle of six steps, by direct calls (synchronous whatever mal_config_t.async
 * says, so the background cannot blur these figures): spawn one process, release it
 * (it parks in the pool), take it back from the pool, release it again, then end it
 * for good (mal_pool_release) so that the next expansion spawns again. Without a pool
 * the releases end the process and both expansions spawn. Then two processes in one
 * spawn call (batched), released and ended: two lone spawns cost two calls and two
 * processes, the pair one call and two processes, so the difference is the call's fixed
 * cost (with its merge), which an expansion pays once per host it spawns on. */
#define CYCLE_STEPS 6

typedef enum {
    CYCLE_SPAWN, CYCLE_PARK, CYCLE_WAKE, CYCLE_PARK_AND_END,
    CYCLE_TWO_ONE_CALL, CYCLE_END_TWO
} cycle_step_t;

typedef struct {
    double spawn[2 * MAX_CYCLES], wake[2 * MAX_CYCLES], shrink[2 * MAX_CYCLES];
    double pair[MAX_CYCLES];
    int spawns, wakes, shrinks, pairs;
} resize_samples_t;

/* Per process, by where the processes came from (mal_reconfig_stats_t.pooled); the
 * pair whole. */
static void record_reconfig(resize_samples_t *s, cycle_step_t step)
{
    mal_reconfig_stats_t st;
    if (mal_last_reconfig(&st) != MAL_OK || st.status != MAL_OK)
        return;
    int added = st.procs_after - st.procs_before;
    bool spawned = st.action == MAL_ACTION_EXPAND && added > 0 && st.pooled == 0;
    if (spawned && step == CYCLE_TWO_ONE_CALL && s->pairs < MAX_CYCLES)
        s->pair[s->pairs++] = st.process_seconds;
    else if (spawned && step == CYCLE_SPAWN && s->spawns < 2 * MAX_CYCLES)
        s->spawn[s->spawns++] = st.process_seconds / added;
    else if (st.action == MAL_ACTION_EXPAND && added > 0 && st.pooled == added &&
             s->wakes < 2 * MAX_CYCLES)
        s->wake[s->wakes++] = st.process_seconds / added;
    else if (st.action == MAL_ACTION_SHRINK && st.procs_before - st.procs_after == 1 &&
             s->shrinks < 2 * MAX_CYCLES)
        s->shrink[s->shrinks++] = st.process_seconds;
}

/* The step's reconfiguration; the last ranks are the processes the cycle added. */
static mal_status_t cycle_action(cycle_step_t step)
{
    int size;
    MPI_Comm_size(mal_comm(), &size);
    int last[2] = {size - 2, size - 1};
    switch (step) {
    case CYCLE_SPAWN:
    case CYCLE_WAKE:
        return mal_expand(1, MAL_SPAWN_DEFAULT, NULL);
    case CYCLE_PARK:
    case CYCLE_PARK_AND_END:
        return mal_shrink(1, &last[1], NULL);
    case CYCLE_TWO_ONE_CALL:
        return mal_expand(2, MAL_SPAWN_BATCHED, NULL);
    case CYCLE_END_TWO:
        return mal_shrink(2, last, NULL);
    }
    return MAL_ERR_ARG;
}

static bool cycle_expands(cycle_step_t step)
{
    return step == CYCLE_SPAWN || step == CYCLE_WAKE || step == CYCLE_TWO_ONE_CALL;
}

/* After the reconfiguration of step `step`: its figures, and the end of the parked
 * processes after the steps that end them. Returns MAL_OK or the failure. */
static mal_status_t after_action(cycle_step_t step, bool keeper, resize_samples_t *s)
{
    if (keeper)
        record_reconfig(s, step);
    if (step != CYCLE_PARK_AND_END && step != CYCLE_END_TWO)
        return MAL_OK;
    mal_status_t st = mal_pool_release(-1);
    if (st != MAL_OK)
        libmal_failed("mal_pool_release", st);
    return st;
}

/* A start the MPI runtime lost and libmal tried again (docs/design.md, "Why the spawn
 * hangs") takes the whole bound, tens of seconds, where a spawn takes tens of
 * milliseconds: samples over 10x the fastest are dropped, with a note, so that one such
 * start cannot become the median of a quick run's two. */
#define LOST_START_FACTOR 10.0

static void drop_lost_starts(double *v, int *n, const char *what)
{
    double fastest = INFINITY;
    for (int i = 0; i < *n; i++)
        fastest = v[i] < fastest ? v[i] : fastest;
    int kept = 0;
    for (int i = 0; i < *n; i++)
        if (v[i] <= LOST_START_FACTOR * fastest)
            v[kept++] = v[i];
    if (kept < *n)
        add_note("%d of %d %s took over %.0fx the fastest (%.4f s): a start the runtime lost "
                 "and libmal retried; dropped", *n - kept, *n, what, LOST_START_FACTOR,
                 fastest);
    *n = kept;
}

/* spawn_host_seconds: two lone spawns (2 spawn_seconds) over the pair's one call,
 * within [0, spawn_seconds]; the default when no pair reported its time. */
static void host_seconds(resize_samples_t *s, results_t *r)
{
    r->host_samples = s->pairs;
    if (s->pairs == 0 || r->params.spawn_seconds <= 0) {
        add_note("no two-process expansion reported its time (no room for two more "
                 "processes, or none succeeded): spawn_host_seconds is the default");
        return;
    }
    r->pair_seconds = median(s->pair, s->pairs);
    double call = 2 * r->params.spawn_seconds - r->pair_seconds;
    if (call < 0 || call > r->params.spawn_seconds)
        add_note("two processes in one spawn call took %.4f s, one alone %.4f s: the "
                 "call's share is clamped to [0, spawn_seconds]", r->pair_seconds,
                 r->params.spawn_seconds);
    double whole = r->params.spawn_seconds;
    r->params.spawn_host_seconds = call < 0 ? 0 : call > whole ? whole : call;
}

/* Every process, spawned and pooled ones included, runs the cycles from where it is;
 * times are mal_last_reconfig()'s process_seconds (max over the ranks), read on the
 * initial rank 0, which is never released. Returns MAL_OK, MAL_REMOVED or the failure. */
static mal_status_t measure_resizes(int cycles, results_t *r)
{
    resize_samples_t s = {.spawns = 0};
    bool keeper = mal_is_initial_process() && rank_of(mal_comm()) == 0;
    /* A process that joined inside mal_init, or was woken from the pool inside its
     * mal_shrink, is inside an iteration whose reconfiguration the others are finishing:
     * it does not call that reconfiguration again. */
    bool arrived = !mal_is_initial_process();
    /* Room for one more process and not two (a hostfile, Slurm, plain mpiexec): the
     * pair is refused on every rank alike, and its end skipped. */
    bool pair_refused = false;
    for (int64_t it = mal_iteration(); it < CYCLE_STEPS * (int64_t)cycles;
         it = mal_iteration()) {
        cycle_step_t step = (cycle_step_t)(it % CYCLE_STEPS);
        bool skip = arrived || (step == CYCLE_END_TWO && pair_refused);
        mal_status_t st = skip ? MAL_OK : cycle_action(step);
        pair_refused = step == CYCLE_TWO_ONE_CALL && st == MAL_ERR_LIMIT;
        if (pair_refused) /* host_seconds says so */
            st = MAL_OK;
        if (st == MAL_REMOVED)
            return st;
        if (st < 0)
            return libmal_failed(cycle_expands(step) ? "mal_expand" : "mal_shrink", st), st;
        arrived = mal_iteration() != it; /* woken from the pool in a later iteration */
        if (arrived)
            continue;
        st = after_action(step, keeper, &s);
        if (st == MAL_OK && (st = mal_step()) < 0)
            libmal_failed("mal_step", st);
        if (st == MAL_REMOVED || st < 0)
            return st;
    }
    if (!keeper)
        return MAL_OK;
    int reported_spawns = s.spawns; /* before the lost starts are dropped */
    drop_lost_starts(s.spawn, &s.spawns, "lone spawns");
    drop_lost_starts(s.pair, &s.pairs, "spawns of two");
    r->spawn_samples = s.spawns;
    r->wake_samples = s.wakes;
    r->remove_samples = s.shrinks;
    r->params.spawn_seconds = s.spawns ? median(s.spawn, s.spawns) : 0.0;
    r->params.remove_seconds = s.shrinks ? median(s.shrink, s.shrinks) : 0.0;
    host_seconds(&s, r);
    if (s.wakes > 0)
        r->params.pool_wake_seconds = median(s.wake, s.wakes);
    else
        add_note("no expansion took a process from the pool (no pool in this libmal?): "
                 "pool_wake_seconds is the default");
    if (reported_spawns + s.wakes < 2 * cycles || s.shrinks < 2 * cycles)
        add_note("only %d expansions and %d releases of the %d planned reported their "
                 "times", reported_spawns + s.wakes, s.shrinks, 2 * cycles);
    return MAL_OK;
}

/* ---- async_slowdown: iterations while an expansion runs in the background ---------- */

#define KERNEL_DOUBLES ((size_t)128 * 1024) /* 1 MiB: in cache, so computation bound */
/* About 8-12 ms an iteration on the development VM. With 0.4 ms iterations (16 sweeps)
 * the background measured 8x: each iteration then waits a whole scheduler slice of the
 * newcomer's start on the shared cores, which iterations of an application's length
 * (Jacobi, CG: tens of ms) spread over more work (1.2-1.35x). */
#define KERNEL_SWEEPS 256
#define WARMUP_ITERATIONS 10
#define MAX_BACKGROUND_ITERATIONS 100000

/* An application's iteration on the old set: computation, then an allreduce. */
static void kernel_iteration(double *v)
{
    double local = 0, global;
    for (int sweep = 0; sweep < KERNEL_SWEEPS; sweep++)
        for (size_t i = 0; i < KERNEL_DOUBLES; i++)
            v[i] = v[i] * 0.999 + 1e-3;
    for (size_t i = 0; i < KERNEL_DOUBLES; i += 4096)
        local += v[i];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, mal_comm());
    copy_sink = (char)global;
}

/* The kernel's iteration times (each with its mal_step): undisturbed before the plan's
 * entry (the "+1" fires in the step that reaches it), disturbed while the expansion runs
 * in the background; the iteration that starts it and the one that switches are left
 * out. */
typedef struct {
    double undisturbed[MAX_REPS], *disturbed;
    int nundisturbed, ndisturbed;
} kernel_times_t;

/* Iterates until the switch (MAL_OK) or a failure, which the caller reports. */
static mal_status_t run_kernel(int64_t entry, double *v, kernel_times_t *k)
{
    int64_t first = mal_iteration();
    for (int64_t it = first;; it++) {
        double t0 = MPI_Wtime();
        kernel_iteration(v);
        mal_status_t st = mal_step();
        double t = MPI_Wtime() - t0;
        if (st < 0)
            return st;
        if (st == MAL_RECONFIGURED)
            return MAL_OK;
        if (it + 1 < entry && it >= first + WARMUP_ITERATIONS && k->nundisturbed < MAX_REPS)
            k->undisturbed[k->nundisturbed++] = t;
        else if (it + 1 > entry && k->ndisturbed < MAX_BACKGROUND_ITERATIONS)
            k->disturbed[k->ndisturbed++] = t;
    }
}

static double mean(const double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    return n > 0 ? sum / n : 0;
}

/* The slowdown from the kernel's times, and what the table shows beside it. */
static void slowdown_from(kernel_times_t *k, results_t *r)
{
    mal_reconfig_stats_t st;
    mal_last_reconfig(&st);
    r->async_ran = st.async;
    r->background_seconds = st.background_seconds;
    r->switch_seconds = st.switch_seconds;
    r->undisturbed_seconds = k->nundisturbed ? median(k->undisturbed, k->nundisturbed) : 0;
    r->disturbed_iterations = k->ndisturbed;
    r->disturbed_seconds = mean(k->disturbed, k->ndisturbed);
    if (k->ndisturbed == 0 || !(r->undisturbed_seconds > 0)) {
        add_note("the expansion did not run in the background (%s): async_slowdown is the "
                 "default", r->thread_multiple ? "no asynchronous expansion in this libmal?"
                                               : "MPI_THREAD_MULTIPLE not provided");
        return;
    }
    r->params.async_slowdown = r->disturbed_seconds / r->undisturbed_seconds;
    clamp_below(&r->params.async_slowdown, 1.0, "async_slowdown",
                "background iterations no slower than undisturbed ones");
}

/* Allocations the kernel needs, on every rank or on none (its allreduce would wait for
 * a rank that left). */
static mal_status_t kernel_alloc(kernel_times_t *k, double **v)
{
    k->disturbed = malloc(MAX_BACKGROUND_ITERATIONS * sizeof *k->disturbed);
    *v = malloc(KERNEL_DOUBLES * sizeof **v);
    int ok = k->disturbed != NULL && *v != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, mal_comm());
    if (!ok) {
        if (rank_of(mal_comm()) == 0)
            fprintf(stderr, "mal-calibrate: no memory for the kernel\n");
        return MAL_ERR_NOMEM;
    }
    for (size_t i = 0; i < KERNEL_DOUBLES; i++)
        (*v)[i] = 1.0;
    return MAL_OK;
}

/* The plan's one entry: "+1" at `entry`, asynchronous (mal_config_t.async). The
 * process it adds is released afterwards, so the report runs on the 2 initial ones. */
static mal_status_t measure_async(int64_t entry, results_t *r)
{
    int last;
    if (!mal_is_initial_process()) { /* the newcomer, after the switch */
        MPI_Comm_size(mal_comm(), &last);
        last--;
        mal_status_t st = mal_shrink(1, &last, NULL);
        return st == MAL_REMOVED || st < 0 ? st : MAL_OK;
    }
    kernel_times_t k = {.nundisturbed = 0};
    double *v = NULL;
    mal_status_t st = kernel_alloc(&k, &v);
    if (st == MAL_OK)
        st = run_kernel(entry, v, &k);
    if (st == MAL_OK && rank_of(mal_comm()) == 0)
        slowdown_from(&k, r);
    free(k.disturbed);
    free(v);
    if (st == MAL_ERR_NOMEM)
        return st;
    if (st != MAL_OK) { /* abandoned in the background: the old set goes on, unchanged */
        if (rank_of(mal_comm()) == 0)
            add_note("the asynchronous expansion was abandoned (%s): async_slowdown is the "
                     "default", mal_strerror(st));
        return MAL_OK;
    }
    MPI_Comm_size(mal_comm(), &last);
    last--;
    st = mal_shrink(1, &last, NULL);
    if (st < 0)
        return libmal_failed("mal_shrink", st), st;
    st = mal_pool_release(-1);
    return st == MAL_OK ? MAL_OK : (libmal_failed("mal_pool_release", st), st);
}

/* ---- output ------------------------------------------------------------------------- */

static void print_row(const char *name, double value, const char *unit, const char *how)
{
    printf("  %-26s %12.4g %-5s %s\n", name, value, unit, how);
}

/* The model's asynchronous expansion by one spawned process, nothing to move: what the
 * measured background should take and cost. */
static predict_expand_cost_t background_model(const predict_params_t *p)
{
    return predict_expand(p, &(predict_expand_t){.procs = 1, .async = true});
}

/* Iteration time the background cost the application: the disturbed iterations' excess
 * over the undisturbed median. */
static double lost_seconds(const results_t *r)
{
    return r->disturbed_iterations * (r->disturbed_seconds - r->undisturbed_seconds);
}

/* The executors' rows: this job's link class measured, the other left at 0. */
static void print_executors(const results_t *r)
{
    static const char *const state_how[PREDICT_STATES] = {
        "median of the same move again", "{1,1} -> {1,4} on a fresh structure"};
    for (int state = PREDICT_STATES - 1; state >= 0; state--)
        for (int k = 0; k < PREDICT_EXECUTORS; k++) {
            char how[160];
            int link = r->executor_link;
            snprintf(how, sizeof how, "%s, %s (%s)%s", mal_redist_name(executors[k]),
                     state_how[state], link == PREDICT_LINK_HOST ? "one host" : "two hosts",
                     predict_fastest_executor(&r->params, link, state) == k ? ": fastest"
                                                                            : "");
            print_row(predict_redist_key(link, state, k), r->params.redist_bw[link][state][k],
                      "B/s", how);
        }
}

static void print_table(const results_t *r, const reps_t *reps, bool quick, double seconds)
{
    const predict_params_t *p = &r->params;
    char how[160];
    printf("mal-calibrate: 2 processes, %s run, %.1f s; medians, max over ranks where both "
           "work\n", quick ? "quick" : "full", seconds);
    print_row("alpha", p->alpha, "s", "one-way time of an 8 B message (ping-pong)");
    snprintf(how, sizeof how, "slope of ping-pongs of 64 KiB..4 MiB (%.2f GB/s)",
             1e-9 / p->beta);
    print_row("beta", p->beta, "s/B", how);
    snprintf(how, sizeof how, "MPI_Reduce_local sum of 16 MiB of doubles (%.2f GB/s)",
             1e-9 / p->gamma);
    print_row("gamma", p->gamma, "s/B", how);
    snprintf(how, sizeof how, "rma-get of %.1f MiB through libmal, warm: %.4f s",
             (double)r->transfer_bytes / MIB, r->transfer_warm_seconds);
    print_row("get_bandwidth", p->get_bandwidth, "B/s", how);
    snprintf(how, sizeof how, "the same, first move on fresh memory: %.4f s",
             r->transfer_cold_seconds);
    print_row("cold_get_bandwidth", p->cold_get_bandwidth, "B/s", how);
    print_row("get_latency", p->get_latency, "s", "8 B MPI_Get + MPI_Win_flush");
    print_row("copy_bandwidth", p->copy_bandwidth, "B/s", "memcpy of 64 MiB");
    snprintf(how, sizeof how, "mal_rebalance of %d doubles, weights {1,3} <-> {1,1}",
             EPOCH_ROWS);
    print_row("epoch_seconds", p->epoch_seconds, "s", how);
    snprintf(how, sizeof how, "per buffer, mal_alloc_window: %zu KiB %.4f s, %zu MiB %.4f s",
             WINDOW_SMALL_BYTES / KIB, r->window_small_seconds, WINDOW_LARGE_BYTES / MIB,
             r->window_large_seconds);
    print_row("window_seconds", p->window_seconds, "s", how);
    snprintf(how, sizeof how, "slope of the same (recycled memory; %zu MiB on memory never "
             "used before: %.4f s)", WINDOW_LARGE_BYTES / MIB, r->window_fresh_seconds);
    print_row("window_byte_seconds", p->window_byte_seconds, "s/B", how);
    snprintf(how, sizeof how, "%zu MiB of fresh 4 KiB pages written once, both ranks",
             FAULT_BYTES / MIB);
    print_row("fault_byte_seconds", p->fault_byte_seconds, "s/B", how);
    snprintf(how, sizeof how, "spawn + merge of 1 process by mal_expand (%d samples)",
             r->spawn_samples);
    print_row("spawn_seconds", p->spawn_seconds, "s", how);
    snprintf(how, sizeof how, "of it, the spawn call's: 2 x spawn_seconds - 2 processes in "
             "1 call (%.4f s, %d samples%s)", r->pair_seconds, r->host_samples,
             r->host_samples ? "" : ": default");
    print_row("spawn_host_seconds", p->spawn_host_seconds, "s", how);
    snprintf(how, sizeof how, "release of 1 process by mal_shrink (%d of %d)",
             r->remove_samples, 2 * reps->resize_cycles);
    print_row("remove_seconds", p->remove_seconds, "s", how);
    snprintf(how, sizeof how, "1 process taken from the pool by mal_expand (%d samples%s)",
             r->wake_samples, r->wake_samples ? "" : ": default");
    print_row("pool_wake_seconds", p->pool_wake_seconds, "s", how);
    if (r->disturbed_iterations > 0)
        snprintf(how, sizeof how, "kernel iteration %.4f s, %.4f s during %d in the "
                 "background (%.3f s, model %.3f s; lost %.3f s, model %.3f s; switch "
                 "%.4f s)", r->undisturbed_seconds, r->disturbed_seconds,
                 r->disturbed_iterations, r->background_seconds,
                 background_model(p).background, lost_seconds(r),
                 background_model(p).process, r->switch_seconds);
    else
        snprintf(how, sizeof how, "default: the expansion ran synchronously (%s)",
                 r->thread_multiple ? "no background" : "no MPI_THREAD_MULTIPLE");
    print_row("async_slowdown", p->async_slowdown, "x", how);
    print_row("cores", p->cores, "", "hwloc cores of this host");
    print_executors(r);
    if (notes[0] != '\0')
        printf("notes:\n%s", notes);
}

static void describe_run(char *header, size_t len, bool quick)
{
    char host[256] = "unknown";
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "unknown");
    host[sizeof host - 1] = '\0';
    char date[64] = "unknown";
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) != NULL)
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &utc);
    snprintf(header, len, "mal-calibrate (%s run) on host %s, %s, 2 processes\n%s",
             quick ? "quick" : "full", host, date, notes);
}

static int write_file(const options_t *o, const results_t *r)
{
    char header[sizeof notes + 512];
    describe_run(header, sizeof header, o->quick);
    FILE *f = cli_open_output(&cli, o->output, "w", o->output_stdout);
    if (f == NULL)
        return EXIT_FAILED;
    if (predict_params_write(f, &r->params, header) != 0) {
        fprintf(stderr, "mal-calibrate: writing %s failed: %s\n", o->output, strerror(errno));
        cli_close_output(&cli, o->output, f);
        return EXIT_FAILED;
    }
    if (cli_close_output(&cli, o->output, f) != 0)
        return EXIT_FAILED;
    if (!cli_is_stdout(o->output))
        fprintf(stderr, "mal-calibrate: wrote %s\n", o->output);
    return 0;
}

/* Rank 0 prints and writes; the exit code travels to rank 1 so both report a failure. */
static int report(const results_t *r, const options_t *o, const reps_t *reps, double seconds)
{
    int rc = 0;
    if (rank_of(mal_comm()) == 0) {
        print_table(r, reps, o->quick, seconds);
        rc = write_file(o, r);
        fflush(stdout);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, mal_comm());
    return rc;
}

/* ---- main --------------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out, "usage: tools/malrun -n 2 mal-calibrate [-o FILE] [--quick]\n"
                 "  -o, --output FILE  calibration file to write (default " DEFAULT_OUTPUT
                 "; -: to\n"
                 "             stdout, and the table to stderr)\n"
                 "  --quick    fewer repetitions (for tests; under ~10 s)\n"
                 CLI_STANDARD_USAGE
                 "Exit status: 0, 1 when a measurement or the file fails, 2 for a usage "
                 "error.\n");
}

/* Every process parses, before MPI starts (spawned processes get the same arguments). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.output = DEFAULT_OUTPUT};
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"quick", no_argument, NULL, 'q'},
        CLI_STANDARD_OPTIONS, {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "o:", longopts)) != -1;) {
        if (c == 'o')
            o->output = optarg;
        else
            o->quick = true;
    }
    if (cli_is_stdout(o->output))
        o->output_stdout = cli_take_stdout(&cli);
}

/* The iteration at which the plan adds a process in the background: after the resize
 * cycles and the undisturbed kernel iterations. */
static int64_t async_entry(const reps_t *reps)
{
    return CYCLE_STEPS * (int64_t)reps->resize_cycles + reps->undisturbed;
}

static mal_status_t start_libmal(const reps_t *reps, bool can_spawn, char *plan,
                                 size_t plan_len)
{
    /* The calibration being made must not depend on an old one: with MAL_CALIBRATION
     * naming the file this run is about to create, mal_init would fail. */
    unsetenv("MAL_CALIBRATION");
    /* The expansions go where the runtime places them: a host list would split the
     * batched pair of the resize cycle into two spawn calls (spawn_host_seconds). */
    unsetenv("MAL_HOSTS");
    mal_config_t cfg;
    mal_config_init(&cfg);
    snprintf(plan, plan_len, "%lld:+1", (long long)async_entry(reps));
    cfg.plan = can_spawn ? plan : NULL;
    cfg.pool = 1;                    /* released processes park: their wake is timed */
    cfg.prefetch = 0;                /* the first expansion of each cycle spawns     */
    cfg.async = 1;                   /* the plan's expansion; mal_expand stays sync  */
    cfg.summary = false;             /* the table says it all                        */
    cfg.log_errors = false;          /* failures are printed here, with the call     */
    cfg.redist = MAL_REDIST_RMA;     /* the one-sided engine is what the model costs */
    return mal_init(MPI_COMM_WORLD, &cfg);
}

int main(int argc, char **argv)
{
    options_t opt;
    parse_options(argc, argv, &opt);
    /* MULTIPLE: the asynchronous expansion's background thread needs it (libmal expands
     * synchronously otherwise, and async_slowdown keeps its default). */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int exit_code = 0;
    const reps_t *reps = opt.quick ? &QUICK_REPS : &FULL_REPS;
    char plan[32];
    /* An MPI that cannot start processes (MPICH 4.0's ch4:ucx): everything but the
     * reconfigurations that add processes, whose keys keep the defaults. */
    const char *why = NULL;
    bool can_spawn = mal_spawn_supported(&why);
    mal_status_t st = start_libmal(reps, can_spawn, plan, sizeof plan);
    if (st != MAL_OK) {
        libmal_failed("mal_init", st);
        MPI_Finalize();
        return EXIT_FAILED;
    }
    results_t results;
    memset(&results, 0, sizeof results);
    predict_params_default(&results.params); /* any key this tool does not measure */
    results.thread_multiple = provided >= MPI_THREAD_MULTIPLE;
    double t0 = MPI_Wtime();
    if (mal_is_initial_process())
        exit_code = measure_initial(reps, &results);
    if (!can_spawn)
        add_note("this MPI cannot start processes: spawn_seconds, spawn_host_seconds, "
                 "remove_seconds, pool_wake_seconds and async_slowdown are the defaults "
                 "(%s)", why);
    if (exit_code == 0 && can_spawn)
        st = measure_resizes(reps->resize_cycles, &results);
    if (exit_code == 0 && st == MAL_OK && can_spawn)
        st = measure_async(async_entry(reps), &results);
    if (exit_code == 0 && st < 0)
        exit_code = EXIT_FAILED;
    if (exit_code == 0 && mal_is_initial_process())
        exit_code = report(&results, &opt, reps, MPI_Wtime() - t0);
    mal_finalize();
    MPI_Finalize();
    return exit_code;
}
