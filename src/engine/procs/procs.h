/* The procs layer (procs/): what changes the process set. Its state (engine_procs_t), how
 * a process's state is built (state.c) and the expansion and shrink that the API and
 * decide layers call (resize.c, async.c). The layer's parts have their own headers:
 * spawn.h (spawning, its bound and the room to grow into), join.h (the join protocol and
 * its message) and pool.h (parked processes, wakes, reserves and asynchronous
 * expansion). Every function takes the parts of lower layers it works on
 * (engine_parts_t) and this layer's state beside them. */
#ifndef MAL_PROCS_H
#define MAL_PROCS_H

#include "core.h"
#include "reconf.h"

#include <stdbool.h>
#include <stdint.h>

/* What the active processes know of one parked process (procs/pool.c). */
typedef struct {
    bool holds;                 /* released by a shrink: it holds the application's
                                 * handles of the structures registered then        */
    int64_t generation;         /* the registry's generation when it parked          */
    double host;                /* engine_host_hash of its host, 0 unknown            */
} engine_parked_t;

typedef struct engine_async engine_async_t;

/* The processes layer's state: this process's job, its place in the malleable set, the
 * pool and the spawns under way. Its settings are the derived view beside it
 * (engine_parts_t.conf). */
typedef struct {
    MPI_Comm job;               /* this process's MPI job (its MPI_COMM_WORLD peers
                                 * that use libmal): they finalize MPI together      */
    bool initial;               /* not started by a libmal expansion               */
    bool removed;               /* released by a shrink: only mal_finalize is left  */
    int64_t spawned;            /* processes spawned so far: next host in the list  */
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

/* ---- a process's state (state.c) ---- */
/* The transport's, the registry's and the processes and decide layers' views of the
 * settings object (parts->settings), made the same way at the initial start and at a
 * join; a joining process (`joining`) leaves the model's parameters, the policy and the
 * room to its join message (rank 0's view). */
mal_status_t engine_state_derive(const engine_parts_t *parts, bool joining);
void engine_settings_free(engine_settings_t *s);
uint64_t engine_settings_fingerprint(const engine_settings_t *s, uint64_t hash);
/* This process enters the active set `comm` (the initial start, a join, a wake): the
 * group, the rank messages name, the monitor (created once) and the executor the
 * figures start with. */
void engine_state_enter(const engine_parts_t *parts, const engine_procs_t *procs, MPI_Comm comm);

/* Expansion and shrink (procs/resize.c) of the group's processes, for mal_expand, mal_shrink,
 * a plan and the policy: the public calls' arguments, checked and agreed here; the
 * caller has checked that libmal is initialised and that no asynchronous expansion
 * runs (its thread owns world: api/guard.c refuses the public calls, mal_step waits).
 * Collective over the group. */
mal_status_t engine_expand(const engine_parts_t *parts, engine_procs_t *procs, int count,
                           mal_spawn_mode_t mode, const double *weights);
/* `for_good`: the released processes leave even with the pool on (a plan's "-N!"). */
mal_status_t engine_shrink(const engine_parts_t *parts, engine_procs_t *procs, int count,
                           const int *ranks, const double *weights, bool for_good);

/* The expansion a plan or the policy decides: in the background (async.c) when async is
 * on and the pool cannot supply it (MAL_CONTINUE now, MAL_RECONFIGURED at the switch),
 * else engine_expand. Collective over the group. */
mal_status_t engine_expand_planned(const engine_parts_t *parts, engine_procs_t *procs, int count,
                                   mal_spawn_mode_t mode, const double *weights);
/* Release the parked processes whose structures are of an older registry (the others
 * stay, in order). Collective over the group. */
mal_status_t engine_pool_drop_stale(const engine_parts_t *parts, engine_procs_t *procs);
/* mal_step while an asynchronous expansion runs: MAL_CONTINUE until every rank's
 * background phase is done, then the switch. Collective over the group. */
mal_status_t engine_async_poll(const engine_parts_t *parts, engine_procs_t *procs);
/* mal_finalize: wait for the background phase and adopt what it did. */
void engine_async_finish(engine_procs_t *procs);
/* The report of an asynchronous expansion abandoned in the background (resize.c). */
void engine_report_abandoned_async(const engine_parts_t *parts, int count, mal_spawn_mode_t mode,
                                   mal_status_t st, double started);


#endif /* MAL_PROCS_H */
