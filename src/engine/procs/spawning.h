/* Spawning (procs/dpm.c, procs/spawnguard.c, procs/room.c): spawning and merging new
 * processes, the bound on a spawn the runtime loses, the room the job may grow into,
 * and leaving MPI with the rest of a job. */
#ifndef MAL_PROCS_SPAWNING_H
#define MAL_PROCS_SPAWNING_H

#include "procs.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the job may grow into (room.c): read at mal_init into s->room and
 * s->room_source (MAL_ERR_ARG naming the variable when its text is bad). */
mal_status_t engine_room_resolve(const settings_t *set, engine_settings_t *s);
void engine_room_free(engine_settings_t *s);
uint64_t engine_room_fingerprint(const engine_settings_t *s, uint64_t hash);
/* Rank 0's line at mal_init: the limit and where it comes from (summaries on). */
void engine_room_announce(const engine_settings_t *s);
/* Whether an expansion by `count` fits the slots (the same answer on every rank), and
 * the refusal MAL_ERR_LIMIT, with the notice, when it does not. engine_room_fits: the
 * same when all `count` are spawned, whatever is parked. */
bool engine_room_allows(const engine_parts_t *parts, const engine_procs_t *procs, int count);
bool engine_room_fits(const engine_group_t *g, const engine_settings_t *conf, int count);
mal_status_t engine_room_check(const engine_parts_t *parts, const engine_procs_t *procs, int count);
/* Slots neither active nor parked processes hold (INT_MAX: no limit): a prefetch
 * spawns no more. */
int engine_room_free_slots(const engine_group_t *g, const engine_settings_t *conf,
                           const engine_procs_t *procs);
/* Collective over the group: where the processes an expansion by `count` spawns go, set
 * as procs->spawn_hosts when the allocation names hosts and neither MAL_HOSTS nor the
 * policy does; true when it set them (engine_room_unplace frees them afterwards). */
bool engine_room_place(const engine_parts_t *parts, engine_procs_t *procs, int count);
void engine_room_unplace(engine_procs_t *procs, bool placed);
/* Collective over `comm`: the host of `a` this process runs on (alloc_find_host, rank 0's
 * host standing for localhost), -1 when none. */
int engine_room_host_of_mine(const alloc_t *a, MPI_Comm comm);

/* ---- returning emptied nodes to Slurm (release.c, MAL_RELEASE_NODES) ---- */
/* Where each process of a shrinking set runs, taken before the shrink. */
typedef struct {
    int nprocs;                 /* of the set before the shrink; 0: no survey         */
    int *where;                 /* per process: its room host (-1 none) and 1 when it
                                 * started inside a Slurm step (SLURM_STEP_ID), 0 not */
    bool *drop;                 /* per room host: returned (filled after the shrink)  */
} engine_release_survey_t;
/* mal_init of the initial processes, collective over the group: marks the room's hosts
 * where initial processes run (room_kept), which are never returned. Nothing unless
 * MAL_RELEASE_NODES is on and the room is a Slurm allocation. */
void engine_release_start(const engine_parts_t *parts);
/* Before a shrink, collective over the set that shrinks (nothing unless releasing). */
void engine_release_survey(const engine_parts_t *parts, engine_release_survey_t *survey);
/* After the shrink, on the processes that stay (collective over the new set): the hosts
 * it emptied (`leaving`: the old ranks released) go back to Slurm, rank 0 running
 * scontrol, and out of every rank's room. Never fails the shrink: a failure is said and
 * turns the setting off for the rest of the run. */
void engine_release_nodes(const engine_parts_t *parts, const engine_procs_t *procs,
                          const bool *leaving, engine_release_survey_t *survey);
void engine_release_survey_free(engine_release_survey_t *survey);

/* ---- spawning (dpm.c) ---- */
/* On rank 0 only: spawn `n` processes over MPI_COMM_SELF (a failure there cannot leave
 * other ranks inside MPI_Comm_spawn) and merge with them into *pair (rank 0 = this). */
mal_status_t engine_spawn(const engine_procs_t *procs, const engine_settings_t *conf, int n,
                          int call_index, MPI_Comm *inter, MPI_Comm *pair);

/* The host of spawn number `index` (an expansion's hosts, else the configured list, in
 * turn), malloc'd; NULL when the runtime places it. */
char *engine_spawn_host(const engine_procs_t *procs, const engine_settings_t *conf, int64_t index);
/* The same in place (engine_host_span): no allocation, so every rank finds the same. */
const char *engine_spawn_host_span(const engine_procs_t *procs, const engine_settings_t *conf,
                                   int64_t index, size_t *len);

/* ---- bounded spawns (spawnguard.c) ---- */
#define ENGINE_MAX_SIBLINGS 256
/* A spawn the runtime loses is tried this many times in all. */
#define ENGINE_SPAWN_ATTEMPTS 3
/* Seconds after which the runtime fails a spawn whose start it lost; 0 = never. */
int engine_spawn_bound(void);
/* Rank 0 at mal_init: says when no bound is in force. */
void engine_spawn_bound_notice(void);
/* MAL_ERR_ARG when MAL_RECONF_TIMEOUT (read at load) is not valid. */
mal_status_t engine_reconf_timeout_check(void);
/* mal_init: MPI_Finalize bounded by MAL_RECONF_TIMEOUT where the family's can hang
 * after the work is done (platform/mpich.c). */
void engine_finalize_bound(void);
/* A spawned child's mal_init: SIGTERM is fatal again. */
void engine_spawn_guard_end(void);
/* Marks the spawn's children as libmal's (their SIGTERM guard). */
mal_status_t engine_spawn_mark(MPI_Info info);
int engine_spawn_siblings(pid_t *pids, int max);
/* Records the processes that appeared since `before`; returns how many. */
int engine_spawn_note_stuck(const pid_t *before, int nbefore);
/* mal_finalize: ends the recorded processes. */
void engine_spawn_end_stuck(void);

/* ---- merging, parking and waiting without spinning (dpm.c) ---- */
/* Collective over `members` (and the children through `pair`, significant on rank 0
 * only): an intracommunicator with the members first and the children last. */
mal_status_t engine_join_members(MPI_Comm members, MPI_Comm pair, MPI_Comm *joined);
/* The children's side of engine_join_members. */
mal_status_t engine_join_children(MPI_Comm pair, MPI_Comm *joined);
/* Wait, without spinning, until every process of this MPI job (procs->job) reaches this
 * call; `report`: say (summary, report) how long this process waited. */
void engine_park(const engine_procs_t *procs, const engine_settings_t *conf, bool report);
#define ENGINE_PARK_POLL_CAP_NS 20000000L
/* Broadcast an int from rank 0 of `comm` (whether a spawn worked), waiting with sleeps:
 * the others wait for a spawn that takes tenths of a second, and a blocking broadcast
 * would spin on a core the application (or the new processes' MPI_Init) needs. Every
 * process of the spawn protocol uses it, so the calls match. */
void engine_bcast_flag(int *flag, MPI_Comm comm);
#define ENGINE_FLAG_POLL_CAP_NS 1000000L
/* Sleep *ns (a poll's back-off), then double it up to `cap`. */
void engine_backoff(long *ns, long cap);
double engine_cpu_seconds(void);
/* Summary line and report record of a process leaving the pool. */
void engine_pool_say_parked(const engine_procs_t *procs, const engine_settings_t *conf, bool woken,
                            double wall, double cpu);
/* A spawned process whose expansion was abandoned: free *comm, finalize and exit. */
_Noreturn void engine_leave_abandoned(engine_procs_t *procs, MPI_Comm *comm);

#endif /* MAL_PROCS_SPAWNING_H */
