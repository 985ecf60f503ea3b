/* The planner of every reconfiguration (plan.h): per structure, the layouts over U, the
 * segments between them, where the new parts go, the transport that moves them and what
 * the model predicts it costs. */
#include "core.h"
#include "memory.h"
#include "monitor.h"
#include "plan.h"
#include "registry.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

static bool rebalancing(const engine_reconfig_t *rc)
{
    return rc->action == MAL_ACTION_REBALANCE;
}

void engine_plan_layouts(const int64_t *old_bounds, int old_procs, const int *n_of_u,
                         int n_u, const int64_t *new_bounds_n, int64_t *old_u,
                         int64_t *new_u)
{
    new_u[0] = 0;
    for (int r = 0; r < n_u; r++) {
        int k = n_of_u[r];
        int64_t rows = k < 0 ? 0 : new_bounds_n[k + 1] - new_bounds_n[k];
        new_u[r + 1] = new_u[r] + rows;
    }
    for (int r = 0; r <= n_u; r++)
        old_u[r] = old_bounds[r <= old_procs ? r : old_procs];
}

mal_status_t engine_reconfig_prepare(engine_reconfig_t *rc)
{
    engine_stale_release_all();
    rc->moved.method = rc->xfer->method; /* MAL_REDIST_AUTO's: engine_plan_method */
    rc->count = engine_array_count(rc->reg);
    rc->moves = calloc(rc->count ? (size_t)rc->count : 1, sizeof *rc->moves);
    rc->n_of_u = malloc((size_t)rc->n_u * sizeof *rc->n_of_u);
    if (rc->moves == NULL || rc->n_of_u == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan a %s", rebalancing(rc)
                           ? "rebalance" : "reconfiguration");
    for (int r = 0; r < rc->n_u; r++)
        rc->n_of_u[r] = r;
    int i = 0;
    for (mal_array_t *a = engine_array_first(rc->reg); a != NULL; a = engine_array_next(a)) {
        rc->moves[i].target.win = MPI_WIN_NULL;
        rc->moves[i++].array = a;
    }
    return MAL_OK;
}

/* shmem reaches only symmetric memory, rma and rma-get only windows. */
static mal_status_t check_memory(const engine_reconfig_t *rc, const mal_array_t *a)
{
    mal_redist_t method = rc->moved.method;
    bool symmetric = engine_array_current(a)->symmetric;
    bool shmem = method == MAL_REDIST_SHMEM;
    if (!rebalancing(rc) || shmem == symmetric || !engine_method_one_sided(method))
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_rebalance: \"%s\" lives in %s, which "
                       "method %s cannot reach (allocate it under %s, or use alltoallv or "
                       "p2p)", engine_array_name(a), symmetric ? "the SHMEM symmetric heap"
                                                  : "MPI windows or direct memory",
                       engine_redist_name(method), symmetric ? "shmem" : "rma or rma-get");
}

static mal_status_t alloc_move(const engine_reconfig_t *rc, engine_move_t *m)
{
    size_t nu = (size_t)rc->n_u, nn = (size_t)rc->n_n;
    m->old_bounds = malloc((nu + 1) * sizeof(int64_t));
    m->new_bounds = malloc((nu + 1) * sizeof(int64_t));
    m->new_bounds_n = malloc((nn + 1) * sizeof(int64_t));
    m->new_offsets = malloc(nu * sizeof(int64_t));
    m->new_offsets_n = malloc(nn * sizeof(int64_t));
    m->caps = malloc(nn * sizeof(int64_t));
    m->flows = malloc(2 * nu * sizeof(int64_t));
    m->segs = malloc(2 * nu * sizeof(partition_segment_t));
    if (!m->old_bounds || !m->new_bounds || !m->new_bounds_n || !m->new_offsets ||
        !m->new_offsets_n || !m->caps || !m->flows || !m->segs)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan \"%s\"",
                           engine_array_name(m->array));
    return MAL_OK;
}

/* The new layout over N from the weights (even when NULL), or the matrix's. */
static mal_status_t new_layout_n(const engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    const int64_t *followed = engine_csr_next_bounds(a);
    if (followed != NULL) {
        memcpy(m->new_bounds_n, followed, ((size_t)rc->n_n + 1) * sizeof(int64_t));
        return MAL_OK;
    }
    double *even = rc->weights ? NULL : engine_even_weights(rc->n_n);
    const double *w = rc->weights ? rc->weights : even;
    if (w == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d weights", rc->n_n);
    /* min_rows is a rule for block parts; a replicated structure has none. */
    int64_t min_rows = engine_array_replicated(a) ? 0 : rc->min_rows;
    int64_t rows = engine_array_global_rows(a);
    mal_status_t err = partition_block(rows, rc->n_n, w, min_rows, m->new_bounds_n);
    free(even);
    if (!err)
        return MAL_OK;
    if (rebalancing(rc))
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: min_rows %lld for every positive "
                           "weight exceeds the %lld rows of \"%s\"", (long long)rc->min_rows,
                           (long long)rows, engine_array_name(a));
    return engine_fail(MAL_ERR_ARG, "reconfiguration: min_rows %lld for each of %d "
                       "processes exceeds the %lld rows of \"%s\"", (long long)rc->min_rows,
                       rc->n_n, (long long)rows, engine_array_name(a));
}

/* Where rank r's new part goes in a buffer with `cap` rows: at the old offset shifted by
 * the move of its first row, so rows it keeps keep their address (and rows it gains land
 * beside them, never on rows others are still reading). A rank that held nothing is
 * centred. The result may fall outside [0, cap - rows]: the caller checks or clamps. */
static int64_t shifted_offset(const mal_array_t *a, const int64_t *nb, int r, int64_t cap)
{
    const int64_t *ob = engine_array_bounds(a);
    int64_t rows = nb[r + 1] - nb[r];
    if (ob[r + 1] == ob[r])
        return (cap - rows) / 2;
    return engine_array_offsets(a)[r] + (nb[r] - ob[r]);
}

/* In place when every rank's shifted part fits its current buffer with its halo around
 * it: all ranks see the same capacities and layouts, so they all reach the same answer. */
static bool fits_in_place(const mal_array_t *a, int p, const int64_t *nb, int64_t *offsets)
{
    const int64_t *caps = engine_array_current(a)->caps;
    int64_t halo = engine_array_halo(a);
    for (int r = 0; r < p; r++) {
        int64_t rows = nb[r + 1] - nb[r], off = shifted_offset(a, nb, r, caps[r]);
        if (off < halo || off + rows + halo > caps[r])
            return false;
        offsets[r] = off;
    }
    return true;
}

/* Where the new parts go: a new buffer over N laid out like a fresh allocation, or (a
 * rebalance) the current buffer when they fit there; the spare is placed later
 * (engine_plan_targets), once it has grown. Debug mode never moves in place: the old
 * buffer is then the one the application's old pointers lead into, which the commit
 * protects. */
static void place(const engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    if (rebalancing(rc)) {
        m->in_place = !rc->debug && fits_in_place(a, rc->n_u, m->new_bounds, m->new_offsets);
        return;
    }
    engine_initial_place(rc->reg, a, m->new_bounds_n, rc->n_n, m->caps, m->new_offsets_n);
    for (int r = 0; r < rc->n_u; r++) {
        int k = rc->n_of_u[r];
        m->new_offsets[r] = k < 0 ? 0 : m->new_offsets_n[k];
    }
}

/* Where this rank's old part is: nowhere on a joiner. */
static char *old_part(const engine_reconfig_t *rc, const mal_array_t *a)
{
    if (rc->me_u >= rc->old_procs || !engine_buffer_present(engine_array_current(a)))
        return NULL;
    return engine_array_local_data(a, rc->me_u);
}

/* Replicated rows across communicators: a process that stays copies its own rows, and
 * in an expansion every old owner writes an even slice of the rows into every joiner's
 * copy, so the work is shared by the old owners. */
static void replicated_segments(const engine_reconfig_t *rc, engine_move_t *m)
{
    const mal_array_t *a = m->array;
    int p = rc->old_procs, me = rc->me_u;
    engine_plan_t *plan = &m->plan;
    plan->recv = m->segs;
    plan->send = m->segs + rc->n_u;
    int64_t rows = engine_array_global_rows(a);
    if (me >= p || rc->n_of_u[me] < 0)
        return;
    m->segs[plan->nrecv++] = (partition_segment_t){.peer = me, .rows = rows};
    if (rc->action != MAL_ACTION_EXPAND || rows == 0)
        return;
    int64_t q = rows / p, extra = rows % p;
    int64_t lo = q * me + (me < extra ? me : extra), hi = lo + q + (me < extra);
    for (int j = p; j < rc->n_u; j++)
        m->segs[rc->n_u + plan->nsend++] = (partition_segment_t){
            .peer = j, .src_offset = lo, .dst_offset = lo, .rows = hi - lo};
}

static void block_segments(const engine_reconfig_t *rc, engine_move_t *m)
{
    int n = rc->n_u, me = rc->me_u;
    engine_plan_t *plan = &m->plan;
    plan->recv = m->segs;
    plan->nrecv = partition_plan_recv(m->old_bounds, n, m->new_bounds, n, me, m->segs);
    plan->send = m->segs + n;
    plan->nsend = partition_plan_send(m->old_bounds, n, m->new_bounds, n, me, m->segs + n);
}

/* Whether every rank's new part, with its halo on both sides, fits the spare buffer of
 * `a` as it is. */
static bool spare_fits(const mal_array_t *a, const int64_t *new_bounds, int p)
{
    const engine_buffer_t *b = engine_array_spare(a);
    int64_t room = 2 * engine_array_halo(a);
    bool fits = engine_buffer_present(b);
    for (int r = 0; r < p && fits; r++)
        fits = new_bounds[r + 1] - new_bounds[r] + room <= b->caps[r];
    return fits;
}

/* Under MAL_REDIST_AUTO, a rebalance taken as rma-get that must grow some part beyond
 * its spare moves split (as rma) instead: the pages beyond the spare are faulted in by
 * whoever writes them, and a pull leaves every one to the growing rank while a split
 * shares them with the ranks that push (measured, 2 ranks, 256 MiB, one host, cold,
 * medians of 5: all-to-one 27.9 ms split against 53.6 ms pulled; where no part outgrows
 * its memory, pulling was as fast or faster: one-to-all 13.4 against 14.3 ms;
 * docs/benchmarks.md, "Cold"). The same on every rank: layouts and capacities agree. */
static void split_growth(engine_reconfig_t *rc, const engine_move_t *m)
{
    if (!rc->moved.automatic || rc->moved.method != MAL_REDIST_RMA_GET || !rebalancing(rc) ||
        m->in_place || spare_fits(m->array, m->new_bounds, rc->n_u))
        return;
    rc->moved.method = MAL_REDIST_RMA;
}

static void fill_plan(engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    const engine_buffer_t *cur = engine_array_current(a);
    int n = rc->n_u;
    bool replicated = engine_array_replicated(a);
    partition_flows(m->old_bounds, m->new_bounds, n, m->flows, m->flows + n);
    m->tp = rc->transport ? rc->transport
                          : engine_transport_choose(rc->moved.method, replicated);
    m->plan = (engine_plan_t){
        .comm = rc->u, .me = rc->me_u, .nprocs = n,
        .old_bounds = m->old_bounds, .new_bounds = m->new_bounds,
        .row_bytes = engine_array_row_bytes(a), .count_limit = rc->xfer->count_limit,
        .src = old_part(rc, a),
        .src_at = {.win = cur->win, .peers = cur->peers, .near = cur->near,
                   .base = cur->base, .offsets = engine_array_offsets(a)},
        .dst_at = {.win = MPI_WIN_NULL, .offsets = m->new_offsets},
        .in_rows = m->flows, .out_rows = m->flows + n,
        .kept_in_place = m->in_place,
        .mode = engine_transport_mode(rc->moved.method, rc->action),
        .moved_by = rc->moved.by,
    };
    if (replicated)
        replicated_segments(rc, m);
    else
        block_segments(rc, m);
}

/* Bytes that arrive at this rank from others (the report's bytes_moved). */
static int64_t bytes_in(const engine_reconfig_t *rc, const engine_move_t *m)
{
    const mal_array_t *a = m->array;
    if (engine_array_replicated(a)) {
        bool joiner = rc->me_u >= rc->old_procs && rc->n_of_u[rc->me_u] >= 0;
        return joiner && rc->action == MAL_ACTION_EXPAND ? engine_array_bytes(a) : 0;
    }
    int64_t bytes = 0;
    for (size_t k = 0; k < m->plan.nrecv; k++)
        if (m->plan.recv[k].peer != rc->me_u)
            bytes += m->plan.recv[k].rows * engine_array_row_bytes(a);
    return bytes;
}

static mal_status_t plan_move(engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    /* A rebalance moves block rows only: a replicated structure has no layout. */
    if (rebalancing(rc) && engine_array_replicated(a))
        return MAL_OK;
    mal_status_t st = check_memory(rc, a);
    if (st || (st = alloc_move(rc, m)) || (st = new_layout_n(rc, m)))
        return st;
    engine_plan_layouts(engine_array_bounds(a), rc->old_procs, rc->n_of_u, rc->n_u,
                        m->new_bounds_n, m->old_bounds, m->new_bounds);
    m->moves = !rebalancing(rc) || !partition_same(m->old_bounds, m->new_bounds, rc->n_u);
    if (!m->moves)
        return MAL_OK;
    place(rc, m);
    split_growth(rc, m);
    fill_plan(rc, m);
    /* Everything a transport needs is allocated now, before the collective part. */
    if ((st = m->tp->allocate(&m->plan)))
        return st;
    m->allocated = true;
    m->bytes_in = bytes_in(rc, m);
    /* Two-sided transports move every remote row through MPI; the one-sided one counts
     * each transfer by its path (transport_rma.c). */
    if (m->tp != &engine_transport_rma)
        rc->moved.by[ENGINE_PATH_MPI] += m->bytes_in;
    rc->bytes_in += m->bytes_in;
    rc->changed = true;
    return MAL_OK;
}

/* Whether this rank sees the move as cold: a new communicator's memory, or a structure
 * whose data never crossed between ranks yet. */
static bool moves_cold(const engine_reconfig_t *rc)
{
    if (!rebalancing(rc))
        return true;
    for (const mal_array_t *a = engine_array_first(rc->reg); a != NULL;
         a = engine_array_next(a))
        if (!engine_array_replicated(a) && !engine_array_current(a)->crossed)
            return true;
    return false;
}

/* The old processes' arrays must hold the same buffers on every rank (mal_swap_arrays is
 * local): from the min and max of their holders' hash (a joiner holds none). */
static mal_status_t check_holders(const engine_reconfig_t *rc, const int64_t held[2])
{
    if (held[0] == -held[1])
        return MAL_OK;
    return engine_fail(MAL_ERR_MISMATCH, "%s: the ranks swapped arrays differently (every "
                       "rank of mal_comm() must make the same mal_swap_arrays calls)",
                       rebalancing(rc) ? "mal_rebalance" : "reconfiguration");
}

mal_status_t engine_plan_method(engine_reconfig_t *rc, mal_status_t local)
{
    /* One allreduce: min and max of the host ids (halved to fit a signed int64), max of
     * coldness, min and max of the holders (quartered). Made whatever the method, so a
     * rank set to another one still meets it. */
    int64_t host = (int64_t)(engine_host_id() >> 1);
    bool old = rc->me_u < rc->old_procs;
    int64_t held = old ? (int64_t)(engine_registry_holders(rc->reg) >> 2) : INT64_MAX;
    int64_t v[5] = {host, -host, -(int64_t)moves_cold(rc), held, old ? -held : INT64_MAX};
    PMPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_INT64_T, MPI_MIN, rc->u);
    engine_moved_t *m = &rc->moved;
    m->link = v[0] == -v[1] ? PREDICT_LINK_HOST : PREDICT_LINK_NET;
    m->state = v[2] < 0 ? PREDICT_COLD : PREDICT_WARM;
    m->method = rc->xfer->method;
    m->automatic = m->method == MAL_REDIST_AUTO;
    if (m->automatic) {
        predict_params_t defaults;
        const predict_params_t *p = rc->params;
        if (p == NULL) {
            predict_params_default(&defaults);
            p = &defaults;
        }
        m->method = (mal_redist_t)(MAL_REDIST_RMA + predict_fastest_executor(p, m->link,
                                                                             m->state));
    }
    int method = (int)m->method;
    rc->fingerprint = engine_hash(rc->fingerprint, &method, sizeof method);
    return local ? local : check_holders(rc, v + 3);
}

mal_status_t engine_plan_all(engine_reconfig_t *rc)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rc->count && !st; i++)
        st = plan_move(rc, &rc->moves[i]);
    return st;
}

/* The rows rank r keeps (in both layouts over U). */
static int64_t kept_rows(const engine_move_t *m, int r)
{
    int64_t lo = m->old_bounds[r] > m->new_bounds[r] ? m->old_bounds[r] : m->new_bounds[r];
    int64_t hi = m->old_bounds[r + 1] < m->new_bounds[r + 1] ? m->old_bounds[r + 1]
                                                             : m->new_bounds[r + 1];
    return hi > lo ? hi - lo : 0;
}

/* A rebalance: the plan's copies, and the local copy of the rows that stay when the
 * part moves to the spare buffer. */
static void predict_rebalance(const engine_reconfig_t *rc, const engine_move_t *m)
{
    const mal_array_t *a = m->array;
    int64_t rb = engine_array_row_bytes(a);
    bool cold = !engine_array_current(a)->crossed ||
                (!m->in_place && !engine_array_spare(a)->crossed);
    engine_monitor_plan(rc->mon, m->old_bounds, m->new_bounds, rc->n_u, rb,
                        m->plan.mode == ENGINE_RMA_PULL ? PREDICT_RMA_PULL
                                                         : PREDICT_RMA_SPLIT, cold);
    for (int r = 0; r < rc->n_u && !m->in_place; r++) {
        int64_t stay = kept_rows(m, r);
        if (stay > 0)
            engine_monitor_copy(rc->mon, r, stay * rb, 0, false);
    }
}

/* New memory across communicators: a process that held the structure in direct memory
 * reuses its spare where the new part fits (engine_plan_targets), the others map their
 * target, of which the move faults in what it writes: the new part's rows. Indexed by
 * U rank: the old processes keep their current ranks, joiners come after. This rank
 * knows exactly whether its spare's memory is lent (its mapping may exceed its
 * capacity); for the others, their capacity says. */
static void predict_new_buffer(const engine_reconfig_t *rc, const engine_move_t *m)
{
    const mal_array_t *a = m->array;
    const engine_buffer_t *spare = engine_array_spare(a);
    int me;
    MPI_Comm_rank(rc->u, &me);
    int64_t *mapped = calloc((size_t)rc->n_u, sizeof *mapped);
    for (int u = 0; u < rc->n_u && mapped != NULL; u++) {
        int k = rc->n_of_u[u];
        if (k < 0)
            continue;
        int64_t bytes = m->caps[k] * engine_array_row_bytes(a);
        bool reused = u < rc->old_procs &&
                      (u == me ? engine_private_lends(spare, (size_t)bytes)
                               : engine_buffer_holds(spare, u, m->caps[k]));
        int64_t rows = m->new_bounds[k + 1] - m->new_bounds[k];
        mapped[u] = reused ? 0 : rows * engine_array_row_bytes(a);
    }
    if (mapped != NULL)
        engine_monitor_window(rc->mon, mapped, rc->n_u);
    free(mapped);
}

/* Across communicators: one-sided copies of block rows (the old owners push in an
 * expansion, the new ones pull in a shrink), the replicated rows the old owners push to
 * joiners, local copies into the new buffer, and the buffer itself. */
static void predict_across(const engine_reconfig_t *rc, const engine_move_t *m)
{
    const mal_array_t *a = m->array;
    bool expand = rc->action == MAL_ACTION_EXPAND;
    bool block = !engine_array_replicated(a);
    int64_t rb = engine_array_row_bytes(a), global_rows = engine_array_global_rows(a);
    predict_new_buffer(rc, m);
    /* Pushes land in new targets (cold); pulls read the old buffers. */
    bool cold = expand || !engine_array_current(a)->crossed;
    if (block)
        engine_monitor_plan(rc->mon, m->old_bounds, m->new_bounds, rc->n_u, rb,
                            expand ? PREDICT_RMA_PUSH : PREDICT_RMA_PULL, cold);
    for (int r = 0; r < rc->old_procs; r++) {
        if (rc->n_of_u[r] < 0)
            continue;
        int64_t stay = global_rows;
        if (block) {
            stay = kept_rows(m, r);
        } else if (expand) { /* an even slice to every joiner */
            int64_t joiners = rc->n_u - rc->old_procs;
            engine_monitor_copy(rc->mon, r, (global_rows / rc->old_procs + 1) * rb * joiners,
                                joiners, true);
        }
        engine_monitor_copy(rc->mon, r, stay * rb, 0, false);
    }
}

void engine_plan_predict(const engine_reconfig_t *rc)
{
    for (int i = 0; i < rc->count; i++) {
        const engine_move_t *m = &rc->moves[i];
        if (!m->moves)
            continue;
        if (rebalancing(rc))
            predict_rebalance(rc, m);
        else
            predict_across(rc, m);
    }
}

/* Give the spare buffer room for the new local part. Every rank knows every rank's
 * capacity and new layout, so all take the same decision without communicating; only
 * when some rank's part outgrows its spare is memory allocated (collectively). */
static mal_status_t ensure_spare(engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    engine_buffer_t *spare = engine_array_spare(a);
    int64_t rb = engine_array_row_bytes(a), room = 2 * engine_array_halo(a);
    int p = rc->n_u;
    if (spare_fits(a, m->new_bounds, p))
        return MAL_OK;
    int64_t *caps = malloc((size_t)p * sizeof *caps);
    for (int r = 0; r < p && caps != NULL; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        /* Only a present buffer's capacities are known alike on every rank (kept
         * memory's are not: a joiner has none), and capacities must agree. */
        int64_t old = engine_buffer_present(spare) ? spare->caps[r] : 0;
        caps[r] = rows + room <= old ? old : engine_array_capacity(rc->reg, a, rows);
    }
    /* Direct memory is kept where it still fits; a window is freed first, so growing
     * never needs room for three buffers. A NULL caps still takes part in the
     * collective allocation, as a failure. */
    /* What the move faults in (transport/buffer.c, engine_buffer_regrow): direct memory
     * and windows over it grow keeping their pages (engine_private_extend), so the rows
     * beyond what they held; memory kept from a reconfiguration that does not fit is
     * mapped anew, lazily, so the rows written; an allocated window is made anew and
     * touched whole. */
    bool keeps = !spare->pending && (spare->peers != NULL || spare->own);
    int64_t *mapped = calloc((size_t)p, sizeof *mapped);
    for (int r = 0; r < p && caps != NULL && mapped != NULL; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        int64_t held = keeps && engine_buffer_present(spare) ? spare->caps[r] : 0;
        if (engine_buffer_holds(spare, r, caps[r]))
            mapped[r] = 0;
        else if (keeps)
            mapped[r] = (rows > held ? rows - held : 0) * rb;
        else
            mapped[r] = (spare->pending ? rows : caps[r]) * rb;
    }
    if (mapped != NULL)
        engine_monitor_window(rc->mon, mapped, p);
    free(mapped);
    mal_status_t st = engine_buffer_regrow(rc->u, &rc->reg->windows, rc->xfer, spare, rb, caps,
                                           engine_array_current(a)->symmetric);
    free(caps);
    rc->windows_created += !st;
    return st;
}

/* Parts that do not fit in place go to the spare buffer at their shifted offset clamped
 * into it, their halo inside too: rows keep their relative alignment, so the next move
 * is likelier to fit in place (a part that shrinks and grows back stays where it was). */
static void place_in_spare(const engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    const int64_t *caps = engine_array_spare(a)->caps;
    int64_t halo = engine_array_halo(a);
    for (int r = 0; r < rc->n_u; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        int64_t off = shifted_offset(a, m->new_bounds, r, caps[r]);
        int64_t last = caps[r] - rows - halo;
        m->new_offsets[r] = off < halo ? halo : off > last ? last : off;
    }
}

static void set_destination(engine_move_t *m, engine_buffer_t *b, int me)
{
    int64_t rb = engine_array_row_bytes(m->array);
    m->plan.dst = b->base == NULL ? NULL : b->base + m->new_offsets[me] * rb;
    m->plan.dst_at.win = b->win;
    m->plan.dst_at.peers = b->peers;
    m->plan.dst_at.near = b->near;
    m->plan.dst_at.base = b->base;
}

/* A rebalance's target: the current buffer, or the spare grown where needed. */
static mal_status_t spare_target(engine_reconfig_t *rc, engine_move_t *m)
{
    if (!m->in_place) {
        mal_status_t st = ensure_spare(rc, m);
        if (st)
            return st;
        place_in_spare(rc, m);
    }
    mal_array_t *a = m->array;
    set_destination(m, m->in_place ? engine_array_current(a) : engine_array_spare(a), rc->me_u);
    return MAL_OK;
}

/* A new buffer over N, in registry order on every process of N. A process that held
 * the structure gives its spare's memory to it when it is direct and large enough:
 * only what is missing is mapped. */
static mal_status_t new_target(engine_reconfig_t *rc, engine_move_t *m)
{
    mal_array_t *a = m->array;
    engine_buffer_t *spare = engine_array_spare(a);
    /* A parked process woken by the expansion kept memory (pending) as well. */
    engine_buffer_t *donor = rc->me_u < rc->old_procs || spare->pending ? spare : NULL;
    mal_status_t st = engine_buffer_alloc_in(rc->n, &rc->reg->windows, rc->xfer, &m->target,
                                             engine_array_row_bytes(a), m->caps, donor);
    if (!st)
        set_destination(m, &m->target, rc->me_u);
    return st;
}

mal_status_t engine_plan_targets(engine_reconfig_t *rc)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rc->count && !st; i++) {
        engine_move_t *m = &rc->moves[i];
        if (rebalancing(rc))
            st = m->moves ? spare_target(rc, m) : MAL_OK;
        else if (rc->n != MPI_COMM_NULL)
            st = new_target(rc, m);
    }
    return st;
}

void engine_plan_free_targets(engine_reconfig_t *rc)
{
    for (int i = 0; rc->moves != NULL && i < rc->count; i++)
        engine_buffer_free(&rc->reg->windows, &rc->moves[i].target);
}
