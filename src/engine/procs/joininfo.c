/* Join information: what rank 0 tells a spawned or woken process, how that process
 * reads it, and its data phase (the process's side is join.c and wake.c).
 *
 * Rank 0 sends each spawn call's children one message over their pair communicator:
 * the settings, the iteration, the plan position, the new process count and weights,
 * every structure's description and old layout, and the carried values. The children
 * answer whether they could receive and read it; if one could not, every process of
 * that spawn leaves MPI and rank 0's expansion fails (MAL_ERR_SPAWN), with the old
 * processes and data untouched: nothing here aborts the run. Otherwise the children
 * take part in the remaining joins of the expansion and in its data phase, which
 * writes their partitions into their new windows; mal_alloc_window hands those back.
 *
 * The message, written (engine_pack_join_info) and read (unpack_join_info) only here,
 * over core/wire.c (i64: an int64_t; str: its length, -1 for NULL, and bytes):
 *   header    i64 magic "maljoin2"; i64 park; i64 remaining spawn calls; i64 old and
 *             i64 new process counts; i64 first (park: its rank in an expansion under
 *             way, else -1); i64 iteration; i64 next plan entry; i64 processes spawned
 *   settings  the settings object row by row (settings_pack: per row not `local`, i64
 *             num, the double, str text, i64 argc (-1 none) and argc str); the model's
 *             parameters (predict_params_t's bytes); i64 policy on; the room (str source,
 *             i64 slots, i64 unconfirmed, str Slurm job, i64 hosts, per host str name,
 *             i64 slots and i64 kept: 1 where an initial process runs, -1 unmarked)
 *   pool      i64 parked count, per parked process i64 holds and i64 generation; i64
 *             reused; i64 released
 *   registry  i64 generation; i64 weights given, then new-count doubles; the matrices,
 *             the structures (each: its description, old layout and source buffers) and
 *             the carried values, each list preceded by its i64 count
 * A reader that runs out of bytes, or finds the magic or a count wrong, fails the join
 * (JOIN_UNREADABLE) instead of taking a default. */
#include "core.h"
#include "join.h"
#include "monitor.h"
#include "plan.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawning.h"
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOIN_MAGIC INT64_C(0x6d616c6a6f696e32) /* "maljoin2": settings by the table */

/* The allocation: rank 0's view, so that every process judges expansions alike. */
static void pack_room(engine_wire_t *p, const engine_settings_t *s)
{
    engine_wire_put_str(p, s->room_source);
    engine_wire_put_i64(p, s->room.slots);
    engine_wire_put_i64(p, s->room_unconfirmed);
    engine_wire_put_str(p, s->room_job);
    engine_wire_put_i64(p, s->room.nhosts);
    for (int h = 0; h < s->room.nhosts; h++) {
        engine_wire_put_str(p, s->room.hosts[h].name);
        engine_wire_put_i64(p, s->room.hosts[h].slots);
        engine_wire_put_i64(p, s->room_kept != NULL ? s->room_kept[h] : -1);
    }
}

/* Host h's mark (procs/release.c): -1 when the sender keeps none. */
static void unpack_kept(engine_wire_reader_t *u, engine_settings_t *s, int64_t n, int64_t h)
{
    int64_t kept = engine_wire_get_i64(u);
    if (kept >= 0 && s->room_kept == NULL)
        s->room_kept = calloc((size_t)n, sizeof *s->room_kept);
    if (kept >= 0 && s->room_kept == NULL)
        u->failed = true;
    else if (kept >= 0)
        s->room_kept[h] = kept != 0;
}

static void unpack_room(engine_wire_reader_t *u, engine_settings_t *s)
{
    s->room_source = engine_wire_get_str(u);
    s->room.slots = engine_wire_get_i64(u);
    s->room_unconfirmed = engine_wire_get_i64(u) != 0;
    s->room_job = engine_wire_get_str(u);
    int64_t n = engine_wire_get_i64(u);
    if (u->failed || n < 0 || n > ALLOC_MAX_HOSTS) {
        u->failed = true;
        return;
    }
    s->room.hosts = n > 0 ? calloc((size_t)n, sizeof *s->room.hosts) : NULL;
    u->failed |= n > 0 && s->room.hosts == NULL;
    for (int64_t h = 0; !u->failed && h < n; h++) {
        char *name = engine_wire_get_str(u);
        snprintf(s->room.hosts[h].name, sizeof s->room.hosts[h].name, "%s",
                 name != NULL ? name : "");
        free(name);
        s->room.hosts[h].slots = (int)engine_wire_get_i64(u);
        unpack_kept(u, s, n, h);
        s->room.nhosts = (int)h + 1;
    }
}

/* The settings object whole (core/settings.c writes it row by row), then what rank 0
 * derived from it that a joiner must not derive again from its own files and
 * environment: the model's parameters, whether the policy decides, the room. */
static void pack_settings(engine_wire_t *p, const engine_parts_t *parts)
{
    const engine_settings_t *s = parts->conf;
    settings_pack(parts->settings, p);
    engine_wire_put(p, &s->params, sizeof s->params);
    engine_wire_put_i64(p, s->policy_on);
    pack_room(p, s);
}

/* Matrices first: the structures name theirs by position in this list. */
static void pack_matrices(engine_wire_t *p, const engine_registry_t *reg)
{
    engine_wire_put_i64(p, engine_csr_count(reg));
    for (mal_csr_t *m = engine_csr_first(reg); m != NULL; m = engine_csr_next(m)) {
        engine_csr_desc_t d = engine_csr_describe(m);
        engine_wire_put_str(p, d.name);
        engine_wire_put_i64(p, d.global_rows);
        engine_wire_put_i64(p, d.global_cols);
        engine_wire_put_i64(p, d.value_bytes);
    }
}

static int64_t matrix_index(const engine_registry_t *reg, const mal_csr_t *target)
{
    int64_t i = 0;
    for (const mal_csr_t *m = engine_csr_first(reg); m != NULL; m = engine_csr_next(m), i++)
        if (m == target)
            return i;
    return -1;
}

/* Where a read-mostly structure's rows are (offsets and direct memory of every owner),
 * so that a process spawned into the pool for an expansion copies its part ahead. */
static void pack_sources(engine_wire_t *p, const engine_array_desc_t *d, int nprocs)
{
    bool direct = d->offsets != NULL;
    engine_wire_put_i64(p, direct);
    if (!direct)
        return;
    engine_wire_put(p, d->offsets, (size_t)nprocs * sizeof *d->offsets);
    engine_wire_put(p, d->peers, (size_t)nprocs * sizeof *d->peers);
}

/* `nprocs`: the current process count (every structure has nprocs + 1 bounds). */
static void pack_arrays(engine_wire_t *p, const engine_registry_t *reg, int nprocs)
{
    engine_wire_put_i64(p, engine_array_count(reg));
    for (mal_array_t *a = engine_array_first(reg); a != NULL; a = engine_array_next(a)) {
        engine_array_desc_t d = engine_array_describe(a);
        engine_wire_put_str(p, d.name);
        engine_wire_put_i64(p, d.distribution);
        engine_wire_put_i64(p, d.global_rows);
        engine_wire_put_i64(p, d.row_len);
        engine_wire_put_i64(p, d.row_bytes);
        engine_wire_put_i64(p, d.halo);
        engine_wire_put_i64(p, d.layout);
        engine_wire_put_i64(p, d.part);
        engine_wire_put_i64(p, d.read_mostly);
        engine_wire_put_i64(p, matrix_index(reg, d.matrix));
        engine_wire_put(p, d.bounds, ((size_t)nprocs + 1) * sizeof *d.bounds);
        pack_sources(p, &d, nprocs);
    }
}

static void pack_values(engine_wire_t *p, const engine_registry_t *reg)
{
    int64_t count = 0;
    for (const engine_value_t *v = engine_value_first(reg); v != NULL; v = engine_value_next(v))
        count++;
    engine_wire_put_i64(p, count);
    for (const engine_value_t *v = engine_value_first(reg); v != NULL;
         v = engine_value_next(v)) {
        engine_value_desc_t d = engine_value_describe(v);
        engine_wire_put_str(p, d.name);
        engine_wire_put_i64(p, (int64_t)d.bytes);
        engine_wire_put(p, d.data, d.bytes);
    }
}

/* What the children answer, combined with MPI_MAX over the pair communicator (rank 0
 * answers JOIN_READ): after the length, whether every child has memory for the
 * message; after the message, whether every child could read it. Anything but
 * JOIN_READ abandons the expansion on both sides before anyone waits in the join. */
enum { JOIN_READ = 0, JOIN_NO_MEMORY = 1, JOIN_UNREADABLE = 2 };

static int children_answer(MPI_Comm pair, int mine, int *rc)
{
    int answer = mine;
    if (*rc == MPI_SUCCESS)
        *rc = PMPI_Allreduce(MPI_IN_PLACE, &answer, 1, MPI_INT, MPI_MAX, pair);
    return *rc == MPI_SUCCESS ? answer : JOIN_UNREADABLE;
}

static const char *join_failure(int answer)
{
    return answer == JOIN_NO_MEMORY ? "has no memory for" : "could not read";
}

static mal_status_t send_message(MPI_Comm pair, const void *data, int64_t len)
{
    int rc = PMPI_Bcast(&len, 1, MPI_INT64_T, 0, pair), answer = JOIN_READ;
    if (len > 0 && (answer = children_answer(pair, JOIN_READ, &rc)) == JOIN_READ) {
        if (rc == MPI_SUCCESS)
            rc = PMPI_Bcast((void *)data, (int)len, MPI_BYTE, 0, pair);
        answer = children_answer(pair, JOIN_READ, &rc);
    }
    mal_status_t st = engine_mpi_check(rc, "MPI_Bcast (join information)");
    if (!st && answer != JOIN_READ)
        st = engine_fail(MAL_ERR_SPAWN, "a spawned process %s the %lld bytes of join "
                         "information: the expansion is abandoned and the spawned "
                         "processes exit", join_failure(answer), (long long)len);
    return st;
}

void engine_send_join_abort(MPI_Comm pair)
{
    send_message(pair, NULL, 0);
}

/* The pool as the receivers will know it: the parked processes after the first `skip`
 * (the ones being woken), with the counters. */
static void pack_pool(engine_wire_t *p, const engine_procs_t *procs, int skip)
{
    engine_wire_put_i64(p, procs->nparked - skip);
    for (int i = skip; i < procs->nparked; i++) {
        engine_wire_put_i64(p, procs->parked[i].holds);
        engine_wire_put_i64(p, procs->parked[i].generation);
    }
    engine_wire_put_i64(p, procs->reused + skip);
    engine_wire_put_i64(p, procs->released);
}

mal_status_t engine_pack_join_info(const engine_parts_t *parts, const engine_procs_t *procs,
                                   const engine_join_msg_t *msg, engine_bytes_t *out)
{
    engine_group_t *g = parts->group;
    engine_wire_t p = {0};
    engine_wire_put_i64(&p, JOIN_MAGIC);
    engine_wire_put_i64(&p, msg->park);
    engine_wire_put_i64(&p, msg->remaining);
    engine_wire_put_i64(&p, g->size);
    engine_wire_put_i64(&p, msg->new_procs);
    engine_wire_put_i64(&p, msg->park ? msg->first : -1);
    engine_wire_put_i64(&p, g->iteration);
    engine_wire_put_i64(&p, (int64_t)g->plan_next);
    engine_wire_put_i64(&p, procs->spawned + msg->spawning);
    pack_settings(&p, parts);
    pack_pool(&p, procs, msg->woken);
    /* The registry's generation is a count each process keeps: a joiner adopts the
     * sender's, so that every active process judges the pool's staleness alike. */
    engine_wire_put_i64(&p, parts->reg->generation);
    engine_wire_put_i64(&p, msg->weights != NULL);
    if (msg->weights != NULL)
        engine_wire_put(&p, msg->weights, (size_t)msg->new_procs * sizeof *msg->weights);
    pack_matrices(&p, parts->reg);
    pack_arrays(&p, parts->reg, g->size);
    pack_values(&p, parts->reg);
    if (p.failed || p.len > (size_t)INT32_MAX) {
        free(p.data);
        *out = (engine_bytes_t){0};
        return engine_fail(MAL_ERR_NOMEM, "cannot pack the join information (%zu bytes)",
                           p.len);
    }
    *out = (engine_bytes_t){p.data, (int64_t)p.len};
    return MAL_OK;
}

mal_status_t engine_send_join_bytes(MPI_Comm pair, const engine_bytes_t *packed)
{
    if (packed->data == NULL) {
        engine_send_join_abort(pair);
        return engine_fail(MAL_ERR_NOMEM, "no join information to send");
    }
    return send_message(pair, packed->data, packed->len);
}

mal_status_t engine_send_join_info(const engine_parts_t *parts, const engine_procs_t *procs,
                                   MPI_Comm pair, const engine_join_msg_t *msg)
{
    engine_bytes_t packed;
    mal_status_t st = engine_pack_join_info(parts, procs, msg, &packed);
    if (st)
        engine_send_join_abort(pair);
    else
        st = engine_send_join_bytes(pair, &packed);
    free(packed.data);
    return st;
}

/* ---- the joining process ---------------------------------------------------------- */


/* The settings object, and the layers' views of it derived as at an initial start
 * (engine_state_derive), but for rank 0's parts. */
static void unpack_settings(engine_wire_reader_t *u, const engine_parts_t *parts)
{
    engine_settings_t *s = parts->conf;
    settings_unpack(u, parts->settings);
    if (u->failed)
        return;
    if (engine_state_derive(parts, true) != MAL_OK) {
        u->failed = true;
        return;
    }
    engine_wire_get(u, &s->params, sizeof s->params);
    s->policy_on = engine_wire_get_i64(u) != 0;
    unpack_room(u, s);
}

static void unpack_matrices(engine_wire_reader_t *u, engine_registry_t *reg)
{
    int64_t count = engine_wire_get_i64(u);
    for (int64_t i = 0; i < count && !u->failed; i++) {
        char *name = engine_wire_get_str(u);
        engine_csr_desc_t d = {.name = name};
        d.global_rows = engine_wire_get_i64(u);
        d.global_cols = engine_wire_get_i64(u);
        d.value_bytes = engine_wire_get_i64(u);
        u->failed |= !engine_csr_arrived(reg, &d);
        free(name);
    }
}

static mal_csr_t *matrix_at(const engine_registry_t *reg, int64_t index)
{
    mal_csr_t *m = engine_csr_first(reg);
    for (int64_t i = 0; m != NULL && i < index; i++)
        m = engine_csr_next(m);
    return index < 0 ? NULL : m;
}

/* A block of `n` values of `size` bytes, or NULL with the reader failed. */
static void *get_block(engine_wire_reader_t *u, int64_t n, size_t size)
{
    void *data = u->failed ? NULL : malloc((size_t)n * size);
    if (data == NULL)
        u->failed = true;
    else
        engine_wire_get(u, data, (size_t)n * size);
    return data;
}

static void unpack_sources(engine_wire_reader_t *u, engine_array_desc_t *d,
                           int64_t old_procs)
{
    if (engine_wire_get_i64(u) == 0 || u->failed)
        return;
    d->offsets = get_block(u, old_procs, sizeof *d->offsets);
    d->peers = get_block(u, old_procs, sizeof *d->peers);
}

/* Structures in the sender's registry order, which every later collective follows. */
static void unpack_array(engine_wire_reader_t *u, engine_registry_t *reg, int64_t old_procs)
{
    char *name = engine_wire_get_str(u);
    engine_array_desc_t d = {.name = name};
    d.distribution = (mal_distribution_t)engine_wire_get_i64(u);
    d.global_rows = engine_wire_get_i64(u);
    d.row_len = engine_wire_get_i64(u);
    d.row_bytes = engine_wire_get_i64(u);
    d.halo = engine_wire_get_i64(u);
    d.layout = (engine_layout_t)engine_wire_get_i64(u);
    d.part = (csr_part_t)engine_wire_get_i64(u);
    d.read_mostly = engine_wire_get_i64(u) != 0;
    d.matrix = matrix_at(reg, engine_wire_get_i64(u));
    d.bounds = get_block(u, old_procs + 1, sizeof *d.bounds);
    unpack_sources(u, &d, old_procs);
    u->failed |= !engine_array_arrived(reg, &d);
    free(name);
}

static void unpack_arrays(engine_wire_reader_t *u, engine_registry_t *reg, int64_t old_procs)
{
    int64_t count = engine_wire_get_i64(u);
    for (int64_t i = 0; i < count && !u->failed; i++)
        unpack_array(u, reg, old_procs);
}

static void unpack_values(engine_wire_reader_t *u, engine_registry_t *reg)
{
    int64_t count = engine_wire_get_i64(u);
    for (int64_t i = 0; i < count && !u->failed; i++) {
        char *name = engine_wire_get_str(u);
        int64_t bytes = engine_wire_get_i64(u);
        engine_value_desc_t d = {.name = name, .bytes = bytes > 0 ? (size_t)bytes : 0};
        d.data = d.bytes > 0 ? get_block(u, bytes, 1) : NULL;
        u->failed |= !engine_value_arrived(reg, &d);
        free(name);
    }
}

static void unpack_pool(engine_wire_reader_t *u, engine_procs_t *procs)
{
    int64_t n = engine_wire_get_i64(u);
    procs->parked = n > 0 && !u->failed ? calloc((size_t)n, sizeof *procs->parked) : NULL;
    if (n < 0 || (n > 0 && procs->parked == NULL))
        u->failed = true;
    for (int64_t i = 0; i < n && !u->failed; i++) {
        procs->parked[i].holds = engine_wire_get_i64(u) != 0;
        procs->parked[i].generation = engine_wire_get_i64(u);
    }
    procs->nparked = u->failed ? 0 : (int)n;
    procs->reused = engine_wire_get_i64(u);
    procs->released = engine_wire_get_i64(u);
}

static void unpack_join_info(engine_wire_reader_t *u, const engine_parts_t *parts,
                             engine_procs_t *procs, engine_join_header_t *h)
{
    engine_group_t *g = parts->group;
    if (engine_wire_get_i64(u) != JOIN_MAGIC)
        u->failed = true;
    h->park = engine_wire_get_i64(u) != 0;
    h->remaining = engine_wire_get_i64(u);
    h->old_procs = engine_wire_get_i64(u);
    h->new_procs = engine_wire_get_i64(u);
    h->first = engine_wire_get_i64(u);
    g->iteration = engine_wire_get_i64(u);
    g->plan_next = (size_t)engine_wire_get_i64(u);
    procs->spawned = engine_wire_get_i64(u);
    unpack_settings(u, parts);
    unpack_pool(u, procs);
    parts->reg->generation = engine_wire_get_i64(u);
    if (engine_wire_get_i64(u) && !u->failed) {
        h->weights = malloc((size_t)h->new_procs * sizeof *h->weights);
        if (h->weights == NULL)
            u->failed = true;
        else
            engine_wire_get(u, h->weights, (size_t)h->new_procs * sizeof *h->weights);
    }
    unpack_matrices(u, parts->reg);
    unpack_arrays(u, parts->reg, h->old_procs);
    unpack_values(u, parts->reg);
}

/* A testing knob: MAL_FAULT_JOIN=nomem or unpack makes this joining process fail to
 * allocate, or to read, its join information. */
static bool join_fault(const char *what)
{
    const char *knob = getenv("MAL_FAULT_JOIN");
    return knob != NULL && strcmp(knob, what) == 0;
}

/* Receive the message into `data` and unpack it: JOIN_READ or JOIN_UNREADABLE. */
static int read_message(MPI_Comm pair, unsigned char *data, int64_t len,
                        const engine_parts_t *parts, engine_procs_t *procs, engine_join_header_t *h,
                        int *rc)
{
    *rc = PMPI_Bcast(data, (int)len, MPI_BYTE, 0, pair);
    if (*rc != MPI_SUCCESS || join_fault("unpack"))
        return JOIN_UNREADABLE;
    engine_wire_reader_t u = {.data = data, .len = (size_t)len};
    unpack_join_info(&u, parts, procs, h);
    return u.failed ? JOIN_UNREADABLE : JOIN_READ;
}

static const char *why_not(int answer, bool mine, int64_t len)
{
    static char why[160];
    snprintf(why, sizeof why, "%s %s its %lld bytes of join information%s",
             mine ? "this process" : "another process of its spawn", join_failure(answer),
             (long long)len, mine && (join_fault("nomem") || join_fault("unpack"))
                                 ? " (injected fault, MAL_FAULT_JOIN)" : "");
    return why;
}

/* The message from rank 0, unpacked into the parts, `procs` and `h`. Returns NULL when every
 * child of this spawn has read it, "" when rank 0 abandoned the spawn before sending
 * it, else why this process cannot join. The children answer rank 0 after receiving
 * the length and after reading (children_answer), so one that cannot go on stops
 * every process of this spawn, and rank 0, before anyone waits in the join. */
const char *engine_receive_join_info(MPI_Comm pair, const engine_parts_t *parts,
                                     engine_procs_t *procs, engine_join_header_t *h)
{
    int64_t len = 0;
    int rc = PMPI_Bcast(&len, 1, MPI_INT64_T, 0, pair);
    if (rc != MPI_SUCCESS || len <= 0)
        return rc == MPI_SUCCESS ? "" : "the join information did not arrive";
    unsigned char *data = join_fault("nomem") ? NULL : malloc((size_t)len);
    int mine = data != NULL ? JOIN_READ : JOIN_NO_MEMORY;
    int answer = children_answer(pair, mine, &rc);
    if (answer == JOIN_READ) {
        mine = read_message(pair, data, len, parts, procs, h, &rc);
        answer = children_answer(pair, mine, &rc);
    }
    free(data);
    return answer == JOIN_READ ? NULL : why_not(answer, mine != JOIN_READ, len);
}

/* The remaining joins of a one-per-call expansion, as an existing member. */
mal_status_t engine_follow_joins(engine_procs_t *procs, int64_t remaining, MPI_Comm *comm)
{
    for (int64_t i = 0; i < remaining; i++) {
        int ok = 0;
        engine_bcast_flag(&ok, *comm);
        if (!ok)
            engine_leave_abandoned(procs, comm);
        MPI_Comm next;
        mal_status_t st = engine_join_members(*comm, MPI_COMM_NULL, &next);
        MPI_Comm_free(comm);
        if (st)
            return st;
        *comm = next;
    }
    return MAL_OK;
}

mal_status_t engine_join_data(const engine_parts_t *parts, MPI_Comm comm,
                              const engine_join_header_t *h)
{
    engine_group_t *g = parts->group;
    int n = (int)h->new_procs;
    engine_reconfig_t rc = engine_reconfig_of(parts, MAL_ACTION_EXPAND);
    rc.u = rc.n = comm;
    rc.n_u = rc.n_n = n;
    rc.old_procs = (int)h->old_procs;
    rc.weights = h->weights;
    MPI_Comm_rank(comm, &rc.me_u);
    rc.me_n = rc.me_u;
    /* A planning failure is agreed with the parents inside engine_reconfig_move. */
    mal_status_t st = engine_reconfig_move(&rc, engine_reconfig_prepare(&rc));
    mal_reconfig_stats_t stats = {
        .action = MAL_ACTION_EXPAND, .iteration = g->iteration,
        .procs_before = (int)h->old_procs, .procs_after = st ? (int)h->old_procs : n,
        .bytes_moved = rc.bytes_in, .bytes_ahead = rc.bytes_ahead,
        .window_seconds = rc.t_windows,
        .redist_seconds = rc.t_redist, .status = st,
    };
    engine_phases_of(parts->sink, &rc, 0); /* the parents commit first (resize.c) */
    engine_report(parts, comm, &stats, &rc.moved, NULL); /* rank 0 is a parent */
    if (!st)
        engine_reconfig_commit(&rc, false);
    engine_reconfig_release(&rc);
    return st;
}
