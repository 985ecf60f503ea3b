/* mal_rebalance: new layout from weights, spare capacity, plan execution, swap. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* Everything one structure needs for one rebalance; built before any MPI call so a bad
 * input changes nothing. */
typedef struct {
    mal_array_t *array;
    int64_t *new_bounds;
    bool changed;
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
        free(rb->moves[i].segs);
    }
    free(rb->moves);
}

static mal_status_t check_weights(const double *weights)
{
    if (weights == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: weights is NULL");
    int bad = partition_find_bad_weight(weights, engine.size);
    if (bad >= 0)
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: weights[%d] is %g; weights must be "
                           "finite and >= 0", bad, weights[bad]);
    for (int r = 0; r < engine.size; r++)
        if (weights[r] > 0.0)
            return MAL_OK;
    return engine_fail(MAL_ERR_ARG, "mal_rebalance: all %d weights are zero", engine.size);
}

static mal_status_t plan_move(move_t *m, const double *weights)
{
    mal_array_t *a = m->array;
    int p = engine.size;
    m->new_bounds = malloc(((size_t)p + 1) * sizeof *m->new_bounds);
    m->segs = malloc(2 * (size_t)p * sizeof *m->segs);
    if (m->new_bounds == NULL || m->segs == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan \"%s\"", a->name);
    if (partition_block(a->global_rows, p, weights, engine.config.min_rows, m->new_bounds))
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: min_rows %lld for every positive "
                           "weight exceeds the %lld rows of \"%s\"",
                           (long long)engine.config.min_rows, (long long)a->global_rows,
                           a->name);
    m->changed = !partition_same(a->bounds, m->new_bounds, p);
    m->plan.old_bounds = a->bounds;
    m->plan.new_bounds = m->new_bounds;
    m->plan.recv = m->segs;
    m->plan.nrecv = partition_plan_recv(a->bounds, p, m->new_bounds, p, engine.rank, m->segs);
    m->plan.send = m->segs + p;
    m->plan.nsend = partition_plan_send(a->bounds, p, m->new_bounds, p, engine.rank,
                                        m->segs + p);
    return MAL_OK;
}

static mal_status_t plan_all(rebalance_t *rb, const double *weights)
{
    for (mal_array_t *a = engine.arrays; a != NULL; a = a->next)
        rb->n += a->distribution == MAL_BLOCK;
    rb->moves = calloc(rb->n ? (size_t)rb->n : 1, sizeof *rb->moves);
    if (rb->moves == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan a rebalance");
    int i = 0;
    for (mal_array_t *a = engine.arrays; a != NULL; a = a->next)
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
    bool fits = spare->win != MPI_WIN_NULL;
    for (int r = 0; r < p && fits; r++)
        fits = m->new_bounds[r + 1] - m->new_bounds[r] <= spare->caps[r];
    if (fits)
        return MAL_OK;
    int64_t *caps = malloc((size_t)p * sizeof *caps);
    if (caps == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for capacities of \"%s\"", a->name);
    for (int r = 0; r < p; r++) {
        int64_t rows = m->new_bounds[r + 1] - m->new_bounds[r];
        int64_t old = spare->caps ? spare->caps[r] : 0;
        caps[r] = rows <= old ? old : engine_grown_capacity(rows);
    }
    engine_buffer_free(spare);
    mal_status_t st = engine_buffer_alloc(spare, a->row_bytes, caps);
    free(caps);
    *created += !st;
    return st;
}

static void set_epochs(rebalance_t *rb, bool open)
{
    for (int i = 0; i < rb->n; i++) {
        if (!rb->moves[i].changed)
            continue;
        MPI_Win win = rb->moves[i].array->buf[rb->moves[i].array->current].win;
        if (open) {
            /* lock_all + win_sync before the agreement allreduce: the user's stores into
             * the current buffer are then visible to every get that follows it (unified
             * memory model). NOCHECK: nobody takes exclusive locks on our windows. */
            MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
            MPI_Win_sync(win);
        } else {
            MPI_Win_unlock_all(win);
        }
    }
}

static mal_status_t execute(rebalance_t *rb)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rb->n && !st; i++) {
        move_t *m = &rb->moves[i];
        if (!m->changed)
            continue;
        switch (engine.method) {
        case MAL_REDIST_ALLTOALLV: st = engine_redist_alltoallv(m->array, &m->plan); break;
        case MAL_REDIST_P2P: st = engine_redist_p2p(m->array, &m->plan); break;
        default: st = engine_redist_rma_gets(m->array, &m->plan); break;
        }
    }
    /* RMA: every get is in flight; copy the rows that stay while they travel. */
    for (int i = 0; i < rb->n && !st && engine.method == MAL_REDIST_RMA; i++)
        if (rb->moves[i].changed)
            engine_copy_local(rb->moves[i].array, &rb->moves[i].plan);
    return st;
}

static void commit(rebalance_t *rb)
{
    for (int i = 0; i < rb->n; i++) {
        move_t *m = &rb->moves[i];
        if (!m->changed)
            continue;
        memcpy(m->array->bounds, m->new_bounds, ((size_t)engine.size + 1) * sizeof(int64_t));
        m->array->current = 1 - m->array->current;
    }
}

static void record_stats(const rebalance_t *rb, int created, bool changed, double t0)
{
    mal_rebalance_stats_t s = {.method = engine.method, .windows_created = created,
                               .layout_changed = changed};
    for (int i = 0; i < rb->n; i++) {
        const move_t *m = &rb->moves[i];
        int64_t row_bytes = m->array->row_bytes;
        for (size_t k = 0; m->changed && k < m->plan.nrecv; k++) {
            int64_t bytes = m->plan.recv[k].rows * row_bytes;
            *(m->plan.recv[k].peer == engine.rank ? &s.bytes_kept : &s.bytes_received) += bytes;
        }
        for (size_t k = 0; m->changed && k < m->plan.nsend; k++)
            if (m->plan.send[k].peer != engine.rank)
                s.bytes_sent += m->plan.send[k].rows * row_bytes;
    }
    s.seconds = MPI_Wtime() - t0;
    engine.last = s;
}

static uint64_t rebalance_fingerprint(const double *weights)
{
    int method = (int)engine.method;
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
    if (!(st = check_weights(weights)))
        st = plan_all(&rb, weights);
    bool changed = false;
    for (int i = 0; i < rb.n && !st; i++)
        changed |= rb.moves[i].changed;
    bool rma = engine.method == MAL_REDIST_RMA && changed;
    if (rma)
        set_epochs(&rb, true);
    st = engine_agree(st, st ? 0 : rebalance_fingerprint(weights), "mal_rebalance");
    int created = 0;
    if (!st && changed) {
        for (int i = 0; i < rb.n && !st; i++)
            if (rb.moves[i].changed)
                st = ensure_spare(&rb.moves[i], &created);
        if (!st)
            st = execute(&rb);
        if (rma)
            set_epochs(&rb, false);
        /* All or nothing: swap only when every rank's pulls completed. */
        if (!(st = engine_agree(st, 0, "mal_rebalance")))
            commit(&rb);
    } else if (rma) {
        set_epochs(&rb, false);
    }
    if (!st)
        record_stats(&rb, created, changed, t0);
    release(&rb);
    return st;
}
