/* The process pool (procs/pool.c, procs/wake.c, procs/reserve.c, procs/async.c):
 * processes parked for reuse, their wake, the memory a prespawned process reserves, and
 * the asynchronous expansion that fills the pool in the background. */
#ifndef MAL_PROCS_POOL_H
#define MAL_PROCS_POOL_H

#include "join.h"
#include "procs.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- the process pool (pool.c) ---- */
/* Whether these settings keep a pool (pool, prefetch or async). */
bool engine_pool_enabled(const engine_settings_t *s);
/* mal_init of the initial processes: world, and the prefetch. Collective. */
mal_status_t engine_pool_start(const engine_parts_t *parts, engine_procs_t *procs);
/* Spawn `count` processes into the pool, in engine_pool_fill_calls calls (spawn_mode):
 * collective over world. `packed` (rank 0): each call's join information, packed
 * beforehand by engine_pool_pack_fill; NULL: packed now. */
mal_status_t engine_pool_fill(const engine_parts_t *parts, engine_procs_t *procs, int count,
                              const engine_bytes_t *packed);
int engine_pool_fill_calls(const engine_settings_t *conf, int count, mal_spawn_mode_t mode);
/* `expansion` (new_procs, weights): the expansion the processes are spawned for, whose
 * read-mostly rows they copy ahead; NULL for none. */
mal_status_t engine_pool_pack_fill(const engine_parts_t *parts, const engine_procs_t *procs,
                                   int count, int calls, const engine_join_msg_t *expansion,
                                   engine_bytes_t *packed);
/* Processes parked and reusable (the same on every active rank). */
int engine_pool_parked(const engine_procs_t *procs);
/* A process spawned into the pool for an asynchronous expansion tells world rank 0 that
 * it has mapped and copied ahead what it will hold (join.c); rank 0's background thread
 * waits for `n` of them, with sleeps, at most `bound` seconds (async.c): the switch then
 * does not wait for that work. Returns whether all n said so. */
void engine_pool_say_ready(const engine_procs_t *p);
bool engine_pool_wait_ready(const engine_procs_t *p, int n, double bound);
/* Asynchronous expansion enabled, and MPI_THREAD_MULTIPLE provided. */
bool engine_async_on(const engine_settings_t *conf, const engine_procs_t *procs);
/* Rank 0, at mal_step: prespawned processes prepare memory for the current registry. */
void engine_pool_prepare(const engine_parts_t *parts, engine_procs_t *procs);
/* An expansion by `count`: how many parked processes it takes (engine_pool_drop_stale
 * has released the stale ones before). Collective over the group. */
mal_status_t engine_pool_take(const engine_parts_t *parts, engine_procs_t *procs, int count,
                              int *woken);
/* Wake msg->woken parked processes and send them msg; *grown spans the active processes
 * then them (the group's communicator itself when none). Collective over the group and
 * the woken. */
mal_status_t engine_pool_wake(const engine_parts_t *parts, engine_procs_t *procs,
                              const engine_join_msg_t *msg, MPI_Comm *grown);
/* After an expansion committed (the group is the new set). */
void engine_pool_after_expand(const engine_group_t *g, engine_procs_t *procs, int woken,
                              bool spawned);
/* After a shrink committed, on every process of the old set: world in its new order,
 * the leavers parked last. Collective over world. */
/* `park`: the leavers park at the end of world (else they leave it). */
mal_status_t engine_pool_after_shrink(const engine_parts_t *parts, engine_procs_t *procs,
                                      const bool *leaving, int old_size, int old_rank,
                                      const double *hosts, bool park);
/* A parked process: wait until woken (MAL_OK: *comm and `h` for engine_join_woken) or
 * released for good (MAL_REMOVED). */
mal_status_t engine_pool_wait(const engine_parts_t *parts, engine_procs_t *procs,
                              engine_join_header_t *h, MPI_Comm *comm);
/* mal_pool_release. Collective over the group. */
mal_status_t engine_pool_release(const engine_parts_t *parts, engine_procs_t *procs, int count);
/* mal_finalize: release every parked process, free world. */
void engine_pool_finalize(const engine_group_t *g, engine_procs_t *procs);
/* A prespawned process's memory for a structure (PREPARE), claimed at the wake by the
 * structure of that name (into *buf, as kept memory) or dropped. */
void engine_pool_reserve(engine_procs_t *procs, const char *name, int64_t bytes);
void engine_pool_claim(engine_procs_t *procs, const char *name, engine_buffer_t *buf);
/* The prepared memory of that name, if any (not claimed). */
bool engine_pool_reserved(const engine_procs_t *procs, const char *name, char **base,
                          size_t *mapped);
void engine_pool_drop_reserves(engine_procs_t *procs);


#endif /* MAL_PROCS_POOL_H */
