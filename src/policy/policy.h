/* The reconfiguring policy, pure: measurements of one sampling interval in, one decision
 * out, no MPI. libmal's mal_step (rank 0 decides, the others follow) and mal-sim (a
 * modelled cluster, no MPI) run the same code. Private to libmal (never installed).
 *
 * What it combines:
 *  - Flex-MPI §4.6, Algorithm 1: a performance objective (a completion time, or a
 *    fraction faster than the static estimate) turned into the goal time of the next
 *    interval; when the model's prediction for the current set misses the goal, expansion
 *    (s = 1..available) or removal (r = 1..removable) scenarios are evaluated, the class
 *    counts of each chosen exactly (select.h, GLPK), and the suitable set with the fewest
 *    processes (efficiency) or the lowest price per hour (cost) wins;
 *  - DMRlib: minimum / maximum / preferred process counts, and inhibitors (no new action
 *    within N iterations or T seconds of the last one);
 *  - Dyn-MPI: in loaded (non-dedicated) mode, release a rank whose participation slows
 *    the iteration (the rest, rebalanced, would be faster even after paying the release);
 *  - RCP load balancing: when (max - min) / max of the ranks' computation times exceeds a
 *    threshold, rebalance to weights proportional to computing power: the measured power
 *    in loaded mode, the nominal power of the ranks' classes in dedicated mode.
 * Every action must pay for itself: its predicted gain over the rest of the run (one
 * interval when the length of the run is unknown) must exceed its predicted cost. An
 * expansion takes parked processes (policy_input_t.parked) before it spawns: on the
 * hosts where they are parked first, and priced as wakes rather than spawns, so a pool
 * makes growing cheaper; with async, only the switch and the background's slowdown of
 * the old set are its cost (predict_expand). With the model's error known
 * (policy_input_t.spread), an action for speed must pay at the unfavourable ends of the
 * intervals: its gain with the new set's predicted terms at their high end, over its
 * cost at the high end; an action that pays only at the point estimates is not taken,
 * and the reason says so. */
#ifndef MAL_POLICY_H
#define MAL_POLICY_H

#include "avail.h"
#include "learn.h"
#include "mal_status.h"
#include "predict.h"
#include "select.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    POLICY_OBJECTIVE_NONE = 0, /* no performance objective: limits, release, balance   */
    POLICY_OBJECTIVE_TIME,     /* finish within `target` seconds of the start           */
    POLICY_OBJECTIVE_SPEEDUP   /* finish `target` (a fraction in (0, 1)) faster than the
                                  static estimate made at the first decision           */
} policy_objective_t;

typedef enum {
    POLICY_DEDICATED = 0,      /* ranks own their cores: balance by nominal class power */
    POLICY_LOADED              /* other users share the cores: balance by measured power,
                                  and consider releasing slowed ranks                   */
} policy_mode_t;

typedef struct {
    policy_objective_t objective;
    double target;
    select_goal_t constraint;   /* efficiency (default) or cost                         */
    double tolerance;           /* the goal band: the current set is kept while its
                                   prediction is in [goal (1 - tolerance), goal];
                                   default 0.05, in [0, 1)                             */
    int min_procs;              /* 0: 1                                                  */
    int max_procs;              /* 0: no limit beyond the free cores                     */
    int preferred;              /* 0: none. Without an objective, the set grows to it
                                   while cores are free (DMRlib Algorithm 2)           */
    int64_t inhibit_iterations; /* no action within this many iterations of the last one */
    double inhibit_seconds;     /* ... nor within this many seconds                      */
    double imbalance;           /* RCP trigger, (max - min) / max of computation times;
                                   default 0.10; 0 turns balancing off                 */
    policy_mode_t mode;
    bool release;               /* Dyn-MPI release in loaded mode; default true          */
    int64_t total_iterations;   /* iterations of the whole run; 0: unknown (an objective
                                   needs it)                                            */
} policy_config_t;

/* The defaults documented above: no objective, efficiency, tolerance 0.05, no limits,
 * no inhibitors, imbalance 0.10, dedicated, release on, run length unknown. */
void policy_config_default(policy_config_t *c);

/* MAL_OK when the configuration is usable; MAL_ERR_ARG and a message naming the field
 * otherwise (e.g. "speedup objective 1.2 must be in (0, 1)", "min_procs 5 > max_procs 4",
 * "an objective needs total_iterations"). */
mal_status_t policy_config_check(const policy_config_t *c, char *err, size_t errlen);

/* Parse the operator's policy text (mal_config_t.policy, MAL_POLICY) over *c (fields
 * not named keep their values): comma-separated key=value items, spaces around items
 * allowed:
 *   off                       no decisions at all (*off true; *c unchanged)
 *   speedup=F | time=S        objective: F (0..1) faster than static, or S seconds
 *   constraint=efficiency|cost   tolerance=F   min=N   max=N   preferred=N
 *   inhibit=N (iterations)    inhibit_s=S (seconds)   imbalance=F (0: off)
 *   mode=dedicated|loaded     release=0|1    iterations=N (total_iterations)
 * Returns MAL_OK with *off false (then policy_config_check is also satisfied) or, for
 * "off", true; MAL_ERR_ARG with a message naming the item ("item 2 ('mode=fast'): mode
 * must be dedicated or loaded") or the inconsistency found by policy_config_check;
 * MAL_ERR_NOMEM when out of memory. NULL or "" changes nothing (MAL_OK if *c checks). */
mal_status_t policy_config_parse(const char *text, policy_config_t *c, bool *off, char *err,
                                 size_t errlen);

/* One process of the current set, as measured over the steady iterations of the
 * interval just ended (means per iteration). */
typedef struct {
    int host;                   /* index into avail_t.hosts                              */
    bool removable;             /* started by an expansion: Algorithm 1 removes only
                                   these (Flex-MPI's MAX_PROCS_REMOVE)                 */
    double work;                /* work units per iteration (> 0)                        */
    double comp;                /* computation seconds per iteration (> 0)               */
    int64_t rows;               /* rows it holds of the registered data                  */
} policy_proc_t;

/* What a decision is made from: the interval just ended, the same on every rank that
 * decides. Rank 0 keeps the rank number 0 in every decision (it is never released). */
typedef struct {
    int64_t iteration;          /* iterations completed                                  */
    int interval;               /* iterations per sampling interval (>= 1)               */
    double interval_seconds;    /* wall time of the interval just ended (slowest rank),
                                   per `interval` iterations                           */
    double elapsed;             /* wall seconds since the run started, this interval
                                   included (Algorithm 1's Texeaccum)                  */
    int nprocs;
    const policy_proc_t *procs; /* nprocs entries, by rank                               */
    const int *free_cores;      /* per avail host: cores free for new processes          */
    double work;                /* total work per iteration expected in the next
                                   interval (the monitor's extrapolation); <= 0: the
                                   sum of procs[].work                                 */
    predict_comm_profile_t comm;/* communication per iteration of one process            */
    double lambda;              /* correction of the communication model (eqs. 4-5),
                                   applied to every process count; <= 0: 1            */
    int64_t rows;               /* total rows of the registered data (sum of procs[].rows) */
    int64_t row_bytes;          /* bytes per row, all registered structures together     */
    int64_t read_mostly_row_bytes; /* of row_bytes, the MAL_READ_MOSTLY structures' (an
                                   asynchronous expansion moves them in the background) */
    int parked;                 /* processes parked in the pool: an expansion takes them
                                   before it spawns (woken, not spawned; their memory
                                   kept: predict_grow, predict_expand)                */
    const int *parked_on;       /* per avail host: how many of `parked` are there, and a
                                   new process placed there is a pooled one; NULL:
                                   unknown, the first `parked` new processes are       */
    bool async;                 /* an expansion that spawns runs in the background:
                                   only its switch, and the old set's slowdown meanwhile,
                                   stop the application (predict_expand)              */
    double spread[PREDICT_TERMS]; /* the model's error per term, as a log spread
                                   (learn.h): an action is taken only when it pays with
                                   every predicted term at the unfavourable end of its
                                   interval. For the steady terms (comp, comm), which
                                   repeat every interval, the error of the model's mean
                                   (predict_learn_mean_spread); for the one-time terms
                                   (process, redist), one event's spread. All 0: the
                                   model is taken as exact                            */
} policy_input_t;

typedef enum {
    POLICY_NONE = 0,
    POLICY_EXPAND,
    POLICY_SHRINK,
    POLICY_REBALANCE
} policy_action_t;

typedef struct {
    policy_action_t action;
    int count;                  /* EXPAND: processes to add; SHRINK: ranks to release    */
    int pooled;                 /* EXPAND: of count, those the pool serves              */
    int *hosts;                 /* EXPAND: avail host index of each new process (count)  */
    int *ranks;                 /* SHRINK: the ranks released, ascending (count)          */
    int procs_after;
    double *weights;            /* EXPAND, SHRINK, REBALANCE: one per process of the new
                                   set (remaining old ranks in order, then new ones),
                                   proportional to their computing power              */
    int *class_counts;          /* EXPAND / SHRINK: processes added / removed per class
                                   (avail->nclasses entries)                            */
    double goal;                /* goal time of the next interval, s (0: no objective)   */
    double current;             /* predicted next interval with no action, s              */
    predict_interval_t predicted; /* the chosen action's next interval (for NONE, the
                                   current set's comp and comm)                        */
    double price_per_hour;      /* of the set after the action, $ / hour                 */
    double gain, gain_low;      /* an action for speed: what it gains over the rest of
                                   the run, at the point and at the low end of its
                                   interval (the new set's predicted steady terms high)  */
    double cost, cost_high;     /* ... and what it costs once (process and
                                   redistribution terms), at the point and high end      */
    char reason[256];           /* why, in one sentence                                  */
} policy_decision_t;

/* Release the decision's arrays; safe on a zeroed decision and twice. */
void policy_decision_free(policy_decision_t *d);

/* Kept by the decider between decisions; zero it before the first. */
typedef struct {
    int decisions;              /* made so far                                           */
    double static_estimate;     /* completion time with the first decision's set, s      */
    bool acted;                 /* an action was decided                                 */
    int64_t last_iteration;     /* ... at this iteration                                  */
    double last_elapsed;        /* ... at this elapsed time                               */
} policy_state_t;

/* Decide. Returns MAL_OK with *out filled (free it with policy_decision_free) and *state
 * updated; MAL_ERR_ARG on unusable input (a message in err naming it: a host index out
 * of range, non-positive work or computation, rows not summing, ...), MAL_ERR_NOMEM when
 * out of memory (err says so); on error *out is zeroed and *state unchanged. `model` gives communication (Hockney with
 * lambda), spawn, removal and redistribution costs. */
mal_status_t policy_decide(const policy_config_t *cfg, const avail_t *avail,
                           const predict_params_t *model, const policy_input_t *in,
                           policy_state_t *state, policy_decision_t *out, char *err,
                           size_t errlen);

/* Algorithm 1's calculateGoal: the time the next interval may take so that the
 * objective is met, (deadline - elapsed) / intervals left, where the deadline is
 * cfg->target or (1 - cfg->target) * static_estimate; 0 when there is no objective or
 * no iteration is left; a deadline already passed gives a tiny positive goal. */
double policy_goal(const policy_config_t *cfg, const policy_state_t *state,
                   const policy_input_t *in);

const char *policy_action_name(policy_action_t a);

#endif /* MAL_POLICY_H */
