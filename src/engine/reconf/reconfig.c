/* The executor of every reconfiguration (plan.h) and its commit.
 *
 * Rows travel through whichever buffers span U:
 * - rebalance (U = N): every rank has both buffers; one-sided methods share each segment
 *   between its two ends (rma) or pull it (rma-get, shmem);
 * - shrink (U = old communicator): the old buffers span everyone, so the remaining
 *   processes pull, and the leaving ones stay passive until it is done;
 * - expand (U = N = merged communicator): only the new buffers, created over N, span
 *   everyone, so the old owners push into them. Exposing the old buffers to the
 *   newcomers instead would need MPI_Win_create or dynamic windows on the merged
 *   communicator, which returned wrong data with osc ucx (docs/design.md, platform facts).
 * New buffers across communicators are direct memory when everyone is on one host (a
 * process that held the structure borrows its spare's memory when the new part fits,
 * final only at the commit) and MPI_Win_allocate'd windows otherwise. A process that
 * stays keeps its old buffer's direct memory for the structure's next spare. */
#include "core.h"
#include "memory.h"
#include "plan.h"
#include "registry.h"
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expose(engine_move_t *m, engine_side_t side)
{
    m->exposed[side] = true;
    m->tp->expose(&m->plan, side);
}

void engine_execute_expose_sources(engine_move_t *moves, int count)
{
    for (int i = 0; i < count; i++)
        if (moves[i].moves && moves[i].plan.mode != ENGINE_RMA_PUSH)
            expose(&moves[i], ENGINE_SIDE_SRC);
}

/* Targets that peers write: once they exist. A move in place pushes into its source,
 * which is open already. */
static void expose_targets(engine_move_t *moves, int count)
{
    for (int i = 0; i < count; i++)
        if (moves[i].moves && moves[i].plan.mode != ENGINE_RMA_PULL && !moves[i].in_place)
            expose(&moves[i], ENGINE_SIDE_DST);
}

static mal_status_t complete(engine_move_t *moves, int count, bool close)
{
    mal_status_t st = MAL_OK;
    for (int i = 0; i < count; i++) {
        engine_move_t *m = &moves[i];
        /* Targets first: they were opened last. */
        for (int side = ENGINE_SIDE_DST; side >= ENGINE_SIDE_SRC; side--) {
            if (!m->exposed[side])
                continue;
            mal_status_t s = m->tp->complete(&m->plan, (engine_side_t)side, close);
            m->exposed[side] = !close;
            st = st ? st : s;
        }
    }
    return st;
}

mal_status_t engine_execute(engine_move_t *moves, int count, MPI_Comm comm,
                            mal_status_t local, const char *call)
{
    mal_status_t st = local;
    /* A buffer created for the move ends in a barrier after its first touch, so no push
     * can land in it before that. */
    if (!st)
        expose_targets(moves, count);
    for (int i = 0; i < count && !st; i++)
        if (moves[i].moves)
            st = moves[i].tp->pull(&moves[i].plan);
    if (!st)
        st = complete(moves, count, false);
    /* All or nothing: nobody commits unless every process's moves completed. */
    st = engine_agree_in(comm, st, 0, call);
    engine_execute_close(moves, count);
    return st;
}

void engine_execute_close(engine_move_t *moves, int count)
{
    complete(moves, count, true);
}

static bool rebalancing(const engine_reconfig_t *rc)
{
    return rc->action == MAL_ACTION_REBALANCE;
}

/* Matrices: their next layout over N first, which the structures that follow them
 * take. */
static mal_status_t relayout(engine_reconfig_t *rc, mal_status_t st)
{
    if (engine_csr_first(rc->reg) == NULL)
        return st;
    engine_relayout_t r = {.u = rc->u, .me_u = rc->me_u, .old_procs = rc->old_procs,
                           .me_n = rc->n != MPI_COMM_NULL ? rc->me_n : -1, .n_n = rc->n_n,
                           .weights = rc->weights, .fingerprint = st ? 0 : rc->fingerprint};
    return engine_csr_relayout(rc->reg, &r, st);
}

/* Plan, and agree on it over U. A rebalance predicts once every rank planned; across
 * communicators the model sees the plan before (it predicts the whole reconfiguration,
 * spawn included). */
static mal_status_t plan_agreed(engine_reconfig_t *rc, mal_status_t st)
{
    st = relayout(rc, st);
    if (!st)
        st = engine_plan_all(rc);
    if (!st)
        engine_execute_expose_sources(rc->moves, rc->count);
    if (!rebalancing(rc) && !st)
        engine_plan_predict(rc);
    st = engine_agree_in(rc->u, st, st ? 0 : rc->fingerprint,
                         rebalancing(rc) ? "mal_rebalance" : "reconfiguration plan");
    if (rebalancing(rc) && !st && rc->changed)
        engine_plan_predict(rc);
    return st;
}

/* Targets: collective over N. Across communicators everyone of U learns of a planning
 * failure first (plan_agreed), so nobody is left inside it, and of a failure here after
 * (a rebalance's spares agree inside their allocation). */
static mal_status_t targets_agreed(engine_reconfig_t *rc, mal_status_t st)
{
    if (!st && rc->changed)
        st = engine_plan_targets(rc);
    if (!rebalancing(rc))
        st = engine_agree_in(rc->u, st, 0, "reconfiguration windows");
    return st;
}

/* An expansion's structures whose rows every process of U copied ahead, to the place
 * its plan gives them, in the memory its target borrowed (prepull.c), need not move:
 * checked by each process against its own plan, agreed in one allreduce. The records are
 * spent either way. */
static void skip_prepulled(engine_reconfig_t *rc)
{
    if (rc->action != MAL_ACTION_EXPAND || rc->count == 0)
        return;
    int *ok = malloc((size_t)rc->count * sizeof *ok);
    for (int i = 0; ok != NULL && i < rc->count; i++) {
        const engine_move_t *m = &rc->moves[i];
        const engine_prepull_t *p = engine_array_prepulled(m->array);
        int me = rc->me_n;
        ok[i] = m->moves && p->base != NULL && p->procs == rc->n_n &&
                p->lo == m->new_bounds_n[me] && p->hi == m->new_bounds_n[me + 1] &&
                p->offset == m->new_offsets_n[me] && m->target.base == p->base;
    }
    /* Every process takes part, also one without memory for the flags (as a no). */
    int none = 0, *flags = ok != NULL ? ok : &none, n = ok != NULL ? rc->count : 1;
    PMPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MIN, rc->u);
    for (int i = 0; ok != NULL && i < rc->count; i++) {
        rc->moves[i].moves = rc->moves[i].moves && !ok[i];
        rc->bytes_ahead += ok[i] ? rc->moves[i].bytes_in : 0;
    }
    for (int i = 0; i < rc->count; i++)
        engine_prepull_forget(rc->moves[i].array);
    free(ok);
}

mal_status_t engine_reconfig_move(engine_reconfig_t *rc, mal_status_t local)
{
    double t0 = MPI_Wtime();
    local = engine_plan_method(rc, local); /* U's first collective */
    double met = MPI_Wtime();
    rc->t_meet = met - t0;
    mal_status_t st = plan_agreed(rc, local);
    rc->t_plan = MPI_Wtime() - met;
    bool agreed = !st;
    st = targets_agreed(rc, st);
    double t1 = MPI_Wtime();
    rc->t_windows = t1 - met;
    /* Every rank takes the same branch: a rebalance's layouts agree once planned (a
     * failed spare still takes part in the last agreement), across communicators the
     * targets were agreed. */
    if (!rebalancing(rc) && !st)
        skip_prepulled(rc);
    if (rebalancing(rc) ? agreed && rc->changed : !st)
        st = engine_execute(rc->moves, rc->count, rc->u, st,
                            rebalancing(rc) ? "mal_rebalance" : "reconfiguration data movement");
    else
        engine_execute_close(rc->moves, rc->count);
    rc->t_redist = MPI_Wtime() - t1;
    if (st) {
        engine_plan_free_targets(rc);
        engine_csr_discard(rc->reg);
    }
    return st;
}

void engine_reconfig_release(engine_reconfig_t *rc)
{
    for (int i = 0; rc->moves != NULL && i < rc->count; i++) {
        engine_move_t *m = &rc->moves[i];
        if (m->allocated)
            m->tp->free(&m->plan);
        free(m->old_bounds);
        free(m->new_bounds);
        free(m->new_bounds_n);
        free(m->new_offsets);
        free(m->new_offsets_n);
        free(m->caps);
        free(m->flows);
        free(m->segs);
    }
    free(rc->moves);
    free(rc->n_of_u);
    rc->moves = NULL;
    rc->n_of_u = NULL;
}

/* Debug mode: the memory the application's pointers into `a` led into until this commit
 * (its old buffer, now its spare) faults until the next reconfiguration, with a line
 * naming the structure (transport/stale.c). */
static void protect_stale(const engine_reconfig_t *rc, const mal_array_t *a)
{
    char text[384];
    snprintf(text, sizeof text, "libmal[%d]: mal_debug: access to '%s' through a pointer "
             "from before the reconfiguration at iteration %lld (re-read %s after "
             "MAL_RECONFIGURED)\n", rc->me_n, engine_array_name(a), (long long)rc->iteration,
             engine_array_pointer_call(a));
    engine_stale_protect(engine_array_spare(a), text);
}

/* A rebalance: the new layout, and the target buffer becomes the current one. Source
 * and target have now exchanged data: their first-transfer costs are paid. */
static void commit_rebalance(engine_reconfig_t *rc)
{
    for (int i = 0; i < rc->count; i++) {
        engine_move_t *m = &rc->moves[i];
        if (!m->moves)
            continue;
        engine_array_rebalanced(m->array, m->new_bounds, m->new_offsets, rc->n_u,
                                m->in_place);
        if (rc->debug && !m->in_place)
            protect_stale(rc, m->array);
    }
    if (rc->changed)
        engine_csr_commit(rc->reg, rc->me_n);
    else
        engine_csr_discard(rc->reg);
}

/* Swap the new layout's arrays and the target into the structure (sizes change with
 * the process count); the move's copies are taken over. */
static void adopt_layout(engine_move_t *m, engine_buffer_t kept)
{
    engine_array_install(m->array, m->new_bounds_n, m->new_offsets_n, &m->target, kept);
    m->new_bounds_n = NULL;
    m->new_offsets_n = NULL;
    m->target = (engine_buffer_t){.win = MPI_WIN_NULL};
}

/* libmal's memory under the old buffer (direct, or a window over it) on a process that
 * stays or parks: kept (not a buffer any more) for the structure's next allocation, with
 * its capacity over the new communicator for the model (every process of it that held
 * the structure knows them). A parked process woken across hosts then receives its part
 * in pages it populated before, not in fresh ones (docs/benchmarks.md,
 * "Several hosts: figures"). */
static engine_buffer_t keep_memory(engine_reconfig_t *rc, engine_buffer_t *b)
{
    int64_t *caps = calloc((size_t)rc->n_n, sizeof *caps);
    for (int u = 0; caps != NULL && u < rc->old_procs; u++)
        if (rc->n_of_u[u] >= 0)
            caps[rc->n_of_u[u]] = b->caps[u];
    return engine_buffer_keep(&rc->reg->windows, b, caps);
}

void engine_reconfig_commit(engine_reconfig_t *rc, bool had_old)
{
    if (rebalancing(rc)) {
        commit_rebalance(rc);
        return;
    }
    for (int i = 0; i < rc->count; i++) {
        engine_move_t *m = &rc->moves[i];
        mal_array_t *a = m->array;
        engine_buffer_t *old = engine_array_current(a), *spare = engine_array_spare(a);
        engine_buffer_t kept = {.win = MPI_WIN_NULL};
        /* The target may have borrowed the spare's memory: it is the target's now. */
        engine_buffer_settle(&m->target, spare);
        /* A leaver that parks in the pool keeps its memory for its next part. */
        if (had_old && (rc->n != MPI_COMM_NULL || rc->park_leavers) &&
            (old->peers != NULL || old->own))
            kept = keep_memory(rc, old);
        if (had_old) /* collective over the old communicator, in registry order */
            engine_array_free_buffers(rc->reg, a);
        else /* a woken process's kept memory, unless the target took it */
            engine_buffer_free(&rc->reg->windows, spare);
        if (rc->n != MPI_COMM_NULL)
            adopt_layout(m, kept);
        else /* a leaver: no buffer left but the memory it keeps */
            engine_array_install(a, NULL, NULL, NULL, kept);
        /* On a process that stays, what it kept is its spare now. */
        if (rc->debug && had_old && rc->n != MPI_COMM_NULL)
            protect_stale(rc, a);
    }
    /* Row pointers are rebuilt from the committed rows; a leaver has none left. */
    if (rc->n != MPI_COMM_NULL)
        engine_csr_commit(rc->reg, rc->me_n);
    else
        engine_csr_discard(rc->reg);
}
