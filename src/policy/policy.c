/* The reconfiguring policy: one decision per sampling interval (see policy.h).
 *
 * Time is predicted per interval with the model of src/predict: computation from the
 * work and the computing power of each process (measured for the current ones; for new
 * ones, the nominal GFLOPS of their class scaled by the work per GFLOP the best current
 * process achieves), communication from the Hockney model times lambda, process
 * creation and removal from eqs. 6-7 (a pooled process woken, not spawned), and
 * redistribution from the transfer plan the engine would execute (predict_plan_load over
 * the old and new block layouts); an expansion's process and redistribution terms are
 * what it stalls the application (predict_expand: everything when synchronous, the
 * switch and the background's slowdown when asynchronous). */
#include "policy.h"

#include "partition.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void policy_config_default(policy_config_t *c)
{
    *c = (policy_config_t){.objective = POLICY_OBJECTIVE_NONE, .constraint = SELECT_EFFICIENCY,
                           .tolerance = 0.05, .imbalance = 0.10, .mode = POLICY_DEDICATED,
                           .release = true};
}

static mal_status_t fail(char *err, size_t errlen, mal_status_t code, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static mal_status_t check_objective(const policy_config_t *c, char *err, size_t errlen)
{
    switch (c->objective) {
    case POLICY_OBJECTIVE_NONE:
        return MAL_OK;
    case POLICY_OBJECTIVE_SPEEDUP:
        if (!(c->target > 0 && c->target < 1))
            return fail(err, errlen, MAL_ERR_ARG,
                        "speedup objective %g must be in (0, 1)", c->target);
        break;
    case POLICY_OBJECTIVE_TIME:
        if (!(c->target > 0) || !isfinite(c->target))
            return fail(err, errlen, MAL_ERR_ARG,
                        "completion time objective %g s must be finite and "
                        "> 0", c->target);
        break;
    default:
        return fail(err, errlen, MAL_ERR_ARG, "unknown objective %d", (int)c->objective);
    }
    if (c->total_iterations <= 0)
        return fail(err, errlen, MAL_ERR_ARG,
                    "an objective needs total_iterations (the length of the "
                    "run), got %lld", (long long)c->total_iterations);
    return MAL_OK;
}

static mal_status_t check_limits(const policy_config_t *c, char *err, size_t errlen)
{
    if (c->min_procs < 0 || c->max_procs < 0 || c->preferred < 0)
        return fail(err, errlen, MAL_ERR_ARG, "process limits must be >= 0 (min %d, max %d, "
                    "preferred %d)", c->min_procs, c->max_procs, c->preferred);
    if (c->max_procs > 0 && c->min_procs > c->max_procs)
        return fail(err, errlen, MAL_ERR_ARG,
                    "min_procs %d > max_procs %d", c->min_procs, c->max_procs);
    if (c->preferred > 0 && (c->preferred < c->min_procs ||
                             (c->max_procs > 0 && c->preferred > c->max_procs)))
        return fail(err, errlen, MAL_ERR_ARG,
                    "preferred %d is outside [min_procs %d, max_procs %d]",
                    c->preferred, c->min_procs, c->max_procs);
    if (c->inhibit_iterations < 0 || !(c->inhibit_seconds >= 0) || !isfinite(c->inhibit_seconds))
        return fail(err, errlen, MAL_ERR_ARG,
                    "inhibitors must be >= 0 (%lld iterations, %g s)",
                    (long long)c->inhibit_iterations, c->inhibit_seconds);
    return MAL_OK;
}

mal_status_t policy_config_check(const policy_config_t *c, char *err, size_t errlen)
{
    if (c == NULL)
        return fail(err, errlen, MAL_ERR_ARG, "no policy configuration");
    if (c->constraint != SELECT_EFFICIENCY && c->constraint != SELECT_COST)
        return fail(err, errlen, MAL_ERR_ARG, "unknown constraint %d", (int)c->constraint);
    if (c->mode != POLICY_DEDICATED && c->mode != POLICY_LOADED)
        return fail(err, errlen, MAL_ERR_ARG, "unknown mode %d", (int)c->mode);
    if (!(c->tolerance >= 0 && c->tolerance < 1))
        return fail(err, errlen, MAL_ERR_ARG, "tolerance %g must be in [0, 1)", c->tolerance);
    if (!(c->imbalance >= 0 && c->imbalance < 1))
        return fail(err, errlen, MAL_ERR_ARG, "imbalance threshold %g must be in [0, 1)",
                    c->imbalance);
    if (c->total_iterations < 0)
        return fail(err, errlen, MAL_ERR_ARG, "total_iterations %lld must be >= 0",
                    (long long)c->total_iterations);
    mal_status_t rc = check_objective(c, err, errlen);
    return rc ? rc : check_limits(c, err, errlen);
}

const char *policy_action_name(policy_action_t a)
{
    switch (a) {
    case POLICY_EXPAND: return "expand";
    case POLICY_SHRINK: return "shrink";
    case POLICY_REBALANCE: return "rebalance";
    case POLICY_NONE: break;
    }
    return "none";
}

void policy_decision_free(policy_decision_t *d)
{
    if (d == NULL)
        return;
    free(d->hosts);
    free(d->ranks);
    free(d->weights);
    free(d->class_counts);
    *d = (policy_decision_t){0};
}

/* ---- the decision's context ---------------------------------------------------------- */

typedef struct {
    const policy_config_t *cfg;
    const avail_t *avail;
    const predict_params_t *model;
    const policy_input_t *in;
    int p;                  /* processes now                                          */
    double work;            /* per iteration, next interval                           */
    double iters;           /* iterations per interval                                */
    double left;            /* intervals left in the run (1 when unknown)             */
    double lambda;
    double *power;          /* per rank: measured work per computation second, or
                               its nominal power when it measured nothing            */
    double *nominal;        /* per rank: its class on its share of the host's cores  */
    double *class_power;    /* per class: a new process on a free core               */
    int *class_free;        /* per class: free cores                                  */
    int *on_host;           /* per host: processes there now                         */
    int *taken;             /* per host: cores taken by the expansion being placed    */
    double current;         /* next interval with no action                          */
} ctx_t;

static void ctx_free(ctx_t *x)
{
    free(x->power);
    free(x->nominal);
    free(x->class_power);
    free(x->class_free);
    free(x->on_host);
    free(x->taken);
}

static mal_status_t check_proc(const ctx_t *x, int r, char *err, size_t errlen)
{
    const policy_proc_t *q = &x->in->procs[r];
    if (q->host < 0 || q->host >= x->avail->nhosts)
        return fail(err, errlen, MAL_ERR_ARG,
                    "rank %d: host index %d outside 0..%d", r, q->host,
                    x->avail->nhosts - 1);
    if (!(q->work >= 0) || !isfinite(q->work) || !(q->comp >= 0) || !isfinite(q->comp))
        return fail(err, errlen, MAL_ERR_ARG,
                    "rank %d: work %g and computation %g s must be finite "
                    "and >= 0", r, q->work, q->comp);
    if (q->rows < 0)
        return fail(err, errlen, MAL_ERR_ARG, "rank %d: %lld rows", r, (long long)q->rows);
    return MAL_OK;
}

static mal_status_t check_pool(const ctx_t *x, char *err, size_t errlen)
{
    const policy_input_t *in = x->in;
    if (in->parked < 0 || in->read_mostly_row_bytes < 0 ||
        in->read_mostly_row_bytes > in->row_bytes)
        return fail(err, errlen, MAL_ERR_ARG, "%d parked processes, %lld read-mostly bytes "
                    "of %lld per row: out of range", in->parked,
                    (long long)in->read_mostly_row_bytes, (long long)in->row_bytes);
    for (int h = 0; in->parked_on != NULL && h < x->avail->nhosts; h++)
        if (in->parked_on[h] < 0)
            return fail(err, errlen, MAL_ERR_ARG, "host %s: %d parked processes",
                        x->avail->hosts[h].name, in->parked_on[h]);
    return MAL_OK;
}

static mal_status_t check_input(const ctx_t *x, char *err, size_t errlen)
{
    const policy_input_t *in = x->in;
    if (in->nprocs < 1 || in->procs == NULL || in->free_cores == NULL)
        return fail(err, errlen, MAL_ERR_ARG, "no processes, or no free-core view");
    if (in->interval < 1 || in->iteration < 0 || !(in->elapsed >= 0) ||
        !(in->interval_seconds >= 0) || in->row_bytes < 0)
        return fail(err, errlen, MAL_ERR_ARG,
                    "interval %d, iteration %lld, elapsed %g s, interval "
                    "time %g s, row bytes %lld: out of range", in->interval,
                    (long long)in->iteration, in->elapsed, in->interval_seconds,
                    (long long)in->row_bytes);
    int64_t rows = 0;
    for (int r = 0; r < in->nprocs; r++) {
        mal_status_t rc = check_proc(x, r, err, errlen);
        if (rc)
            return rc;
        rows += in->procs[r].rows;
    }
    if (rows != in->rows)
        return fail(err, errlen, MAL_ERR_ARG, "the ranks hold %lld rows, the data has %lld",
                    (long long)rows, (long long)in->rows);
    mal_status_t rc = check_pool(x, err, errlen);
    if (rc)
        return rc;
    for (int h = 0; h < x->avail->nhosts; h++)
        if (in->free_cores[h] < 0)
            return fail(err, errlen, MAL_ERR_ARG,
                        "host %s: %d free cores", x->avail->hosts[h].name,
                        in->free_cores[h]);
    return MAL_OK;
}

static double measured_power(const policy_proc_t *q)
{
    return q->work > 0 && q->comp > 0 ? q->work / q->comp : 0;
}

static double class_gflops(const ctx_t *x, int r)
{
    return x->avail->classes[x->avail->hosts[x->in->procs[r].host].cls].gflops;
}

/* The fraction of a core rank r gets on its host. */
static double core_share(const ctx_t *x, int r)
{
    const avail_host_t *h = &x->avail->hosts[x->in->procs[r].host];
    return predict_shared_power(1.0, x->on_host[x->in->procs[r].host], h->cores);
}

/* Work per second per nominal GFLOPS, from the least disturbed process (Dyn-MPI's
 * minimum over iterations, taken over ranks): other users' load only lowers it. */
static double work_per_gflop(const ctx_t *x)
{
    double k = 0;
    for (int r = 0; r < x->p; r++)
        k = fmax(k, measured_power(&x->in->procs[r]) / (class_gflops(x, r) * core_share(x, r)));
    return k;
}

static mal_status_t ctx_powers(ctx_t *x, char *err, size_t errlen)
{
    for (int r = 0; r < x->p; r++)
        x->on_host[x->in->procs[r].host]++;
    double k = work_per_gflop(x);
    if (!(k > 0))
        return fail(err, errlen, MAL_ERR_ARG,
                    "no rank measured any work and computation time");
    for (int r = 0; r < x->p; r++) {
        double m = measured_power(&x->in->procs[r]);
        x->nominal[r] = k * class_gflops(x, r) * core_share(x, r);
        x->power[r] = m > 0 ? m : x->nominal[r];
    }
    for (int c = 0; c < x->avail->nclasses; c++)
        x->class_power[c] = k * x->avail->classes[c].gflops;
    for (int h = 0; h < x->avail->nhosts; h++)
        x->class_free[x->avail->hosts[h].cls] += x->in->free_cores[h];
    return MAL_OK;
}

static double sum_work(const policy_input_t *in)
{
    double w = 0;
    for (int r = 0; r < in->nprocs; r++)
        w += in->procs[r].work;
    return w;
}

static double intervals_left(const policy_config_t *cfg, const policy_input_t *in)
{
    if (cfg->total_iterations <= 0)
        return 1;
    double left = (double)(cfg->total_iterations - in->iteration) / in->interval;
    return left > 0 ? left : 0;
}

static double comm_interval(const ctx_t *x, int n);
static double current_interval(const ctx_t *x);

static mal_status_t ctx_init(ctx_t *x, const policy_config_t *cfg, const avail_t *avail,
                             const predict_params_t *model, const policy_input_t *in,
                             char *err, size_t errlen)
{
    *x = (ctx_t){.cfg = cfg, .avail = avail, .model = model, .in = in, .p = in->nprocs,
                 .iters = in->interval, .lambda = in->lambda > 0 ? in->lambda : 1.0};
    mal_status_t rc = check_input(x, err, errlen);
    if (rc)
        return rc;
    size_t p = (size_t)x->p, nc = (size_t)avail->nclasses;
    x->power = calloc(p, sizeof *x->power);
    x->nominal = calloc(p, sizeof *x->nominal);
    x->class_power = calloc(nc, sizeof *x->class_power);
    x->class_free = calloc(nc, sizeof *x->class_free);
    x->on_host = calloc((size_t)avail->nhosts, sizeof *x->on_host);
    x->taken = calloc((size_t)avail->nhosts, sizeof *x->taken);
    if (!x->power || !x->nominal || !x->class_power || !x->class_free || !x->on_host ||
        !x->taken)
        return fail(err, errlen, MAL_ERR_NOMEM,
                    "no memory for a decision over %d processes", x->p);
    rc = ctx_powers(x, err, errlen);
    if (rc)
        return rc;
    x->work = in->work > 0 ? in->work : sum_work(in);
    x->left = intervals_left(cfg, in);
    x->current = current_interval(x);
    return MAL_OK;
}

/* ---- predicting a set ----------------------------------------------------------------- */

static double comm_interval(const ctx_t *x, int n)
{
    return x->iters * x->lambda * predict_comm_model(x->model, &x->in->comm, n, 1.0);
}

/* The current layout as it is: each rank's measured computation, scaled to the work
 * expected next. */
static double current_interval(const ctx_t *x)
{
    double measured = sum_work(x->in), scale = measured > 0 ? x->work / measured : 1.0;
    double comp = 0;
    for (int r = 0; r < x->p; r++)
        comp = fmax(comp, x->in->procs[r].comp * scale);
    return x->iters * comp + comm_interval(x, x->p);
}

/* A candidate set: power and weight of each process after the change (remaining old
 * ranks in order, then new ones), and what the model predicts for it. */
typedef struct {
    policy_action_t action;
    int n, count;           /* processes after; added or removed                      */
    int pooled;             /* EXPAND: of count, served by the pool                   */
    double *power, *weights;
    int *hosts;             /* EXPAND: host of each new process                       */
    int spawn_hosts;        /* EXPAND: hosts of the spawned ones (one spawn call each) */
    int *ranks;             /* SHRINK: ranks leaving, ascending                       */
    int *class_counts;
    predict_interval_t t;
    double price;           /* $ per hour after                                        */
    bool approximate;       /* the class mix is the best GLPK found within its node limit  */
} cand_t;

static void cand_free(cand_t *c)
{
    free(c->power);
    free(c->weights);
    free(c->hosts);
    free(c->ranks);
    free(c->class_counts);
    *c = (cand_t){0};
}

/* What a one-time cost (spawning, removing, moving the data) adds to each interval: it
 * is paid once and the set it buys lasts for the rest of the run, so it is spread over
 * the intervals left when the run's length is known (never over less than one);
 * without it, Flex-MPI's rule: the whole cost in the next interval. Measured
 * (bench/regret.sh, docs/design.md "Decisions against outcomes"): charging a 0.08 s
 * expansion to one 0.11 s interval kept a Jacobi on 1 process that then ran 74% longer
 * than with the expansion. */
static double one_time(const ctx_t *x, double cost)
{
    return x->cfg->total_iterations > 0 && x->left > 1 ? cost / x->left : cost;
}

/* A candidate's time per interval for the decision: its steady terms and its one-time
 * terms spread over the run (one_time). */
static double cand_total(const ctx_t *x, const cand_t *c)
{
    return c->t.comp + c->t.comm + one_time(x, c->t.process + c->t.redist);
}

/* ---- the model's error ------------------------------------------------------------- */

/* A predicted term at the unfavourable (high) end of its interval. */
static double high(const ctx_t *x, int term, double v)
{
    return predict_spread_high(x->in->spread, term, v);
}

/* A candidate's steady terms per interval at their high end. Communication with the
 * current process count is what lambda was learnt from: it carries no extra error. */
static double steady_high(const ctx_t *x, const cand_t *c)
{
    double comm = c->n == x->p ? c->t.comm : high(x, PREDICT_TERM_COMM, c->t.comm);
    return high(x, PREDICT_TERM_COMP, c->t.comp) + comm;
}

/* What changing to a candidate gains over the rest of the run and costs once, at the
 * point estimates and at the unfavourable ends of their intervals. */
typedef struct {
    double gain, gain_low, cost, cost_high;
} payoff_t;

/* Against `now_steady`, the steady time per interval without the change. */
static payoff_t payoff(const ctx_t *x, const cand_t *c, double now_steady)
{
    return (payoff_t){
        .gain = x->left * (now_steady - c->t.comp - c->t.comm),
        .gain_low = x->left * (now_steady - steady_high(x, c)),
        .cost = c->t.process + c->t.redist,
        .cost_high = high(x, PREDICT_TERM_PROCESS, c->t.process) +
                     high(x, PREDICT_TERM_REDIST, c->t.redist)};
}

/* An action for speed is taken only when it pays with the model's error against it. */
static bool pays(const payoff_t *f)
{
    return f->gain_low > f->cost_high;
}

/* A candidate's time per interval with every term at its high end (one-time terms
 * spread as in cand_total). */
static double cand_total_high(const ctx_t *x, const cand_t *c)
{
    return steady_high(x, c) + one_time(x, high(x, PREDICT_TERM_PROCESS, c->t.process) +
                                              high(x, PREDICT_TERM_REDIST, c->t.redist));
}

static double rank_weight(const ctx_t *x, int r)
{
    return x->cfg->mode == POLICY_LOADED ? x->power[r] : x->nominal[r];
}

static double host_price(const ctx_t *x, int host)
{
    return x->avail->classes[x->avail->hosts[host].cls].price;
}

static double price_now(const ctx_t *x)
{
    double price = 0;
    for (int r = 0; r < x->p; r++)
        price += host_price(x, x->in->procs[r].host);
    return price;
}

/* Old layout (the rows each rank holds; joiners empty at the end, on `joiner_hosts`, NULL
 * when there are none) against the new one (partition_block over `weights`, leavers
 * weighted 0), as the engine would move it, bytes between hosts at the link's bandwidth.
 * *largest_part (may be NULL): the rows of the largest new part. */
static double redist_interval(const ctx_t *x, int nparts, const double *weights,
                              predict_rma_mode_t mode, const int *joiner_hosts,
                              int64_t *largest_part)
{
    int64_t *old_b = calloc(2 * ((size_t)nparts + 1), sizeof *old_b);
    predict_load_t *load = calloc((size_t)nparts, sizeof *load);
    double *host = calloc((size_t)nparts, sizeof *host);
    double t = NAN;
    for (int r = 0; host != NULL && r < nparts; r++)
        host[r] = r < x->p ? x->in->procs[r].host : joiner_hosts ? joiner_hosts[r - x->p] : 0;
    if (old_b != NULL && load != NULL && host != NULL) {
        int64_t *new_b = old_b + nparts + 1;
        for (int r = 0; r < nparts; r++)
            old_b[r + 1] = old_b[r] + (r < x->p ? x->in->procs[r].rows : 0);
        if (partition_block(x->in->rows, nparts, weights, 0, new_b) == MAL_OK) {
            int64_t largest = 0;
            for (int r = 0; r < nparts; r++)
                largest = new_b[r + 1] - new_b[r] > largest ? new_b[r + 1] - new_b[r] : largest;
            if (predict_plan_load_hosts(old_b, new_b, nparts, x->in->row_bytes, mode, host,
                                        load) == MAL_OK)
                t = predict_redist(x->model, nparts, load, 0, 0);
            if (largest_part != NULL)
                *largest_part = largest;
        }
    }
    free(old_b);
    free(load);
    free(host);
    return t;
}

/* Steady computation and communication of a set, per interval. */
static void predict_steady(const ctx_t *x, cand_t *c)
{
    double wsum = 0, comp = 0;
    for (int k = 0; k < c->n; k++)
        wsum += c->weights[k];
    for (int k = 0; k < c->n; k++)
        if (c->weights[k] > 0)
            comp = fmax(comp, x->work * c->weights[k] / wsum / c->power[k]);
    c->t.comp = x->iters * comp;
    c->t.comm = comm_interval(x, c->n);
}

static mal_status_t cand_alloc(cand_t *c, int n, int nclasses)
{
    c->n = n;
    c->power = calloc((size_t)n, sizeof *c->power);
    c->weights = calloc((size_t)n, sizeof *c->weights);
    c->class_counts = calloc((size_t)nclasses, sizeof *c->class_counts);
    return c->power && c->weights && c->class_counts ? MAL_OK : MAL_ERR_NOMEM;
}

/* ---- candidate sets --------------------------------------------------------------------- */

/* Loaded mode moves each rank's share halfway from the rows it holds to its measured
 * power. On a core another user also runs, the measured power depends on the share
 * itself: a computation short enough to fit in the time slices it gets looks unloaded.
 * A full step then overshoots and the next one takes it back: bench/regret.sh's
 * loaded-core scenario rebalanced 2.3:1, 1.2:1, 2.6:1, 0.9:1 and ran 44% longer than a
 * fixed 2:1. Half steps settle where the shares measure what they hold. */
static void damp_to_held(const ctx_t *x, double *weights)
{
    double wsum = 0, rows = (double)x->in->rows;
    for (int r = 0; r < x->p; r++)
        wsum += weights[r];
    if (x->cfg->mode != POLICY_LOADED || !(wsum > 0) || !(rows > 0))
        return;
    for (int r = 0; r < x->p; r++)
        weights[r] = 0.5 * (weights[r] / wsum + (double)x->in->procs[r].rows / rows);
}

/* The current processes, rebalanced to their computing power (in loaded mode halfway
 * there when `damp`: damp_to_held). */
static mal_status_t cand_rebalance(const ctx_t *x, cand_t *c, bool damp)
{
    if (cand_alloc(c, x->p, x->avail->nclasses))
        return MAL_ERR_NOMEM;
    c->action = POLICY_REBALANCE;
    for (int r = 0; r < x->p; r++) {
        c->power[r] = x->power[r];
        c->weights[r] = rank_weight(x, r);
    }
    if (damp)
        damp_to_held(x, c->weights);
    predict_steady(x, c);
    c->t.redist = redist_interval(x, x->p, c->weights, PREDICT_RMA_SPLIT, NULL, NULL);
    c->price = price_now(x);
    return isnan(c->t.redist) ? MAL_ERR_NOMEM : MAL_OK;
}

/* `want` new processes of class `cls` from hosts[k] on: on the free cores of its hosts
 * in file order, those where processes are parked first (a pooled process before a
 * spawned one). Returns the next k, -1 when the class lacks the free cores. */
static int place_class(const ctx_t *x, int cls, int want, int *hosts, int k, int *pooled)
{
    const int *parked_on = x->in->parked_on;
    for (int pass = parked_on != NULL ? 0 : 1; pass < 2; pass++) {
        for (int h = 0; h < x->avail->nhosts && want > 0; h++) {
            if (x->avail->hosts[h].cls != cls)
                continue;
            int room = x->in->free_cores[h] - x->taken[h];
            if (pass == 0) /* parked there and not taken yet in this pass */
                room = room < parked_on[h] - x->taken[h] ? room : parked_on[h] - x->taken[h];
            for (; room > 0 && want > 0; room--, want--, k++) {
                hosts[k] = h;
                x->taken[h]++;
                *pooled += pass == 0;
            }
        }
    }
    return want > 0 ? -1 : k;
}

/* Hosts of the new processes, class by class (place_class). Returns how many were
 * placed, -1 when a class lacks the free cores; *pooled: how many of them the pool
 * serves (without parked_on, the first `parked` ones). */
static int place_new(const ctx_t *x, const int *counts, int *hosts, int *pooled)
{
    int k = 0;
    *pooled = 0;
    memset(x->taken, 0, (size_t)x->avail->nhosts * sizeof *x->taken);
    for (int c = 0; c < x->avail->nclasses && k >= 0; c++)
        k = place_class(x, c, counts[c], hosts, k, pooled);
    if (k >= 0 && x->in->parked_on == NULL)
        *pooled = k;
    if (*pooled > x->in->parked) /* the per-host counts said more than the total */
        *pooled = x->in->parked;
    return k;
}

/* How many hosts the spawned processes of c start on, just after place_new (x->taken):
 * the engine spawns once per run of processes on one host, and place_new puts a host's
 * processes side by side within a class. The pool serves the processes parked on a host
 * first; without per-host counts, the first c->pooled new processes. */
static int count_spawn_hosts(const ctx_t *x, const cand_t *c)
{
    const int *parked_on = x->in->parked_on;
    int n = 0;
    for (int h = 0; h < x->avail->nhosts; h++) {
        bool spawns = false;
        if (parked_on != NULL)
            spawns = x->taken[h] > parked_on[h];
        for (int k = c->pooled; parked_on == NULL && k < c->count && !spawns; k++)
            spawns = c->hosts[k] == h;
        n += spawns;
    }
    return n;
}

/* What the expansion by c stalls the application (predict_expand): the move as the
 * engine pushes it, the spawned processes' new memory as one window of the largest
 * part (pooled ones keep theirs), faulted in by the move that writes it, the
 * read-mostly share moved in the background. */
static mal_status_t expand_costs(const ctx_t *x, cand_t *c)
{
    int64_t largest = 0;
    double move = redist_interval(x, c->n, c->weights, PREDICT_RMA_PUSH, c->hosts, &largest);
    if (isnan(move))
        return MAL_ERR_NOMEM;
    const predict_params_t *m = x->model;
    const policy_input_t *in = x->in;
    predict_expand_t e = {
        .procs = c->count, .pooled = c->pooled, .hosts = c->spawn_hosts,
        .async = in->async, .move = move,
        .populate = m->window_seconds +
                    (double)largest * (double)in->row_bytes * m->fault_byte_seconds,
        .read_mostly = in->row_bytes > 0
                           ? (double)in->read_mostly_row_bytes / (double)in->row_bytes : 0};
    predict_expand_cost_t cost = predict_expand(m, &e);
    c->t.process = cost.process;
    c->t.redist = cost.redist;
    return MAL_OK;
}

/* The current processes plus counts[c] new ones of each class. */
static mal_status_t cand_expand(const ctx_t *x, const int *counts, int s, cand_t *c)
{
    if (cand_alloc(c, x->p + s, x->avail->nclasses) ||
        (c->hosts = calloc((size_t)s + 1, sizeof *c->hosts)) == NULL)
        return MAL_ERR_NOMEM;
    c->action = POLICY_EXPAND;
    c->count = s;
    memcpy(c->class_counts, counts, (size_t)x->avail->nclasses * sizeof *counts);
    if (place_new(x, counts, c->hosts, &c->pooled) != s)
        return MAL_ERR_ARG;
    c->spawn_hosts = count_spawn_hosts(x, c);
    c->price = price_now(x);
    for (int r = 0; r < x->p; r++) {
        c->power[r] = x->power[r];
        c->weights[r] = rank_weight(x, r);
    }
    for (int k = 0; k < s; k++) {
        int cls = x->avail->hosts[c->hosts[k]].cls;
        c->power[x->p + k] = c->weights[x->p + k] = x->class_power[cls];
        c->price += x->avail->classes[cls].price;
    }
    predict_steady(x, c);
    return expand_costs(x, c);
}

/* The current processes without the `leaving` ones. */
static mal_status_t cand_shrink(const ctx_t *x, const bool *leaving, cand_t *c)
{
    int r_count = 0;
    for (int r = 0; r < x->p; r++)
        r_count += leaving[r];
    double *all = calloc((size_t)x->p, sizeof *all);
    if (all == NULL || cand_alloc(c, x->p - r_count, x->avail->nclasses) ||
        (c->ranks = calloc((size_t)r_count + 1, sizeof *c->ranks)) == NULL) {
        free(all);
        return MAL_ERR_NOMEM;
    }
    c->action = POLICY_SHRINK;
    c->count = r_count;
    c->price = price_now(x);
    for (int r = 0, k = 0, j = 0; r < x->p; r++) {
        if (leaving[r]) {
            c->ranks[j++] = r;
            c->class_counts[x->avail->hosts[x->in->procs[r].host].cls]++;
            c->price -= host_price(x, x->in->procs[r].host);
            continue;
        }
        c->power[k] = x->power[r];
        c->weights[k++] = all[r] = rank_weight(x, r);
    }
    predict_steady(x, c);
    c->t.process = predict_remove(x->model, r_count);
    c->t.redist = redist_interval(x, x->p, all, PREDICT_RMA_PULL, NULL, NULL);
    free(all);
    return isnan(c->t.redist) ? MAL_ERR_NOMEM : MAL_OK;
}

/* ---- Algorithm 1: expansion ------------------------------------------------------------- */

static double total_power(const ctx_t *x)
{
    double s = 0;
    for (int r = 0; r < x->p; r++)
        s += x->power[r];
    return s;
}

/* How many processes an expansion may add: free cores, within max_procs. */
static int expand_room(const ctx_t *x)
{
    int free_cores = 0;
    for (int c = 0; c < x->avail->nclasses; c++)
        free_cores += x->class_free[c];
    if (x->cfg->max_procs > 0 && x->p + free_cores > x->cfg->max_procs)
        free_cores = x->cfg->max_procs > x->p ? x->cfg->max_procs - x->p : 0;
    return free_cores;
}

/* The process term of adding s processes before they are placed: the first `parked`
 * come from the pool (the placement prefers them), the rest are spawned, in the
 * background when async, priced as on one host (the candidate, once placed, prices its
 * hosts: expand_costs). */
static double grow_interval(const ctx_t *x, int s)
{
    predict_expand_t e = {.procs = s, .pooled = s < x->in->parked ? s : x->in->parked,
                          .async = x->in->async};
    return predict_expand(x->model, &e).process;
}

/* Power the new processes must add so that s of them meet `goal` when moving the data
 * takes `redist`, or +inf. */
static double power_needed(const ctx_t *x, int s, double goal, double redist)
{
    double fixed = comm_interval(x, x->p + s) + one_time(x, grow_interval(x, s) + redist);
    if (goal <= fixed)
        return INFINITY;
    return x->work * x->iters / (goal - fixed) - total_power(x);
}

/* The s-set the constraint prefers among those reaching `need`, in *c (*found false
 * when none does). */
static mal_status_t best_of_size(const ctx_t *x, int s, double need, cand_t *c, bool *found)
{
    const int nc = x->avail->nclasses;
    double *price = malloc((size_t)nc * sizeof *price);
    int *counts = calloc((size_t)nc, sizeof *counts);
    mal_status_t rc = price && counts ? MAL_OK : MAL_ERR_NOMEM;
    *found = false;
    for (int k = 0; !rc && k < nc; k++)
        price[k] = x->avail->classes[k].price;
    if (!rc)
        rc = select_add(nc, x->class_power, price, x->class_free, s, need,
                        x->cfg->constraint, counts, found);
    if (!rc && *found) {
        rc = cand_expand(x, counts, s, c);
        c->approximate = !select_last_proven();
    }
    free(price);
    free(counts);
    return rc;
}

/* The s-set that meets the goal (*found false when none does). The power needed depends
 * on the redistribution, which depends on the set: start without it (a lower bound) and
 * ask again with the move of the set found, a few times (it hardly changes within a
 * size). */
static mal_status_t suitable_of_size(const ctx_t *x, int s, double goal, cand_t *c,
                                     double *redist, bool *found)
{
    double most = select_max_power(x->avail->nclasses, x->class_power, x->class_free, s);
    *found = false;
    for (int round = 0; round < 4; round++) {
        double need = power_needed(x, s, goal, *redist);
        if (!isfinite(need) || most < need)
            return MAL_OK;
        mal_status_t rc = best_of_size(x, s, need, c, found);
        if (rc != MAL_OK || !*found || cand_total(x, c) <= goal)
            return rc;
        *found = false;
        *redist = fmax(*redist, c->t.redist);
        cand_free(c);
    }
    return MAL_OK;
}

/* Keep `c` in `best` when the constraint prefers it. */
static void keep_better(const ctx_t *x, cand_t *best, cand_t *c)
{
    bool better = best->n == 0 ||
                  (x->cfg->constraint == SELECT_COST
                       ? c->price < best->price || (c->price == best->price && c->n < best->n)
                       : c->n < best->n);
    if (better) {
        cand_free(best);
        *best = *c;
        *c = (cand_t){0};
    } else {
        cand_free(c);
    }
}

static int counts_sum(const int *counts, int n)
{
    int s = 0;
    for (int c = 0; c < n; c++)
        s += counts[c];
    return s;
}

/* Cost: the cheapest set of any size from `s` up that meets the goal, one solve over all
 * sizes. The power needed grows with the size (communication, spawning, moving), so it
 * is asked for the size guessed, then for the size found, until the set meets the goal
 * (each answer is checked with the full prediction). */
static mal_status_t cheapest_expansion(const ctx_t *x, int s, double goal, double redist,
                                       cand_t *best)
{
    const int nc = x->avail->nclasses, room = expand_room(x);
    double *price = malloc((size_t)nc * sizeof *price);
    int *counts = calloc((size_t)nc, sizeof *counts);
    mal_status_t rc = price && counts ? MAL_OK : MAL_ERR_NOMEM;
    for (int k = 0; !rc && k < nc; k++)
        price[k] = x->avail->classes[k].price;
    for (int round = 0; !rc && round < 8 && s <= room; round++) {
        double need = power_needed(x, s, goal, redist);
        if (!isfinite(need))
            break;
        bool found = false;
        mal_status_t st = select_add_range(nc, x->class_power, price, x->class_free, s,
                                           room, need, SELECT_COST, counts, &found);
        if (st != MAL_OK || !found) {
            rc = st;
            break;
        }
        cand_t c = {0};
        int got = counts_sum(counts, nc);
        rc = cand_expand(x, counts, got, &c);
        c.approximate = !select_last_proven();
        if (!rc && cand_total(x, &c) <= goal) {
            keep_better(x, best, &c);
            break;
        }
        s = got > s ? got : s + 1;
        redist = fmax(redist, c.t.redist);
        cand_free(&c);
    }
    free(price);
    free(counts);
    return rc;
}

/* Lines 7-16: s = 0 (rebalance only) .. room new processes; the suitable sets meet the
 * goal. Efficiency keeps the first (fewest processes); cost the cheapest, from the
 * first size that can meet the goal up. */
static mal_status_t expansion_scenarios(const ctx_t *x, double goal, cand_t *best)
{
    cand_t c = {0};
    if (cand_rebalance(x, &c, true))
        return cand_free(&c), MAL_ERR_NOMEM;
    if (cand_total(x, &c) <= goal)
        return keep_better(x, best, &c), MAL_OK;
    cand_free(&c);
    int room = expand_room(x);
    /* The move of the last set tried: a larger set moves about as much, so sizes whose
     * best power cannot pay for it are skipped without asking the solver. */
    double redist = 0;
    for (int s = 1; s <= room; s++) {
        if (select_max_power(x->avail->nclasses, x->class_power, x->class_free, s) <
            power_needed(x, s, goal, redist))
            continue;
        if (x->cfg->constraint == SELECT_COST)
            return cheapest_expansion(x, s, goal, redist, best);
        bool found = false;
        mal_status_t rc = suitable_of_size(x, s, goal, &c, &redist, &found);
        if (rc != MAL_OK)
            return cand_free(&c), rc;
        if (found)
            return keep_better(x, best, &c), MAL_OK;
        cand_free(&c);
    }
    return MAL_OK;
}

/* No set meets the goal: the fastest one, if it beats the current set. */
static mal_status_t fastest_expansion(const ctx_t *x, cand_t *best)
{
    int room = expand_room(x), best_s = 0;
    double best_t = x->current;
    for (int s = 1; s <= room; s++) {
        double add = select_max_power(x->avail->nclasses, x->class_power, x->class_free, s);
        double t = x->work * x->iters / (total_power(x) + add) + comm_interval(x, x->p + s) +
                   one_time(x, grow_interval(x, s));
        if (t < best_t) {
            best_t = t;
            best_s = s;
        }
    }
    if (best_s == 0)
        return MAL_OK;
    double add = select_max_power(x->avail->nclasses, x->class_power, x->class_free, best_s);
    cand_t c = {0};
    bool found = false;
    mal_status_t rc = best_of_size(x, best_s, add * (1 - 1e-12), &c, &found);
    if (rc == MAL_OK && found && cand_total(x, &c) < x->current)
        keep_better(x, best, &c);
    cand_free(&c);
    return rc;
}

/* ---- Algorithm 1: removal ---------------------------------------------------------------- */

/* Per class: the removable ranks (never rank 0) and their mean power. */
static int removable_classes(const ctx_t *x, int *count, double *power)
{
    int total = 0;
    for (int r = 1; r < x->p; r++) {
        if (!x->in->procs[r].removable)
            continue;
        int c = x->avail->hosts[x->in->procs[r].host].cls;
        count[c]++;
        power[c] += x->power[r];
        total++;
    }
    for (int c = 0; c < x->avail->nclasses; c++)
        power[c] = count[c] > 0 ? power[c] / count[c] : 0;
    return total;
}

/* The ranks of counts[c] removable processes of each class: the latest of each. */
static void mark_leaving(const ctx_t *x, const int *counts, bool *leaving)
{
    int *want = malloc((size_t)x->avail->nclasses * sizeof *want);
    if (want == NULL)
        return;
    memcpy(want, counts, (size_t)x->avail->nclasses * sizeof *want);
    for (int r = x->p - 1; r >= 1; r--) {
        int c = x->avail->hosts[x->in->procs[r].host].cls;
        if (x->in->procs[r].removable && want[c] > 0) {
            leaving[r] = true;
            want[c]--;
        }
    }
    free(want);
}

typedef struct {
    int *count;
    double *power, *price;
    int total;
} removable_t;

static void removable_free(removable_t *rm)
{
    free(rm->count);
    free(rm->power);
    free(rm->price);
}

static mal_status_t removable_init(const ctx_t *x, removable_t *rm)
{
    int nc = x->avail->nclasses;
    rm->count = calloc((size_t)nc, sizeof *rm->count);
    rm->power = calloc((size_t)nc, sizeof *rm->power);
    rm->price = calloc((size_t)nc, sizeof *rm->price);
    if (!rm->count || !rm->power || !rm->price)
        return MAL_ERR_NOMEM;
    for (int c = 0; c < nc; c++)
        rm->price[c] = x->avail->classes[c].price;
    rm->total = removable_classes(x, rm->count, rm->power);
    int floor = x->cfg->min_procs > 1 ? x->cfg->min_procs : 1;
    if (rm->total > x->p - floor)
        rm->total = x->p - floor > 0 ? x->p - floor : 0;
    return MAL_OK;
}

/* The r-set to remove that the constraint prefers and that keeps the goal, in *c
 * (*found false when none does). */
static mal_status_t removal_of_size(const ctx_t *x, const removable_t *rm, int r,
                                    double goal, cand_t *c, double *redist, bool *found)
{
    *found = false;
    double fixed = comm_interval(x, x->p - r) +
                   one_time(x, predict_remove(x->model, r) + *redist);
    if (goal <= fixed)
        return MAL_OK;
    double spare = total_power(x) - x->work * x->iters / (goal - fixed);
    int nc = x->avail->nclasses;
    if (select_min_power(nc, rm->power, rm->count, r) > spare)
        return MAL_OK;
    int *counts = calloc((size_t)nc, sizeof *counts);
    bool *leaving = calloc((size_t)x->p, sizeof *leaving);
    mal_status_t rc = counts && leaving ? MAL_OK : MAL_ERR_NOMEM;
    if (!rc)
        rc = select_remove(nc, rm->power, rm->price, rm->count, r, spare, x->cfg->constraint,
                           counts, found);
    if (!rc && *found) {
        mark_leaving(x, counts, leaving);
        rc = cand_shrink(x, leaving, c);
        c->approximate = !select_last_proven();
        if (!rc && cand_total(x, c) > goal) {
            *redist = fmax(*redist, c->t.redist);
            *found = false;
        }
    }
    free(counts);
    free(leaving);
    return rc;
}

/* Cost: of the removals of at most `most` processes that keep the goal, the one that
 * saves the most per hour, one solve over all sizes with the spare power of the largest;
 * a set that then misses the goal lowers the largest size and asks again. */
static mal_status_t dearest_removal(const ctx_t *x, const removable_t *rm, int most,
                                    double goal, double redist, cand_t *best)
{
    const int nc = x->avail->nclasses;
    int *counts = calloc((size_t)nc, sizeof *counts);
    bool *leaving = calloc((size_t)x->p, sizeof *leaving);
    mal_status_t rc = counts && leaving ? MAL_OK : MAL_ERR_NOMEM;
    for (int round = 0; !rc && round < 8 && most >= 1; round++) {
        double fixed = comm_interval(x, x->p - most) +
                       one_time(x, predict_remove(x->model, most) + redist);
        if (goal <= fixed)
            break;
        double spare = total_power(x) - x->work * x->iters / (goal - fixed);
        bool found = false;
        mal_status_t st = select_remove_range(nc, rm->power, rm->price, rm->count, 1, most,
                                              spare, SELECT_COST, counts, &found);
        if (st != MAL_OK || !found) {
            rc = st;
            break;
        }
        memset(leaving, 0, (size_t)x->p * sizeof *leaving);
        mark_leaving(x, counts, leaving);
        cand_t c = {0};
        rc = cand_shrink(x, leaving, &c);
        c.approximate = !select_last_proven();
        if (!rc && cand_total(x, &c) <= goal) {
            keep_better(x, best, &c);
            break;
        }
        most = counts_sum(counts, nc) - 1;
        redist = fmax(redist, c.t.redist);
        cand_free(&c);
    }
    free(counts);
    free(leaving);
    return rc;
}

/* Lines 17-25: r = removable .. 1; efficiency keeps the largest r that still meets the
 * goal; cost, from that size down, the set that saves the most per hour. */
static mal_status_t removal_scenarios(const ctx_t *x, double goal, cand_t *best)
{
    removable_t rm = {0};
    mal_status_t rc = removable_init(x, &rm);
    double redist = 0; /* as in expansion_scenarios */
    for (int r = rm.total; !rc && r >= 1 && best->n == 0; r--) {
        cand_t c = {0};
        bool found = false;
        rc = removal_of_size(x, &rm, r, goal, &c, &redist, &found);
        if (!rc && found && x->cfg->constraint == SELECT_COST)
            rc = dearest_removal(x, &rm, r, goal, redist, best);
        else if (!rc && found)
            keep_better(x, best, &c);
        cand_free(&c);
    }
    removable_free(&rm);
    return rc;
}

/* ---- the decision ------------------------------------------------------------------------- */

double policy_goal(const policy_config_t *cfg, const policy_state_t *state,
                   const policy_input_t *in)
{
    if (cfg->objective == POLICY_OBJECTIVE_NONE || in->interval < 1)
        return 0;
    double left = intervals_left(cfg, in);
    if (left <= 0)
        return 0;
    double deadline = cfg->objective == POLICY_OBJECTIVE_TIME
                          ? cfg->target
                          : (1 - cfg->target) * state->static_estimate;
    double goal = (deadline - in->elapsed) / left;
    return goal > 0 ? goal : 1e-9;
}

/* Fill the decision from the chosen candidate (taking its arrays). */
static void decide_cand(cand_t *c, policy_decision_t *out)
{
    out->action = c->action;
    out->count = c->count;
    out->pooled = c->pooled;
    out->procs_after = c->n;
    out->hosts = c->hosts;
    out->ranks = c->ranks;
    out->weights = c->weights;
    out->class_counts = c->class_counts;
    out->predicted = c->t;
    out->price_per_hour = c->price;
    free(c->power);
    *c = (cand_t){0};
}

static void say(policy_decision_t *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}

static void record_payoff(policy_decision_t *out, const payoff_t *f)
{
    out->gain = f->gain;
    out->gain_low = f->gain_low;
    out->cost = f->cost;
    out->cost_high = f->cost_high;
}

/* The payoff into the decision, and its figures at the end of the reason. */
static void say_payoff(policy_decision_t *out, const payoff_t *f)
{
    record_payoff(out, f);
    size_t len = strlen(out->reason);
    snprintf(out->reason + len, sizeof out->reason - len,
             "; gains %.3g s (>= %.3g) for %.3g s (<= %.3g)", f->gain, f->gain_low, f->cost,
             f->cost_high);
}

/* An action for speed that pays at the point estimates but not with the model's error:
 * nothing is done, and the reason says what was weighed. */
static void say_unsure(policy_decision_t *out, const char *what, const ctx_t *x,
                       const cand_t *c, const payoff_t *f)
{
    say(out, "%s: %s %d -> %d would gain %.3g s (>= %.3g) for %.3g s (<= %.3g): not sure to "
        "pay with the model's error; kept", what, policy_action_name(c->action), x->p, c->n,
        f->gain, f->gain_low, f->cost, f->cost_high);
    record_payoff(out, f);
}

static mal_status_t objective_phase(const ctx_t *x, double goal, policy_decision_t *out)
{
    cand_t best = {0};
    mal_status_t rc = 0;
    double tol = x->cfg->tolerance;
    if (x->current > goal) {
        rc = expansion_scenarios(x, goal, &best);
        if (!rc && best.n == 0)
            rc = fastest_expansion(x, &best);
    } else if (x->current < goal * (1 - tol)) {
        rc = removal_scenarios(x, goal, &best);
    }
    if (rc || best.n == 0) {
        cand_free(&best);
        if (!rc)
            say(out, x->current > goal ? "predicted %.3g s > goal %.3g s, but no set does better"
                : x->current < goal * (1 - tol) ? "predicted %.3g s < goal %.3g s, but no "
                "removable set keeps the goal" : "predicted %.3g s within the goal %.3g s",
                x->current, goal);
        return rc;
    }
    double t = cand_total(x, &best);
    bool approximate = best.approximate, faster = best.action != POLICY_SHRINK;
    payoff_t f = payoff(x, &best, x->current);
    if (faster ? !pays(&f) : cand_total_high(x, &best) > goal) {
        if (faster)
            say_unsure(out, "objective", x, &best, &f);
        else
            say(out, "objective: predicted %.3g s < goal %.3g s; shrink %d -> %d could miss "
                "the goal with the model's error (%.3g s); kept", x->current, goal, x->p,
                best.n, cand_total_high(x, &best));
        cand_free(&best);
        return MAL_OK;
    }
    decide_cand(&best, out);
    say(out, "objective: predicted %.3g s %s goal %.3g s; %s %d -> %d procs predicts %.3g s%s%s",
        x->current, x->current > goal ? ">" : "<", goal, policy_action_name(out->action),
        x->p, out->procs_after, t, t > goal ? " (goal out of reach: the fastest set)" : "",
        approximate ? " (class mix: the best GLPK found within its node limit)" : "");
    if (faster)
        say_payoff(out, &f);
    return MAL_OK;
}

/* DMRlib's limits: below min or (without objective) preferred, above max. */
static mal_status_t limits_phase(const ctx_t *x, policy_decision_t *out)
{
    const policy_config_t *cfg = x->cfg;
    int want = 0, limit = 0;
    const char *why = NULL;
    if (cfg->max_procs > 0 && x->p > cfg->max_procs) {
        bool *leaving = calloc((size_t)x->p, sizeof *leaving);
        cand_t c = {0};
        if (leaving == NULL)
            return MAL_ERR_NOMEM;
        for (int r = x->p - 1, k = x->p - cfg->max_procs; r >= 1 && k > 0; r--, k--)
            leaving[r] = true;
        mal_status_t rc = cand_shrink(x, leaving, &c);
        free(leaving);
        if (rc)
            return cand_free(&c), rc;
        decide_cand(&c, out);
        say(out, "limits: %d procs above the maximum %d", x->p, cfg->max_procs);
        return MAL_OK;
    }
    if (cfg->min_procs > 0 && x->p < cfg->min_procs) {
        want = cfg->min_procs - x->p;
        limit = cfg->min_procs;
        why = "below the minimum";
    } else if (cfg->objective == POLICY_OBJECTIVE_NONE && cfg->preferred > x->p) {
        want = cfg->preferred - x->p;
        limit = cfg->preferred;
        why = "below the preferred count";
    }
    int room = expand_room(x);
    if (want == 0 || room == 0)
        return MAL_OK;
    want = want < room ? want : room;
    cand_t c = {0};
    bool found = false;
    mal_status_t rc = best_of_size(x, want, 0, &c, &found);
    if (rc != MAL_OK || !found)
        return cand_free(&c), rc;
    decide_cand(&c, out);
    say(out, "limits: %d procs %s (%d); adding %d", x->p, why, limit, want);
    return MAL_OK;
}

/* A release or rebalance for the sake of speed must gain more per interval than the
 * tolerance: gains within the measurement noise would move data back and forth. */
static bool worth_it(const ctx_t *x, double per_interval)
{
    return per_interval > x->cfg->tolerance * x->current;
}

/* Each release candidate costs a transfer plan over all ranks: try the first few
 * loaded ones only, so that a decision stays linear in the process count. */
#define RELEASE_TRIES 16

/* Dyn-MPI: the loaded rank whose release (the rest rebalanced) gains the most over the rest of
 * the run, after paying the release; none when every release loses. */
static mal_status_t release_phase(const ctx_t *x, policy_decision_t *out)
{
    int floor = x->cfg->min_procs > 1 ? x->cfg->min_procs : 1;
    if (x->cfg->mode != POLICY_LOADED || !x->cfg->release || x->p <= floor)
        return MAL_OK;
    cand_t keep = {0}, best = {0};
    bool *leaving = calloc((size_t)x->p, sizeof *leaving);
    /* Against the set rebalanced in full: the release's own set is weighted in full,
     * and a half step would charge the release's rival with the imbalance it keeps. */
    mal_status_t rc = leaving == NULL ? MAL_ERR_NOMEM : cand_rebalance(x, &keep, false);
    double best_gain = 0;
    payoff_t best_payoff = {0};
    for (int r = 1, tried = 0; !rc && r < x->p && tried < RELEASE_TRIES; r++) {
        if (!(x->power[r] < x->nominal[r] * (1 - x->cfg->tolerance)))
            continue; /* not slowed by other users: nothing to release it for */
        tried++;
        cand_t c = {0};
        leaving[r] = true;
        rc = cand_shrink(x, leaving, &c);
        leaving[r] = false;
        double per_interval = keep.t.comp + keep.t.comm - c.t.comp - c.t.comm;
        payoff_t f = payoff(x, &c, keep.t.comp + keep.t.comm);
        /* Against the rebalanced set, whose own move it saves; with the error against it. */
        double gain = f.gain_low - f.cost_high + keep.t.redist;
        if (!rc && worth_it(x, per_interval) && gain > best_gain) {
            best_gain = gain;
            best_payoff = f;
            cand_free(&best);
            best = c;
        } else {
            cand_free(&c);
        }
    }
    free(leaving);
    cand_free(&keep);
    if (rc || best.n == 0)
        return cand_free(&best), rc;
    int rank = best.ranks[0];
    decide_cand(&best, out);
    say(out, "release: rank %d slows the iteration; without it the run gains at least %.3g s "
        "after paying the release", rank, best_gain);
    say_payoff(out, &best_payoff);
    return MAL_OK;
}

static double imbalance_of(const ctx_t *x)
{
    double lo = INFINITY, hi = 0;
    for (int r = 0; r < x->p; r++) {
        if (x->in->procs[r].rows == 0)
            continue;
        lo = fmin(lo, x->in->procs[r].comp);
        hi = fmax(hi, x->in->procs[r].comp);
    }
    return hi > 0 ? (hi - lo) / hi : 0;
}

/* RCP: rebalance to computing power when the computation times spread too far, and the
 * gain over the rest of the run pays for the move. */
static mal_status_t balance_phase(const ctx_t *x, policy_decision_t *out)
{
    double spread = imbalance_of(x);
    if (x->cfg->imbalance <= 0 || spread <= x->cfg->imbalance)
        return MAL_OK;
    cand_t c = {0};
    mal_status_t rc = cand_rebalance(x, &c, true);
    double now = x->current - comm_interval(x, x->p);
    payoff_t f = payoff(x, &c, x->current);
    if (rc || f.gain <= f.cost || !worth_it(x, now - c.t.comp))
        return cand_free(&c), rc;
    if (!pays(&f)) {
        say_unsure(out, "balance", x, &c, &f);
        return cand_free(&c), MAL_OK;
    }
    decide_cand(&c, out);
    say(out, "balance: computation times spread %.0f%% > %.0f%%; rebalancing to %s power",
        100 * spread, 100 * x->cfg->imbalance,
        x->cfg->mode == POLICY_LOADED ? "measured" : "nominal");
    say_payoff(out, &f);
    return MAL_OK;
}

static bool inhibited(const policy_config_t *cfg, const policy_state_t *st,
                      const policy_input_t *in, policy_decision_t *out)
{
    if (!st->acted)
        return false;
    int64_t its = in->iteration - st->last_iteration;
    double secs = in->elapsed - st->last_elapsed;
    if (its < cfg->inhibit_iterations || secs < cfg->inhibit_seconds) {
        say(out, "inhibited: %lld iterations and %.3g s since the last action (at least %lld "
            "and %.3g s)", (long long)its, secs, (long long)cfg->inhibit_iterations,
            cfg->inhibit_seconds);
        return true;
    }
    return false;
}

/* Where an expansion's processes come from, in its reason: the operator sees that the
 * pool served it (and what the background does) without reading the report's counts. */
static void say_pool(const policy_input_t *in, policy_decision_t *out)
{
    int spawned = out->count - out->pooled;
    if (out->action != POLICY_EXPAND || (out->pooled == 0 && !in->async))
        return;
    size_t len = strlen(out->reason);
    snprintf(out->reason + len, sizeof out->reason - len, "; %d from the pool, %d spawned%s",
             out->pooled, spawned, in->async && spawned > 0 ? " in the background" : "");
}

static mal_status_t run_phases(const ctx_t *x, const policy_state_t *st,
                               policy_decision_t *out)
{
    if (inhibited(x->cfg, st, x->in, out))
        return MAL_OK;
    mal_status_t rc = limits_phase(x, out);
    if (!rc && out->action == POLICY_NONE && x->cfg->objective != POLICY_OBJECTIVE_NONE &&
        x->left > 0)
        rc = objective_phase(x, out->goal, out);
    if (!rc && out->action == POLICY_NONE && x->cfg->objective == POLICY_OBJECTIVE_NONE)
        rc = release_phase(x, out);
    if (!rc && out->action == POLICY_NONE && x->cfg->objective == POLICY_OBJECTIVE_NONE)
        rc = balance_phase(x, out);
    say_pool(x->in, out);
    return rc;
}

mal_status_t policy_decide(const policy_config_t *cfg, const avail_t *avail,
                           const predict_params_t *model, const policy_input_t *in,
                           policy_state_t *state, policy_decision_t *out, char *err,
                           size_t errlen)
{
    if (out != NULL)
        *out = (policy_decision_t){0};
    if (cfg == NULL || avail == NULL || model == NULL || in == NULL || state == NULL ||
        out == NULL)
        return fail(err, errlen, MAL_ERR_ARG, "policy_decide: a NULL argument");
    mal_status_t rc = policy_config_check(cfg, err, errlen);
    if (rc)
        return rc;
    ctx_t x;
    rc = ctx_init(&x, cfg, avail, model, in, err, errlen);
    policy_state_t next = *state;
    if (!rc && next.decisions == 0)
        next.static_estimate = in->elapsed + x.current * x.left;
    if (!rc) {
        out->current = x.current;
        out->goal = policy_goal(cfg, &next, in);
        out->predicted = (predict_interval_t){.comp = x.current - comm_interval(&x, x.p),
                                              .comm = comm_interval(&x, x.p)};
        out->procs_after = x.p;
        out->price_per_hour = price_now(&x);
        rc = run_phases(&x, &next, out);
        if (rc == MAL_ERR_NOMEM)
            fail(err, errlen, rc, "no memory for a decision over %d processes", x.p);
        else if (rc != MAL_OK)
            fail(err, errlen, rc, "no decision over %d processes: the candidate sets do not "
                 "fit the free cores", x.p);
    }
    ctx_free(&x);
    if (rc) {
        policy_decision_free(out);
        return rc;
    }
    if (out->reason[0] == '\0' && out->goal > 0)
        say(out, "predicted %.3g s within the goal %.3g s", x.current, out->goal);
    else if (out->reason[0] == '\0')
        say(out, "predicted %.3g s; nothing to gain", x.current);
    next.decisions++;
    if (out->action != POLICY_NONE) {
        next.acted = true;
        next.last_iteration = in->iteration;
        next.last_elapsed = in->elapsed;
    }
    *state = next;
    return MAL_OK;
}

/* ---- the operator's text ------------------------------------------------------------------ */

static bool parse_double(const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(d) || d < lo || d > hi)
        return false;
    *out = d;
    return true;
}

static bool parse_int64(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi)
        return false;
    *out = n;
    return true;
}

static bool parse_int(const char *v, int *out)
{
    int64_t n;
    if (!parse_int64(v, 0, 1000000, &n))
        return false;
    *out = (int)n;
    return true;
}

/* One key=value item; NULL when it was understood, else what is wrong with it. */
static const char *parse_item(const char *key, const char *v, policy_config_t *c)
{
    double d;
    if (strcmp(key, "speedup") == 0 || strcmp(key, "time") == 0) {
        bool speedup = key[0] == 's';
        if (!parse_double(v, 0, speedup ? 1 : 1e12, &d) || d <= 0 || (speedup && d >= 1))
            return speedup ? "speedup must be a fraction in (0, 1)" : "time must be > 0 s";
        c->objective = speedup ? POLICY_OBJECTIVE_SPEEDUP : POLICY_OBJECTIVE_TIME;
        c->target = d;
    } else if (strcmp(key, "constraint") == 0) {
        if (strcmp(v, "efficiency") != 0 && strcmp(v, "cost") != 0)
            return "constraint must be efficiency or cost";
        c->constraint = v[0] == 'c' ? SELECT_COST : SELECT_EFFICIENCY;
    } else if (strcmp(key, "mode") == 0) {
        if (strcmp(v, "dedicated") != 0 && strcmp(v, "loaded") != 0)
            return "mode must be dedicated or loaded";
        c->mode = v[0] == 'l' ? POLICY_LOADED : POLICY_DEDICATED;
    } else if (strcmp(key, "tolerance") == 0 || strcmp(key, "imbalance") == 0) {
        if (!parse_double(v, 0, 0.999999, &d))
            return "must be a number in [0, 1)";
        *(key[0] == 't' ? &c->tolerance : &c->imbalance) = d;
    } else if (strcmp(key, "inhibit_s") == 0) {
        if (!parse_double(v, 0, 1e12, &c->inhibit_seconds))
            return "inhibit_s must be a number of seconds >= 0";
    } else if (strcmp(key, "inhibit") == 0 || strcmp(key, "iterations") == 0) {
        bool inhibit = strcmp(key, "inhibit") == 0;
        if (!parse_int64(v, 0, INT64_MAX, inhibit ? &c->inhibit_iterations
                                                  : &c->total_iterations))
            return "must be an integer >= 0";
    } else if (strcmp(key, "release") == 0) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return "release must be 0 or 1";
        c->release = v[0] == '1';
    } else {
        int *field = strcmp(key, "min") == 0 ? &c->min_procs
                     : strcmp(key, "max") == 0 ? &c->max_procs
                     : strcmp(key, "preferred") == 0 ? &c->preferred : NULL;
        if (field == NULL)
            return "unknown key (speedup, time, constraint, tolerance, min, max, preferred, "
                   "inhibit, inhibit_s, imbalance, mode, release, iterations, off)";
        if (!parse_int(v, field))
            return "must be an integer in 0..1000000";
    }
    return NULL;
}

static char *trim(char *s)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
    return s;
}

mal_status_t policy_config_parse(const char *text, policy_config_t *c, bool *off_out,
                                 char *err, size_t errlen)
{
    if (c == NULL || off_out == NULL)
        return fail(err, errlen, MAL_ERR_ARG, "no policy configuration");
    *off_out = false;
    if (text == NULL || text[strspn(text, " ")] == '\0')
        return policy_config_check(c, err, errlen);
    char *copy = strdup(text);
    if (copy == NULL)
        return fail(err, errlen, MAL_ERR_NOMEM, "no memory to parse the policy");
    policy_config_t next = *c;
    mal_status_t rc = MAL_OK;
    int item = 0;
    bool off = false;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok != NULL && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        char *it = trim(tok), *eq = strchr(it, '=');
        item++;
        if (strcmp(it, "off") == 0) {
            off = true;
            continue;
        }
        const char *why = eq == NULL ? "expected key=value" : NULL;
        if (eq != NULL) {
            *eq = '\0';
            why = parse_item(trim(it), trim(eq + 1), &next);
            *eq = '=';
        }
        if (why != NULL)
            rc = fail(err, errlen, MAL_ERR_ARG, "item %d ('%s'): %s", item, it, why);
    }
    free(copy);
    if (!rc && off && item > 1)
        return fail(err, errlen, MAL_ERR_ARG, "'off' cannot be combined with other items");
    if (!rc && off) {
        *off_out = true;
        return MAL_OK;
    }
    if (!rc)
        rc = policy_config_check(&next, err, errlen);
    if (!rc)
        *c = next;
    return rc;
}
