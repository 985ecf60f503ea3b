/* The data path of every reconfiguration: one planner (plan.c) and one executor
 * (reconfig.c) for rebalances, expansions and shrinks alike.
 *
 * A reconfiguration moves every structure from its layout over the old communicator to
 * a new layout over the new communicator N. The union U holds everybody who gives or
 * gets rows (the old communicator for a shrink, the merged one for an expansion); the
 * old processes come first in U, in their old order. A rebalance is the case U = N =
 * mal_comm() with n_of_u the identity, whose target is the structure's spare buffer (or
 * its current one, when every new part fits there) instead of a new buffer over N. */
#ifndef MAL_PLAN_H
#define MAL_PLAN_H

#include "memory.h"
#include "monitor.h"
#include "partition.h"
#include "registry.h"
#include "transport.h"

/* One structure in a reconfiguration: its layouts over U, where its new part goes, and
 * the plan between them. */
typedef struct {
    mal_array_t *array;
    const engine_transport_t *tp; /* how its rows travel (engine_transport_choose)  */
    bool moves;                 /* rows travel: false for a rebalance that leaves the
                                 * layout as it is (and for replicated structures,
                                 * which a rebalance never touches)                 */
    bool in_place;              /* rebalance: the new parts stay in the current
                                 * buffer; else they go to the spare                 */
    bool allocated;             /* tp->allocate succeeded: tp->free at release      */
    bool exposed[2];            /* sides whose epoch is open (engine_side_t)        */
    int64_t *old_bounds;        /* n_u + 1: old parts, empty for joiners            */
    int64_t *new_bounds;        /* n_u + 1: new parts, empty for leavers            */
    int64_t *new_bounds_n;      /* n_n + 1: the same over N                         */
    int64_t *new_offsets;       /* n_u: part starts in the target buffer, rows      */
    int64_t *new_offsets_n;     /* n_n: the same over N                             */
    int64_t *caps;              /* n_n: capacities of a new target buffer           */
    int64_t *flows;             /* 2 n_u: rows arriving at, then leaving, each rank */
    partition_segment_t *segs;  /* 2 n_u: recv segments, then send segments         */
    int64_t bytes_in;           /* bytes this rank receives from others              */
    engine_buffer_t target;     /* a new buffer over N (none on a leaver, nor in a
                                 * rebalance)                                        */
    engine_plan_t plan;
} engine_move_t;

typedef struct {
    mal_action_t action;        /* MAL_ACTION_REBALANCE, _EXPAND or _SHRINK          */
    engine_registry_t *reg;     /* the structures to move                          */
    const engine_transfer_t *xfer; /* the transport's settings                      */
    const engine_transport_t *transport; /* NULL: engine_transport_choose; else the
                                 * table every structure moves through (a test's)   */
    int64_t min_rows;           /* mal_config_t.min_rows                           */
    MPI_Comm u;                 /* spans every process that gives or gets data     */
    int me_u, n_u;
    MPI_Comm n;                 /* the new communicator; MPI_COMM_NULL on leavers   */
    int me_n, n_n;
    int *n_of_u;                /* N rank of each U rank, -1 for a leaver          */
    int old_procs;              /* U ranks below it held the old layout            */
    const double *weights;      /* n_n weights of the new layout, NULL = even      */
    monitor_t *mon;             /* told the planned moves (engine_plan_predict);
                                 * NULL: nobody is predicting                       */
    uint64_t fingerprint;       /* of the arguments that must agree (rebalance), 0 */
    bool park_leavers;          /* shrink into the pool: leavers keep their memory   */
    bool debug;                 /* MAL_DEBUG: rebalances move out of place, and the
                                 * memory left behind is protected at the commit    */
    int64_t iteration;          /* the iteration it happens at (debug's messages)   */
    engine_move_t *moves;
    int count;
    int64_t bytes_in;           /* bytes this rank received                        */
    const predict_params_t *params; /* the calibration MAL_REDIST_AUTO reads         */
    engine_moved_t moved;       /* the executor and the bytes per path (prepare)    */
    int windows_created;        /* rebalance: spare buffers (re)allocated           */
    int64_t bytes_ahead;        /* of bytes_in, copied ahead in the background      */
    bool changed;               /* some structure's layout changed                 */
    double t_meet;              /* seconds in U's first agreement: an expansion's
                                 * parents wait there for the newcomers to arrive   */
    double t_plan;              /* seconds planning and agreeing on the plan, the
                                 * first part of t_windows                         */
    double t_windows, t_redist; /* seconds                                         */
} engine_reconfig_t;

/* ---- planner (plan.c) ---- */

/* The layouts of a structure over U: `old_bounds` (old_procs + 1 entries, the old
 * processes' parts) spread over n_u ranks with empty parts for the joiners, and
 * `new_bounds_n` (over N) spread with empty parts for the leavers (n_of_u[r] < 0).
 * Pure: the planner's unit tests call it. */
void engine_plan_layouts(const int64_t *old_bounds, int old_procs, const int *n_of_u,
                         int n_u, const int64_t *new_bounds_n, int64_t *old_u,
                         int64_t *new_u);
/* One move per registered structure, in registry order, and n_of_u as the identity
 * (an expansion and a rebalance keep every rank; a shrink overwrites it). Released by
 * engine_reconfig_release, also on failure. The memory debug mode protected becomes
 * accessible again first: a reconfiguration reuses spares. */
mal_status_t engine_reconfig_prepare(engine_reconfig_t *rc);
/* Plan every move: layouts over U, segments, where the new parts go in place (a
 * rebalance), the transport, and its scratch. Local; errors are recorded. */
mal_status_t engine_plan_all(engine_reconfig_t *rc);
/* Collective over U, whatever the outcome so far (`local`): the executor of this
 * reconfiguration (rc->moved), the method set or MAL_REDIST_AUTO's pick for the link
 * class and state every rank of U sees; hashed into rc->fingerprint, so that ranks that
 * would move by different executors fail the plan's agreement instead of hanging. Returns
 * `local`, else MAL_ERR_MISMATCH on every rank when the old processes hold different
 * buffers (swapped differently), else MAL_OK. */
mal_status_t engine_plan_method(engine_reconfig_t *rc, mal_status_t local);
/* The model's view of the planned moves (engine_monitor_plan, _copy, _window). */
void engine_plan_predict(const engine_reconfig_t *rc);
/* The target buffers: the spare grown where a new part outgrows it (a rebalance,
 * collective over U when it grows), or a new buffer over N per structure (collective over
 * N); the plans' destinations are filled in. */
mal_status_t engine_plan_targets(engine_reconfig_t *rc);
/* Free the new buffers engine_plan_targets made over N (not a rebalance's spares). */
void engine_plan_free_targets(engine_reconfig_t *rc);

/* ---- executor (reconfig.c) ---- */

/* Open the epochs on the old parts that peers read: before the agreement that orders
 * the user's stores into them before any remote access. */
void engine_execute_expose_sources(engine_move_t *moves, int count);
/* Move every planned structure through its transport, within one epoch discipline:
 * expose the targets that peers write, pull every plan, complete every transfer, agree
 * over `comm` (all or nothing, naming `call`), close every epoch. `local` is this rank's
 * status so far: with an error nothing moves, the agreement and closes still happen. */
mal_status_t engine_execute(engine_move_t *moves, int count, MPI_Comm comm,
                            mal_status_t local, const char *call);
/* Close the epochs still open (a move that stops before engine_execute). */
void engine_execute_close(engine_move_t *moves, int count);

/* The data phase of a reconfiguration, run by every process of U with the same
 * structures in the same order: plan, build the targets, move, agree over U. `local`
 * is this rank's status so far (a failure is agreed, not acted on alone). On failure
 * the new buffers are gone and the old ones untouched. */
mal_status_t engine_reconfig_move(engine_reconfig_t *rc, mal_status_t local);
/* Free what engine_reconfig_prepare and _move planned (not the buffers kept). */
void engine_reconfig_release(engine_reconfig_t *rc);
/* Give the structures their new layouts and buffers. Across communicators the old
 * buffers are freed (collective over the old communicator on the processes that
 * `had_old` them); a rebalance swaps to the target buffer. With rc->debug, on a process
 * that stays, the memory the application's old pointers lead into is protected. */
void engine_reconfig_commit(engine_reconfig_t *rc, bool had_old);

/* ---- read-mostly rows copied ahead of an asynchronous expansion (prepull.c) ---- */

/* A process's part of a block structure after an expansion: rows [lo, hi) at `offset`
 * rows into a new buffer of `cap` rows. */
typedef struct {
    int64_t lo, hi, offset, cap;
} engine_part_t;
/* What engine_plan_all and engine_plan_targets will decide for process `me` of `n` in an
 * expansion with `weights` (NULL: even). Local. */
mal_status_t engine_expanded_part(const engine_registry_t *reg, const mal_array_t *a, int n,
                                  const double *weights, int64_t min_rows, int me,
                                  engine_part_t *part);
/* Where the rows are now: the old owners' parts (a->bounds), offsets and memory. */
typedef struct {
    int old_procs;
    const int64_t *offsets;
    const engine_peer_mem_t *peers;
} engine_prepull_src_t;
/* Where they go: this process (`me` of `procs` after the expansion) and the memory its
 * new buffer will borrow. */
typedef struct {
    int procs, me;
    const double *weights;
    int64_t min_rows;
    char *base;
    size_t mapped;
} engine_prepull_dst_t;
/* Copy this process's rows of `a` for the expansion into dst (a->prepulled records
 * it); nothing when the memory is too small. Local, one-sided. */
mal_status_t engine_prepull(const engine_registry_t *reg, mal_array_t *a,
                            const engine_prepull_src_t *src, const engine_prepull_dst_t *dst);
void engine_prepull_forget(mal_array_t *a);

#endif /* MAL_PLAN_H */
