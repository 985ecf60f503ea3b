/* The reconf layer's outcome side (reconf/rebalance.c, reconf/outcome.c): rebalances and
 * the report of every reconfiguration, and the state types a reconfiguration works on
 * (the process set, the report sink, the view of the parts it takes). The data path
 * shared by every reconfiguration is in plan.h. */
#ifndef MAL_RECONF_H
#define MAL_RECONF_H

#include "core.h"
#include "mal.h"
#include "monitor.h"
#include "plan.h"
#include "registry.h"
#include "report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The active process set, as a reconfiguration sees and changes it: mal_comm(), this
 * process's place in it, and the run's progress that every process of the set shares
 * and a joining process is given (procs/joininfo.c). A reconfiguration that commits
 * replaces it. */
typedef struct {
    MPI_Comm comm;
    int rank;
    int size;
    int64_t iteration;          /* mal_step calls                                    */
    size_t plan_next;           /* first plan entry not yet carried out (decide/)    */
} engine_group_t;

/* Figures of the latest rebalance and reconfiguration. */
typedef struct {
    mal_rebalance_stats_t last;
    engine_moved_t moved;       /* the last rebalance's executor and bytes per path  */
    mal_reconfig_stats_t reconfig;
} engine_stats_t;

/* Where the outcome of a reconfiguration goes: the figures the public calls return, the
 * monitor (the model's check), and, on rank 0, the report and the summary
 * (engine_report; their paths and switches are settings). */
typedef struct {
    engine_stats_t stats;
    monitor_t *mon;             /* engine_monitor_init .. engine_monitor_finalize      */
    const mal_decision_t *reason; /* the policy's decision the reconfiguration under
                                 * way carries out (decide/), NULL for a call or a plan */
    report_phases_t phases;     /* where the reconfiguration under way spends its time,
                                 * this rank's (engine_report reduces and clears them) */
} engine_sink_t;

/* What a reconfiguration works with: the process set, the settings, the registered
 * data, how it moves and where the outcome goes. Each part is owned by its layer and
 * lives in the API layer's state (api/state.h), which hands this view down: the layers
 * below it never see libmal's whole state, and the processes and decide layers pass
 * their own state beside it. `settings` and `conf` are written only where a process's
 * state is built (procs/state.c, a join), by mal_set_redist and by a shrink that returns
 * nodes to Slurm (procs/release.c: the room). */
typedef struct {
    engine_group_t *group;
    settings_t *settings;       /* every setting (core/settings.h)                    */
    engine_settings_t *conf;    /* what the process and decide layers derive from it  */
    engine_registry_t *reg;
    engine_transfer_t *xfer;
    engine_sink_t *sink;
} engine_parts_t;

/* ---- rebalances and the outcome of every reconfiguration (reconf/) ---- */
/* A reconfiguration over `parts` (rebalance.c): its registry, transport, weighted
 * layout's minimum, monitor and model parameters filled in; the caller sets the process
 * sets, the weights and the rest. */
engine_reconfig_t engine_reconfig_of(const engine_parts_t *parts, mal_action_t action);
/* The work of mal_rebalance (rebalance.c), collective over the group; its figures go
 * to the sink's stats.last. */
mal_status_t engine_rebalance(const engine_parts_t *parts, const double *weights);
/* A plan's or the policy's rebalance (the sink's reason), predicted and reported like
 * the other reconfigurations (rebalance.c). */
mal_status_t engine_reported_rebalance(const engine_parts_t *parts, const double *weights,
                                       int count, int64_t plan_iteration);

/* The phases of `rc` into the sink (join, plan, setup, transfer), with the seconds its
 * commit took; agree, spawn and merge are the caller's (outcome.c). */
void engine_phases_of(engine_sink_t *sink, const engine_reconfig_t *rc, double commit);
/* Reconfiguration report (reconf/outcome.c): reduce the figures over `comm`, store them
 * (the sink's stats.reconfig), tell the monitor, and on its rank 0 write the JSON line
 * and the summary, with the sink's reason. `moved`: the executor and the bytes this rank
 * copied per path (engine_reconfig_t.moved), NULL when the reconfiguration stopped
 * before moving data; `change`: the released ranks and the weights it asked for (read
 * on rank 0 only), NULL when not known there. */
void engine_report(const engine_parts_t *parts, MPI_Comm comm, mal_reconfig_stats_t *local,
                   const engine_moved_t *moved, const report_change_t *change);

#endif /* MAL_RECONF_H */
