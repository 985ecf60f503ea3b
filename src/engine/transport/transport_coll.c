/* The MPI_Alltoallv transport (a baseline): one collective per structure over the plan's
 * communicator, MPI_Alltoallw with typed segments when a count in rows would not fit an
 * int. Nothing is exposed: the collective completes every row on return. */
#include "core.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

/* 4 * nprocs ints: counts and displacements, allocated before the collective part. */
static mal_status_t coll_allocate(engine_plan_t *plan)
{
    plan->scratch = malloc(4 * (size_t)plan->nprocs * sizeof(int));
    return plan->scratch ? MAL_OK : engine_fail(MAL_ERR_NOMEM, "no memory for the counts "
                                                "of %d ranks", plan->nprocs);
}

/* Alltoallv counts and displacements in rows (the rank's own rows are copied apart). */
static void fill_counts(const partition_segment_t *segs, size_t n, int me, bool use_src,
                        int *counts, int *displs)
{
    for (size_t i = 0; i < n; i++) {
        const partition_segment_t *s = &segs[i];
        if (s->peer == me)
            continue;
        counts[s->peer] = (int)s->rows;
        displs[s->peer] = (int)(use_src ? s->src_offset : s->dst_offset);
    }
}

/* Whether every count and displacement in rows fits the count limit. It is bounded by
 * the largest part of either layout, which every rank knows: all ranks choose the same
 * collective (a rank-local test could pair Alltoallv with Alltoallw and hang). */
static bool rows_fit_counts(const engine_plan_t *plan)
{
    for (int r = 0; r < plan->nprocs; r++)
        if (plan->old_bounds[r + 1] - plan->old_bounds[r] > plan->count_limit ||
            plan->new_bounds[r + 1] - plan->new_bounds[r] > plan->count_limit)
            return false;
    return true;
}

/* One segment as a datatype anchored at the buffer start: blocks of at most the chunk
 * size at 64-bit byte displacements, so no int count or displacement can overflow. */
static mal_status_t segment_type(int64_t offset, int64_t bytes, int64_t chunk,
                                 MPI_Datatype *type)
{
    int64_t nblocks = (bytes + chunk - 1) / chunk;
    int *lens = malloc((size_t)nblocks * sizeof *lens);
    MPI_Aint *displs = malloc((size_t)nblocks * sizeof *displs);
    mal_status_t st = MAL_OK;
    if (lens == NULL || displs == NULL) {
        st = engine_fail(MAL_ERR_NOMEM, "no memory for a segment datatype");
        goto out;
    }
    for (int64_t b = 0; b < nblocks; b++) {
        lens[b] = (int)(bytes - b * chunk < chunk ? bytes - b * chunk : chunk);
        displs[b] = (MPI_Aint)(offset + b * chunk);
    }
    st = engine_mpi_check(MPI_Type_create_hindexed((int)nblocks, lens, displs, MPI_BYTE, type),
                          "MPI_Type_create_hindexed");
    if (!st)
        st = engine_mpi_check(MPI_Type_commit(type), "MPI_Type_commit");
out:
    free(lens);
    free(displs);
    return st;
}

static mal_status_t fill_types(const engine_plan_t *plan, const partition_segment_t *segs,
                               size_t n, bool use_src, int *counts, MPI_Datatype *types)
{
    int64_t rb = plan->row_bytes;
    for (size_t i = 0; i < n; i++) {
        const partition_segment_t *s = &segs[i];
        if (s->peer == plan->me)
            continue;
        int64_t off = (use_src ? s->src_offset : s->dst_offset) * rb;
        mal_status_t st = segment_type(off, s->rows * rb,
                                       engine_chunk_bytes(plan->count_limit), &types[s->peer]);
        if (st)
            return st;
        counts[s->peer] = 1;
    }
    return MAL_OK;
}

static void free_types(MPI_Datatype *types, int p)
{
    for (int r = 0; r < p; r++)
        if (types[r] != MPI_BYTE)
            MPI_Type_free(&types[r]);
}

/* Fallback when a count or displacement in rows does not fit an int: MPI_Alltoallw with
 * one typed segment per peer (counts of 1, displacements carried by the types). */
static mal_status_t alltoallw_typed(const engine_plan_t *plan, int *buf)
{
    int p = plan->nprocs;
    int *sc = buf, *rc = buf + p, *zero = buf + 2 * p;
    MPI_Datatype *types = malloc(2 * (size_t)p * sizeof *types);
    mal_status_t st = types ? MAL_OK
                            : engine_fail(MAL_ERR_NOMEM, "no memory for %d datatypes", 2 * p);
    for (int r = 0; r < 2 * p && types != NULL; r++)
        types[r] = MPI_BYTE;
    memset(buf, 0, 3 * (size_t)p * sizeof *buf);
    if (!st)
        st = fill_types(plan, plan->send, plan->nsend, true, sc, types);
    if (!st)
        st = fill_types(plan, plan->recv, plan->nrecv, false, rc, types + p);
    /* Building the types allocates: agree before the collective so a rank that failed
     * does not leave the others inside it. Past 2^31 rows the allreduce is noise. */
    st = engine_agree_in(plan->comm, st, 0, "MPI_Alltoallw datatypes");
    if (!st)
        st = engine_mpi_check(MPI_Alltoallw(plan->src, sc, zero, types, plan->dst, rc, zero,
                                            types + p, plan->comm),
                              "MPI_Alltoallw");
    if (types != NULL)
        free_types(types, 2 * p);
    free(types);
    return st;
}

static mal_status_t coll_pull(engine_plan_t *plan)
{
    int p = plan->nprocs;
    int *buf = plan->scratch;
    memset(buf, 0, 4 * (size_t)p * sizeof *buf);
    int *sc = buf, *sd = buf + p, *rc = buf + 2 * p, *rd = buf + 3 * p;
    mal_status_t st;
    if (rows_fit_counts(plan)) {
        fill_counts(plan->send, plan->nsend, plan->me, true, sc, sd);
        fill_counts(plan->recv, plan->nrecv, plan->me, false, rc, rd);
        MPI_Datatype row;
        MPI_Type_contiguous((int)plan->row_bytes, MPI_BYTE, &row);
        MPI_Type_commit(&row);
        st = engine_mpi_check(PMPI_Alltoallv(plan->src, sc, sd, row, plan->dst, rc, rd, row,
                                            plan->comm),
                              "MPI_Alltoallv");
        MPI_Type_free(&row);
    } else {
        st = alltoallw_typed(plan, buf);
    }
    if (!st)
        engine_copy_local(plan);
    return st;
}

const engine_transport_t engine_transport_alltoallv = {
    .name = "alltoallv",
    .allocate = coll_allocate,
    .expose = engine_transport_no_epoch,
    .pull = coll_pull,
    .complete = engine_transport_none_pending,
    .free = engine_transport_free_scratch,
};
