/* The procs layer (procs/): settings carried to spawned processes, dynamic process
 * management (dpm.c), bounded spawns (spawnguard.c), joining (join.c), expansion and
 * shrink (resize.c). */
#ifndef MAL_PROCS_H
#define MAL_PROCS_H

#include "core.h"
#include "reconf.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Settings (dpm.c). */
mal_status_t engine_settings_resolve(const mal_config_t *cfg, engine_settings_t *out);
void engine_settings_free(engine_settings_t *s);
uint64_t engine_settings_fingerprint(const engine_settings_t *s, uint64_t hash);

/* Dynamic process management (dpm.c). */
/* On rank 0 only: spawn `n` processes over MPI_COMM_SELF (a failure there cannot leave
 * other ranks inside MPI_Comm_spawn) and merge with them into *pair (rank 0 = this). */
mal_status_t engine_spawn(const engine_procs_t *procs, int n, int call_index, MPI_Comm *inter,
                          MPI_Comm *pair);

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
/* A spawned child's mal_init: SIGTERM is fatal again. */
void engine_spawn_guard_end(void);
/* Marks the spawn's children as libmal's (their SIGTERM guard). */
mal_status_t engine_spawn_mark(MPI_Info info);
int engine_spawn_siblings(pid_t *pids, int max);
/* Records the processes that appeared since `before`; returns how many. */
int engine_spawn_note_stuck(const pid_t *before, int nbefore);
bool engine_spawn_clean_exit_allowed(void);
/* mal_finalize: ends the recorded processes. */
void engine_spawn_end_stuck(void);
/* Collective over `members` (and the children through `pair`, significant on rank 0
 * only): an intracommunicator with the members first and the children last. */
mal_status_t engine_join_members(MPI_Comm members, MPI_Comm pair, MPI_Comm *joined);
/* The children's side of engine_join_members. */
mal_status_t engine_join_children(MPI_Comm pair, MPI_Comm *joined);
/* Wait, without spinning, until every process of this MPI job (procs->job) reaches this
 * call; `report`: say (summary, report) how long this process waited. */
void engine_park(const engine_procs_t *procs, bool report);
/* A spawned process whose expansion was abandoned: free *comm, finalize and exit. */
_Noreturn void engine_leave_abandoned(engine_procs_t *procs, MPI_Comm *comm);

/* Joining (join.c): mal_init of a process started by an expansion; `e` is reset to
 * the state the join brings (a process that cannot join leaves MPI and exits). */
mal_status_t engine_join(engine_state_t *e, MPI_Comm parent, const mal_config_t *cfg);
/* Rank 0's side: send what a child needs to join `e`'s processes, `remaining` joins
 * after its own. */
mal_status_t engine_send_join_info(const engine_state_t *e, MPI_Comm pair, int remaining,
                                   int new_procs, const double *weights);
/* Tell children that their spawn is abandoned (before they joined). */
void engine_send_join_abort(MPI_Comm pair);

/* Expansion and shrink (procs/resize.c) of `e`'s processes, for mal_expand, mal_shrink,
 * a plan and the policy: the public calls' arguments, checked and agreed here; the
 * caller has checked that libmal is initialised. Collective over e->comm. */
mal_status_t engine_expand(engine_state_t *e, int count, mal_spawn_mode_t mode,
                           const double *weights);
mal_status_t engine_shrink(engine_state_t *e, int count, const int *ranks,
                           const double *weights);

#endif /* MAL_PROCS_H */
