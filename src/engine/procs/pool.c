/* The process pool: released processes park, reusable, instead of ending.
 *
 * Every live process is in `world` (engine_procs_t): the active ones first, in
 * mal_comm()'s order, then the parked ones, oldest first. World rank 0 is therefore
 * always the active rank 0, which sends every command to the parked processes (point to
 * point over world, tag POOL_TAG). A parked process waits for them in engine_pool_wait,
 * polling with sleeps (no busy CPU):
 * - WAKE: it becomes active. An expansion takes the oldest parked processes, which sit
 *   right after the active ones in world, so the new communicator is a prefix of world
 *   (MPI_Comm_create_group, collective over its members only): no spawn, no MPI_Init,
 *   no merge, and the memory it kept is borrowed by its new buffers.
 * - GROW: processes are spawned into the pool (prefetch, asynchronous expansion); world
 *   is merged with them, which every process of world takes part in.
 * - REGROUP: world is rebuilt in a new order (a shrink parks the released processes at
 *   the end; a release drops processes).
 * - PREPARE: a parked process that holds no structures (prespawned) maps and populates
 *   memory for the share it would get, so that taking it costs no page faults.
 * - RELEASE: it leaves for good.
 * The active processes know every parked one (engine_parked_t) and keep that list alike,
 * so they all take the same decisions without asking. */
#include "core.h"
#include "platform.h"
#include "join.h"
#include "memory.h"
#include "monitor.h"
#include "plan.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_TAG = 7300, POOL_LIST_TAG = 7301, POOL_RESERVE_TAG = 7302, POOL_GROUP_TAG = 7303,
       POOL_READY_TAG = 7304 };
enum { CMD_WAKE = 1, CMD_GROW, CMD_REGROUP, CMD_PREPARE, CMD_RELEASE };

/* A command: what, and up to three arguments. */
typedef struct {
    int64_t what, a, b, c;
} pool_cmd_t;

/* What a prespawned process should map for one structure (PREPARE). */
typedef struct {
    char name[ENGINE_NAME_MAX];
    int64_t bytes;
} pool_reserve_t;

/* Polls sleep at most this long: it bounds what waking a parked process adds to an
 * expansion. With 2 ms a parked process used 1-3% of a core (500 wake-ups a second,
 * each an MPI progress call; measured with bench/pool_soak) beside the application;
 * 10 ms is 100 a second. Each wait starts at 50 us, so a wake that follows a command
 * closely (an asynchronous switch) is seen at once. */
#define POOL_POLL_CAP_NS 10000000L

static void send_command(const engine_procs_t *p, int to, int64_t what, int64_t a, int64_t b,
                         int64_t c)
{
    pool_cmd_t cmd = {what, a, b, c};
    PMPI_Send(&cmd, 4, MPI_INT64_T, to, POOL_TAG, p->world);
}

static bool wait_command(const engine_procs_t *p, pool_cmd_t *cmd)
{
    MPI_Request req;
    if (PMPI_Irecv(cmd, 4, MPI_INT64_T, 0, POOL_TAG, p->world, &req) != MPI_SUCCESS)
        return false;
    int done = 0;
    long ns = 50000;
    while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        engine_backoff(&ns, POOL_POLL_CAP_NS);
    return done != 0;
}

/* The communicator over `ranks` of world, in that order; collective over them only. */
static mal_status_t group_of(MPI_Comm world, const int *ranks, int n, MPI_Comm *out)
{
    MPI_Group all, some;
    MPI_Comm_group(world, &all);
    MPI_Group_incl(all, n, ranks, &some);
    int rc = MPI_Comm_create_group(world, some, POOL_GROUP_TAG, out);
    MPI_Group_free(&some);
    MPI_Group_free(&all);
    mal_status_t st = engine_mpi_check(rc, "MPI_Comm_create_group (pool)");
    if (!st)
        MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return st;
}

/* World rebuilt over `ranks` (world ranks, in their new order); collective over them. */
static mal_status_t regroup(engine_procs_t *p, const int *ranks, int n)
{
    MPI_Comm next = MPI_COMM_NULL;
    mal_status_t st = group_of(p->world, ranks, n, &next);
    if (st)
        return st;
    MPI_Comm_free(&p->world);
    p->world = next;
    return MAL_OK;
}

/* `n` consecutive world ranks from `first`, after world rank 0 when `with_root` (the
 * prefix of an expansion; the pair of rank 0 and the woken processes). */
static mal_status_t group_range(const engine_procs_t *p, bool with_root, int first, int n,
                                MPI_Comm *out)
{
    int k = with_root ? 1 : 0;
    int *ranks = malloc((size_t)(n + k) * sizeof *ranks);
    if (ranks == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d ranks", n + k);
    ranks[0] = 0;
    for (int r = 0; r < n; r++)
        ranks[k + r] = first + r;
    mal_status_t st = group_of(p->world, ranks, n + k, out);
    free(ranks);
    return st;
}

/* The prefix of world of `n` processes: the active ones and those woken after them. */
static mal_status_t world_prefix(const engine_procs_t *p, int n, MPI_Comm *out)
{
    return group_range(p, false, 0, n, out);
}

int engine_pool_parked(const engine_procs_t *procs)
{
    return procs->world != MPI_COMM_NULL ? procs->nparked : 0;
}

bool engine_async_on(const engine_settings_t *conf, const engine_procs_t *procs)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return conf->async && procs->world != MPI_COMM_NULL &&
           level >= MPI_THREAD_MULTIPLE;
}

/* ---- the active side --------------------------------------------------------------- */

static mal_status_t append_parked(engine_procs_t *p, int n, bool holds, int64_t generation,
                                  const double *hosts)
{
    if (n <= 0) /* realloc to 0 bytes would free the list */
        return MAL_OK;
    engine_parked_t *grown = realloc(p->parked, (size_t)(p->nparked + n) * sizeof *grown);
    if (grown == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for the pool's list");
    p->parked = grown;
    for (int i = 0; i < n; i++)
        p->parked[p->nparked + i] = (engine_parked_t){holds, generation, hosts[i]};
    p->nparked += n;
    return MAL_OK;
}

int engine_pool_fill_calls(const engine_settings_t *conf, int count, mal_spawn_mode_t mode)
{
    if (mode == MAL_SPAWN_DEFAULT)
        mode = conf->spawn_mode;
    return count <= 0 ? 0 : mode == MAL_SPAWN_BATCHED ? 1 : count;
}

mal_status_t engine_pool_pack_fill(const engine_parts_t *parts, const engine_procs_t *procs,
                                   int count, int calls, const engine_join_msg_t *expansion,
                                   engine_bytes_t *packed)
{
    engine_group_t *g = parts->group;
    mal_status_t st = MAL_OK;
    for (int i = 0; i < calls; i++) {
        int per = count / calls;
        engine_join_msg_t msg = {.park = true, .remaining = calls - 1 - i,
                                 .new_procs = g->size, .spawning = per, .first = -1};
        if (expansion != NULL) { /* they will take ranks after the parked ones */
            msg.new_procs = expansion->new_procs;
            msg.weights = expansion->weights;
            msg.first = g->size + procs->nparked + i * per;
        }
        mal_status_t s = engine_pack_join_info(parts, procs, &msg, &packed[i]);
        st = st ? st : s;
    }
    return st;
}

/* Where spawn `index` (counted from p->spawned) goes, hashed; 0 when the runtime
 * places it. */
static double spawn_host_hash(const engine_procs_t *p, const engine_settings_t *conf, int index)
{
    char *host = engine_spawn_host(p, conf, p->spawned + index);
    double h = host != NULL ? engine_host_hash(host) : 0;
    free(host);
    return h;
}

/* Spawn `count` processes into the pool in `calls` spawn calls: collective over world
 * (rank 0 spawns, the parked processes follow through GROW). `packed` (rank 0): the
 * join information of each call (engine_pool_pack_fill; a call whose packing failed is
 * abandoned). Returns how many joined in *joined. */
static mal_status_t fill(const engine_parts_t *parts, engine_procs_t *procs, int count, int calls,
                         const engine_bytes_t *packed, int *joined)
{
    engine_group_t *g = parts->group;
    int per = count / calls;
    double *hosts = calloc((size_t)count, sizeof *hosts);
    if (g->rank == 0)
        for (int i = 0; i < procs->nparked; i++)
            send_command(procs, g->size + i, CMD_GROW, calls, 0, 0);
    mal_status_t st = MAL_OK;
    *joined = 0;
    for (int i = 0; i < calls && !st; i++) {
        MPI_Comm inter = MPI_COMM_NULL, pair = MPI_COMM_NULL, next = MPI_COMM_NULL;
        if (g->rank == 0) {
            st = engine_spawn(procs, parts->conf, per, (int)(procs->spawned + *joined), &inter,
                              &pair);
            if (!st) /* no packed message (no memory): the children are told to leave */
                st = engine_send_join_bytes(pair, packed != NULL ? &packed[i]
                                                                 : &(engine_bytes_t){0});
        }
        /* The parked processes and the spawned ones of earlier calls follow with the
         * same broadcast (follow_grow, engine_follow_joins). */
        int ok = !st;
        engine_bcast_flag(&ok, procs->world);
        if (ok)
            st = engine_join_members(procs->world, pair, &next);
        else if (g->rank != 0)
            st = engine_fail(MAL_ERR_SPAWN, "rank 0 could not spawn into the pool (see its "
                             "message)");
        if (pair != MPI_COMM_NULL) {
            MPI_Comm_free(&pair);
            MPI_Comm_disconnect(&inter);
        }
        if (!st) {
            MPI_Comm_free(&procs->world);
            procs->world = next;
            /* Every active process knows the spawn hosts (settings, the policy's). */
            for (int k = 0; k < per && hosts != NULL; k++)
                hosts[*joined + k] = spawn_host_hash(procs, parts->conf, *joined + k);
            *joined += per;
        }
    }
    procs->spawned += *joined;
    mal_status_t added = hosts != NULL ? append_parked(procs, *joined, false, -1, hosts)
                                       : engine_fail(MAL_ERR_NOMEM, "no memory for hosts");
    free(hosts);
    return st ? st : added;
}

mal_status_t engine_pool_fill(const engine_parts_t *parts, engine_procs_t *procs, int count,
                              const engine_bytes_t *packed)
{
    engine_group_t *g = parts->group;
    if (procs->world == MPI_COMM_NULL || count <= 0)
        return MAL_OK;
    int joined = 0, calls = engine_pool_fill_calls(parts->conf, count, MAL_SPAWN_DEFAULT);
    engine_bytes_t *own = NULL;
    if (packed == NULL && g->rank == 0) { /* packed now: a prefetch, not for an expansion */
        own = calloc((size_t)calls, sizeof *own);
        if (own != NULL)
            engine_pool_pack_fill(parts, procs, count, calls, NULL, own);
        packed = own;
    }
    mal_status_t st = fill(parts, procs, count, calls, packed, &joined);
    for (int i = 0; own != NULL && i < calls; i++)
        free(own[i].data);
    free(own);
    if (g->rank == 0 && parts->conf->summary && joined > 0)
        engine_notice("libmal: %d process%s spawned into the pool (%d parked)\n", joined,
               joined == 1 ? "" : "es", procs->nparked);
    return st;
}

void engine_pool_say_ready(const engine_procs_t *p)
{
    PMPI_Send(NULL, 0, MPI_BYTE, 0, POOL_READY_TAG, p->world);
}

bool engine_pool_wait_ready(const engine_procs_t *p, int n, double bound)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Request req;
        if (PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, POOL_READY_TAG, p->world, &req) !=
            MPI_SUCCESS)
            return false;
        int done = 0;
        long ns = 50000;
        while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done &&
               MPI_Wtime() - t0 < bound)
            engine_backoff(&ns, ENGINE_FLAG_POLL_CAP_NS);
        if (!done) {
            PMPI_Cancel(&req);
            PMPI_Wait(&req, MPI_STATUS_IGNORE);
            return false;
        }
    }
    return true;
}

bool engine_pool_enabled(const engine_settings_t *s)
{
    /* Prefetched and asynchronously spawned processes wait in the pool too. */
    return (s->pool || s->prefetch > 0 || s->async) && !engine_shmem_active();
}

mal_status_t engine_pool_start(const engine_parts_t *parts, engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    procs->world = MPI_COMM_NULL;
    procs->prepared = -1;
    if (!engine_pool_enabled(parts->conf))
        return MAL_OK;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (parts->conf->async && level < MPI_THREAD_MULTIPLE && g->rank == 0)
        engine_notice("libmal: asynchronous expansion (MAL_ASYNC=1, mal_config_t.async) "
                "needs MPI_THREAD_MULTIPLE (MPI_Init_thread); this program has %s: "
                "expansions run synchronously\n", engine_thread_level_name(level));
    mal_status_t st = engine_mpi_check(MPI_Comm_dup(g->comm, &procs->world), "MPI_Comm_dup");
    if (st)
        return st;
    MPI_Comm_set_errhandler(procs->world, MPI_ERRORS_RETURN);
    /* A prefetch stays in the allocation, and needs an MPI that spawns. */
    int free_slots = engine_room_free_slots(parts->group, parts->conf, procs);
    int prefetch = parts->conf->prefetch;
    const char *why = NULL;
    if (prefetch > 0 && !engine_spawn_supported(&why)) {
        if (g->rank == 0)
            engine_notice("libmal: MAL_PREFETCH=%d ignored: %s\n", prefetch, why);
        prefetch = 0;
    }
    return engine_pool_fill(parts, procs, prefetch < free_slots ? prefetch : free_slots, NULL);
}

/* A parked process that holds structures registered before the registry last changed
 * cannot be handed the current ones. */
static bool parked_stale(const engine_parts_t *parts, const engine_procs_t *procs, int i)
{
    const engine_parked_t *q = &procs->parked[i];
    return q->holds && q->generation != parts->reg->generation;
}

/* Rank 0's judgement of every parked process, on every rank (mal_register_value is
 * local, so the generations may differ between ranks): nparked flags, NULL without
 * memory (then no process is judged stale). Collective over g->comm. */
static unsigned char *stale_flags(const engine_parts_t *parts, const engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    int n = procs->nparked, ok = 1;
    unsigned char *stale = malloc((size_t)n + 1);
    for (int i = 0; stale != NULL && i < n; i++)
        stale[i] = parked_stale(parts, procs, i);
    ok = stale != NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, g->comm);
    if (!ok) {
        free(stale);
        return NULL;
    }
    PMPI_Bcast(stale, n, MPI_UNSIGNED_CHAR, 0, g->comm);
    return stale;
}

static bool any_flag(const unsigned char *flags, int n)
{
    for (int i = 0; flags != NULL && i < n; i++)
        if (flags[i])
            return true;
    return false;
}

/* The layout each prespawned process should prepare for: the share of one more process. */
static void prepare_fresh(const engine_parts_t *parts, engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    int n = engine_array_count(parts->reg);
    pool_reserve_t *r = calloc((size_t)(n > 0 ? n : 1), sizeof *r);
    if (r == NULL)
        return; /* an optimisation: without it the expansion maps the memory itself */
    int k = 0, after = g->size + 1;
    for (mal_array_t *a = engine_array_first(parts->reg); a != NULL;
         a = engine_array_next(a), k++) {
        strcpy(r[k].name, engine_array_name(a));
        r[k].bytes = engine_array_share_bytes(parts->reg, a, after);
    }
    for (int i = 0; i < procs->nparked; i++)
        if (!procs->parked[i].holds) {
            send_command(procs, g->size + i, CMD_PREPARE, n, 0, 0);
            PMPI_Send(r, (int)((size_t)n * sizeof *r), MPI_BYTE, g->size + i, POOL_RESERVE_TAG,
                      procs->world);
        }
    free(r);
    procs->prepared = parts->reg->generation;
}

void engine_pool_prepare(const engine_parts_t *parts, engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    if (g->rank == 0 && engine_pool_parked(procs) > 0 && procs->prepared != parts->reg->generation)
        prepare_fresh(parts, procs);
}

/* Release the last `count` parked processes; the others regroup. Collective over the
 * active processes. */
static mal_status_t release_last(const engine_parts_t *parts, engine_procs_t *procs, int count)
{
    engine_group_t *g = parts->group;
    int keep = procs->nparked - count, n = g->size + keep;
    if (g->rank == 0) {
        for (int i = keep; i < procs->nparked; i++)
            send_command(procs, g->size + i, CMD_RELEASE, 0, 0, 0);
        for (int i = 0; i < keep; i++)
            send_command(procs, g->size + i, CMD_REGROUP, n, 0, 0);
    }
    procs->nparked = keep;
    procs->released += count;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (ranks == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d ranks", n);
    for (int r = 0; r < n; r++)
        ranks[r] = r;
    if (g->rank == 0)
        for (int i = 0; i < keep; i++)
            PMPI_Send(ranks, n, MPI_INT, g->size + i, POOL_LIST_TAG, procs->world);
    mal_status_t st = regroup(procs, ranks, n);
    free(ranks);
    return st;
}

/* Release the parked processes flagged stale only; the others keep their order
 * (prespawned ones, and ones an asynchronous expansion just spawned, hold nothing and
 * stay). Collective over the active processes. */
static mal_status_t release_stale(const engine_parts_t *parts, engine_procs_t *procs,
                                  const unsigned char *stale)
{
    engine_group_t *g = parts->group;
    int n = g->size, kept = 0;
    int *ranks = malloc((size_t)(g->size + procs->nparked) * sizeof *ranks);
    if (ranks == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d ranks", g->size + procs->nparked);
    for (int r = 0; r < g->size; r++)
        ranks[r] = r;
    for (int i = 0; i < procs->nparked; i++)
        if (!stale[i])
            ranks[n++] = g->size + i;
    for (int i = 0; g->rank == 0 && i < procs->nparked; i++)
        if (stale[i]) {
            send_command(procs, g->size + i, CMD_RELEASE, 0, 0, 0);
        } else {
            send_command(procs, g->size + i, CMD_REGROUP, n, 0, 0);
            PMPI_Send(ranks, n, MPI_INT, g->size + i, POOL_LIST_TAG, procs->world);
        }
    for (int i = 0; i < procs->nparked; i++)
        if (!stale[i])
            procs->parked[kept++] = procs->parked[i];
    procs->released += procs->nparked - kept;
    procs->nparked = kept;
    mal_status_t st = regroup(procs, ranks, n);
    free(ranks);
    return st;
}

mal_status_t engine_pool_drop_stale(const engine_parts_t *parts, engine_procs_t *procs)
{
    if (engine_pool_parked(procs) == 0)
        return MAL_OK;
    unsigned char *stale = stale_flags(parts, procs);
    mal_status_t st = any_flag(stale, procs->nparked) ? release_stale(parts, procs, stale) : MAL_OK;
    free(stale);
    return st;
}

mal_status_t engine_pool_release(const engine_parts_t *parts, engine_procs_t *procs, int count)
{
    engine_group_t *g = parts->group;
    int parked = engine_pool_parked(procs);
    if (count == -1)
        count = parked;
    mal_status_t st = count < 0 || count > parked
                          ? engine_fail(MAL_ERR_ARG, "mal_pool_release: count is %d; with %d "
                                        "parked it must be -1..%d", count, parked, parked)
                          : MAL_OK;
    st = engine_agree_in(g->comm, st, st ? 0 : (uint64_t)count + 1, "mal_pool_release");
    return st || count == 0 ? st : release_last(parts, procs, count);
}

void engine_pool_finalize(const engine_group_t *g, engine_procs_t *procs)
{
    /* A process released for good left world already but still has the list. */
    if (procs->world != MPI_COMM_NULL && g->rank == 0 && !procs->parked_self && !procs->removed)
        for (int i = 0; i < procs->nparked; i++)
            send_command(procs, g->size + i, CMD_RELEASE, 0, 0, 0);
    if (procs->world != MPI_COMM_NULL)
        MPI_Comm_free(&procs->world);
    free(procs->parked);
    procs->parked = NULL;
    procs->nparked = 0;
    engine_pool_drop_reserves(procs);
}

/* Expansion: wake the oldest `q` parked processes and send them what a spawned process
 * receives (the pair is rank 0 and them). */
static mal_status_t send_wake(const engine_parts_t *parts, engine_procs_t *procs,
                              const engine_join_msg_t *msg)
{
    engine_group_t *g = parts->group;
    int q = msg->woken;
    for (int i = 0; i < q; i++)
        send_command(procs, g->size + i, CMD_WAKE, g->size, q, msg->remaining);
    MPI_Comm pair = MPI_COMM_NULL;
    mal_status_t st = group_range(procs, true, g->size, q, &pair);
    if (!st) {
        st = engine_send_join_info(parts, procs, pair, msg);
        MPI_Comm_free(&pair);
    }
    return st;
}

mal_status_t engine_pool_wake(const engine_parts_t *parts, engine_procs_t *procs,
                              const engine_join_msg_t *msg, MPI_Comm *grown)
{
    engine_group_t *g = parts->group;
    *grown = g->comm;
    if (msg->woken == 0)
        return MAL_OK;
    mal_status_t st = g->rank == 0 ? send_wake(parts, procs, msg) : MAL_OK;
    int ok = !st;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, g->comm);
    if (!ok)
        return g->rank == 0 ? st : engine_fail(MAL_ERR_SPAWN, "rank 0 could not wake parked "
                                               "processes (see its message)");
    return world_prefix(procs, g->size + msg->woken, grown);
}

/* The parked processes on the hosts this expansion asks for (procs->spawn_hosts, the
 * policy's, in turn) first: world is reordered when they are not first already, so that
 * waking the first ones takes them. The others keep their order. */
static mal_status_t prefer_hosts(const engine_parts_t *parts, engine_procs_t *procs, int count)
{
    engine_group_t *g = parts->group;
    int np = procs->nparked, k = 0, n = g->size + np;
    int *order = malloc((size_t)np * sizeof *order), *ranks = malloc((size_t)n * sizeof *ranks);
    bool *used = calloc((size_t)np, sizeof *used);
    engine_parked_t *sorted = malloc((size_t)np * sizeof *sorted);
    mal_status_t st = order && ranks && used && sorted ? MAL_OK
                      : engine_fail(MAL_ERR_NOMEM, "no memory to choose parked processes");
    for (int i = 0; !st && i < count && k < np; i++) {
        double h = spawn_host_hash(procs, parts->conf, i);
        for (int j = 0; h != 0 && j < np; j++)
            if (!used[j] && procs->parked[j].host == h) {
                used[j] = true;
                order[k++] = j;
                break;
            }
    }
    bool moved = false;
    for (int j = 0; !st && j < np; j++)
        if (!used[j])
            order[k++] = j;
    for (int j = 0; !st && j < np; j++)
        moved |= order[j] != j;
    if (!st && moved) {
        for (int r = 0; r < g->size; r++)
            ranks[r] = r;
        for (int j = 0; j < np; j++) {
            ranks[g->size + j] = g->size + order[j];
            sorted[j] = procs->parked[order[j]];
        }
        if (g->rank == 0)
            for (int j = 0; j < np; j++) {
                send_command(procs, g->size + j, CMD_REGROUP, n, 0, 0);
                PMPI_Send(ranks, n, MPI_INT, g->size + j, POOL_LIST_TAG, procs->world);
            }
        memcpy(procs->parked, sorted, (size_t)np * sizeof *sorted);
        st = regroup(procs, ranks, n);
    }
    free(order);
    free(ranks);
    free(used);
    free(sorted);
    return st;
}

mal_status_t engine_pool_take(const engine_parts_t *parts, engine_procs_t *procs, int count,
                              int *woken)
{
    *woken = 0;
    if (engine_pool_parked(procs) == 0)
        return MAL_OK;
    mal_status_t st = MAL_OK;
    if (procs->spawn_hosts != NULL && procs->nparked > 0)
        st = prefer_hosts(parts, procs, count);
    *woken = count < procs->nparked ? count : procs->nparked;
    return st;
}

void engine_pool_after_expand(const engine_group_t *g, engine_procs_t *procs, int woken,
                              bool spawned)
{
    if (procs->world == MPI_COMM_NULL)
        return;
    if (woken > 0) {
        memmove(procs->parked, procs->parked + woken,
                (size_t)(procs->nparked - woken) * sizeof *procs->parked);
        procs->nparked -= woken;
        procs->reused += woken;
    }
    /* Spawning happens only once the pool is empty: world is the new set. */
    if (spawned) {
        MPI_Comm_free(&procs->world);
        MPI_Comm_dup(g->comm, &procs->world);
        MPI_Comm_set_errhandler(procs->world, MPI_ERRORS_RETURN);
    }
}

mal_status_t engine_pool_after_shrink(const engine_parts_t *parts, engine_procs_t *procs,
                                      const bool *leaving, int old_size, int old_rank,
                                      const double *hosts, bool park)
{
    int np = procs->nparked, n = old_size + np, k = 0, leavers = 0;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (ranks == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d ranks", n);
    for (int r = 0; r < old_size; r++)
        if (!leaving[r])
            ranks[k++] = r;
    for (int i = 0; i < np; i++)
        ranks[k++] = old_size + i;
    /* Without the pool, released processes leave world (and then MPI). */
    for (int r = 0; r < old_size && park; r++)
        if (leaving[r]) {
            ranks[k++] = r;
            leavers++;
        }
    n = k;
    if (old_rank == 0)
        for (int i = 0; i < np; i++) {
            send_command(procs, old_size + i, CMD_REGROUP, n, 0, 0);
            PMPI_Send(ranks, n, MPI_INT, old_size + i, POOL_LIST_TAG, procs->world);
        }
    bool in_world = false;
    for (int i = 0; i < n; i++)
        in_world |= ranks[i] == old_rank;
    mal_status_t st = in_world ? regroup(procs, ranks, n) : MAL_OK;
    free(ranks);
    if (!in_world)
        MPI_Comm_free(&procs->world);
    double *leaver_hosts = calloc((size_t)(leavers > 0 ? leavers : 1), sizeof *leaver_hosts);
    for (int r = 0, i = 0; r < old_size && leaver_hosts != NULL; r++)
        if (leaving[r] && i < leavers)
            leaver_hosts[i++] = hosts != NULL ? hosts[r] : 0;
    if (!st && in_world)
        st = leaver_hosts != NULL ? append_parked(procs, leavers, true, parts->reg->generation,
                                                  leaver_hosts)
                                  : engine_fail(MAL_ERR_NOMEM, "no memory for hosts");
    free(leaver_hosts);
    return st;
}

/* ---- the parked side --------------------------------------------------------------- */

static void follow_regroup(engine_procs_t *p, const pool_cmd_t *cmd)
{
    int n = (int)cmd->a;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    PMPI_Recv(ranks, n, MPI_INT, 0, POOL_LIST_TAG, p->world, MPI_STATUS_IGNORE);
    if (ranks != NULL)
        regroup(p, ranks, n);
    free(ranks);
}

/* GROW: the spawns of engine_pool_fill, as a member of world. A spawn rank 0 abandons
 * leaves world as it was. */
static void follow_grow(engine_procs_t *p, const pool_cmd_t *cmd)
{
    for (int64_t i = 0; i < cmd->a; i++) {
        int ok = 0;
        engine_bcast_flag(&ok, p->world);
        MPI_Comm next;
        if (!ok || engine_join_members(p->world, MPI_COMM_NULL, &next) != MAL_OK)
            return;
        MPI_Comm_free(&p->world);
        p->world = next;
    }
}

/* PREPARE: memory for each structure's share, kept pending until a wake. */
static void follow_prepare(engine_procs_t *procs, const pool_cmd_t *cmd)
{
    int n = (int)cmd->a;
    pool_reserve_t *r = calloc((size_t)(n > 0 ? n : 1), sizeof *r);
    PMPI_Recv(r, r ? (int)((size_t)n * sizeof *r) : 0, MPI_BYTE, 0, POOL_RESERVE_TAG,
              procs->world, MPI_STATUS_IGNORE);
    for (int i = 0; r != NULL && i < n; i++)
        engine_pool_reserve(procs, r[i].name, r[i].bytes);
    free(r);
}

/* WAKE: receive the join information, enter the grown communicator, follow the spawns
 * that complete the expansion and take part in its data phase. MAL_OK: active now. */
static mal_status_t follow_wake(const engine_parts_t *parts, engine_procs_t *procs,
                                const pool_cmd_t *cmd, engine_join_header_t *h)
{
    int active = (int)cmd->a, q = (int)cmd->b;
    MPI_Comm pair = MPI_COMM_NULL;
    mal_status_t st = group_range(procs, true, active, q, &pair);
    if (!st) {
        st = engine_receive_wake(parts, procs, pair, h);
        MPI_Comm_free(&pair);
    }
    return st;
}

/* After the join information arrived: the communicator of the expansion. */
static mal_status_t enter_grown(engine_procs_t *procs, const pool_cmd_t *cmd, MPI_Comm *comm)
{
    int active = (int)cmd->a, q = (int)cmd->b;
    mal_status_t st = world_prefix(procs, active + q, comm);
    if (!st)
        st = engine_follow_spawns(comm, cmd->c);
    return st;
}

/* Wait for commands until woken (MAL_OK, *comm the expansion's communicator, `h` its
 * header) or released (MAL_REMOVED). */
static mal_status_t wait_until_woken(const engine_parts_t *parts, engine_procs_t *procs,
                                     engine_join_header_t *h, MPI_Comm *comm)
{
    pool_cmd_t cmd;
    for (;;) {
        if (!wait_command(procs, &cmd))
            return MAL_REMOVED;
        switch (cmd.what) {
        case CMD_WAKE:
            if (follow_wake(parts, procs, &cmd, h) == MAL_OK && enter_grown(procs, &cmd,
                comm) == MAL_OK)
                return MAL_OK;
            break; /* the expansion was abandoned: still parked */
        case CMD_GROW: follow_grow(procs, &cmd); break;
        case CMD_REGROUP: follow_regroup(procs, &cmd); break;
        case CMD_PREPARE: follow_prepare(procs, &cmd); break;
        default: return MAL_REMOVED;
        }
    }
}

mal_status_t engine_pool_wait(const engine_parts_t *parts, engine_procs_t *procs,
                              engine_join_header_t *h, MPI_Comm *comm)
{
    double t0 = MPI_Wtime(), c0 = engine_cpu_seconds();
    procs->parked_self = true;
    mal_status_t st = wait_until_woken(parts, procs, h, comm);
    engine_pool_say_parked(procs, parts->conf, st == MAL_OK, MPI_Wtime() - t0,
                           engine_cpu_seconds() - c0);
    if (st == MAL_OK)
        procs->parked_self = false;
    return st;
}
