/* The reconf layer's outcome side (reconf/rebalance.c, reconf/outcome.c): rebalances and
 * the report of every reconfiguration, and (see engine_state_t) the state of libmal.
 * The data path shared by every reconfiguration is in plan.h. */
#ifndef MAL_RECONF_H
#define MAL_RECONF_H

#include "core.h"
#include "mal.h"
#include "monitor.h"
#include "policy.h"
#include "registry.h"
#include "schedule.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the active processes know of one parked process (procs/pool.c). */
typedef struct {
    bool holds;                 /* released by a shrink: it holds the application's
                                 * handles of the structures registered then        */
    int64_t generation;         /* the registry's generation when it parked          */
    double host;                /* engine_host_hash of its host, 0 unknown            */
} engine_parked_t;

typedef struct engine_async engine_async_t;

/* The processes layer's state: this process's job and its place in the malleable set. */
typedef struct {
    MPI_Comm job;               /* this process's MPI job (its MPI_COMM_WORLD peers
                                 * that use libmal): they finalize MPI together      */
    bool initial;               /* not started by a libmal expansion               */
    bool removed;               /* released by a shrink: only mal_finalize is left  */
    int64_t spawned;            /* processes spawned so far: next host in the list  */
    engine_settings_t settings;
    char *spawn_hosts;          /* the decided expansion's hosts (comma-separated),
                                 * used instead of settings.hosts, from index
                                 * spawn_hosts_base; NULL otherwise                   */
    int64_t spawn_hosts_base;
    /* The pool (procs/pool.c). `world` spans every live process: the active ones first,
     * in mal_comm()'s order, then the parked ones, oldest first. MPI_COMM_NULL when the
     * pool is off. The active processes know every parked one (`parked`, in world
     * order after them); a parked process knows only that it is one. */
    MPI_Comm world;
    engine_parked_t *parked;
    int nparked;
    bool parked_self;           /* this process waits in the pool                    */
    int64_t prepared;           /* registry generation the fresh parked processes
                                 * reserved memory for (rank 0), -1 none            */
    int64_t reused, released;   /* processes taken from / released by the pool       */
    engine_async_t *async;      /* an asynchronous expansion under way, else NULL   */
    double async_started;       /* its switch: when the background phase started     */
    int async_spawned;          /* its switch: processes the background spawned       */
    struct engine_reserve *reserves; /* a prespawned process's prepared memory        */
} engine_procs_t;

/* What decides reconfigurations: the plan and the policy (decide.c). */
typedef struct {
    schedule_t schedule;
    size_t next_action;         /* first plan entry not yet carried out             */
    double start_seconds;       /* MPI_Wtime at mal_init (rank 0 measures the run)   */
    policy_state_t policy_state;
    mal_decision_t decision;    /* the latest, on every rank                         */
    bool decision_fresh;        /* the reconfiguration under way carries it out:
                                 * the report names its reason                       */
} engine_decider_t;

/* Figures of the latest rebalance and reconfiguration. */
typedef struct {
    mal_rebalance_stats_t last;
    engine_moved_t moved;       /* the last rebalance's executor and bytes per path  */
    mal_reconfig_stats_t reconfig;
} engine_stats_t;

/* The state of this process's libmal: every layer's part of it. It is the API layer's
 * (engine_context, api/context.c), but it lives here, in the reconf layer, because that
 * is the lowest layer whose functions still take it: engine_rebalance,
 * engine_reported_rebalance and engine_report (reconf/rebalance.c, reconf/outcome.c)
 * read and write e->procs.settings, e->stats and e->reg. The parts of later layers it
 * aggregates (engine_procs_t, engine_decider_t) are defined here with it for that
 * reason; monitor_t stays opaque (monitor.h). */
typedef struct {
    bool initialized;
    MPI_Comm comm;
    int rank;
    int size;
    settings_t settings;        /* every setting, resolved once (core/settings.h)   */
    int64_t iteration;          /* mal_step calls, carried to joiners               */
    engine_registry_t reg;
    engine_transfer_t xfer;
    engine_procs_t procs;
    engine_decider_t pol;
    engine_stats_t stats;
    monitor_t *mon;             /* engine_monitor_init .. engine_monitor_finalize      */
} engine_state_t;

/* ---- rebalances and the outcome of every reconfiguration (reconf/) ---- */
/* The work of mal_rebalance (rebalance.c), collective over e->comm; its figures go to
 * e->stats.last. */
mal_status_t engine_rebalance(engine_state_t *e, const double *weights);
/* A plan's (`decision` NULL) or the policy's rebalance, predicted and reported like the
 * other reconfigurations (rebalance.c). */
mal_status_t engine_reported_rebalance(engine_state_t *e, const double *weights, int count,
                                       int64_t plan_iteration, const mal_decision_t *decision);

/* Reconfiguration report (reconf/outcome.c): reduce the figures over `comm`, store them
 * (e->stats.reconfig), tell the monitor, and on its rank 0 write the JSON line and the
 * summary, with `decision` (the policy's behind it, NULL for none). `moved`: the executor
 * and the bytes this rank copied per path (engine_reconfig_t.moved), NULL when the
 * reconfiguration stopped before moving data. */
void engine_report(engine_state_t *e, MPI_Comm comm, mal_reconfig_stats_t *local,
                   const engine_moved_t *moved, const mal_decision_t *decision);

#endif /* MAL_RECONF_H */
