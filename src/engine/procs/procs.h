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
bool engine_room_allows(const engine_state_t *e, int count);
bool engine_room_fits(const engine_state_t *e, int count);
mal_status_t engine_room_check(const engine_state_t *e, int count);
/* Slots neither active nor parked processes hold (INT_MAX: no limit): a prefetch
 * spawns no more. */
int engine_room_free_slots(const engine_state_t *e);
/* Collective over e->comm: where the processes an expansion by `count` spawns go, set
 * as e->procs.spawn_hosts when the allocation names hosts and neither MAL_HOSTS nor the
 * policy does; true when it set them (engine_room_unplace frees them afterwards). */
bool engine_room_place(engine_state_t *e, int count);
void engine_room_unplace(engine_state_t *e, bool placed);

/* Settings (dpm.c): the transport's, the registry's and the processes layer's views of
 * e->settings, made the same way at the initial start and at a join; a joining process
 * (`joining`) leaves the model's parameters, the policy and the room to its join message
 * (rank 0's view). */
mal_status_t engine_state_derive(engine_state_t *e, bool joining);
void engine_settings_free(engine_settings_t *s);
uint64_t engine_settings_fingerprint(const engine_settings_t *s, uint64_t hash);

/* What rank 0 sends a spawned or woken process (join.c). */
typedef struct {
    bool park;                  /* spawned into the pool: park, structures come later  */
    int remaining;              /* spawn calls of the expansion after this one         */
    int new_procs;              /* processes after the expansion                       */
    int spawning;               /* processes this expansion spawns                     */
    int woken;                  /* parked processes it takes (the first ones)          */
    const double *weights;      /* new_procs weights, NULL for an even split           */
    int first;                  /* park, for an expansion under way: the rank its first
                                 * receiver will have in it (read-mostly rows are copied
                                 * ahead, reconf/prepull.c); -1 none                  */
} engine_join_msg_t;

/* What a spawned or woken process received. */
typedef struct {
    bool park;
    int64_t remaining, old_procs, new_procs, first;
    double *weights;
} engine_join_header_t;

/* ---- spawning (dpm.c) ---- */
/* On rank 0 only: spawn `n` processes over MPI_COMM_SELF (a failure there cannot leave
 * other ranks inside MPI_Comm_spawn) and merge with them into *pair (rank 0 = this). */
mal_status_t engine_spawn(const engine_procs_t *procs, int n, int call_index, MPI_Comm *inter,
                          MPI_Comm *pair);

/* The host of spawn number `index` (an expansion's hosts, else the configured list, in
 * turn), malloc'd; NULL when the runtime places it. */
char *engine_spawn_host(const engine_procs_t *procs, int64_t index);

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

/* ---- merging, parking and waiting without spinning (dpm.c) ---- */
/* Collective over `members` (and the children through `pair`, significant on rank 0
 * only): an intracommunicator with the members first and the children last. */
mal_status_t engine_join_members(MPI_Comm members, MPI_Comm pair, MPI_Comm *joined);
/* The children's side of engine_join_members. */
mal_status_t engine_join_children(MPI_Comm pair, MPI_Comm *joined);
/* Wait, without spinning, until every process of this MPI job (procs->job) reaches this
 * call; `report`: say (summary, report) how long this process waited. */
void engine_park(const engine_procs_t *procs, bool report);
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
void engine_pool_say_parked(const engine_procs_t *procs, bool woken, double wall, double cpu);
/* A spawned process whose expansion was abandoned: free *comm, finalize and exit. */
_Noreturn void engine_leave_abandoned(engine_procs_t *procs, MPI_Comm *comm);

/* Joining (join.c): mal_init of a process started by an expansion; `e` is reset to
 * the state the join brings (a process that cannot join leaves MPI and exits). */
mal_status_t engine_join(engine_state_t *e, MPI_Comm parent, const mal_config_t *cfg);
/* Rank 0's side: send what a child needs to join `e`'s processes, `remaining` joins
 * after its own. */
mal_status_t engine_send_join_info(const engine_state_t *e, MPI_Comm pair,
                                   const engine_join_msg_t *msg);
/* The same in two steps: packed now (owned by the caller, free(out->data)), sent later
 * (an asynchronous expansion packs in the application's thread, sends in its own). */
typedef struct {
    unsigned char *data;
    int64_t len;
} engine_bytes_t;
mal_status_t engine_pack_join_info(const engine_state_t *e, const engine_join_msg_t *msg,
                                   engine_bytes_t *out);
mal_status_t engine_send_join_bytes(MPI_Comm pair, const engine_bytes_t *packed);
/* A woken process: the join information from rank 0 over `pair`, grafted onto this
 * process's registry (its own structures keep their handles and kept memory). */
mal_status_t engine_receive_wake(engine_state_t *e, MPI_Comm pair, engine_join_header_t *h);
/* The spawn calls that complete an expansion, as a member of *comm. */
mal_status_t engine_follow_spawns(MPI_Comm *comm, int64_t remaining);
/* A woken process's data phase over `comm` (taken on success, freed on failure); on
 * success it is active in `comm`. */
mal_status_t engine_join_woken(engine_state_t *e, MPI_Comm comm, engine_join_header_t *h);
/* Tell children that their spawn is abandoned (before they joined). */
void engine_send_join_abort(MPI_Comm pair);
/* The message from rank 0 over `pair`, unpacked into `e` and `h`: NULL when every
 * receiver read it, "" when rank 0 abandoned the spawn before sending it, else why this
 * process cannot join (joininfo.c). */
const char *engine_receive_join_info(MPI_Comm pair, engine_state_t *e, engine_join_header_t *h);
/* The remaining joins of a one-per-call expansion, as an existing member (a spawned
 * process leaves MPI when one is abandoned). */
mal_status_t engine_follow_joins(engine_procs_t *procs, int64_t remaining, MPI_Comm *comm);
/* The data phase of a process that joins over `comm`, as described by `h`. */
mal_status_t engine_join_data(engine_state_t *e, MPI_Comm comm, const engine_join_header_t *h);

/* Expansion and shrink (procs/resize.c) of `e`'s processes, for mal_expand, mal_shrink,
 * a plan and the policy: the public calls' arguments, checked and agreed here; the
 * caller has checked that libmal is initialised and that no asynchronous expansion
 * runs (its thread owns world: api/guard.c refuses the public calls, mal_step waits).
 * Collective over e->comm. */
mal_status_t engine_expand(engine_state_t *e, int count, mal_spawn_mode_t mode,
                           const double *weights);
/* `for_good`: the released processes leave even with the pool on (a plan's "-N!"). */
mal_status_t engine_shrink(engine_state_t *e, int count, const int *ranks,
                           const double *weights, bool for_good);

/* The expansion a plan or the policy decides: in the background (async.c) when async is
 * on and the pool cannot supply it (MAL_CONTINUE now, MAL_RECONFIGURED at the switch),
 * else engine_expand. Collective over e->comm. */
mal_status_t engine_expand_planned(engine_state_t *e, int count, mal_spawn_mode_t mode,
                                   const double *weights);
/* Release the parked processes whose structures are of an older registry (the others
 * stay, in order). Collective over e->comm. */
mal_status_t engine_pool_drop_stale(engine_state_t *e);
/* mal_step while an asynchronous expansion runs: MAL_CONTINUE until every rank's
 * background phase is done, then the switch. Collective over e->comm. */
mal_status_t engine_async_poll(engine_state_t *e);
/* mal_finalize: wait for the background phase and adopt what it did. */
void engine_async_finish(engine_state_t *e);
/* The report of an asynchronous expansion abandoned in the background (resize.c). */
void engine_report_abandoned_async(engine_state_t *e, int count, mal_spawn_mode_t mode,
                                   mal_status_t st, double started);

/* ---- the process pool (pool.c) ---- */
/* Whether these settings keep a pool (pool, prefetch or async). */
bool engine_pool_enabled(const engine_settings_t *s);
/* mal_init of the initial processes: world, and the prefetch. Collective. */
mal_status_t engine_pool_start(engine_state_t *e);
/* Spawn `count` processes into the pool, in engine_pool_fill_calls calls (spawn_mode):
 * collective over world. `packed` (rank 0): each call's join information, packed
 * beforehand by engine_pool_pack_fill; NULL: packed now. */
mal_status_t engine_pool_fill(engine_state_t *e, int count, const engine_bytes_t *packed);
int engine_pool_fill_calls(const engine_state_t *e, int count, mal_spawn_mode_t mode);
/* `expansion` (new_procs, weights): the expansion the processes are spawned for, whose
 * read-mostly rows they copy ahead; NULL for none. */
mal_status_t engine_pool_pack_fill(const engine_state_t *e, int count, int calls,
                                   const engine_join_msg_t *expansion, engine_bytes_t *packed);
/* Processes parked and reusable (the same on every active rank). */
int engine_pool_parked(const engine_state_t *e);
/* A process spawned into the pool for an asynchronous expansion tells world rank 0 that
 * it has mapped and copied ahead what it will hold (join.c); rank 0's background thread
 * waits for `n` of them, with sleeps, at most `bound` seconds (async.c): the switch then
 * does not wait for that work. Returns whether all n said so. */
void engine_pool_say_ready(const engine_procs_t *p);
bool engine_pool_wait_ready(const engine_procs_t *p, int n, double bound);
/* Asynchronous expansion enabled, and MPI_THREAD_MULTIPLE provided. */
bool engine_async_on(const engine_state_t *e);
/* Rank 0, at mal_step: prespawned processes prepare memory for the current registry. */
void engine_pool_prepare(engine_state_t *e);
/* An expansion by `count`: how many parked processes it takes (engine_pool_drop_stale
 * has released the stale ones before). Collective over e->comm. */
mal_status_t engine_pool_take(engine_state_t *e, int count, int *woken);
/* Wake msg->woken parked processes and send them msg; *grown spans the active processes
 * then them (e->comm itself when none). Collective over e->comm and the woken. */
mal_status_t engine_pool_wake(engine_state_t *e, const engine_join_msg_t *msg, MPI_Comm *grown);
/* After an expansion committed (e->comm is the new set). */
void engine_pool_after_expand(engine_state_t *e, int woken, bool spawned);
/* After a shrink committed, on every process of the old set: world in its new order,
 * the leavers parked last. Collective over world. */
/* `park`: the leavers park at the end of world (else they leave it). */
mal_status_t engine_pool_after_shrink(engine_state_t *e, const bool *leaving, int old_size,
                                      int old_rank, const double *hosts, bool park);
/* A parked process: wait until woken (MAL_OK: *comm and `h` for engine_join_woken) or
 * released for good (MAL_REMOVED). */
mal_status_t engine_pool_wait(engine_state_t *e, engine_join_header_t *h, MPI_Comm *comm);
/* mal_pool_release. Collective over e->comm. */
mal_status_t engine_pool_release(engine_state_t *e, int count);
/* mal_finalize: release every parked process, free world. */
void engine_pool_finalize(engine_state_t *e);
/* A prespawned process's memory for a structure (PREPARE), claimed at the wake by the
 * structure of that name (into *buf, as kept memory) or dropped. */
void engine_pool_reserve(engine_procs_t *procs, const char *name, int64_t bytes);
void engine_pool_claim(engine_procs_t *procs, const char *name, engine_buffer_t *buf);
/* The prepared memory of that name, if any (not claimed). */
bool engine_pool_reserved(const engine_procs_t *procs, const char *name, char **base,
                          size_t *mapped);
void engine_pool_drop_reserves(engine_procs_t *procs);

#endif /* MAL_PROCS_H */
