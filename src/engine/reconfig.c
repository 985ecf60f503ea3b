/* Reconfiguration: the data phase shared by expansions and shrinks.
 *
 * Both move every structure between two communicators. The union U holds everybody who
 * gives or gets rows; the new communicator N holds who stays. Rows travel one-sidedly
 * through whichever windows span U:
 * - shrink (U = old communicator): the old windows span everyone, so the remaining
 *   processes pull with MPI_Get, and the leaving ones stay passive until it is done;
 * - expand (U = N = merged communicator): only the new windows, created over N, span
 *   everyone, so the old owners push with MPI_Put into them. Exposing the old buffers
 *   to the newcomers instead would need MPI_Win_create or dynamic windows on the merged
 *   communicator, which returned wrong data with osc ucx (docs/design.md, platform facts).
 * The new buffers (one per structure) are direct memory when everyone is on one host
 * (a process that held the structure borrows its spare's memory when the new part fits,
 * final only at the commit) and MPI_Win_allocate'd windows otherwise. A process that
 * stays keeps its old buffer's direct memory for the structure's next spare. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* New layout over N from the weights (even when NULL), spread over U with empty parts
 * for the leavers; N ranks are U ranks in the same order. */
static mal_status_t new_layout(engine_reconfig_t *rc, engine_carry_t *c)
{
    mal_array_t *a = c->array;
    double *even = rc->weights ? NULL : engine_even_weights(rc->n_n);
    const double *w = rc->weights ? rc->weights : even;
    if (w == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d weights", rc->n_n);
    /* min_rows is a rule for block parts; a replicated structure has none. */
    int64_t min_rows = a->distribution == MAL_BLOCK ? engine.config.min_rows : 0;
    mal_status_t err = MAL_OK;
    if (a->layout != ENGINE_LAYOUT_OWN)
        memcpy(c->new_bounds_n, engine_csr_next_bounds(a),
               ((size_t)rc->n_n + 1) * sizeof(int64_t));
    else
        err = partition_block(a->global_rows, rc->n_n, w, min_rows, c->new_bounds_n);
    free(even);
    if (err)
        return engine_fail(MAL_ERR_ARG, "reconfiguration: min_rows %lld for each of %d "
                           "processes exceeds the %lld rows of \"%s\"",
                           (long long)engine.config.min_rows, rc->n_n,
                           (long long)a->global_rows, a->name);
    engine_initial_place(a->distribution, a->global_rows, c->new_bounds_n, rc->n_n, c->caps,
                         c->new_offsets_n);
    c->new_bounds[0] = 0;
    for (int r = 0; r < rc->n_u; r++) {
        int k = rc->n_of_u[r];
        int64_t rows = k < 0 ? 0 : c->new_bounds_n[k + 1] - c->new_bounds_n[k];
        c->new_bounds[r + 1] = c->new_bounds[r] + rows;
        c->new_offsets[r] = k < 0 ? 0 : c->new_offsets_n[k];
    }
    return MAL_OK;
}

static mal_status_t alloc_carry(engine_reconfig_t *rc, engine_carry_t *c)
{
    size_t nu = (size_t)rc->n_u, nn = (size_t)rc->n_n;
    c->old_bounds = malloc((nu + 1) * sizeof(int64_t));
    c->new_bounds = malloc((nu + 1) * sizeof(int64_t));
    c->new_bounds_n = malloc((nn + 1) * sizeof(int64_t));
    c->new_offsets = malloc(nu * sizeof(int64_t));
    c->new_offsets_n = malloc(nn * sizeof(int64_t));
    c->caps = malloc(nn * sizeof(int64_t));
    c->flows = malloc(2 * nu * sizeof(int64_t));
    c->segs = malloc(2 * nu * sizeof(partition_segment_t));
    c->plan.counts = malloc(4 * nu * sizeof(int));
    if (!c->old_bounds || !c->new_bounds || !c->new_bounds_n || !c->new_offsets ||
        !c->new_offsets_n || !c->caps || !c->flows || !c->segs || !c->plan.counts)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan \"%s\"", c->array->name);
    return MAL_OK;
}

/* The old layout over U: parts of the processes that held it, empty for joiners. */
static void old_layout(const engine_reconfig_t *rc, engine_carry_t *c)
{
    const int64_t *b = c->array->bounds;
    for (int r = 0; r <= rc->n_u; r++)
        c->old_bounds[r] = b[r <= rc->old_procs ? r : rc->old_procs];
}

/* Where this rank's old part is: nowhere on a joiner. */
static char *old_part(const engine_reconfig_t *rc, const mal_array_t *a)
{
    if (rc->me_u >= rc->old_procs || !engine_buffer_present(&a->buf[a->current]))
        return NULL;
    return engine_part_base(a, a->current, a->offsets[rc->me_u]);
}

static mal_status_t plan_carry(engine_reconfig_t *rc, engine_carry_t *c)
{
    mal_array_t *a = c->array;
    mal_status_t st = alloc_carry(rc, c);
    if (st || (st = new_layout(rc, c)))
        return st;
    old_layout(rc, c);
    int n = rc->n_u, me = rc->me_u;
    bool block = a->distribution == MAL_BLOCK;
    partition_flows(c->old_bounds, c->new_bounds, n, c->flows, c->flows + n);
    c->plan = (engine_plan_t){
        .comm = rc->u,
        .me = me,
        .nprocs = n,
        .old_bounds = c->old_bounds,
        .new_bounds = c->new_bounds,
        .recv = c->segs,
        .nrecv = block ? partition_plan_recv(c->old_bounds, n, c->new_bounds, n, me, c->segs)
                       : 0,
        .send = c->segs + n,
        .nsend = block ? partition_plan_send(c->old_bounds, n, c->new_bounds, n, me,
                                             c->segs + n)
                       : 0,
        .row_bytes = a->row_bytes,
        .src = old_part(rc, a),
        .src_win = a->buf[a->current].win,
        .src_peers = a->buf[a->current].peers,
        .src_offsets = a->offsets,
        .dst_offsets = c->new_offsets,
        .in_rows = c->flows,
        .out_rows = c->flows + n,
        .counts = c->plan.counts,
    };
    size_t nreq = engine_p2p_messages(&c->plan);
    c->plan.requests = malloc((nreq ? nreq : 1) * sizeof *c->plan.requests);
    if (c->plan.requests == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for the plan of \"%s\"", a->name);
    for (size_t k = 0; k < c->plan.nrecv; k++)
        if (c->plan.recv[k].peer != me)
            rc->bytes_in += c->plan.recv[k].rows * a->row_bytes;
    if (!block && me >= rc->old_procs && rc->n_of_u[me] >= 0)
        rc->bytes_in += a->global_rows * a->row_bytes;
    return MAL_OK;
}

/* The model's view of one carry: one-sided copies of block rows (the old owners push
 * in an expansion, the new ones pull in a shrink), the replicated rows the old owners
 * push to joiners, local copies into the new window, and the window itself. */
static void predict_carry(const engine_reconfig_t *rc, const engine_carry_t *c)
{
    const mal_array_t *a = c->array;
    bool expand = rc->action == MAL_ACTION_EXPAND;
    int64_t rb = a->row_bytes;
    /* New memory: a process that held the structure in direct memory reuses its spare
     * where the new part fits (create_targets), the others map their target. Indexed
     * by U rank: the old processes keep their current ranks, joiners come after. */
    const engine_buffer_t *spare = &a->buf[1 - a->current];
    int64_t *mapped = calloc((size_t)rc->n_u, sizeof *mapped);
    for (int u = 0; u < rc->n_u && mapped != NULL; u++) {
        int k = rc->n_of_u[u];
        if (k < 0)
            continue;
        bool reused = u < rc->old_procs && engine_buffer_holds(spare, u, c->caps[k]);
        mapped[u] = reused ? 0 : c->caps[k] * rb;
    }
    if (mapped != NULL)
        engine_monitor_window(mapped, rc->n_u);
    free(mapped);
    /* Pushes land in new targets (cold); pulls read the old buffers. */
    bool cold = expand || !a->buf[a->current].crossed;
    if (a->distribution == MAL_BLOCK)
        engine_monitor_plan(c->old_bounds, c->new_bounds, rc->n_u, rb,
                            expand ? PREDICT_RMA_PUSH : PREDICT_RMA_PULL, cold);
    for (int r = 0; r < rc->old_procs; r++) {
        if (rc->n_of_u[r] < 0)
            continue;
        int64_t stay = a->global_rows;
        if (a->distribution == MAL_BLOCK) {
            int64_t lo = c->old_bounds[r] > c->new_bounds[r] ? c->old_bounds[r]
                                                             : c->new_bounds[r];
            int64_t hi = c->old_bounds[r + 1] < c->new_bounds[r + 1] ? c->old_bounds[r + 1]
                                                                     : c->new_bounds[r + 1];
            stay = hi > lo ? hi - lo : 0;
        } else if (expand) { /* an even slice to every joiner */
            int64_t joiners = rc->n_u - rc->old_procs;
            engine_monitor_copy(r, (a->global_rows / rc->old_procs + 1) * rb * joiners,
                                joiners, true);
        }
        engine_monitor_copy(r, stay * rb, 0, false);
    }
}

/* The new windows, over N, in registry order on every process of N. */
static mal_status_t create_targets(engine_reconfig_t *rc)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rc->count && !st && rc->n != MPI_COMM_NULL; i++) {
        engine_carry_t *c = &rc->carries[i];
        /* A process that held the structure gives its spare's memory to the target
         * when it is direct and large enough: only what is missing is mapped. */
        mal_array_t *a = c->array;
        engine_buffer_t *spare = rc->me_u < rc->old_procs ? &a->buf[1 - a->current] : NULL;
        st = engine_buffer_alloc_in(rc->n, &c->target, a->row_bytes, c->caps, spare);
        if (!st) {
            c->plan.dst = c->target.base + c->new_offsets[rc->me_u] * c->array->row_bytes;
            c->plan.dst_win = c->target.win;
            c->plan.dst_peers = c->target.peers;
        }
    }
    return st;
}

static void free_targets(engine_reconfig_t *rc)
{
    for (int i = 0; rc->carries != NULL && i < rc->count; i++)
        engine_buffer_free(&rc->carries[i].target);
}

/* Replicated rows for the joiners: every old owner writes an even slice of the rows
 * into every joiner's copy, so the work is shared by the old owners. */
static mal_status_t push_replicated(engine_reconfig_t *rc, engine_carry_t *c)
{
    mal_array_t *a = c->array;
    int p = rc->old_procs, me = rc->me_u;
    if (me >= p || a->global_rows == 0)
        return MAL_OK;
    int64_t q = a->global_rows / p, extra = a->global_rows % p;
    int64_t lo = q * me + (me < extra ? me : extra), hi = lo + q + (me < extra);
    partition_segment_t slice = {.src_offset = lo, .dst_offset = lo, .rows = hi - lo};
    engine_plan_t one = c->plan;
    one.recv = NULL;
    one.nrecv = 0;
    one.send = &slice;
    one.nsend = 1;
    one.src = old_part(rc, a);
    mal_status_t st = MAL_OK;
    for (int j = p; j < rc->n_u && !st; j++) {
        slice.peer = j;
        st = engine_redist_rma(&one, ENGINE_RMA_PUSH);
    }
    return st;
}

static void copy_replicated(const engine_reconfig_t *rc, engine_carry_t *c)
{
    mal_array_t *a = c->array;
    char *src = old_part(rc, a);
    if (src != NULL && c->plan.dst != NULL)
        memcpy(c->plan.dst, src, (size_t)(a->global_rows * a->row_bytes));
}

static mal_status_t move_one(engine_reconfig_t *rc, engine_carry_t *c)
{
    if (c->array->distribution == MAL_REPLICATED)
        return rc->action == MAL_ACTION_EXPAND ? push_replicated(rc, c) : MAL_OK;
    c->plan.kept_in_place = false;
    switch (engine.xfer.method) {
    case MAL_REDIST_ALLTOALLV: return engine_redist_alltoallv(&c->plan);
    case MAL_REDIST_P2P: return engine_redist_p2p(&c->plan);
    default: break;
    }
    return engine_redist_rma(&c->plan, rc->action == MAL_ACTION_EXPAND ? ENGINE_RMA_PUSH
                                                                       : ENGINE_RMA_PULL);
}

/* Epochs on the windows the one-sided moves use: the new ones for an expansion (always:
 * replicated rows are pushed whatever the method), the old ones for a shrink. */
static mal_status_t epochs(engine_reconfig_t *rc, epoch_step_t step)
{
    bool expand = rc->action == MAL_ACTION_EXPAND;
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rc->count && (expand || engine_one_sided()); i++) {
        engine_carry_t *c = &rc->carries[i];
        MPI_Win win = expand ? c->target.win : c->plan.src_win;
        mal_status_t s = win == MPI_WIN_NULL ? MAL_OK : engine_epoch(win, step);
        st = st ? st : s;
    }
    return st;
}

static mal_status_t transfer(engine_reconfig_t *rc)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < rc->count && !st; i++)
        st = move_one(rc, &rc->carries[i]);
    for (int i = 0; i < rc->count && !st; i++) {
        engine_carry_t *c = &rc->carries[i];
        if (c->plan.dst == NULL)
            continue;
        if (c->array->distribution == MAL_REPLICATED)
            copy_replicated(rc, c);
        else if (engine_one_sided())
            engine_copy_local(&c->plan);
    }
    if (!st)
        st = epochs(rc, EPOCH_FLUSH);
    return st;
}

mal_status_t engine_reconfig_prepare(engine_reconfig_t *rc)
{
    for (mal_array_t *a = engine.reg.arrays; a != NULL; a = a->next)
        rc->count++;
    rc->carries = calloc(rc->count ? (size_t)rc->count : 1, sizeof *rc->carries);
    rc->n_of_u = malloc((size_t)rc->n_u * sizeof *rc->n_of_u);
    if (rc->carries == NULL || rc->n_of_u == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory to plan a reconfiguration");
    for (int r = 0; r < rc->n_u; r++)
        rc->n_of_u[r] = r;
    int i = 0;
    for (mal_array_t *a = engine.reg.arrays; a != NULL; a = a->next) {
        rc->carries[i].target.win = MPI_WIN_NULL;
        rc->carries[i++].array = a;
    }
    return MAL_OK;
}

mal_status_t engine_reconfig_move(engine_reconfig_t *rc, mal_status_t local)
{
    double t0 = MPI_Wtime();
    mal_status_t st = local;
    if (engine.reg.matrices != NULL) {
        engine_relayout_t r = {.u = rc->u, .me_u = rc->me_u, .old_procs = rc->old_procs,
                               .me_n = rc->n != MPI_COMM_NULL ? rc->me_n : -1,
                               .n_n = rc->n_n, .weights = rc->weights};
        st = engine_csr_relayout(&r, st);
    }
    for (int i = 0; i < rc->count && !st; i++)
        st = plan_carry(rc, &rc->carries[i]);
    for (int i = 0; i < rc->count && !st; i++)
        predict_carry(rc, &rc->carries[i]);
    /* Window creation is collective over N: everyone of U learns of a planning failure
     * first, so nobody is left inside it. */
    st = engine_agree_in(rc->u, st, 0, "reconfiguration plan");
    if (!st)
        st = create_targets(rc);
    st = engine_agree_in(rc->u, st, 0, "reconfiguration windows");
    double t1 = MPI_Wtime();
    rc->t_windows = t1 - t0;
    if (st) {
        free_targets(rc);
        engine_csr_discard();
        return st;
    }
    if (rc->action == MAL_ACTION_EXPAND)
        epochs(rc, EPOCH_OPEN);
    st = transfer(rc);
    /* All or nothing: nobody commits unless every process's moves completed. */
    st = engine_agree_in(rc->u, st, 0, "reconfiguration data movement");
    if (rc->action == MAL_ACTION_EXPAND)
        epochs(rc, EPOCH_CLOSE);
    rc->t_redist = MPI_Wtime() - t1;
    if (st) {
        free_targets(rc);
        engine_csr_discard();
    }
    return st;
}

void engine_reconfig_release(engine_reconfig_t *rc)
{
    for (int i = 0; rc->carries != NULL && i < rc->count; i++) {
        engine_carry_t *c = &rc->carries[i];
        free(c->old_bounds);
        free(c->new_bounds);
        free(c->new_bounds_n);
        free(c->new_offsets);
        free(c->new_offsets_n);
        free(c->caps);
        free(c->flows);
        free(c->segs);
        free(c->plan.counts);
        free(c->plan.requests);
    }
    free(rc->carries);
    free(rc->n_of_u);
    rc->carries = NULL;
    rc->n_of_u = NULL;
}

/* Swap the new layout's arrays into the structure (sizes change with the process
 * count); the caller's copies are taken over. */
static void adopt_layout(engine_carry_t *c)
{
    mal_array_t *a = c->array;
    free(a->bounds);
    free(a->offsets);
    a->bounds = c->new_bounds_n;
    a->offsets = c->new_offsets_n;
    c->new_bounds_n = NULL;
    c->new_offsets_n = NULL;
    a->buf[0] = c->target;
    a->buf[0].crossed = true; /* the rows it holds came through it */
    a->buf[1] = (engine_buffer_t){.win = MPI_WIN_NULL};
    c->target = (engine_buffer_t){.win = MPI_WIN_NULL};
    a->current = 0;
}

/* Direct memory of the old buffer on a process that stays: kept (not a buffer any
 * more) for the structure's next allocation, with its capacity over the new
 * communicator for the model (every process of it that held the structure knows them). */
static engine_buffer_t keep_memory(const engine_reconfig_t *rc, engine_buffer_t *b)
{
    engine_buffer_t kept = {.win = MPI_WIN_NULL, .base = b->base, .mapped = b->mapped,
                            .pending = true};
    kept.caps = calloc((size_t)rc->n_n, sizeof *kept.caps);
    for (int u = 0; kept.caps != NULL && u < rc->old_procs; u++)
        if (rc->n_of_u[u] >= 0)
            kept.caps[rc->n_of_u[u]] = b->caps[u];
    free(b->peers);
    free(b->caps);
    *b = (engine_buffer_t){.win = MPI_WIN_NULL};
    engine.reg.windows--;
    return kept;
}

void engine_reconfig_commit(engine_reconfig_t *rc, bool had_old)
{
    for (int i = 0; i < rc->count; i++) {
        engine_carry_t *c = &rc->carries[i];
        mal_array_t *a = c->array;
        engine_buffer_t kept = {.win = MPI_WIN_NULL};
        /* The target may have borrowed the spare's memory: it is the target's now. */
        engine_buffer_settle(&c->target, &a->buf[1 - a->current]);
        if (had_old && rc->n != MPI_COMM_NULL && a->buf[a->current].peers != NULL)
            kept = keep_memory(rc, &a->buf[a->current]);
        if (had_old) /* collective over the old communicator, in registry order */
            for (int b = 0; b < 2; b++)
                engine_buffer_free(&a->buf[b]);
        if (rc->n != MPI_COMM_NULL) {
            adopt_layout(c);
            a->buf[1] = kept;
        }
    }
    /* Row pointers are rebuilt from the committed rows; a leaver has none left. */
    if (rc->n != MPI_COMM_NULL)
        engine_csr_commit(rc->me_n);
    else
        engine_csr_discard();
}
