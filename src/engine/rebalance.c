/* mal_rebalance: new layout from weights, spare capacity, plan execution, swap. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* Everything one structure needs for one rebalance; built before any MPI call so a bad
 * input changes nothing. */
typedef struct {
    mal_array_t *array;
    int64_t *new_bounds;
    int64_t *new_offsets;      /* part starts in the target buffer, rows, all ranks  */
    int64_t *flows;            /* rows arriving at each rank, then rows leaving it   */
    bool changed;
    bool in_place;             /* same for all ranks: parts stay in buf[current]     */
    partition_segment_t *segs; /* recv segments, then send segments */
    engine_plan_t plan;
} move_t;

typedef struct {
    move_t *moves;
    int n;
} rebalance_t;

static void release(rebalance_t *rb)
{
    for (int i = 0; i < rb->n; i++) {
        free(rb->moves[i].new_bounds);
        free(rb->moves[i].new_offsets);
        free(rb->moves[i].flows);
        free(rb->moves[i].plan.counts);
        free(rb->moves[i].plan.requests);
        free(rb->moves[i].segs);
    }
    free(rb->moves);
}

mal_status_t engine_check_weights(const double *weights, int n, const char *call)
{
    int bad = partition_find_bad_weight(weights, n);
    if (bad >= 0)
        return engine_fail(MAL_ERR_ARG, "%s: weights[%d] is %g; weights must be finite and "
                           ">= 0", call, bad, weights[bad]);
    for (int r = 0; r < n; r++)
        if (weights[r] > 0.0)
            return MAL_OK;
    return engine_fail(MAL_ERR_ARG, "%s: all %d weights are zero", call, n);
}

static mal_status_t check_weights(const double *weights)
{
    if (weights == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: weights is NULL");
    return engine_check_weights(weights, engine.size, "mal_rebalance");
}

/* Where rank r's new part goes in a buffer with `cap` rows: at the old offset shifted by
 * the move of its first row, so rows it keeps keep their address (and rows it gains land
 * beside them, never on rows others are still reading). A rank that held nothing is
 * centred. The result may fall outside [0, cap - rows]: the caller checks or clamps. */
static int64_t shifted_offset(const mal_array_t *a, const int64_t *nb, int r, int64_t cap)
{
    int64_t rows = nb[r + 1] - nb[r];
    if (a->bounds[r + 1] == a->bounds[r])
        return (cap - rows) / 2;
    return a->offsets[r] + (nb[r] - a->bounds[r]);
}

/* In place when every rank's shifted part fits its current buffer: all ranks see the
 * same capacities and layouts, so they all reach the same answer. */
static bool fits_in_place(const mal_array_t *a, const int64_t *nb, int64_t *offsets)
{
    const int64_t *caps = a->buf[a->current].caps;
    for (int r = 0; r < engine.size; r++) {
        int64_t rows = nb[r + 1] - nb[r], off = shifted_offset(a, nb, r, caps[r]);
        if (off < 0 || off + rows > caps[r])
            return false;
        offsets[r] = off;
    }
    return true;
}

/* shmem reaches only symmetric memory, rma and rma-get only windows. */
static mal_status_t check_memory(const mal_array_t *a)
{
    bool symmetric = a->buf[a->current].symmetric;
    bool shmem = engine.xfer.method == MAL_REDIST_SHMEM;
    if (shmem == symmetric || !engine_one_sided())
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_rebalance: \"%s\" lives in %s, which "
                       "method %s cannot reach (allocate it under %s, or use alltoallv or "
                       "p2p)", a->name, symmetric ? "the SHMEM symmetric heap"
                                                  : "MPI windows or direct memory",
                       mal_redist_name(engine.xfer.method), symmetric ? "shmem" : "rma or rma-get");
}

static mal_status_t plan_move(move_t *m, const double *weights)
{
    mal_array_t *a = m->array;
    mal_status_t st = check_memory(a);
    if (st)
        return st;
    int p = engine.size;
    m->new_bounds = malloc(((size_t)p + 1) * sizeof *m->new_bounds);
    m->new_offsets = malloc((size_t)p * sizeof *m->new_offsets);
    m->flows = malloc(2 * (size_t)p * sizeof *m->flows);
    m->segs = malloc(2 * (size_t)p * sizeof *m->segs);
    if (m->new_bounds == NULL || m->new_offsets == NULL || m->flows == NULL ||
        m->segs == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan \"%s\"", a->name);
    if (a->layout != ENGINE_LAYOUT_OWN)
        memcpy(m->new_bounds, engine_csr_next_bounds(a), ((size_t)p + 1) * sizeof(int64_t));
    else if (partition_block(a->global_rows, p, weights, engine.config.min_rows,
                             m->new_bounds))
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: min_rows %lld for every positive "
                           "weight exceeds the %lld rows of \"%s\"",
                           (long long)engine.config.min_rows, (long long)a->global_rows,
                           a->name);
    m->changed = !partition_same(a->bounds, m->new_bounds, p);
    m->in_place = m->changed && fits_in_place(a, m->new_bounds, m->new_offsets);
    partition_flows(a->bounds, m->new_bounds, p, m->flows, m->flows + p);
    m->plan = (engine_plan_t){
        .comm = engine.comm,
        .me = engine.rank,
        .nprocs = p,
        .old_bounds = a->bounds,
        .new_bounds = m->new_bounds,
        .recv = m->segs,
        .nrecv = partition_plan_recv(a->bounds, p, m->new_bounds, p, engine.rank, m->segs),
        .send = m->segs + p,
        .nsend = partition_plan_send(a->bounds, p, m->new_bounds, p, engine.rank, m->segs + p),
        .row_bytes = a->row_bytes,
        .src_win = a->buf[a->current].win,
        .src_peers = a->buf[a->current].peers,
        .src_base = a->buf[a->current].base,
        .src_offsets = a->offsets,
        .dst_offsets = m->new_offsets,
        .in_rows = m->flows,
        .out_rows = m->flows + p,
        .kept_in_place = m->in_place,
    };
    /* Everything an executor needs is allocated now, before the collective part. */
    size_t nreq = engine_p2p_messages(&m->plan);
    m->plan.counts = malloc(4 * (size_t)p * sizeof *m->plan.counts);
    m->plan.requests = malloc((nreq ? nreq : 1) * sizeof *m->plan.requests);
    if (m->plan.counts == NULL || m->plan.requests == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for the plan of \"%s\"", a->name);
    return MAL_OK;
}

static mal_status_t plan_all(rebalance_t *rb, const double *weights)
{
    for (mal_array_t *a = engine.reg.arrays; a != NULL; a = a->next)
        rb->n += a->distribution == MAL_BLOCK;
    rb->moves = calloc(rb->n ? (size_t)rb->n : 1, sizeof *rb->moves);
    if (rb->moves == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan a rebalance");
    int i = 0;
    for (mal_array_t *a = engine.reg.arrays; a != NULL; a = a->next)
        if (a->distribution == MAL_BLOCK)
            rb->moves[i++].array = a;
    mal_status_t st = MAL_OK;
    for (i = 0; i < rb->n && !st; i++)
        st = plan_move(&rb->moves[i], weights);
    return st;
}

/* Give the spare buffer room for the new local part. Every rank knows every rank's
 * capacity and new layout, so all take the same decision without communicating; only
 * when some rank's part outgrows its spare is a window created (collectively). */
static mal_status_t ensure_spare(move_t *m, int *created)
{
    mal_array_t *a = m->array;
    engine_buffer_t *spare = &a->buf[1 - a->current];
    int p = engine.size;
    bool fits = engine_buffer_present(spare);
    for (int r = 0; r < p && fits; r++)
        fits = m->new_bounds[r + 1] - m->new_bounds[r] <= spare->caps[r];
    if (fits)
        return MAL_OK;
    int64_t *caps = malloc((size_t)p * sizeof *caps);
    for (int r = 0; r < p && caps != NULL; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        /* Only a present buffer's capacities are known alike on every rank (kept
         * memory's are not: a joiner has none), and capacities must agree. */
        int64_t old = engine_buffer_present(spare) ? spare->caps[r] : 0;
        caps[r] = rows <= old ? old : engine_grown_capacity(rows);
    }
    /* Direct memory is kept where it still fits; a window is freed first, so growing
     * never needs room for three buffers. A NULL caps still takes part in the
     * collective allocation, as a failure. */
    int64_t *mapped = calloc((size_t)p, sizeof *mapped);
    for (int r = 0; r < p && caps != NULL && mapped != NULL; r++)
        mapped[r] = engine_buffer_holds(spare, r, caps[r]) ? 0 : caps[r] * a->row_bytes;
    if (mapped != NULL)
        engine_monitor_window(mapped, p);
    free(mapped);
    mal_status_t st = engine_buffer_regrow(spare, a->row_bytes, caps,
                                           a->buf[a->current].symmetric);
    free(caps);
    *created += !st;
    return st;
}

/* Parts that do not fit in place go to the spare buffer at their shifted offset clamped
 * into it: rows keep their relative alignment, so the next move is likelier to fit in
 * place (a part that shrinks and grows back stays where it was). */
static void place_in_spare(move_t *m)
{
    mal_array_t *a = m->array;
    const int64_t *caps = a->buf[1 - a->current].caps;
    for (int r = 0; r < engine.size; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        int64_t off = shifted_offset(a, m->new_bounds, r, caps[r]);
        int64_t last = caps[r] - rows;
        m->new_offsets[r] = off < 0 ? 0 : off > last ? last : off;
    }
}

/* Target buffer ready: fill in the local addresses of the plan. */
static mal_status_t prepare_target(move_t *m, int *created)
{
    mal_array_t *a = m->array;
    int target = a->current;
    if (!m->in_place) {
        mal_status_t st = ensure_spare(m, created);
        if (st)
            return st;
        place_in_spare(m);
        target = 1 - a->current;
    }
    m->plan.src = engine_part_base(a, a->current, a->offsets[engine.rank]);
    m->plan.dst = engine_part_base(a, target, m->new_offsets[engine.rank]);
    m->plan.dst_win = a->buf[target].win;
    m->plan.dst_peers = a->buf[target].peers;
    m->plan.dst_base = a->buf[target].base;
    return MAL_OK;
}

/* One-sided epochs. Source windows are opened before the agreement allreduce: lock_all
 * + win_sync there make the user's stores into the current buffer visible to every get
 * that follows it (unified memory model). Second buffers that pushes write into are
 * opened once they exist (a move in place pushes into the source window). */
static mal_status_t epochs(rebalance_t *rb, bool targets, epoch_step_t step)
{
    /* SHMEM has no epochs: the agreement orders the stores before the gets, and one
     * quiet completes every get of this PE. Closing quiets again, so that gets still in
     * flight after a failure land before any buffer is freed or reused. */
    if (engine.xfer.method == MAL_REDIST_SHMEM)
        return step != EPOCH_OPEN && !targets ? engine_shmem_quiet() : MAL_OK;
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rb->n; i++) {
        const move_t *m = &rb->moves[i];
        if (!m->changed || (targets && (m->in_place || engine.xfer.method != MAL_REDIST_RMA)))
            continue;
        mal_status_t s = engine_epoch(targets ? m->plan.dst_win : m->plan.src_win, step);
        st = st ? st : s;
    }
    return st;
}

static mal_status_t execute(rebalance_t *rb)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rb->n && !st; i++) {
        move_t *m = &rb->moves[i];
        if (!m->changed)
            continue;
        switch (engine.xfer.method) {
        case MAL_REDIST_ALLTOALLV: st = engine_redist_alltoallv(&m->plan); break;
        case MAL_REDIST_P2P: st = engine_redist_p2p(&m->plan); break;
        case MAL_REDIST_RMA_GET:
        case MAL_REDIST_SHMEM: st = engine_redist_rma(&m->plan, ENGINE_RMA_PULL); break;
        default: st = engine_redist_rma(&m->plan, ENGINE_RMA_SPLIT); break;
        }
    }
    /* One-sided: every transfer is in flight; copy the rows that stay meanwhile. */
    for (int i = 0; i < rb->n && !st && engine_one_sided(); i++)
        if (rb->moves[i].changed)
            engine_copy_local(&rb->moves[i].plan);
    return st;
}

static void commit(rebalance_t *rb)
{
    for (int i = 0; i < rb->n; i++) {
        move_t *m = &rb->moves[i];
        if (!m->changed)
            continue;
        memcpy(m->array->bounds, m->new_bounds, ((size_t)engine.size + 1) * sizeof(int64_t));
        memcpy(m->array->offsets, m->new_offsets, (size_t)engine.size * sizeof(int64_t));
        /* Source and target have now exchanged data: their first-transfer costs are
         * paid. */
        m->array->buf[m->array->current].crossed = true;
        m->array->current = m->in_place ? m->array->current : 1 - m->array->current;
        m->array->buf[m->array->current].crossed = true;
    }
}

/* The model's view of one move: the plan's copies, and the local copy of the rows that
 * stay when the part moves to the spare buffer. */
static void predict_move(const move_t *m)
{
    const mal_array_t *a = m->array;
    bool cold = !a->buf[a->current].crossed || (!m->in_place && !a->buf[1 - a->current].crossed);
    engine_monitor_plan(a->bounds, m->new_bounds, engine.size, a->row_bytes,
                        engine.xfer.method == MAL_REDIST_RMA_GET ||
                                engine.xfer.method == MAL_REDIST_SHMEM
                            ? PREDICT_RMA_PULL : PREDICT_RMA_SPLIT, cold);
    for (int r = 0; r < engine.size && !m->in_place; r++) {
        int64_t lo = a->bounds[r] > m->new_bounds[r] ? a->bounds[r] : m->new_bounds[r];
        int64_t hi = a->bounds[r + 1] < m->new_bounds[r + 1] ? a->bounds[r + 1]
                                                             : m->new_bounds[r + 1];
        if (hi > lo)
            engine_monitor_copy(r, (hi - lo) * a->row_bytes, 0, false);
    }
}

static void record_stats(const rebalance_t *rb, int created, bool changed, double t0)
{
    mal_rebalance_stats_t s = {.method = engine.xfer.method, .windows_created = created,
                               .layout_changed = changed, .in_place = changed};
    for (int i = 0; i < rb->n; i++) {
        const move_t *m = &rb->moves[i];
        int64_t row_bytes = m->array->row_bytes;
        s.in_place &= !m->changed || m->in_place;
        for (size_t k = 0; m->changed && k < m->plan.nrecv; k++) {
            int64_t bytes = m->plan.recv[k].rows * row_bytes;
            *(m->plan.recv[k].peer == engine.rank ? &s.bytes_kept : &s.bytes_received) += bytes;
        }
        for (size_t k = 0; m->changed && k < m->plan.nsend; k++)
            if (m->plan.send[k].peer != engine.rank)
                s.bytes_sent += m->plan.send[k].rows * row_bytes;
    }
    s.seconds = MPI_Wtime() - t0;
    engine.stats.last = s;
}

static uint64_t rebalance_fingerprint(const double *weights)
{
    int method = (int)engine.xfer.method;
    uint64_t h = engine_hash(ENGINE_HASH_SEED, &method, sizeof method);
    return engine_hash(h, weights, (size_t)engine.size * sizeof *weights);
}

mal_status_t mal_rebalance(const double *weights)
{
    double t0 = MPI_Wtime();
    mal_status_t st = engine_require_init("mal_rebalance");
    if (st)
        return st;
    rebalance_t rb = {0};
    st = check_weights(weights);
    if (engine.reg.matrices != NULL) {
        engine_relayout_t r = {.u = engine.comm, .me_u = engine.rank, .old_procs = engine.size,
                               .me_n = engine.rank, .n_n = engine.size, .weights = weights,
                               .fingerprint = st ? 0 : rebalance_fingerprint(weights)};
        st = engine_csr_relayout(&r, st);
    }
    if (!st)
        st = plan_all(&rb, weights);
    bool changed = false;
    for (int i = 0; i < rb.n && !st; i++)
        changed |= rb.moves[i].changed;
    bool rma = engine_one_sided() && changed;
    if (rma)
        epochs(&rb, false, EPOCH_OPEN);
    st = engine_agree(st, st ? 0 : rebalance_fingerprint(weights), "mal_rebalance");
    int created = 0;
    if (!st && changed) {
        for (int i = 0; i < rb.n; i++)
            if (rb.moves[i].changed)
                predict_move(&rb.moves[i]);
        for (int i = 0; i < rb.n && !st; i++)
            if (rb.moves[i].changed)
                st = prepare_target(&rb.moves[i], &created);
        /* A window created by prepare_target ends in a barrier after its first-touch
         * memset, so no push can land in it before that. */
        bool pushing = !st && rma;
        if (pushing)
            epochs(&rb, true, EPOCH_OPEN);
        if (!st)
            st = execute(&rb);
        if (rma && !st)
            st = epochs(&rb, false, EPOCH_FLUSH);
        if (pushing && !st)
            st = epochs(&rb, true, EPOCH_FLUSH);
        /* All or nothing: swap only when every rank's transfers completed. */
        st = engine_agree(st, 0, "mal_rebalance");
        if (pushing)
            epochs(&rb, true, EPOCH_CLOSE);
        if (rma)
            epochs(&rb, false, EPOCH_CLOSE);
        if (!st) {
            commit(&rb);
            engine_csr_commit(engine.rank);
        }
    } else if (rma) {
        epochs(&rb, false, EPOCH_CLOSE);
    }
    engine_csr_discard(); /* no-op after a commit */
    if (!st)
        record_stats(&rb, created, changed, t0);
    release(&rb);
    return st;
}
