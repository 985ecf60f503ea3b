/* Joining (procs/join.c, procs/joininfo.c, procs/wake.c): the mal_init of a process an
 * expansion started, and the message rank 0 sends it (its format is written down at the
 * head of joininfo.c, the one module that writes and reads it). */
#ifndef MAL_PROCS_JOIN_H
#define MAL_PROCS_JOIN_H

#include "procs.h"

#include <stdbool.h>
#include <stdint.h>

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

/* Joining (join.c): mal_init of a process started by an expansion, on empty parts and
 * procs that the join fills; it returns once the process is active (one spawned into
 * the pool waits inside until woken). A process that cannot join leaves MPI and exits. */
mal_status_t engine_join(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm parent,
                         const mal_config_t *cfg);
/* Rank 0's side: send what a child needs to join the group's processes, `remaining` joins
 * after its own. */
mal_status_t engine_send_join_info(const engine_parts_t *parts, const engine_procs_t *procs,
                                   MPI_Comm pair, const engine_join_msg_t *msg);
/* The same in two steps: packed now (owned by the caller, free(out->data)), sent later
 * (an asynchronous expansion packs in the application's thread, sends in its own). */
typedef struct {
    unsigned char *data;
    int64_t len;
} engine_bytes_t;
mal_status_t engine_pack_join_info(const engine_parts_t *parts, const engine_procs_t *procs,
                                   const engine_join_msg_t *msg, engine_bytes_t *out);
mal_status_t engine_send_join_bytes(MPI_Comm pair, const engine_bytes_t *packed);
/* A woken process: the join information from rank 0 over `pair`, grafted onto this
 * process's registry (its own structures keep their handles and kept memory). */
mal_status_t engine_receive_wake(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm pair,
                                 engine_join_header_t *h);
/* The spawn calls that complete an expansion, as a member of *comm. */
mal_status_t engine_follow_spawns(MPI_Comm *comm, int64_t remaining);
/* A woken process's data phase over `comm` (taken on success, freed on failure); on
 * success it is active in `comm`. */
mal_status_t engine_join_woken(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm comm,
                               engine_join_header_t *h);
/* Tell children that their spawn is abandoned (before they joined). */
void engine_send_join_abort(MPI_Comm pair);
/* The message from rank 0 over `pair`, unpacked into the parts, procs and `h`: NULL when every
 * receiver read it, "" when rank 0 abandoned the spawn before sending it, else why this
 * process cannot join (joininfo.c). */
const char *engine_receive_join_info(MPI_Comm pair, const engine_parts_t *parts,
                                     engine_procs_t *procs, engine_join_header_t *h);
/* The remaining joins of a one-per-call expansion, as an existing member (a spawned
 * process leaves MPI when one is abandoned). */
mal_status_t engine_follow_joins(engine_procs_t *procs, int64_t remaining, MPI_Comm *comm);
/* The data phase of a process that joins over `comm`, as described by `h`. */
mal_status_t engine_join_data(const engine_parts_t *parts, MPI_Comm comm,
                              const engine_join_header_t *h);

#endif /* MAL_PROCS_JOIN_H */
