/* Monitoring: what every iteration cost on this process, summed per sampling interval and
 * gathered at its end; and, around each reconfiguration, the model's prediction of the
 * interval that follows, checked against what that interval then measured.
 *
 * An iteration is the time between two mal_step calls (mal_step itself excluded). Its
 * computation is its wall time minus the time spent in the application's MPI calls, as
 * the PMPI wrapper library reports them (src/pmpi, through mal_monitor_record_comm), so
 * waiting for a slower rank counts as communication, as in Flex-MPI. A program linked
 * without that library reports none: its communication is 0, its iterations all
 * computation (include/mal_pmpi.h).
 * Work per iteration comes from, in order: a PAPI counter (floating-point operations,
 * else instructions), the work the application reports (mal_set_work), the rows held of
 * the largest registered block structure. These VMs have no PMU, so the second and third
 * are what runs here. */
#include "core.h"
#include "mal_pmpi.h"
#include "memory.h"
#include "learn.h"
#include "monitor.h"
#include "predict.h"
#include "registry.h"
#include "report.h"
#include "settings.h"
#include "transport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef MAL_HAVE_PAPI
#include <papi.h>
#endif

#define HISTORY 4               /* intervals the work extrapolation looks back on     */
#define LOAD_CHANGE 1.25        /* cost per work unit off the window's reference by
                                 * this (the median of its last 3 iterations): the
                                 * load changed                                      */
#define LAMBDA_PROCS 256        /* process counts whose lambda is remembered          */

/* One rank's sums over a sampling interval, gathered as doubles at its end. Steady
 * iterations are those outside grace periods: the prediction learns from them only. */
typedef struct {
    double iterations, wall, comp, comm;                 /* every iteration          */
    double steady, steady_wall, steady_comp, steady_work; /* outside grace            */
    double host, cores;     /* where this rank runs: hash of the name, its cores      */
    double initial;         /* 1: started with the application, 0: by an expansion   */
    double calls[PREDICT_OP_COUNT], bytes[PREDICT_OP_COUNT]; /* steady communication  */
} interval_t;

#define INTERVAL_DOUBLES ((int)(sizeof(interval_t) / sizeof(double)))

/* One mal_init's monitor (engine_sink_t.mon): created by engine_monitor_init, freed by
 * engine_monitor_finalize. A NULL monitor counts nothing (before mal_init, or when it
 * found no memory): every call below accepts one. */
struct monitor {
    bool on;
    bool closed;                /* the current mal_step closed an interval         */
    double host;                /* hash of this host's name, read once            */
    double initial;             /* this process started with the application       */
    predict_params_t params;
    int sample_interval;        /* settings, fixed for one mal_init               */
    int grace;
    bool summary;
    char *report;               /* owned copy, NULL for none                       */
    /* the iteration in progress */
    double wall0, cpu0;
    long long counter0;
    double comm, work;
    bool work_reported;
    double calls[PREDICT_OP_COUNT], bytes[PREDICT_OP_COUNT];
    /* the interval in progress */
    int64_t start;              /* iteration that ended just before it began           */
    interval_t cur;
    int grace_left;
    double recent[3];           /* the last steady iterations' computation per work
                                 * unit, oldest first                                 */
    int nrecent;
    double reference;           /* their median when the window since the last change
                                 * first had 3 (INFINITY before)                       */
    mal_monitor_t totals;
    /* the last gathered interval of every rank */
    interval_t *all;
    int nall;
    double history[HISTORY];    /* total steady work per iteration, oldest first      */
    int nhistory;
    double lambda[LAMBDA_PROCS];/* the latest correction learnt with p processes, 0
                                 * when none: a configuration met before is predicted
                                 * with its own correction                            */
    /* the prediction being made (during a reconfiguration) or checked (after it) */
    bool predicting, pending;
    mal_prediction_t pred;      /* the model's terms corrected by `learn`               */
    report_bounds_t bounds;     /* its total's interval, when the prediction was made  */
    predict_interval_t raw;     /* the same terms as the model gave them                */
    predict_learn_t learn;      /* the in-run correction (predict/learn.h): every
                                 * checked term corrects its own for the rest of the run */
    predict_learn_t once[3];    /* the one-time terms (process, redistribution) learnt
                                 * per kind of reconfiguration (once_slot), for the
                                 * predictions; `learn` has them over every kind, for
                                 * the policy's parameters                             */
    bool learning;              /* MAL_LEARN: off, the factors stay 1                  */
    predict_load_t *load;
    int nload, windows;
    double *mapped;             /* bytes of new memory each rank maps for the move      */
    double *part_host;          /* host (hash) of each part of the move: the current
                                 * ranks, then the processes an expansion adds        */
    int nparts_host;
    int nmapped;
    /* hardware counter */
    int papi_set;
    char counter_name[160];
};

/* ---- clocks and counters ------------------------------------------------------------ */

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long long counter_read(const monitor_t *mon)
{
#ifdef MAL_HAVE_PAPI
    long long v = 0;
    if (mon->papi_set != -1 && PAPI_read(mon->papi_set, &v) == PAPI_OK)
        return v;
#else
    (void)mon; /* built without PAPI: no counter */
#endif
    return -1;
}

#ifdef MAL_HAVE_PAPI
static bool counter_try(monitor_t *mon, int event)
{
    char name[PAPI_MAX_STR_LEN];
    if (PAPI_query_event(event) != PAPI_OK || PAPI_create_eventset(&mon->papi_set) != PAPI_OK)
        return false;
    if (PAPI_add_event(mon->papi_set, event) == PAPI_OK && PAPI_start(mon->papi_set) == PAPI_OK &&
        PAPI_event_code_to_name(event, name) == PAPI_OK) {
        snprintf(mon->counter_name, sizeof mon->counter_name, "%s", name);
        return true;
    }
    PAPI_cleanup_eventset(mon->papi_set);
    PAPI_destroy_eventset(&mon->papi_set);
    mon->papi_set = PAPI_NULL;
    return false;
}
#endif

/* Floating-point operations where the CPU counts them, else instructions; otherwise say
 * why not, once. */
static void counter_start(monitor_t *mon)
{
    mon->papi_set = -1;
#ifdef MAL_HAVE_PAPI
    int version = (int)PAPI_VER_CURRENT;
    if (PAPI_is_initialized() == PAPI_NOT_INITED)
        version = PAPI_library_init(PAPI_VER_CURRENT);
    if (version != (int)PAPI_VER_CURRENT) {
        snprintf(mon->counter_name, sizeof mon->counter_name,
                 "none (PAPI_library_init failed: %s)", PAPI_strerror(version));
        return;
    }
    mon->papi_set = PAPI_NULL;
    const int events[] = {PAPI_FP_OPS, PAPI_DP_OPS, PAPI_TOT_INS};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (counter_try(mon, events[i]))
            return;
    mon->papi_set = -1;
    snprintf(mon->counter_name, sizeof mon->counter_name,
             "none (PAPI %d.%d: no PAPI_FP_OPS, PAPI_DP_OPS or PAPI_TOT_INS here, as in a "
             "VM without PMU)", PAPI_VERSION_MAJOR(PAPI_VERSION),
             PAPI_VERSION_MINOR(PAPI_VERSION));
#else
    snprintf(mon->counter_name, sizeof mon->counter_name, "none (built without PAPI)");
#endif
}

static void counter_stop(monitor_t *mon)
{
#ifdef MAL_HAVE_PAPI
    if (mon->papi_set != -1) {
        long long v;
        PAPI_stop(mon->papi_set, &v);
        PAPI_cleanup_eventset(mon->papi_set);
        PAPI_destroy_eventset(&mon->papi_set);
    }
#endif
    mon->papi_set = -1;
}

/* ---- where this rank runs ------------------------------------------------------------ */

double engine_host_hash(const char *name)
{
    /* 52 bits survive the trip through a double exactly. */
    return (double)(engine_hash(ENGINE_HASH_SEED, name, strlen(name)) >> 12);
}

static double this_host(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    return engine_host_hash(name);
}

/* ---- calibration ---------------------------------------------------------------------- */

mal_status_t engine_monitor_params(const char *path, predict_params_t *out)
{
    predict_params_default(out);
    if (path == NULL || *path == '\0')
        return MAL_OK;
    char err[512];
    if (predict_params_read(path, out, err, sizeof err) != 0)
        return engine_fail(MAL_ERR_ARG, "mal_init: calibration %s", err);
    return MAL_OK;
}

/* ---- life cycle ----------------------------------------------------------------------- */

static void begin_interval(monitor_t *mon, int64_t iteration)
{
    mon->start = iteration;
    mon->cur = (interval_t){.host = mon->host, .cores = engine_host_cores(),
                            .initial = mon->initial};
}

/* After a reconfiguration or a load change: forget the reference, wait a grace period. */
static void relearn(monitor_t *mon)
{
    mon->reference = INFINITY;
    mon->nrecent = 0;
    mon->grace_left = mon->grace;
}

static void announce_sources(const monitor_t *mon, const char *calibration)
{
    engine_notice_t n = {.used = 0};
    engine_notice_add(&n, "libmal: monitor: hardware counter %s; computing power from %s\n",
           mon->counter_name, mon->papi_set != -1 ? "it" :
           "the work reported with mal_set_work (else the rows held) per second of "
           "computation");
    engine_notice_add(&n, "libmal: model: %s\n", calibration != NULL
           ? calibration
           : "no calibration file (mal_config_t.calibration or MAL_CALIBRATION; "
             "mal-calibrate writes one): documented defaults");
    engine_notice_write(&n);
}

monitor_t *engine_monitor_init(const engine_settings_t *s, bool initial, int64_t iteration,
                               bool announce)
{
    monitor_t *mon = calloc(1, sizeof *mon);
    char *report = s->report != NULL ? strdup(s->report) : NULL;
    if (mon == NULL || (s->report != NULL && report == NULL)) {
        free(mon);
        free(report);
        return NULL;
    }
    *mon = (monitor_t){.on = true, .params = s->params, .host = this_host(),
                       .initial = initial, .sample_interval = s->sample_interval,
                       .grace = s->grace, .summary = s->summary, .report = report};
    predict_learn_init(&mon->learn);
    for (int k = 0; k < 3; k++)
        predict_learn_init(&mon->once[k]);
    mon->learning = s->learn;
    counter_start(mon);
    begin_interval(mon, iteration);
    relearn(mon);
    engine_monitor_begin_iteration(mon);
    if (announce && mon->summary)
        announce_sources(mon, s->calibration);
    return mon;
}

void engine_monitor_finalize(monitor_t **monp)
{
    monitor_t *mon = *monp;
    if (mon == NULL)
        return;
    counter_stop(mon);
    free(mon->all);
    free(mon->load);
    free(mon->mapped);
    free(mon->part_host);
    free(mon->report);
    free(mon);
    *monp = NULL;
}

/* The hook of the PMPI wrapper library (src/pmpi, include/mal_pmpi.h): its kinds are the
 * model's operations, value for value. */
_Static_assert((int)MAL_COMM_SEND == (int)PREDICT_OP_SEND &&
               (int)MAL_COMM_BARRIER == (int)PREDICT_OP_BARRIER &&
               (int)MAL_COMM_BCAST == (int)PREDICT_OP_BCAST &&
               (int)MAL_COMM_REDUCE == (int)PREDICT_OP_REDUCE &&
               (int)MAL_COMM_ALLREDUCE == (int)PREDICT_OP_ALLREDUCE &&
               (int)MAL_COMM_ALLGATHER == (int)PREDICT_OP_ALLGATHER &&
               (int)MAL_COMM_GATHER == (int)PREDICT_OP_GATHER &&
               (int)MAL_COMM_SCATTER == (int)PREDICT_OP_SCATTER &&
               (int)MAL_COMM_ALLTOALL == (int)PREDICT_OP_ALLTOALL &&
               (int)MAL_COMM_ALLTOALL + 1 == (int)PREDICT_OP_COUNT,
               "mal_comm_op_t and predict_op_t must match");

bool engine_monitor_counting(const monitor_t *mon)
{
    return mon != NULL && mon->on;
}

void engine_monitor_record(monitor_t *mon, mal_comm_op_t op, double bytes, double seconds,
                           bool call)
{
    if (!engine_monitor_counting(mon) || (int)op < 0 || (int)op >= PREDICT_OP_COUNT)
        return;
    mon->comm += seconds;
    if (call) {
        mon->calls[op] += 1;
        mon->bytes[op] += bytes;
    }
}

/* ---- one iteration ----------------------------------------------------------------------- */

/* Rows of the largest block structure this rank holds: the work of a row-parallel
 * sweep when the application reports none (for a matrix: its nonzeros). */
static double rows_held(const engine_registry_t *reg, int rank)
{
    const mal_array_t *largest = engine_array_largest_block(reg);
    return largest ? (double)engine_array_local_rows(largest, rank) : 0;
}

void engine_monitor_begin_iteration(monitor_t *mon)
{
    if (mon == NULL)
        return;
    mon->comm = mon->work = 0;
    mon->work_reported = false;
    memset(mon->calls, 0, sizeof mon->calls);
    memset(mon->bytes, 0, sizeof mon->bytes);
    /* Wall first, CPU last: the CPU interval then lies inside the wall interval. */
    mon->wall0 = clock_seconds(CLOCK_MONOTONIC);
    mon->cpu0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    mon->counter0 = counter_read(mon);
}

static double median3(const double *v)
{
    double lo = fmin(v[0], v[1]), hi = fmax(v[0], v[1]);
    return fmax(lo, fmin(hi, v[2]));
}

/* Dyn-MPI: a cost per work unit far from the window's, persistently, means the load
 * changed: what was learnt no longer holds, wait out a grace period. Persistently: the
 * median of the last 3 iterations against the window's first such median, so that a
 * doubled cost is seen after 2 iterations while single iterations that a shared core's
 * time slices make fast or slow are not. (Against the window's minimum, 2 in a row, a
 * rank sharing its core with another user's process restarted its window nearly every
 * interval, and the policy had nothing steady to decide on: bench/regret.sh
 * loaded-core.) */
static bool load_changed(monitor_t *mon, double cost)
{
    if (mon->nrecent == 3)
        memmove(mon->recent, mon->recent + 1, 2 * sizeof *mon->recent);
    mon->recent[mon->nrecent < 3 ? mon->nrecent++ : 2] = cost;
    if (mon->nrecent < 3)
        return false;
    double now = median3(mon->recent);
    if (!isfinite(mon->reference)) {
        mon->reference = now;
        return false;
    }
    return now > mon->reference * LOAD_CHANGE || now * LOAD_CHANGE < mon->reference;
}

static void add_steady(monitor_t *mon, double wall, double comp, double work)
{
    interval_t *c = &mon->cur;
    double cost = work > 0 ? comp / work : INFINITY;
    if (load_changed(mon, cost)) { /* what this interval learnt no longer holds */
        mon->totals.load_changes++;
        c->steady = c->steady_wall = c->steady_comp = c->steady_work = 0;
        memset(c->calls, 0, sizeof c->calls);
        memset(c->bytes, 0, sizeof c->bytes);
        relearn(mon);
        return;
    }
    c->steady += 1;
    c->steady_wall += wall;
    c->steady_comp += comp;
    c->steady_work += work;
    for (int op = 0; op < PREDICT_OP_COUNT; op++) {
        c->calls[op] += mon->calls[op];
        c->bytes[op] += mon->bytes[op];
    }
}

void engine_monitor_end_iteration(monitor_t *mon, const engine_registry_t *reg, int rank)
{
    if (!engine_monitor_counting(mon))
        return;
    double cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - mon->cpu0;
    double wall = clock_seconds(CLOCK_MONOTONIC) - mon->wall0;
    long long ctr = counter_read(mon);
    double comm = mon->comm < wall ? mon->comm : wall;
    double work = ctr >= 0 ? (double)(ctr - mon->counter0)
                  : mon->work_reported ? mon->work : rows_held(reg, rank);
    mal_monitor_t *t = &mon->totals;
    t->iterations++;
    t->wall_seconds += wall;
    t->cpu_seconds += cpu;
    t->comm_seconds += comm;
    t->work += work;
    t->counter = ctr >= 0 ? t->counter + (ctr - mon->counter0) : -1;
    for (int op = 0; op < PREDICT_OP_COUNT; op++) {
        t->comm_calls += (int64_t)mon->calls[op];
        t->comm_bytes += mon->bytes[op];
    }
    t->last_wall = wall;
    t->last_cpu = cpu;
    t->last_comm = comm;
    t->last_work = work;
    t->in_grace = mon->grace_left > 0;
    interval_t *c = &mon->cur;
    c->iterations += 1;
    c->wall += wall;
    c->comp += wall - comm;
    c->comm += comm;
    if (mon->grace_left > 0)
        mon->grace_left--;
    else
        add_steady(mon, wall, wall - comm, work);
}

void engine_monitor_add_work(monitor_t *mon, double units)
{
    if (mon == NULL)
        return;
    mon->work += units;
    mon->work_reported = true;
}

mal_monitor_t engine_monitor_totals(const monitor_t *mon)
{
    return mon != NULL ? mon->totals : (mal_monitor_t){0};
}

const char *engine_monitor_counter(const monitor_t *mon)
{
    return engine_monitor_counting(mon) ? mon->counter_name
                                        : "none (libmal is not initialised)";
}

/* ---- the interval, gathered ------------------------------------------------------------ */

/* The buffer of every rank's sums, when the process set has changed since the last
 * gather. Whether one is needed is the same on every rank (nall is 0 after mal_init
 * and after every reconfiguration, engine_monitor_reconfigured, and the size after
 * each gather), so only then is there something to agree: a rank without memory
 * fails together with the others instead of leaving them in the gather. */
static mal_status_t interval_buffer(monitor_t *mon, MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    if (mon->nall == size)
        return MAL_OK;
    free(mon->all);
    mon->all = NULL;
    mon->nall = 0;
    size_t bytes = (size_t)size * sizeof *mon->all;
    /* MAL_FAULT_MONITOR (a testing knob): this process finds no memory here. */
    interval_t *all = setting_flag(SETTING_FAULT_MONITOR) ? NULL : malloc(bytes);
    mal_status_t st = all != NULL ? MAL_OK
                      : engine_fail(MAL_ERR_NOMEM, "no memory (%zu bytes) to gather the "
                                    "monitor's sampling interval%s", bytes,
                                    setting_flag(SETTING_FAULT_MONITOR)
                                        ? ": injected fault (MAL_FAULT_MONITOR)" : "");
    st = engine_agree_in(comm, st, 0, "gathering the monitor's sampling interval");
    if (st) {
        free(all);
        return st;
    }
    mon->all = all;
    mon->nall = size;
    return MAL_OK;
}

/* Collective over `comm` (mal_comm()): every rank's sums of the interval that ends now. */
static mal_status_t gather_interval(monitor_t *mon, MPI_Comm comm)
{
    mal_status_t st = interval_buffer(mon, comm);
    if (!st)
        PMPI_Allgather(&mon->cur, INTERVAL_DOUBLES, MPI_DOUBLE, mon->all, INTERVAL_DOUBLES,
                       MPI_DOUBLE, comm);
    return st;
}

/* Processes on each rank's host, from the gathered host hashes. */
static int procs_on_host(const double *hosts, int n, double host)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        k += hosts[r] == host;
    return k;
}

/* What the interval that followed a reconfiguration measured: its slowest computation,
 * and the rest of its slowest wall time as communication. */
static void measured_interval(const interval_t *all, int n, double scale, double *comp,
                              double *comm)
{
    double wall = 0, c = 0;
    for (int r = 0; r < n; r++) {
        wall = fmax(wall, all[r].wall);
        c = fmax(c, all[r].comp);
    }
    *comp = c * scale;
    *comm = (wall - c) * scale;
}

static void tell_prediction(const monitor_t *mon);

/* A checked term into the correction, unless MAL_LEARN is off. */
static void observe(monitor_t *mon, int term, double modelled, double measured)
{
    if (mon->learning)
        predict_learn_observe(&mon->learn, term, modelled, measured);
}

/* The one-time terms are learnt per kind of reconfiguration: a rebalance's small move
 * and a shrink's, which maps a whole new part, are off by different factors (Jacobi,
 * bench/validate_model.sh: rebalances 30-50% under, the shrink after them 35% over, and
 * a factor learnt from the first made the second 70% over). -1 for no reconfiguration. */
static int once_slot(mal_action_t a)
{
    return a == MAL_ACTION_REBALANCE ? 0 : a == MAL_ACTION_SHRINK ? 1
           : a == MAL_ACTION_EXPAND  ? 2 : -1;
}

/* The correction a prediction of action `a` applies: the steady terms' over the run,
 * the one-time terms' of its kind. */
static predict_learn_t learnt_for(const monitor_t *mon, mal_action_t a)
{
    int k = once_slot(a);
    return k < 0 ? mon->learn : predict_learn_merge(&mon->learn, &mon->once[k]);
}

static void observe_once(monitor_t *mon, mal_action_t a, int term, double modelled,
                         double measured)
{
    observe(mon, term, modelled, measured);
    int k = once_slot(a);
    if (mon->learning && k >= 0)
        predict_learn_observe(&mon->once[k], term, modelled, measured);
}

/* The interval after a reconfiguration has ended (or was cut short by the next one):
 * record what it measured beside what was predicted. */
static void check_prediction(monitor_t *mon, bool root)
{
    if (!mon->pending || mon->all == NULL || mon->all[0].iterations <= 0)
        return;
    double scale = (double)mon->pred.interval / mon->all[0].iterations;
    measured_interval(mon->all, mon->nall, scale, &mon->pred.comp_measured,
                      &mon->pred.comm_measured);
    mon->pred.measured = true;
    observe(mon, PREDICT_TERM_COMP, mon->raw.comp, mon->pred.comp_measured);
    observe(mon, PREDICT_TERM_COMM, mon->raw.comm, mon->pred.comm_measured);
    mon->pending = false;
    if (root)
        tell_prediction(mon);
}

/* Only an interval where every rank had steady iterations tells the total work: an
 * interval spent in grace (or a rank's sums dropped by a load change) would add a false
 * low point to the extrapolation. */
static void learn_work(monitor_t *mon)
{
    double w = 0;
    for (int r = 0; r < mon->nall; r++) {
        if (mon->all[r].steady <= 0)
            return;
        w += mon->all[r].steady_work / mon->all[r].steady;
    }
    if (mon->nhistory == HISTORY) {
        memmove(mon->history, mon->history + 1, (HISTORY - 1) * sizeof *mon->history);
        mon->nhistory--;
    }
    mon->history[mon->nhistory++] = w;
}

static void steady_split(const monitor_t *mon, double *comp, double *comm);
static void comm_profile(const monitor_t *mon, predict_comm_profile_t *prof);

/* Eq. 4 for the interval just gathered, remembered for this process count. */
static void learn_lambda(monitor_t *mon)
{
    double comp_it, comm_it;
    steady_split(mon, &comp_it, &comm_it);
    predict_comm_profile_t prof;
    comm_profile(mon, &prof);
    double model = predict_comm_model(&mon->params, &prof, mon->nall, 1);
    if (model > 0 && comm_it > 0 && mon->nall < LAMBDA_PROCS)
        mon->lambda[mon->nall] = predict_lambda(model, comm_it);
}

/* On failure the interval's samples are dropped (the next one starts all the same). */
static mal_status_t close_interval(monitor_t *mon, MPI_Comm comm, int64_t iteration)
{
    mal_status_t st = gather_interval(mon, comm);
    if (!st) {
        int rank;
        MPI_Comm_rank(comm, &rank);
        check_prediction(mon, rank == 0);
        learn_work(mon);
        learn_lambda(mon);
    }
    begin_interval(mon, iteration);
    return st;
}

/* The correction for p processes: learnt with p if ever, else the current one's. */
static double lambda_for(const monitor_t *mon, int p)
{
    if (p < LAMBDA_PROCS && mon->lambda[p] > 0)
        return mon->lambda[p];
    int now = mon->nall;
    return now < LAMBDA_PROCS && mon->lambda[now] > 0 ? mon->lambda[now] : 1.0;
}

mal_status_t engine_monitor_step(monitor_t *mon, MPI_Comm comm, int64_t iteration)
{
    if (!engine_monitor_counting(mon))
        return MAL_OK;
    mon->closed = iteration - mon->start >= mon->sample_interval;
    mal_status_t st = mon->closed ? close_interval(mon, comm, iteration) : MAL_OK;
    if (st)
        mon->closed = false; /* nothing gathered to decide on */
    return st;
}

bool engine_monitor_closed(const monitor_t *mon)
{
    return mon != NULL && mon->closed;
}

/* ---- prediction ------------------------------------------------------------------------- */

/* Communication per iteration: calls averaged over the ranks that had steady
 * iterations, bytes per call over all their calls (a rank that never made a call does
 * not shrink the size of the others' messages). */
static void comm_profile(const monitor_t *mon, predict_comm_profile_t *prof)
{
    memset(prof, 0, sizeof *prof);
    double calls[PREDICT_OP_COUNT] = {0};
    int n = 0;
    for (int r = 0; r < mon->nall; r++) {
        const interval_t *a = &mon->all[r];
        if (a->steady <= 0)
            continue;
        n++;
        for (int op = 0; op < PREDICT_OP_COUNT; op++) {
            prof->calls[op] += a->calls[op] / a->steady;
            calls[op] += a->calls[op];
            prof->bytes[op] += a->bytes[op];
        }
    }
    for (int op = 0; op < PREDICT_OP_COUNT; op++) {
        prof->calls[op] = n > 0 ? prof->calls[op] / n : 0;
        prof->bytes[op] = calls[op] > 0 ? prof->bytes[op] / calls[op] : 0;
    }
}

/* Steady time per iteration: slowest computation, and slowest wall minus it. */
static void steady_split(const monitor_t *mon, double *comp, double *comm)
{
    double wall = 0, c = 0;
    for (int r = 0; r < mon->nall; r++) {
        const interval_t *a = &mon->all[r];
        if (a->steady > 0) {
            wall = fmax(wall, a->steady_wall / a->steady);
            c = fmax(c, a->steady_comp / a->steady);
        }
    }
    *comp = c;
    *comm = wall - c;
}

/* Work per computation second of an old rank, as if it had a core of its own. */
static double core_power(const monitor_t *mon, int r)
{
    const interval_t *a = &mon->all[r];
    if (a->steady <= 0 || a->steady_comp <= 0)
        return 0;
    int sharing = 0;
    for (int q = 0; q < mon->nall; q++)
        sharing += mon->all[q].host == a->host;
    return a->steady_work / a->steady_comp /
           predict_shared_power(1.0, sharing, (int)a->cores);
}

/* The current rank of new rank k; without a map, ranks keep their numbers and the
 * ranks beyond the current ones are new. */
static int old_rank(const monitor_t *mon, const int *old_of_new, int k)
{
    if (old_of_new != NULL)
        return old_of_new[k];
    return k < mon->nall ? k : -1;
}

/* The host (hash) the j-th process an expansion adds starts on: the host list's entry,
 * else rank 0's host. */
static double spawned_host(const monitor_t *mon, const engine_host_list_t *list, int j)
{
    char *h = engine_host_at(list->hosts, list->first + j);
    double host = h != NULL ? engine_host_hash(h) : mon->all[0].host;
    free(h);
    return host;
}

/* Hosts of the new set: old ranks stay where they are, new ones start on rank 0's host
 * (or the host list's, whose cores are taken as rank 0's). */
static void new_hosts(const monitor_t *mon, const int *old_of_new, int n,
                      const engine_host_list_t *list, double *hosts, double *cores)
{
    int spawned = 0;
    for (int k = 0; k < n; k++) {
        int o = old_rank(mon, old_of_new, k);
        hosts[k] = o >= 0 ? mon->all[o].host : spawned_host(mon, list, spawned++);
        cores[k] = mon->all[o >= 0 ? o : 0].cores;
    }
}

/* Hosts of the move's parts, in the order the engine plans them (reconf/plan.c: the
 * current ranks keep their numbers, the processes an expansion adds come after, in the
 * order they are spawned): the transfer between two hosts is priced at the link's
 * bandwidth. Out of memory, none: the move is priced as on one host. */
static void part_hosts(monitor_t *mon, int added, const engine_host_list_t *list)
{
    int n = mon->nall + added;
    double *h = realloc(mon->part_host, (size_t)(n > 0 ? n : 1) * sizeof *h);
    mon->nparts_host = h != NULL ? n : 0;
    if (h == NULL) {
        free(mon->part_host);
        mon->part_host = NULL;
        return;
    }
    mon->part_host = h;
    for (int u = 0; u < mon->nall; u++)
        h[u] = mon->all[u].host;
    for (int j = 0; j < added; j++)
        h[mon->nall + j] = spawned_host(mon, list, j);
}

static double predict_comp_next(const monitor_t *mon, const int *old_of_new, int n,
                                const double *weights, const engine_host_list_t *list)
{
    double *v = calloc(4 * (size_t)n, sizeof *v);
    if (v == NULL)
        return NAN;
    double *hosts = v, *cores = v + n, *work = v + 2 * n, *power = v + 3 * n;
    new_hosts(mon, old_of_new, n, list, hosts, cores);
    double mean = 0, wsum = 0;
    int known = 0;
    for (int r = 0; r < mon->nall; r++) {
        double p = core_power(mon, r);
        mean += p;
        known += p > 0;
    }
    mean = known ? mean / known : 0;
    for (int k = 0; k < n; k++)
        wsum += weights ? weights[k] : 1.0;
    double total = predict_extrapolate(mon->history, mon->nhistory);
    for (int k = 0; k < n; k++) {
        int o = old_rank(mon, old_of_new, k);
        double p = o >= 0 && core_power(mon, o) > 0 ? core_power(mon, o) : mean;
        power[k] = predict_shared_power(p, procs_on_host(hosts, n, hosts[k]), (int)cores[k]);
        work[k] = total * (weights ? weights[k] : 1.0) / wsum;
    }
    double t = predict_comp(n, work, power);
    free(v);
    return t;
}

void engine_monitor_predict(monitor_t *mon, MPI_Comm comm, int64_t iteration,
                            mal_action_t action, engine_change_t change,
                            const int *old_of_new, int procs_after, const double *weights,
                            engine_host_list_t new_hosts)
{
    if (!engine_monitor_counting(mon))
        return;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (iteration > mon->start) /* the same on every rank: gather what is new */
        close_interval(mon, comm, iteration);
    check_prediction(mon, rank == 0); /* a reconfiguration came before the interval ended */
    mon->predicting = false;
    if (mon->all == NULL || mon->nhistory == 0)
        return;
    double comp = predict_comp_next(mon, old_of_new, procs_after, weights, &new_hosts);
    if (!isfinite(comp)) /* no rank had a steady iteration to measure its power */
        return;
    predict_comm_profile_t prof;
    comm_profile(mon, &prof);
    double lambda = lambda_for(mon, procs_after);
    int64_t len = mon->sample_interval;
    mon->raw = (predict_interval_t){
        .comp = comp * (double)len,
        .comm = lambda * predict_comm_model(&mon->params, &prof, procs_after, (double)len),
        .process = action == MAL_ACTION_EXPAND
                       ? predict_grow(&mon->params, change.count, change.parked,
                                      change.spawn_calls)
                   : action == MAL_ACTION_SHRINK ? predict_remove(&mon->params, change.count)
                                                 : 0.0};
    predict_learn_t learnt = learnt_for(mon, action);
    predict_interval_t c = predict_learn_apply(&learnt, &mon->raw);
    mon->pred = (mal_prediction_t){
        .iteration = iteration, .action = action, .procs_before = size,
        .procs_after = procs_after, .interval = len, .lambda = lambda,
        .comp = c.comp, .comm = c.comm, .process = c.process};
    free(mon->load);
    free(mon->mapped);
    mon->nload = mon->nmapped = 0;
    mon->windows = 0;
    mon->load = NULL;
    mon->mapped = NULL;
    part_hosts(mon, action == MAL_ACTION_EXPAND ? change.count : 0, &new_hosts);
    mon->predicting = true;
}

bool engine_monitor_sample(const monitor_t *mon, int64_t iteration, int size,
                           policy_input_t *in, policy_proc_t *procs, double *hosts)
{
    if (!engine_monitor_counting(mon) || mon->all == NULL || mon->nall != size ||
        mon->nhistory == 0)
        return false;
    double wall = 0;
    for (int r = 0; r < mon->nall; r++) {
        const interval_t *a = &mon->all[r];
        if (a->steady <= 0 || a->iterations <= 0)
            return false;
        procs[r] = (policy_proc_t){.removable = a->initial == 0,
                                   .work = a->steady_work / a->steady,
                                   .comp = a->steady_comp / a->steady};
        hosts[r] = a->host;
        wall = fmax(wall, a->wall / a->iterations);
    }
    in->procs = procs;
    in->nprocs = mon->nall;
    in->iteration = iteration;
    in->interval = mon->sample_interval;
    in->interval_seconds = wall * mon->sample_interval;
    /* The in-run correction reaches the policy through its inputs: computation through
     * the work, communication through lambda (process and redistribution through the
     * parameters: engine_monitor_correct_params). */
    in->work = predict_extrapolate(mon->history, mon->nhistory) *
               predict_learn_factor(&mon->learn, PREDICT_TERM_COMP);
    comm_profile(mon, &in->comm);
    double lambda = lambda_for(mon, mon->nall);
    in->lambda = (lambda > 0 ? lambda : 1.0) * predict_learn_factor(&mon->learn,
                                                                    PREDICT_TERM_COMM);
    /* How far off the model is, per term: the policy takes an action only when it pays
     * at the unfavourable ends (with MAL_LEARN off, the prior spreads). A steady term's
     * gain lasts for the rest of the run: what counts is the error of its mean. */
    for (int t = 0; t < PREDICT_TERMS; t++)
        in->spread[t] = t == PREDICT_TERM_COMP || t == PREDICT_TERM_COMM
                            ? predict_learn_mean_spread(&mon->learn, t)
                            : mon->learn.spread[t];
    return true;
}

/* ---- the transfer plan, as the engine builds it ----------------------------------------- */

static bool ensure_load(monitor_t *mon, int nparts)
{
    if (mon == NULL || !mon->predicting)
        return false;
    if (mon->nload < nparts) {
        predict_load_t *l = realloc(mon->load, (size_t)nparts * sizeof *l);
        if (l == NULL) {
            mon->predicting = false;
            return false;
        }
        memset(l + mon->nload, 0, (size_t)(nparts - mon->nload) * sizeof *l);
        mon->load = l;
        mon->nload = nparts;
    }
    return true;
}

void engine_monitor_plan(monitor_t *mon, const int64_t *old_bounds,
                         const int64_t *new_bounds, int nparts, int64_t row_bytes,
                         predict_rma_mode_t mode, bool cold)
{
    if (!ensure_load(mon, nparts))
        return;
    int64_t *before = cold ? malloc(2 * (size_t)nparts * sizeof *before) : NULL;
    for (int r = 0; before != NULL && r < nparts; r++) {
        before[r] = mon->load[r].remote_bytes;
        before[nparts + r] = mon->load[r].net_bytes;
    }
    /* Out of memory, the structure is left out of the prediction (it is only checked
     * against the measurement, never acted on). */
    const double *host = nparts <= mon->nparts_host ? mon->part_host : NULL;
    predict_plan_load_hosts(old_bounds, new_bounds, nparts, row_bytes, mode, host, mon->load);
    for (int r = 0; before != NULL && r < nparts; r++) {
        mon->load[r].cold_bytes += mon->load[r].remote_bytes - before[r];
        mon->load[r].net_cold_bytes += mon->load[r].net_bytes - before[nparts + r];
    }
    free(before);
}

void engine_monitor_copy(monitor_t *mon, int part, int64_t bytes, int64_t ops, bool remote)
{
    if (!ensure_load(mon, part + 1))
        return;
    *(remote ? &mon->load[part].remote_bytes : &mon->load[part].local_bytes) += bytes;
    mon->load[part].ops += ops;
}

void engine_monitor_window(monitor_t *mon, const int64_t *bytes, int nparts)
{
    if (mon == NULL || !mon->predicting)
        return;
    if (nparts > mon->nmapped) {
        double *m = realloc(mon->mapped, (size_t)nparts * sizeof *m);
        if (m == NULL) {
            mon->predicting = false;
            return;
        }
        for (int r = mon->nmapped; r < nparts; r++)
            m[r] = 0;
        mon->mapped = m;
        mon->nmapped = nparts;
    }
    mon->windows++;
    for (int r = 0; r < nparts; r++)
        mon->mapped[r] += (double)bytes[r];
}

/* The one-sided model for rma and rma-get; the baselines as Hockney messages. New memory
 * is priced per rank, at what faulting it in costs: a reconfiguration maps its memory
 * without populating it, and the move faults in the pages it writes, 4 KiB at a time
 * (transport/direct.c). Pricing those bytes at the application's own population (huge
 * pages populated at once, 0.06-1 ns a byte with the memory's state) predicted
 * Jacobi's shrink 2 -> 1 at 0.029-0.034 s against 0.080-0.087 s measured; fresh 4 KiB
 * pages written once cost 0.40-0.49 ns a byte here, run after run. The slowest rank's
 * mapping is what the move waits for. */
static double predicted_redist(const monitor_t *mon, mal_redist_t method)
{
    predict_params_t m = mon->params;
    if (!engine_method_one_sided(method)) {
        m.get_latency = m.alpha;
        m.get_bandwidth = m.beta > 0 ? 1.0 / m.beta : m.get_bandwidth;
        m.cold_get_bandwidth = m.get_bandwidth;
    }
    double mapping = 0;
    for (int r = 0; r < mon->nmapped; r++) {
        double t = mon->mapped[r] * m.fault_byte_seconds;
        mapping = t > mapping ? t : mapping;
    }
    return predict_redist(&m, mon->nload, mon->load, mon->windows, 0) + mapping;
}

void engine_monitor_reconfigured(monitor_t *mon, const mal_reconfig_stats_t *s,
                                 mal_redist_t method)
{
    if (!engine_monitor_counting(mon))
        return;
    if (s->status == MAL_OK) {
        /* The samples describe the old process set, and a prediction not yet checked
         * was about an interval that will not happen: a reconfiguration right after
         * this one (no step between) predicts nothing. */
        free(mon->all);
        mon->all = NULL;
        mon->nall = 0;
        mon->pending = false;
    }
    if (mon->predicting) {
        mon->predicting = false;
        if (s->status == MAL_OK) {
            mal_action_t a = mon->pred.action;
            predict_learn_t learnt = learnt_for(mon, a);
            mon->raw.redist = predicted_redist(mon, method);
            mon->pred.redist =
                mon->raw.redist * predict_learn_factor(&learnt, PREDICT_TERM_REDIST);
            mon->pred.process_measured = s->process_seconds;
            mon->pred.redist_measured = s->redist_seconds + s->window_seconds;
            mon->pending = true;
            mon->bounds.model_total = predict_total(&mon->raw);
            predict_learn_bounds(&learnt, &mon->raw, &mon->bounds.low, &mon->bounds.high);
            observe_once(mon, a, PREDICT_TERM_PROCESS, mon->raw.process,
                         mon->pred.process_measured);
            observe_once(mon, a, PREDICT_TERM_REDIST, mon->raw.redist,
                         mon->pred.redist_measured);
        }
    }
    /* Whatever happened, the next interval starts now, after a grace period. */
    begin_interval(mon, s->iteration);
    relearn(mon);
}

void engine_monitor_correct_params(const monitor_t *mon, predict_params_t *p)
{
    if (mon == NULL)
        return;
    double f = predict_learn_factor(&mon->learn, PREDICT_TERM_PROCESS);
    p->spawn_seconds *= f;
    p->spawn_host_seconds *= f;
    p->remove_seconds *= f;
    p->pool_wake_seconds *= f;
    /* Redistribution: every time term times f, every bandwidth over f. */
    f = predict_learn_factor(&mon->learn, PREDICT_TERM_REDIST);
    p->get_latency *= f;
    p->epoch_seconds *= f;
    p->window_seconds *= f;
    p->window_byte_seconds *= f;
    p->fault_byte_seconds *= f;
    p->get_bandwidth /= f;
    p->cold_get_bandwidth /= f;
    p->copy_bandwidth /= f; /* alpha and beta stay: the communication model's too */
    /* The link's bandwidths the model falls back on where the file has none
     * (predict_net_bandwidth) are corrected as the file's would be. */
    predict_params_t d;
    predict_params_default(&d);
    for (int s = 0; s < PREDICT_STATES; s++)
        for (int e = 0; e < PREDICT_EXECUTORS; e++)
            if (!(p->redist_bw[PREDICT_LINK_NET][s][e] > 0))
                p->redist_bw[PREDICT_LINK_NET][s][e] = d.redist_bw[PREDICT_LINK_NET][s][e];
    double *bw = &p->redist_bw[0][0][0];
    for (size_t i = 0; i < sizeof p->redist_bw / sizeof *bw; i++)
        bw[i] /= f;
}

mal_prediction_t engine_monitor_prediction(const monitor_t *mon)
{
    return mon != NULL ? mon->pred : (mal_prediction_t){0};
}

/* ---- report ------------------------------------------------------------------------------ */

static void add_term(engine_notice_t *n, const char *name, double pred, double meas)
{
    engine_notice_add(n, " %s %.4f/%.4f s (%+.1f%%)", name, pred, meas,
                      100.0 * predict_rel_error(pred, meas));
}

/* The checked prediction, on rank 0: a report record, and a summary line. */
static void tell_prediction(const monitor_t *mon)
{
    const mal_prediction_t *p = &mon->pred;
    if (mon->report != NULL)
        report_prediction(mon->report, p, &mon->bounds);
    if (!mon->summary)
        return;
    engine_notice_t n = {.used = 0};
    engine_notice_add(&n, "libmal: predicted/measured after the %s at it %lld (%d -> %d "
           "procs, %lld its):",
           engine_action_name(p->action), (long long)p->iteration, p->procs_before,
           p->procs_after, (long long)p->interval);
    add_term(&n, "comp", p->comp, p->comp_measured);
    add_term(&n, "comm", p->comm, p->comm_measured);
    add_term(&n, "process", p->process, p->process_measured);
    add_term(&n, "redist", p->redist, p->redist_measured);
    engine_notice_add(&n, " total %.4f [%.4f, %.4f]/%.4f s\n",
                      p->comp + p->comm + p->process + p->redist, mon->bounds.low,
                      mon->bounds.high, p->comp_measured + p->comm_measured +
                      p->process_measured + p->redist_measured);
    engine_notice_write(&n);
}
