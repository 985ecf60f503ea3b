/* mal-sim: libmal's reconfiguring policy run against a modelled cluster, no MPI.
 *
 *   mal-sim scenario1 [--check] [--trace] [--csv FILE] [--avail FILE]
 *   mal-sim scenario2 [--ranks N] [--limit SECONDS]
 *   mal-sim replay FILE      (bench/regret.sh's decisions with its measured costs:
 *                             sim_replay.c)
 *
 * The decisions come from the real, pure code libmal runs (policy_decide, src/policy;
 * the prediction model, src/predict; block partitioning, src/partition): only the cluster
 * and the application are modelled here.
 *
 * Scenario 1 replays Flex-MPI's J.B.8 (Martin et al., §5.3, Figure 9): Jacobi on a dense
 * single-precision matrix of order 20,000, 2,500 iterations sampled every 100, started on
 * 8 processes, 2 per class, on the paper's heterogeneous cluster (apps/scenarios/
 * jb8.avail: Tables 1 and 3). The objective is to finish 25%, 30% or 35% faster than the
 * static run, under the efficiency or the cost constraint. The model, and what it
 * assumes:
 *  - every process owns one core (the policy places new ones on free cores only), and a
 *    core computes at eff x its class's nominal GFLOPS. The nominal figures are HPL
 *    peaks; Jacobi's matrix-vector product is bound by memory bandwidth and reaches a
 *    small fraction of them. That fraction is unknown, so eff is ONE factor for every
 *    class, fitted so that the static run takes the paper's 923 s; that all classes reach
 *    the same fraction of their peak is an assumption (their memory systems differ);
 *  - both the static and the malleable runs start with rows proportional to nominal
 *    power (the paper balances both, for a fair comparison);
 *  - an iteration takes the slowest rank's computation, work / power with no noise, plus
 *    the communication of one allgather of x and one 8-byte allreduce, timed by the same
 *    Hockney model over MPICH's algorithms the policy predicts with (lambda 1), on
 *    Gigabit Ethernet parameters set below. Computation and communication are therefore
 *    predicted exactly, by construction: the simulation tests the policy's decisions, not
 *    the model's accuracy (bench/validate_model.sh measures that on real runs);
 *  - a reconfiguration costs spawn or release per process (0.25 s per spawn is an
 *    assumption for MPICH spawning through the resource manager) plus the one-sided
 *    redistribution of the rows carried out as the engine does it (see carry_t), priced
 *    by the model; it is charged to the elapsed time and to every process held;
 *  - not modelled: reading the matrix at start-up, the library's monitoring and the
 *    policy's own time (the paper reports them negligible), interference between runs;
 *  - the operational cost is price ($ per core-hour) x seconds each process is held.
 *    The paper gives 1,535 "units" for the static run without defining the unit; this
 *    measure gives about 5% more for the same run, so costs compare between runs, not
 *    with the paper's digits.
 *
 * Scenario 2 times policy_decide at scale: N ranks (default 10,000) of a Jacobi-like
 * application on a synthetic cluster of 8 classes, with inputs made to lead to each kind
 * of decision, under both constraints. Each case runs in a child process, so that a
 * decision that does not return within the limit is stopped and reported, not waited
 * for. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, fork, poll */
#endif

#include "avail.h"
#include "cli.h"
#include "mal_version.h"
#include "partition.h"
#include "policy.h"
#include "predict.h"
#include "select.h"
#include "selfpath.h"
#include "sim_replay.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_FAILED CLI_EXIT_FAILURE

#define GFLOPS 1e9
#define ERRLEN 512

/* ---- the model ----------------------------------------------------------------------- */

/* A row-distributed iterative application. */
typedef struct {
    int64_t rows;
    int64_t row_bytes;            /* all registered data of one row                     */
    double work_per_row;          /* flop per row and iteration                         */
    predict_comm_profile_t comm;  /* per iteration and process                          */
    int64_t iterations;
    int interval;                 /* sampling interval, iterations                      */
} sim_app_t;

/* The cluster: hosts and classes, how much of its nominal power a core delivers, the
 * network and reconfiguration costs. */
typedef struct {
    const avail_t *avail;
    double efficiency;            /* achieved fraction of the nominal GFLOPS            */
    predict_params_t net;
} sim_cluster_t;

typedef struct {
    int host;
    bool removable;               /* started by an expansion                            */
    double share;                 /* of its core left by other users (1: dedicated)     */
} sim_proc_t;

/* The running set: processes by rank and the rows each holds. Sized for every core of
 * the cluster, since the policy never places a process on a full host. */
typedef struct {
    sim_proc_t *procs;
    int nprocs;
    int capacity;
    int64_t *bounds;              /* capacity + 1: rank r holds [bounds[r], bounds[r+1]) */
    int *used;                    /* processes per host                                  */
    int nhosts;
} sim_set_t;

static int total_cores(const avail_t *a)
{
    int cores = 0;
    for (int h = 0; h < a->nhosts; h++)
        cores += a->hosts[h].cores;
    return cores;
}

static const avail_class_t *host_class(const avail_t *a, int host)
{
    return &a->classes[a->hosts[host].cls];
}

static double proc_power(const sim_cluster_t *c, const sim_proc_t *p)
{
    return c->efficiency * host_class(c->avail, p->host)->gflops * GFLOPS * p->share;
}

static void set_free(sim_set_t *s)
{
    free(s->procs);
    free(s->bounds);
    free(s->used);
    *s = (sim_set_t){0};
}

static int set_init(sim_set_t *s, const avail_t *a)
{
    *s = (sim_set_t){0};
    s->capacity = total_cores(a);
    s->nhosts = a->nhosts;
    s->procs = calloc((size_t)s->capacity, sizeof *s->procs);
    s->bounds = calloc((size_t)s->capacity + 1, sizeof *s->bounds);
    s->used = calloc((size_t)s->nhosts, sizeof *s->used);
    if (!s->procs || !s->bounds || !s->used) {
        set_free(s);
        return -1;
    }
    return 0;
}

static int set_add(sim_set_t *s, const avail_t *a, int host, bool removable)
{
    if (host < 0 || host >= a->nhosts || s->used[host] >= a->hosts[host].cores ||
        s->nprocs >= s->capacity)
        return -1;
    s->procs[s->nprocs++] = (sim_proc_t){host, removable, 1.0};
    s->used[host]++;
    return 0;
}

/* At least one row per rank: a rank with nothing to compute would report zero work and
 * computation, which the policy rightly refuses as a measurement. */
static int set_layout(sim_set_t *s, const sim_app_t *app, const double *weights)
{
    return partition_block(app->rows, s->nprocs, weights, 1, s->bounds) == MAL_OK
               ? 0
               : -1;
}

/* RCP in a dedicated cluster: weights proportional to the nominal power of the class. */
static void nominal_weights(const sim_set_t *s, const avail_t *a, double *weights)
{
    for (int r = 0; r < s->nprocs; r++)
        weights[r] = host_class(a, s->procs[r].host)->gflops;
}

static int set_layout_nominal(sim_set_t *s, const avail_t *a, const sim_app_t *app)
{
    double *weights = malloc((size_t)s->nprocs * sizeof *weights);
    if (!weights)
        return -1;
    nominal_weights(s, a, weights);
    int rc = set_layout(s, app, weights);
    free(weights);
    return rc;
}

static int64_t rank_rows(const sim_set_t *s, int r)
{
    return s->bounds[r + 1] - s->bounds[r];
}

static double rank_work(const sim_set_t *s, const sim_app_t *app, int r)
{
    return app->work_per_row * (double)rank_rows(s, r);
}

static double rank_comp(const sim_cluster_t *c, const sim_set_t *s, const sim_app_t *app,
                        int r)
{
    return rank_work(s, app, r) / proc_power(c, &s->procs[r]);
}

static double slowest_comp(const sim_cluster_t *c, const sim_set_t *s, const sim_app_t *app)
{
    double slowest = 0;
    for (int r = 0; r < s->nprocs; r++)
        slowest = fmax(slowest, rank_comp(c, s, app, r));
    return slowest;
}

static double comm_seconds(const sim_cluster_t *c, const sim_app_t *app, int nprocs)
{
    return predict_comm_model(&c->net, &app->comm, nprocs, 1);
}

/* Ranks wait for the slowest at the collectives, so an iteration is its computation
 * plus the communication. */
static double iteration_seconds(const sim_cluster_t *c, const sim_set_t *s,
                                const sim_app_t *app)
{
    return slowest_comp(c, s, app) + comm_seconds(c, app, s->nprocs);
}

/* $ per hour of the set. */
static double set_price(const sim_set_t *s, const avail_t *a)
{
    double price = 0;
    for (int r = 0; r < s->nprocs; r++)
        price += host_class(a, s->procs[r].host)->price;
    return price;
}

/* ---- the policy's input -------------------------------------------------------------- */

/* Arrays the input points into, sized for the largest set. */
typedef struct {
    policy_proc_t *procs;
    int *free_cores;
} input_buffers_t;

static void buffers_free(input_buffers_t *b)
{
    free(b->procs);
    free(b->free_cores);
    *b = (input_buffers_t){0};
}

static int buffers_init(input_buffers_t *b, const sim_set_t *s)
{
    b->procs = calloc((size_t)s->capacity, sizeof *b->procs);
    b->free_cores = calloc((size_t)s->nhosts, sizeof *b->free_cores);
    if (!b->procs || !b->free_cores) {
        buffers_free(b);
        return -1;
    }
    return 0;
}

/* What the monitor would report after `chunk` iterations taking `chunk_seconds`. */
static void build_input(const sim_cluster_t *c, const sim_set_t *s, const sim_app_t *app,
                        input_buffers_t *b, int64_t iteration, int chunk,
                        double chunk_seconds, double elapsed, policy_input_t *in)
{
    for (int r = 0; r < s->nprocs; r++)
        b->procs[r] = (policy_proc_t){
            .host = s->procs[r].host,
            .removable = s->procs[r].removable,
            .work = rank_work(s, app, r),
            .comp = rank_comp(c, s, app, r),
            .rows = rank_rows(s, r),
        };
    for (int h = 0; h < s->nhosts; h++)
        b->free_cores[h] = c->avail->hosts[h].cores - s->used[h];
    *in = (policy_input_t){
        .iteration = iteration,
        .interval = chunk,
        .interval_seconds = chunk_seconds,
        .elapsed = elapsed,
        .nprocs = s->nprocs,
        .procs = b->procs,
        .free_cores = b->free_cores,
        .work = app->work_per_row * (double)app->rows,
        .comm = app->comm,
        .lambda = 1,
        .rows = app->rows,
        .row_bytes = app->row_bytes,
    };
}

/* ---- carrying out a decision --------------------------------------------------------- */

/* Writes the message to err (ERRLEN bytes); returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERRLEN, fmt, ap);
    va_end(ap);
    return -1;
}

/* How the engine carries a layout change: in a reconfiguration (src/engine/reconf/reconfig.c)
 * the old owners push to joiners, the new owners pull from leavers, and every process
 * copies into a new window, its staying rows locally; a rebalance (rebalance.c, default
 * method rma) splits each segment between its two sides and is assumed in place. */
typedef struct {
    predict_rma_mode_t mode;
    bool new_window;
} carry_t;

static const carry_t EXPAND_CARRY = {PREDICT_RMA_PUSH, true};
static const carry_t SHRINK_CARRY = {PREDICT_RMA_PULL, true};
static const carry_t REBALANCE_CARRY = {PREDICT_RMA_SPLIT, false};

static int64_t largest_part(const int64_t *bounds, int nparts)
{
    int64_t largest = 0;
    for (int r = 0; r < nparts; r++)
        largest = bounds[r + 1] - bounds[r] > largest ? bounds[r + 1] - bounds[r] : largest;
    return largest;
}

static int64_t staying_rows(const int64_t *old_bounds, const int64_t *new_bounds, int r)
{
    int64_t lo = old_bounds[r] > new_bounds[r] ? old_bounds[r] : new_bounds[r];
    int64_t hi = old_bounds[r + 1] < new_bounds[r + 1] ? old_bounds[r + 1] : new_bounds[r + 1];
    return hi > lo ? hi - lo : 0;
}

/* The redistribution between two layouts of the same parts (leavers and joiners are
 * empty parts). */
static int redist_seconds(const sim_cluster_t *c, const sim_app_t *app, const carry_t *how,
                          const int64_t *old_bounds, const int64_t *new_bounds, int nparts,
                          double *seconds)
{
    predict_load_t *load = calloc((size_t)nparts, sizeof *load);
    if (!load || predict_plan_load(old_bounds, new_bounds, nparts, app->row_bytes, how->mode,
                                   load) != MAL_OK) {
        free(load);
        return -1;
    }
    int64_t window_bytes = 0;
    if (how->new_window) {
        for (int r = 0; r < nparts; r++)
            load[r].local_bytes += staying_rows(old_bounds, new_bounds, r) * app->row_bytes;
        window_bytes = largest_part(new_bounds, nparts) * app->row_bytes;
    }
    *seconds = predict_redist(&c->net, nparts, load, how->new_window, window_bytes);
    free(load);
    return 0;
}

static int64_t *copy_bounds(const sim_set_t *s, int nparts)
{
    int64_t *copy = malloc((size_t)(nparts + 1) * sizeof *copy);
    if (copy)
        memcpy(copy, s->bounds, (size_t)(s->nprocs + 1) * sizeof *copy);
    return copy;
}

static int apply_expand(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                        const policy_decision_t *d, double *overhead, char *err)
{
    int old_procs = s->nprocs, new_procs = old_procs + d->count;
    if (d->count < 1 || !d->hosts || !d->weights || new_procs > s->capacity)
        return fail(err, "malformed expansion by %d", d->count);
    /* The joiners are empty parts at the end of the old layout. */
    int64_t *old_bounds = copy_bounds(s, new_procs);
    if (!old_bounds)
        return fail(err, "out of memory");
    for (int r = old_procs + 1; r <= new_procs; r++)
        old_bounds[r] = app->rows;
    int rc = 0;
    for (int i = 0; i < d->count && rc == 0; i++)
        if (set_add(s, c->avail, d->hosts[i], true) < 0)
            rc = fail(err, "expansion onto host %d, which has no free core", d->hosts[i]);
    if (rc == 0 && set_layout(s, app, d->weights) < 0)
        rc = fail(err, "the expansion's weights give no layout");
    double redist = 0;
    if (rc == 0 &&
        redist_seconds(c, app, &EXPAND_CARRY, old_bounds, s->bounds, new_procs, &redist) < 0)
        rc = fail(err, "out of memory");
    *overhead = predict_spawn(&c->net, d->count) + redist;
    free(old_bounds);
    return rc;
}

/* Survivors keep their order; leavers become empty parts of the new layout, which the
 * survivors' bounds are spread over. */
static void spread_over_old_ranks(const bool *leaving, int old_procs,
                                  const int64_t *survivor_bounds, int64_t *new_bounds)
{
    int survivor = 0;
    new_bounds[0] = 0;
    for (int r = 0; r < old_procs; r++) {
        int64_t rows = 0;
        if (!leaving[r]) {
            rows = survivor_bounds[survivor + 1] - survivor_bounds[survivor];
            survivor++;
        }
        new_bounds[r + 1] = new_bounds[r] + rows;
    }
}

static int mark_leavers(const sim_set_t *s, const policy_decision_t *d, bool *leaving,
                        char *err)
{
    for (int i = 0; i < d->count; i++) {
        int r = d->ranks[i];
        if (r < 0 || r >= s->nprocs || leaving[r] || (i > 0 && r < d->ranks[i - 1]))
            return fail(err, "shrink names rank %d of %d: out of range, repeated or out "
                        "of order", r, s->nprocs);
        leaving[r] = true;
    }
    return 0;
}

static void drop_leavers(sim_set_t *s, const bool *leaving)
{
    int kept = 0;
    for (int r = 0; r < s->nprocs; r++) {
        if (leaving[r])
            s->used[s->procs[r].host]--;
        else
            s->procs[kept++] = s->procs[r];
    }
    s->nprocs = kept;
}

static int apply_shrink(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                        const policy_decision_t *d, double *overhead, char *err)
{
    int old_procs = s->nprocs;
    if (d->count < 1 || d->count >= old_procs || !d->ranks || !d->weights)
        return fail(err, "malformed shrink by %d of %d", d->count, old_procs);
    int64_t *old_bounds = copy_bounds(s, old_procs);
    int64_t *new_bounds = malloc((size_t)(old_procs + 1) * sizeof *new_bounds);
    bool *leaving = calloc((size_t)old_procs, sizeof *leaving);
    int rc = old_bounds && new_bounds && leaving ? 0 : fail(err, "out of memory");
    if (rc == 0)
        rc = mark_leavers(s, d, leaving, err);
    if (rc == 0) {
        drop_leavers(s, leaving);
        if (set_layout(s, app, d->weights) < 0)
            rc = fail(err, "the shrink's weights give no layout");
    }
    double redist = 0;
    if (rc == 0) {
        spread_over_old_ranks(leaving, old_procs, s->bounds, new_bounds);
        if (redist_seconds(c, app, &SHRINK_CARRY, old_bounds, new_bounds, old_procs,
                           &redist) < 0)
            rc = fail(err, "out of memory");
    }
    *overhead = predict_remove(&c->net, d->count) + redist;
    free(old_bounds);
    free(new_bounds);
    free(leaving);
    return rc;
}

static int apply_rebalance(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                           const policy_decision_t *d, double *overhead, char *err)
{
    if (!d->weights)
        return fail(err, "rebalance without weights");
    int64_t *old_bounds = copy_bounds(s, s->nprocs);
    if (!old_bounds)
        return fail(err, "out of memory");
    int rc = set_layout(s, app, d->weights) < 0
                 ? fail(err, "the rebalance's weights give no layout")
                 : redist_seconds(c, app, &REBALANCE_CARRY, old_bounds, s->bounds,
                                  s->nprocs, overhead);
    free(old_bounds);
    return rc;
}

static int apply_decision(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                          const policy_decision_t *d, double *overhead, char *err)
{
    *overhead = 0;
    switch (d->action) {
    case POLICY_EXPAND:
        return apply_expand(c, app, s, d, overhead, err);
    case POLICY_SHRINK:
        return apply_shrink(c, app, s, d, overhead, err);
    case POLICY_REBALANCE:
        return apply_rebalance(c, app, s, d, overhead, err);
    default:
        return 0;
    }
}

/* ---- one run of scenario 1 ----------------------------------------------------------- */

typedef struct {
    double seconds;
    double cost;                  /* $ per core-hour x seconds                           */
    int max_procs;
    int expansions, shrinks, rebalances;
    char timeline[512];           /* the actions, in order                               */
} run_result_t;

typedef struct {
    bool trace;
    const char *label;            /* of the run, in the trace                            */
} run_options_t;

/* Table 6: `per_class` processes of every class, each class on its first hosts, ranks
 * ordered by class as the classes appear in the file. */
static int place_per_class(sim_set_t *s, const avail_t *a, int per_class)
{
    for (int cls = 0; cls < a->nclasses; cls++) {
        int placed = 0;
        for (int h = 0; h < a->nhosts && placed < per_class; h++)
            while (a->hosts[h].cls == cls && placed < per_class &&
                   s->used[h] < a->hosts[h].cores) {
                if (set_add(s, a, h, false) < 0)
                    return -1;
                placed++;
            }
        if (placed < per_class)
            return -1;
    }
    return 0;
}

#define JB8_PER_CLASS 2

static int initial_set(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s)
{
    if (set_init(s, c->avail) < 0)
        return -1;
    if (place_per_class(s, c->avail, JB8_PER_CLASS) < 0 ||
        set_layout_nominal(s, c->avail, app) < 0) {
        set_free(s);
        return -1;
    }
    return 0;
}

static void format_class_counts(const avail_t *a, const int *counts, char *buf, size_t len)
{
    if (!counts) {
        snprintf(buf, len, "-");
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int cls = 0; cls < a->nclasses && used < len; cls++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s:%d", cls ? " " : "",
                                 a->classes[cls].name, counts[cls]);
}

static void print_trace(const sim_cluster_t *c, const run_options_t *o, int64_t iteration,
                        const policy_decision_t *d, double overhead)
{
    char classes[256];
    format_class_counts(c->avail, d->class_counts, classes, sizeof classes);
    printf("  %-16s it %4lld  %-9s %3d  [%s]  -> %2d procs  goal %7.2f s  current %7.2f s"
           "  predicted %7.2f s (process %.2f, redist %.2f)  overhead %.2f s  | %s\n",
           o->label, (long long)iteration, policy_action_name(d->action), d->count, classes,
           d->procs_after, d->goal, d->current, predict_total(&d->predicted),
           d->predicted.process, d->predicted.redist, overhead, d->reason);
}

/* "it 300 +5 (C1:0 C7:0 C6:0 C8:5) -> 13", "it 1300 -2 (...) -> 18", "it 900 rebalance". */
static void append_timeline(run_result_t *res, const avail_t *a, int64_t iteration,
                            const policy_decision_t *d, int procs_after)
{
    size_t used = strlen(res->timeline), room = sizeof res->timeline - used;
    if (room <= 1)
        return;
    const char *sep = used ? "; " : "";
    if (d->action == POLICY_REBALANCE) {
        snprintf(res->timeline + used, room, "%sit %lld rebalance", sep, (long long)iteration);
        return;
    }
    char classes[256];
    format_class_counts(a, d->class_counts, classes, sizeof classes);
    snprintf(res->timeline + used, room, "%sit %lld %c%d (%s) -> %d", sep,
             (long long)iteration, d->action == POLICY_EXPAND ? '+' : '-', d->count, classes,
             procs_after);
}

static void count_action(run_result_t *res, policy_action_t action)
{
    res->expansions += action == POLICY_EXPAND;
    res->shrinks += action == POLICY_SHRINK;
    res->rebalances += action == POLICY_REBALANCE;
}

/* Decide at the end of an interval and carry the decision out, charging its overhead
 * to the run; 0, or -1 after a message on stderr. */
static int decide_and_apply(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                            const policy_config_t *cfg, policy_state_t *state,
                            const policy_input_t *in, const run_options_t *o,
                            run_result_t *res)
{
    policy_decision_t d = {0};
    char err[ERRLEN] = "";
    if (policy_decide(cfg, c->avail, &c->net, in, state, &d, err, sizeof err) != 0) {
        fprintf(stderr, "mal-sim: policy_decide: %s\n", err);
        return -1;
    }
    double before = set_price(s, c->avail), overhead = 0;
    int rc = apply_decision(c, app, s, &d, &overhead, err);
    if (rc < 0) {
        fprintf(stderr, "mal-sim: cannot carry out the decision: %s\n", err);
    } else {
        if (o->trace)
            print_trace(c, o, in->iteration, &d, overhead);
        if (d.action != POLICY_NONE)
            append_timeline(res, c->avail, in->iteration, &d, s->nprocs);
        count_action(res, d.action);
        /* During a reconfiguration both the old and the new set are held: the larger. */
        double held = fmax(before, set_price(s, c->avail));
        res->seconds += overhead;
        res->cost += held * overhead;
        if (s->nprocs > res->max_procs)
            res->max_procs = s->nprocs;
    }
    policy_decision_free(&d);
    return rc;
}

/* One run: static when cfg is NULL. 0, or -1 after a message on stderr. */
static int run(const sim_cluster_t *c, const sim_app_t *app, const policy_config_t *cfg,
               const run_options_t *o, run_result_t *res)
{
    sim_set_t s;
    input_buffers_t b = {0};
    *res = (run_result_t){0};
    if (initial_set(c, app, &s) < 0) {
        fprintf(stderr, "mal-sim: cannot place the initial set (2 per class)\n");
        return -1;
    }
    int rc = buffers_init(&b, &s);
    if (rc < 0)
        fprintf(stderr, "mal-sim: out of memory\n");
    res->max_procs = s.nprocs;
    policy_state_t state = {0};
    for (int64_t it = 0; rc == 0 && it < app->iterations;) {
        int chunk = app->iterations - it < app->interval ? (int)(app->iterations - it)
                                                         : app->interval;
        double chunk_seconds = chunk * iteration_seconds(c, &s, app);
        res->seconds += chunk_seconds;
        res->cost += set_price(&s, c->avail) * chunk_seconds;
        it += chunk;
        if (!cfg || it >= app->iterations)
            continue;
        policy_input_t in;
        build_input(c, &s, app, &b, it, chunk, chunk_seconds, res->seconds, &in);
        rc = decide_and_apply(c, app, &s, cfg, &state, &in, o, res);
    }
    buffers_free(&b);
    set_free(&s);
    return rc;
}

/* ---- scenario 1: J.B.8 --------------------------------------------------------------- */

#define JB_ORDER 20000
#define JB_ITERATIONS 2500
#define JB_INTERVAL 100
#define PAPER_STATIC_SECONDS 923.0
#define PAPER_STATIC_UNITS 1535.0

/* Jacobi B in single precision: a row of the matrix plus its entries of x and b. Each
 * iteration multiplies the matrix by x (2 n^2 flop), gathers the whole new x on every
 * rank and reduces the 8-byte convergence norm. */
static sim_app_t jacobi_b(void)
{
    sim_app_t app = {
        .rows = JB_ORDER,
        .row_bytes = 4 * (int64_t)JB_ORDER + 8,
        .work_per_row = 2.0 * JB_ORDER,
        .iterations = JB_ITERATIONS,
        .interval = JB_INTERVAL,
    };
    app.comm.calls[PREDICT_OP_ALLGATHER] = 1;
    app.comm.bytes[PREDICT_OP_ALLGATHER] = 4.0 * JB_ORDER;
    app.comm.calls[PREDICT_OP_ALLREDUCE] = 1;
    app.comm.bytes[PREDICT_OP_ALLREDUCE] = 8;
    return app;
}

/* The paper's flat Gigabit Ethernet (one switch, MPICH 3.0.4): Hockney latency of a
 * small message over TCP, the wire's ~117 MB/s of payload, one-sided gets over the same
 * wire, and at most one transfer per host NIC at once. Spawn and release costs are
 * assumptions: MPICH's MPI_Comm_spawn through TORQUE at a quarter of a second per
 * process, a twentieth per release; the paper's Figure 6 gives its measurements only as
 * plots. */
static predict_params_t gigabit_ethernet(const avail_t *a)
{
    return (predict_params_t){
        .alpha = 50e-6,
        .beta = 1.0 / 117e6,
        .gamma = 1e-9,
        .get_bandwidth = 117e6,
        .cold_get_bandwidth = 117e6,
        .get_latency = 50e-6,
        .copy_bandwidth = 5e9,
        .epoch_seconds = 1e-3,
        .window_seconds = 1e-3,
        .window_byte_seconds = 0,
        .spawn_seconds = 0.25,
        .remove_seconds = 0.05,
        .cores = a->nhosts,
    };
}

/* The static run is C / eff + K (computation scales with 1 / eff, communication does
 * not): one evaluation at eff = 1 gives C and K. */
static int fit_efficiency(sim_cluster_t *c, const sim_app_t *app)
{
    sim_set_t s;
    c->efficiency = 1;
    if (initial_set(c, app, &s) < 0)
        return -1;
    double comp = (double)app->iterations * slowest_comp(c, &s, app);
    double comm = (double)app->iterations * comm_seconds(c, app, s.nprocs);
    set_free(&s);
    if (!(PAPER_STATIC_SECONDS > comm))
        return -1;
    c->efficiency = comp / (PAPER_STATIC_SECONDS - comm);
    return 0;
}

typedef struct {
    const char *csv;              /* --csv FILE, or NULL                                 */
    FILE *csv_out;                /* the data's stdout when csv is "-"                   */
    const char *avail_path;
    bool check, trace;
} scenario1_options_t;

/* What Figure 9 and its text report; 0 where the paper gives no figure. */
typedef struct {
    double target;
    select_goal_t constraint;
    double seconds;
    int max_procs;
    double units;
} paper_run_t;

static const paper_run_t paper_runs[] = {
    {0.25, SELECT_EFFICIENCY, 0, 0, 0}, {0.25, SELECT_COST, 0, 0, 0},
    {0.30, SELECT_EFFICIENCY, 0, 0, 0}, {0.30, SELECT_COST, 0, 0, 0},
    {0.35, SELECT_EFFICIENCY, 597, 13, 1928}, {0.35, SELECT_COST, 601, 20, 1543},
};

#define NRUNS (sizeof paper_runs / sizeof paper_runs[0])

static const char *constraint_name(select_goal_t g)
{
    return g == SELECT_COST ? "cost" : "efficiency";
}

static int make_config(const paper_run_t *p, policy_config_t *cfg)
{
    char err[ERRLEN];
    policy_config_default(cfg);
    cfg->objective = POLICY_OBJECTIVE_SPEEDUP;
    cfg->target = p->target;
    cfg->constraint = p->constraint;
    cfg->total_iterations = JB_ITERATIONS;
    cfg->mode = POLICY_DEDICATED;
    if (policy_config_check(cfg, err, sizeof err) != 0) {
        fprintf(stderr, "mal-sim: policy configuration: %s\n", err);
        return -1;
    }
    return 0;
}

static bool objective_met(const run_result_t *r, double target, double static_seconds)
{
    return r->seconds <= (1 - target) * static_seconds;
}

static double faster_percent(const run_result_t *r, double static_seconds)
{
    return 100 * (static_seconds - r->seconds) / static_seconds;
}

static void format_actions(const run_result_t *r, char *buf, size_t len)
{
    if (r->expansions + r->shrinks + r->rebalances == 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%d expand, %d shrink, %d rebalance", r->expansions, r->shrinks,
                 r->rebalances);
}

static void format_paper(double x, const char *fmt, char *buf, size_t len)
{
    if (x > 0)
        snprintf(buf, len, fmt, x);
    else
        snprintf(buf, len, "-");
}

static void print_table_header(void)
{
    printf("\n%-9s %-10s %9s %7s %4s %5s %9s  %-34s | %-26s\n", "objective", "constraint",
           "time (s)", "faster", "met", "max p", "cost", "actions",
           "paper: time  max p  cost");
}

static void print_static_row(const run_result_t *st)
{
    printf("%-9s %-10s %9.1f %6.1f%% %4s %5d %9.0f  %-34s | %11.0f %6d %6.0f\n", "static",
           "-", st->seconds, 0.0, "-", st->max_procs, st->cost, "none", PAPER_STATIC_SECONDS,
           8, PAPER_STATIC_UNITS);
}

static void print_run_row(const paper_run_t *p, const run_result_t *r, double static_seconds)
{
    char objective[16], actions[64], time[16], procs[16], units[16];
    snprintf(objective, sizeof objective, "%.0f%%", 100 * p->target);
    format_actions(r, actions, sizeof actions);
    format_paper(p->seconds, "%.0f", time, sizeof time);
    format_paper(p->max_procs, "%.0f", procs, sizeof procs);
    format_paper(p->units, "%.0f", units, sizeof units);
    printf("%-9s %-10s %9.1f %6.1f%% %4s %5d %9.0f  %-34s | %11s %6s %6s\n", objective,
           constraint_name(p->constraint), r->seconds, faster_percent(r, static_seconds),
           objective_met(r, p->target, static_seconds) ? "yes" : "no", r->max_procs, r->cost,
           actions, time, procs, units);
}

static void print_timelines(const run_result_t *runs)
{
    printf("\nactions (iteration, action, processes per class, processes after):\n");
    for (size_t i = 0; i < NRUNS; i++)
        printf("  %.0f%% %-10s  %s\n", 100 * paper_runs[i].target,
               constraint_name(paper_runs[i].constraint),
               runs[i].timeline[0] ? runs[i].timeline : "none");
}

static void write_csv_row(FILE *f, const char *objective, const char *constraint,
                          const run_result_t *r, double static_seconds, const char *met,
                          double paper_seconds, int paper_procs, double paper_units)
{
    fprintf(f, "%s,%s,%.3f,%.3f,%s,%d,%.1f,%d,%d,%d,", objective, constraint, r->seconds,
            faster_percent(r, static_seconds), met, r->max_procs, r->cost, r->expansions,
            r->shrinks, r->rebalances);
    if (paper_seconds > 0)
        fprintf(f, "%.0f,%d,%.0f\n", paper_seconds, paper_procs, paper_units);
    else
        fprintf(f, ",,\n");
}

static void usage(FILE *out);
static const char *version(void)
{
    return MAL_VERSION; /* the headers it was built with: mal-sim links no libmal */
}
static const cli_t cli = {"mal-sim", version, usage};

static int write_csv(const scenario1_options_t *o, const run_result_t *st,
                     const run_result_t *runs)
{
    FILE *f = cli_open_output(&cli, o->csv, "w", o->csv_out);
    if (!f)
        return -1;
    fprintf(f, "objective,constraint,time_s,faster_pct,objective_met,max_procs,cost_units,"
               "expansions,shrinks,rebalances,paper_time_s,paper_max_procs,"
               "paper_cost_units\n");
    write_csv_row(f, "static", "", st, st->seconds, "", PAPER_STATIC_SECONDS, 8,
                  PAPER_STATIC_UNITS);
    for (size_t i = 0; i < NRUNS; i++) {
        const paper_run_t *p = &paper_runs[i];
        char objective[16];
        snprintf(objective, sizeof objective, "%.0f%%", 100 * p->target);
        bool met = objective_met(&runs[i], p->target, st->seconds);
        write_csv_row(f, objective, constraint_name(p->constraint), &runs[i], st->seconds,
                      met ? "yes" : "no", p->seconds, p->max_procs, p->units);
    }
    return cli_close_output(&cli, o->csv, f);
}

/* Appends one failed condition to `why`; returns false. */
static bool fail_check(char *why, size_t len, const char *fmt, ...)
{
    size_t used = strlen(why);
    if (used + 2 < len) {
        if (used)
            strcat(why, "; ");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why + strlen(why), len - strlen(why), fmt, ap);
        va_end(ap);
    }
    return false;
}

/* Runs come in pairs, efficiency then cost, per objective (paper_runs). */
static bool check_runs(const run_result_t *runs, double static_seconds, char *why, size_t len)
{
    bool ok = true;
    why[0] = '\0';
    for (size_t i = 0; i < NRUNS; i++)
        if (!objective_met(&runs[i], paper_runs[i].target, static_seconds))
            ok = fail_check(why, len, "%.0f%% %s missed its objective (%.1f s)",
                            100 * paper_runs[i].target,
                            constraint_name(paper_runs[i].constraint), runs[i].seconds);
    for (size_t i = 0; i + 1 < NRUNS; i += 2) {
        const run_result_t *eff = &runs[i], *cost = &runs[i + 1];
        double pct = 100 * paper_runs[i].target;
        if (!(eff->max_procs < cost->max_procs))
            ok = fail_check(why, len, "%.0f%%: efficiency used %d processes, cost %d", pct,
                            eff->max_procs, cost->max_procs);
        if (!(cost->cost < eff->cost))
            ok = fail_check(why, len, "%.0f%%: cost run cost %.0f, efficiency run %.0f", pct,
                            cost->cost, eff->cost);
    }
    return ok;
}

static int run_all(const sim_cluster_t *c, const sim_app_t *app, bool trace,
                   run_result_t *st, run_result_t *runs)
{
    run_options_t o = {.trace = trace, .label = "static"};
    if (run(c, app, NULL, &o, st) < 0)
        return -1;
    for (size_t i = 0; i < NRUNS; i++) {
        policy_config_t cfg;
        char label[32];
        snprintf(label, sizeof label, "%.0f%% %s", 100 * paper_runs[i].target,
                 constraint_name(paper_runs[i].constraint));
        o.label = label;
        if (trace)
            printf("\ntrace of %s (goal, current, predicted: the policy's figures for the "
                   "next %d iterations; overhead: what the simulated reconfiguration took):\n",
                   label, app->interval);
        if (make_config(&paper_runs[i], &cfg) < 0 || run(c, app, &cfg, &o, &runs[i]) < 0)
            return -1;
    }
    return 0;
}

static void print_scenario1_header(const char *path, double efficiency)
{
    printf("mal-sim scenario 1: Flex-MPI J.B.8 (Jacobi B, order %d, single precision, "
           "%d iterations, sampling interval %d) on %s\n",
           JB_ORDER, JB_ITERATIONS, JB_INTERVAL, path);
    printf("initial set: 8 processes, 2 per class (Table 6); network: Gigabit Ethernet "
           "(Hockney); spawn 0.25 s per process (assumed)\n");
    printf("achieved fraction of nominal GFLOPS: %.3f (fitted so the static run takes the "
           "paper's %.0f s)\n",
           efficiency, PAPER_STATIC_SECONDS);
}

static void print_scenario1_results(const run_result_t *st, const run_result_t *runs)
{
    printf("static run: %.1f s, %.0f units (paper: %.0f s, 1,535 units; units here are "
           "$ per core-hour x seconds held, the paper does not define its unit)\n",
           st->seconds, st->cost, PAPER_STATIC_SECONDS);
    print_table_header();
    print_static_row(st);
    for (size_t i = 0; i < NRUNS; i++)
        print_run_row(&paper_runs[i], &runs[i], st->seconds);
    print_timelines(runs);
}

static int report_check(const run_result_t *st, const run_result_t *runs)
{
    char why[1024];
    if (check_runs(runs, st->seconds, why, sizeof why)) {
        printf("mal-sim: scenario 1 PASS\n");
        return 0;
    }
    printf("mal-sim: scenario 1 FAIL: %s\n", why);
    return EXIT_FAILED;
}

static int scenario1(const scenario1_options_t *o)
{
    avail_t avail = {0};
    char err[ERRLEN];
    if (avail_read(o->avail_path, &avail, err, sizeof err) != 0) {
        fprintf(stderr, "mal-sim: %s\n", err);
        return EXIT_FAILED;
    }
    sim_app_t app = jacobi_b();
    sim_cluster_t c = {.avail = &avail, .net = gigabit_ethernet(&avail)};
    run_result_t st, runs[NRUNS];
    int status = EXIT_FAILED;
    if (fit_efficiency(&c, &app) < 0) {
        fprintf(stderr, "mal-sim: %s: cannot place the J.B.8 set or fit its speed\n",
                o->avail_path);
    } else {
        print_scenario1_header(o->avail_path, c.efficiency);
        if (run_all(&c, &app, o->trace, &st, runs) == 0) {
            print_scenario1_results(&st, runs);
            status = o->csv && write_csv(o, &st, runs) < 0 ? EXIT_FAILED : 0;
            if (status == 0 && o->check)
                status = report_check(&st, runs);
        }
    }
    avail_free(&avail);
    return status;
}

/* ---- scenario 2: policy time at scale ------------------------------------------------ */

#define SYN_CLASSES 8
#define SYN_HOST_CORES 32
#define SYN_ROWS_PER_RANK 100
#define SYN_ITERATIONS 1000000
#define SYN_AT_ITERATION 100000
#define SYN_INTERVAL 1000
#define SYN_REPS 11
#define SYN_LIMIT 4.0             /* default seconds a case may take                    */

/* 8 classes from 1 to 5 GFLOPS per core whose economic efficiency falls from 20 to 10
 * GFLOPS per $/hour, as the paper's classes do: the powerful ones are dear. Hosts
 * alternate between classes and hold twice the ranks' cores, so half is free. The
 * arrays are built here, so they are released with free_synthetic, not avail_free. */
static int synthetic_cluster(int ranks, avail_t *a)
{
    int nhosts = (2 * ranks + SYN_HOST_CORES - 1) / SYN_HOST_CORES;
    a->classes = calloc(SYN_CLASSES, sizeof *a->classes);
    a->hosts = calloc((size_t)nhosts, sizeof *a->hosts);
    if (!a->classes || !a->hosts)
        return -1;
    a->nclasses = SYN_CLASSES;
    a->nhosts = nhosts;
    for (int cls = 0; cls < SYN_CLASSES; cls++) {
        double gflops = 1.0 + 4.0 * cls / (SYN_CLASSES - 1);
        double per_dollar = 20.0 - 10.0 * cls / (SYN_CLASSES - 1);
        a->classes[cls] = (avail_class_t){.gflops = gflops, .price = gflops / per_dollar};
        snprintf(a->classes[cls].name, sizeof a->classes[cls].name, "S%d", cls + 1);
    }
    for (int h = 0; h < nhosts; h++) {
        a->hosts[h] = (avail_host_t){.cores = SYN_HOST_CORES, .cls = h % SYN_CLASSES};
        snprintf(a->hosts[h].name, sizeof a->hosts[h].name, "s%05d", h);
    }
    return 0;
}

static void free_synthetic(avail_t *a)
{
    free(a->classes);
    free(a->hosts);
    *a = (avail_t){0};
}

/* Dense Jacobi-like, n = 100 N rows, sampled every 1,000 iterations. */
static sim_app_t synthetic_app(int ranks)
{
    int64_t n = (int64_t)SYN_ROWS_PER_RANK * ranks;
    sim_app_t app = {
        .rows = n,
        .row_bytes = 4 * n + 8,
        .work_per_row = 2.0 * (double)n,
        .iterations = SYN_ITERATIONS,
        .interval = SYN_INTERVAL,
    };
    app.comm.calls[PREDICT_OP_ALLGATHER] = 1;
    app.comm.bytes[PREDICT_OP_ALLGATHER] = 4.0 * (double)n;
    app.comm.calls[PREDICT_OP_ALLREDUCE] = 1;
    app.comm.bytes[PREDICT_OP_ALLREDUCE] = 8;
    return app;
}

/* A low-latency fabric: with Gigabit Ethernet the allgather's (p - 1) latencies alone
 * would take half a second at 10,000 ranks, and no expansion could ever help. Spawn and
 * release are assumed cheap (a batched spawn, 2 ms per process; 1 ms per release): the
 * policy charges an action's whole cost to the next interval, and with scenario 1's
 * 0.25 s per process a quarter more ranks would cost ~100 intervals' time, so no
 * expansion or removal could be chosen at any scale and those paths would go untimed. */
static predict_params_t fast_fabric(const avail_t *a)
{
    return (predict_params_t){
        .alpha = 1e-6,
        .beta = 1e-10,
        .gamma = 1e-10,
        .get_bandwidth = 5e9,
        .cold_get_bandwidth = 5e9,
        .get_latency = 1e-6,
        .copy_bandwidth = 5e9,
        .epoch_seconds = 1e-3,
        .window_seconds = 1e-3,
        .window_byte_seconds = 0,
        .spawn_seconds = 2e-3,
        .remove_seconds = 1e-3,
        .cores = a->nhosts,
    };
}

/* Ranks round-robin over the hosts; the upper half came from earlier expansions, so
 * the policy may release them. */
static int synthetic_set(const sim_cluster_t *c, const sim_app_t *app, int ranks,
                         sim_set_t *s)
{
    if (set_init(s, c->avail) < 0)
        return -1;
    for (int r = 0; r < ranks; r++)
        if (set_add(s, c->avail, r % c->avail->nhosts, r >= ranks / 2 && r > 0) < 0) {
            set_free(s);
            return -1;
        }
    if (set_layout_nominal(s, c->avail, app) < 0) {
        set_free(s);
        return -1;
    }
    return 0;
}

typedef struct {
    const char *name;
    policy_action_t expected;
    double goal_factor;           /* goal / current prediction; 0: no objective         */
    bool loaded;
} syn_case_t;

/* Goal factors sit well outside the 5% band, so each case has one right answer. */
static const syn_case_t syn_cases[] = {
    {"goal met", POLICY_NONE, 1.02, false},
    {"too slow", POLICY_EXPAND, 0.90, false},
    {"too fast", POLICY_SHRINK, 1.20, false},
    {"imbalanced, loaded", POLICY_REBALANCE, 0, true},
};

#define NCASES (sizeof syn_cases / sizeof syn_cases[0])

/* Every tenth rank shares its core with another user's job and gets two thirds of it;
 * the layout still follows nominal power, so those ranks are 1.5x slower. */
static void load_some_ranks(sim_set_t *s, bool loaded)
{
    for (int r = 0; r < s->nprocs; r++)
        s->procs[r].share = loaded && r % 10 == 5 ? 2.0 / 3.0 : 1.0;
}

/* A time objective whose goal for the next interval is goal_factor x the current
 * interval: the deadline is elapsed + intervals left x that. */
static void case_config(const syn_case_t *k, select_goal_t constraint,
                        const policy_input_t *in, policy_config_t *cfg)
{
    policy_config_default(cfg);
    cfg->constraint = constraint;
    cfg->total_iterations = SYN_ITERATIONS;
    cfg->mode = k->loaded ? POLICY_LOADED : POLICY_DEDICATED;
    if (k->goal_factor > 0) {
        double intervals_left = (double)(SYN_ITERATIONS - in->iteration) / in->interval;
        cfg->objective = POLICY_OBJECTIVE_TIME;
        cfg->target = in->elapsed + intervals_left * k->goal_factor * in->interval_seconds;
    }
}

/* What one case measured, passed whole from the measuring child to the parent. */
typedef struct {
    int status;                   /* 0; -1: policy_decide failed, reason says why        */
    double median, max;
    int reps;
    policy_action_t action;
    int count, procs_after;
    char reason[ERRLEN];
} case_report_t;

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static double monotonic_seconds(void)
{
    struct timespec t, zero = {0};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return seconds_between(&zero, &t);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed call on a fresh state (every repetition decides from the same history);
 * the first call's decision goes into the report. */
static int timed_decide(const policy_config_t *cfg, const sim_cluster_t *c,
                        const policy_input_t *in, bool first, case_report_t *rep,
                        double *seconds)
{
    policy_state_t state = {0};
    policy_decision_t d = {0};
    char err[ERRLEN] = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = policy_decide(cfg, c->avail, &c->net, in, &state, &d, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = seconds_between(&t0, &t1);
    if (rc != 0) {
        rep->status = -1;
        snprintf(rep->reason, sizeof rep->reason, "%s", err);
    } else if (first) {
        rep->action = d.action;
        rep->count = d.count;
        rep->procs_after = d.procs_after;
        snprintf(rep->reason, sizeof rep->reason, "%s", d.reason);
    }
    policy_decision_free(&d);
    return rc;
}

/* Up to SYN_REPS calls within half the case's limit: a slow policy is reported with
 * fewer repetitions rather than making the run take minutes. */
static void time_case(const policy_config_t *cfg, const sim_cluster_t *c,
                      const policy_input_t *in, double limit, case_report_t *rep)
{
    double samples[SYN_REPS];
    *rep = (case_report_t){0};
    if (timed_decide(cfg, c, in, true, rep, &samples[0]) != 0)
        return;
    double reps_fit = samples[0] > 0 ? limit / 2 / samples[0] : SYN_REPS;
    int reps = reps_fit < 1 ? 1 : reps_fit > SYN_REPS ? SYN_REPS : (int)reps_fit;
    for (int i = 1; i < reps; i++)
        if (timed_decide(cfg, c, in, false, rep, &samples[i]) != 0)
            return;
    qsort(samples, (size_t)reps, sizeof *samples, compare_doubles);
    rep->reps = reps;
    rep->median =
        reps % 2 ? samples[reps / 2] : (samples[reps / 2 - 1] + samples[reps / 2]) / 2;
    rep->max = samples[reps - 1];
}

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the parent has gone: nobody to tell */
        p += n;
        len -= (size_t)n;
    }
}

/* 1: len bytes read; 0: the deadline passed first; -1: the writer ended early. */
static int read_before(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len > 0) {
        double left = deadline - monotonic_seconds();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, (int)ceil(left * 1e3));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return ready == 0 ? 0 : -1;
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 1;
}

typedef enum { CASE_MEASURED, CASE_STOPPED, CASE_IN_CHILD, CASE_FAILED } case_outcome_t;

/* The calls run in a child process, so that one that does not return within the limit
 * (GLPK's branch and bound can take minutes) is stopped and reported as such. The child
 * gets CASE_IN_CHILD and unwinds to main, freeing what it inherited. */
static case_outcome_t measure_guarded(const policy_config_t *cfg, const sim_cluster_t *c,
                                      const policy_input_t *in, double limit,
                                      case_report_t *rep)
{
    int fds[2];
    if (pipe(fds) < 0)
        return CASE_FAILED;
    fflush(NULL); /* or the child would print the parent's buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return CASE_FAILED;
    }
    if (pid == 0) {
        close(fds[0]);
        time_case(cfg, c, in, limit, rep);
        write_all(fds[1], rep, sizeof *rep);
        close(fds[1]);
        return CASE_IN_CHILD;
    }
    close(fds[1]);
    int got = read_before(fds[0], rep, sizeof *rep, monotonic_seconds() + limit);
    close(fds[0]);
    if (got <= 0)
        kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return got > 0 ? CASE_MEASURED : got == 0 ? CASE_STOPPED : CASE_FAILED;
}

static void format_duration(double seconds, char *buf, size_t len)
{
    if (seconds < 1e-3)
        snprintf(buf, len, "%.1f us", seconds * 1e6);
    else if (seconds < 1)
        snprintf(buf, len, "%.2f ms", seconds * 1e3);
    else
        snprintf(buf, len, "%.2f s", seconds);
}

static void print_case_row(const syn_case_t *k, select_goal_t constraint, const char *decided,
                           const char *median, const char *max, int reps, const char *flag)
{
    printf("  %-19s %-10s %-9s %-22s %10s %10s %4d%s\n", k->name, constraint_name(constraint),
           policy_action_name(k->expected), decided, median, max, reps, flag);
}

static void print_measured(const syn_case_t *k, select_goal_t constraint,
                           const case_report_t *rep)
{
    char decided[64], median[32], max[32];
    snprintf(decided, sizeof decided, "%s %d -> %d", policy_action_name(rep->action),
             rep->count, rep->procs_after);
    format_duration(rep->median, median, sizeof median);
    format_duration(rep->max, max, sizeof max);
    print_case_row(k, constraint, decided, median, max, rep->reps,
                   rep->action == k->expected ? "" : "  UNEXPECTED");
    printf("      %s\n", rep->reason);
}

static void print_stopped(const syn_case_t *k, select_goal_t constraint, double limit)
{
    char over[32];
    snprintf(over, sizeof over, "> %.2f s", limit);
    print_case_row(k, constraint, "(no answer)", over, over, 0, "  STOPPED");
    printf("      policy_decide did not return within %.2f s; stopped\n", limit);
}

/* What the cases found, for the summary. */
typedef struct {
    int unexpected, stopped;
    bool in_child;                /* this process is a measuring child: print nothing   */
} case_tally_t;

static void build_case_input(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                             input_buffers_t *b, const syn_case_t *k, policy_input_t *in)
{
    load_some_ranks(s, k->loaded);
    double interval_seconds = app->interval * iteration_seconds(c, s, app);
    double elapsed = (double)SYN_AT_ITERATION / app->interval * interval_seconds;
    build_input(c, s, app, b, SYN_AT_ITERATION, app->interval, interval_seconds, elapsed, in);
}

/* Times one case under one constraint; 0, or -1 after a message on stderr. */
static int run_case(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                    input_buffers_t *b, const syn_case_t *k, select_goal_t constraint,
                    double limit, case_tally_t *tally)
{
    policy_input_t in;
    policy_config_t cfg;
    case_report_t rep = {0};
    build_case_input(c, app, s, b, k, &in);
    case_config(k, constraint, &in, &cfg);
    switch (measure_guarded(&cfg, c, &in, limit, &rep)) {
    case CASE_IN_CHILD:
        tally->in_child = true;
        return 0;
    case CASE_STOPPED:
        print_stopped(k, constraint, limit);
        tally->stopped++;
        return 0;
    case CASE_FAILED:
        fprintf(stderr, "mal-sim: cannot measure case '%s': %s\n", k->name,
                errno ? strerror(errno) : "the measuring process ended early");
        return -1;
    case CASE_MEASURED:
        break;
    }
    if (rep.status != 0) {
        fprintf(stderr, "mal-sim: policy_decide: %s\n", rep.reason);
        return -1;
    }
    print_measured(k, constraint, &rep);
    tally->unexpected += rep.action != k->expected;
    return 0;
}

static int run_cases(const sim_cluster_t *c, const sim_app_t *app, sim_set_t *s,
                     input_buffers_t *b, double limit, case_tally_t *tally)
{
    static const select_goal_t constraints[] = {SELECT_EFFICIENCY, SELECT_COST};
    for (size_t i = 0; i < NCASES; i++)
        for (size_t j = 0; j < 2; j++) {
            if (run_case(c, app, s, b, &syn_cases[i], constraints[j], limit, tally) < 0)
                return -1;
            if (tally->in_child)
                return 0;
        }
    return 0;
}

static void print_scenario2_header(int ranks, const avail_t *a, const sim_app_t *app,
                                   double limit)
{
    printf("mal-sim scenario 2: %d ranks on %d hosts x %d cores, %d classes "
           "(%.2f..%.2f GFLOPS per core), n = %lld rows, iteration %d of %d\n",
           ranks, a->nhosts, SYN_HOST_CORES, a->nclasses, a->classes[0].gflops,
           a->classes[a->nclasses - 1].gflops, (long long)app->rows, SYN_AT_ITERATION,
           SYN_ITERATIONS);
    printf("policy time per decision at %d ranks (median and max of reps calls; a case is "
           "stopped after %.2f s):\n", ranks, limit);
    printf("  %-19s %-10s %-9s %-22s %10s %10s %4s\n", "case", "constraint", "expected",
           "decided", "median", "max", "reps");
}

static void print_tally(const case_tally_t *t)
{
    if (t->stopped)
        printf("mal-sim: scenario 2: %d of %zu decisions did not return in time (STOPPED)\n",
               t->stopped, 2 * NCASES);
    if (t->unexpected)
        printf("mal-sim: scenario 2: %d of %zu decisions differ from the expected action\n",
               t->unexpected, 2 * NCASES);
    if (!t->stopped && !t->unexpected)
        printf("mal-sim: scenario 2: every decision as expected\n");
}

static int scenario2(int ranks, double limit)
{
    avail_t avail = {0};
    sim_set_t s = {0};
    input_buffers_t b = {0};
    case_tally_t tally = {0};
    int status = EXIT_FAILED;
    sim_app_t app = synthetic_app(ranks);
    if (synthetic_cluster(ranks, &avail) < 0) {
        fprintf(stderr, "mal-sim: out of memory\n");
        free_synthetic(&avail);
        return status;
    }
    sim_cluster_t c = {.avail = &avail, .efficiency = 1, .net = fast_fabric(&avail)};
    if (synthetic_set(&c, &app, ranks, &s) < 0 || buffers_init(&b, &s) < 0) {
        fprintf(stderr, "mal-sim: out of memory\n");
    } else {
        print_scenario2_header(ranks, &avail, &app, limit);
        if (run_cases(&c, &app, &s, &b, limit, &tally) == 0) {
            if (!tally.in_child)
                print_tally(&tally);
            status = 0;
        }
    }
    buffers_free(&b);
    set_free(&s);
    free_synthetic(&avail);
    return status;
}

/* ---- command line -------------------------------------------------------------------- */

#define MAX_RANKS 1000000
#define MAX_LIMIT 3600.0

/* Scenario 1's cluster when --avail names none, found from the executable: the installed
 * copy (<datadir>/mal/scenarios), else the build tree's (beside the executable). */
static const char *default_avail(void)
{
    static const char *const rel[] = {MAL_BIN_TO_DATA "/mal/scenarios/jb8.avail",
                                      "scenarios/jb8.avail"};
    static char path[4096];
    if (path[0] == '\0' && !self_find(rel, sizeof rel / sizeof *rel, R_OK, path, sizeof path))
        snprintf(path, sizeof path, "%s", rel[0]); /* the message then names what is missing */
    return path;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mal-sim scenario1 [--check] [--trace] [--csv FILE] [--avail FILE]\n"
            "       mal-sim scenario2 [--ranks N] [--limit SECONDS]\n"
            "       mal-sim replay FILE\n"
            "       mal-sim --help | --version\n"
            "scenario1: Flex-MPI J.B.8, objectives 25/30/35%% faster than static under the\n"
            "           efficiency and cost constraints, against the paper's figures.\n"
            "  --check  exit 0 only if every objective is met, efficiency uses fewer\n"
            "           processes and cost costs less than the other constraint\n"
            "  --trace  print every decision\n"
            "  --csv    write the table to FILE (-: to stdout, every other line to stderr)\n"
            "  --avail  the cluster (default %s)\n"
            "scenario2: time policy_decide at N ranks (default 10000) for each kind of\n"
            "           decision and both constraints\n"
            "  --limit  stop a case whose calls take longer (default %.0f s)\n"
            "replay:    bench/regret.sh's first decisions with the costs its runs measured\n"
            "           (FILE: its replay.csv), against every decision point of the run\n"
            "Exit status: 0, 1 when a run or --check fails, 2 for a usage error.\n",
            default_avail(), SYN_LIMIT);
}

static void parse_scenario1(int argc, char **argv, scenario1_options_t *o)
{
    *o = (scenario1_options_t){.avail_path = default_avail()};
    static const struct option longopts[] = {
        {"check", no_argument, NULL, 'c'},       {"trace", no_argument, NULL, 't'},
        {"csv", required_argument, NULL, 'C'},   {"avail", required_argument, NULL, 'a'},
        CLI_STANDARD_OPTIONS,                    {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'c')
            o->check = true;
        else if (c == 't')
            o->trace = true;
        else if (c == 'C')
            o->csv = optarg;
        else
            o->avail_path = optarg;
    }
    if (cli_is_stdout(o->csv))
        o->csv_out = cli_take_stdout(&cli);
}

typedef struct {
    int ranks;
    double limit;
} scenario2_options_t;

static void parse_scenario2(int argc, char **argv, scenario2_options_t *o)
{
    *o = (scenario2_options_t){.ranks = 10000, .limit = SYN_LIMIT};
    static const struct option longopts[] = {
        {"ranks", required_argument, NULL, 'r'}, {"limit", required_argument, NULL, 'l'},
        CLI_STANDARD_OPTIONS, {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'r')
            o->ranks = (int)cli_integer(&cli, "--ranks", optarg, 1, MAX_RANKS);
        else if ((o->limit = cli_number(&cli, "--limit", optarg, 0, MAX_LIMIT)) == 0)
            cli_usage_error(&cli, "--limit '%s': a case needs more than 0 seconds", optarg);
    }
}

int main(int argc, char **argv)
{
    static const struct option standard[] = {CLI_STANDARD_OPTIONS, {0}};
    if (argc < 2)
        cli_usage_error(&cli, "missing scenario");
    if (argv[1][0] == '-') /* --help, --version, or a usage error */
        cli_next(&cli, argc, argv, "", standard);
    optind = 2; /* the options after the scenario */
    if (strcmp(argv[1], "scenario1") == 0) {
        scenario1_options_t o;
        parse_scenario1(argc, argv, &o);
        return scenario1(&o);
    }
    if (strcmp(argv[1], "scenario2") == 0) {
        scenario2_options_t o;
        parse_scenario2(argc, argv, &o);
        return scenario2(o.ranks, o.limit);
    }
    if (strcmp(argv[1], "replay") == 0) {
        if (argc == 3 && argv[2][0] != '-')
            return sim_replay(argv[2]);
        if (argc > 2) /* --help, --version, or a usage error */
            cli_next(&cli, argc, argv, "", standard);
        cli_usage_error(&cli, "replay needs one file (bench/regret.sh's replay.csv)");
    }
    cli_usage_error(&cli, "unknown scenario '%s'", argv[1]);
}
