/* A structure's buffers (memory.h): direct memory, a window (over libmal's memory or
 * MPI's) or a symmetric block, allocated over a communicator, regrown, kept and freed.
 * The registry decides their capacities; what memory they get, and how peers reach it,
 * is decided here, beside direct.c, window.c and shmem.c that provide it. The caller
 * keeps the count of buffers present (mal_buffer_count), which every allocation and
 * free here updates. */
#include "core.h"
#include "memory.h"

#include <stdlib.h>
#include <string.h>

/* Private copy of the capacities, or an error when this rank cannot hold its part. */
static mal_status_t copy_caps(const int64_t *caps, int64_t row_bytes, int rank, int size,
                              int64_t **out)
{
    if (caps == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for window capacities");
    if (caps[rank] > INT64_MAX / row_bytes)
        return engine_fail(MAL_ERR_NOMEM, "a window of %lld rows of %lld bytes overflows",
                           (long long)caps[rank], (long long)row_bytes);
    *out = malloc((size_t)size * sizeof **out);
    if (*out == NULL)
        return engine_fail(MAL_ERR_NOMEM, "no memory for %d capacities", size);
    memcpy(*out, caps, (size_t)size * sizeof **out);
    return MAL_OK;
}

/* Where and how a buffer is allocated: over `comm`, counted in *count, direct memory
 * when allowed; `call` is named by a window refused (platform.c); `announce`: see
 * announce_memory. */
typedef struct {
    MPI_Comm comm;
    int *count;
    bool direct;
    const char *call;
    bool announce;
    bool reconfiguring; /* a reconfiguration's new buffer: mapped lazily */
} alloc_at_t;

/* First touch of every local page now, so faults never land in a timed rebalance. The
 * barrier keeps other ranks' puts from arriving before this memset has run. */
static mal_status_t finish_buffer(const alloc_at_t *at, engine_buffer_t *b, int64_t bytes,
                                  engine_buffer_t *out)
{
    if (bytes > 0)
        memset(b->base, 0, (size_t)bytes);
    PMPI_Barrier(at->comm);
    (*at->count)++;
    *out = *b;
    return MAL_OK;
}

static mal_status_t alloc_over(const alloc_at_t *at, engine_buffer_t *buf, int64_t row_bytes,
                               const int64_t *caps, const engine_buffer_t *donor);

/* A buffer over at->comm (which spans every PE when `symmetric`). */
static mal_status_t buffer_alloc(const alloc_at_t *at, engine_buffer_t *buf, int64_t row_bytes,
                                 const int64_t *caps, bool symmetric)
{
    if (!symmetric)
        return alloc_over(at, buf, row_bytes, caps, NULL);
    engine_buffer_t b = {.win = MPI_WIN_NULL, .symmetric = true};
    int p, rank;
    MPI_Comm_size(at->comm, &p);
    MPI_Comm_rank(at->comm, &rank);
    mal_status_t st = copy_caps(caps, row_bytes, rank, p, &b.caps);
    /* Symmetric blocks are the same size on every PE: the largest capacity. */
    int64_t biggest = 0;
    for (int r = 0; r < p && !st; r++)
        biggest = caps[r] > biggest ? caps[r] : biggest;
    if (!st && biggest > INT64_MAX / row_bytes)
        st = engine_fail(MAL_ERR_NOMEM, "a symmetric block of %lld rows of %lld bytes "
                         "overflows", (long long)biggest, (long long)row_bytes);
    /* shmem_malloc is collective: everyone calls it or no one does. Its outcome needs
     * no agreement: every PE made the same allocations in the same order, so the heap
     * refuses a size on all of them alike (and a split outcome could not be undone:
     * Open MPI's shmem_malloc ends in a barrier). */
    if (!(st = engine_agree_in(at->comm, st, 0, "symmetric allocation")))
        st = engine_shmem_alloc((size_t)(biggest * row_bytes), &b.base);
    if (st) {
        free(b.caps);
        return st;
    }
    return finish_buffer(at, &b, caps[rank] * row_bytes, buf);
}

/* An MPI window over `comm` for this rank's `bytes` (one that would hang was refused
 * before, alike on every rank: alloc_over). */
static mal_status_t window_alloc(MPI_Comm comm, MPI_Aint bytes, engine_buffer_t *b)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    /* Each rank's part on its own pages. MPICH allocates a host's parts of a window in
     * one shared segment, back to back, unless told otherwise, and there rebalances of
     * MAL_MEMORY=window lost rows (MPICH 4.0.2: test_rebalance, test_halo, test_memory);
     * with the parts apart every one passes. libmal writes nothing outside its part (64
     * KiB of guard bytes on both sides stayed intact): docs/design.md, "Two MPI
     * families". Open MPI's osc ucx allocates each part apart anyway. */
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    /* MPI_Win_allocate: some pair of one host reads through this window, and with osc
     * ucx only allocated windows returned correct data to such pairs (window.c). Byte
     * displacements keep 64-bit offsets exact whatever the row size. */
    int rc = MPI_Win_allocate(bytes, 1, info, comm, &b->base, &b->win);
    MPI_Info_free(&info);
    mal_status_t st = engine_mpi_check(rc, "MPI_Win_allocate");
    if (!st)
        MPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN);
    return st;
}

void engine_buffer_settle(engine_buffer_t *b, engine_buffer_t *donor)
{
    if (b->borrowed) {
        donor->lent = true;
        b->borrowed = false;
    }
}

/* Said once, by rank 0 of the first allocation before the first iteration (the
 * application's own mal_alloc_window calls, not a reconfiguration's): where structures
 * live, and whether the kernel gives huge pages (without them cold moves cost more). */
static void announce_memory(MPI_Comm comm, bool direct, bool allowed, bool near, bool own)
{
    static bool said; /* once per process, like the summaries it belongs to */
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (said || rank != 0)
        return;
    said = true;
    if (direct)
        engine_notice("libmal: memory: direct (ranks on this host copy each other's rows "
                      "by cross-memory attach), %s\n", engine_direct_huge_pages()
               ? "transparent huge pages" : "4 KiB pages (transparent huge pages are off: "
                 "cold moves cost more)");
    else
        engine_notice("libmal: memory: MPI windows%s (%s)%s\n", own ? " over libmal's memory"
               : "", allowed ? "not every rank can reach every other one by cross-memory "
               "attach" : "MAL_MEMORY=window", near ? "; ranks of one host copy each "
               "other's rows by cross-memory attach" : "");
}

/* Whether this rank copies some peer's rows of window buffer `b` directly. */
static bool reaches_some(const engine_buffer_t *b, MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int r = 0; r < size && b->near != NULL; r++)
        if (r != rank && b->near[r].pid != 0)
            return true;
    return false;
}

/* Collective over `comm`: agree that every rank can take part and holds the same
 * capacities (every rank addresses every other one's part through them), and take a
 * private copy of them. */
static mal_status_t agree_caps(MPI_Comm comm, const int64_t *caps, int64_t row_bytes,
                               int64_t **copy)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t fp = caps ? engine_hash(ENGINE_HASH_SEED, caps, (size_t)size * sizeof *caps) : 0;
    mal_status_t st = engine_agree_in(comm, copy_caps(caps, row_bytes, rank, size, copy), fp,
                                      "window allocation");
    if (st) {
        free(*copy);
        *copy = NULL;
    }
    return st;
}

bool engine_buffer_holds(const engine_buffer_t *buf, int rank, int64_t cap)
{
    return (buf->peers != NULL || buf->pending) && buf->caps != NULL && cap <= buf->caps[rank];
}

static mal_status_t alloc_over(const alloc_at_t *at, engine_buffer_t *buf, int64_t row_bytes,
                               const int64_t *caps, const engine_buffer_t *donor)
{
    engine_buffer_t b = {.win = MPI_WIN_NULL};
    MPI_Comm comm = at->comm;
    int rank;
    MPI_Comm_rank(comm, &rank);
    /* A rank that cannot take part says so first, so the others fail with it instead of
     * waiting in MPI_Win_allocate. */
    mal_status_t st = agree_caps(comm, caps, row_bytes, &b.caps);
    if (st)
        return st;
    int64_t bytes = caps[rank] * row_bytes;
    bool direct = false;
    st = engine_direct_alloc(comm, &b, bytes, at->direct, donor, at->reconfiguring, &direct);
    /* Several hosts: a window over libmal's memory where it is safe, else allocated. */
    bool own = false;
    if (!st && !direct && !(st = engine_window_allowed(comm, at->call)))
        st = engine_window_own(comm, &b, bytes, at->direct, donor, at->reconfiguring, &own);
    if (!st && !direct && !own)
        st = window_alloc(comm, (MPI_Aint)bytes, &b);
    /* Pairs on one host still copy by cross-memory attach where they can. */
    bool all_near = false;
    if (!st && !direct && !own &&
        (st = engine_direct_near(comm, &b, bytes, at->direct, &all_near)))
        MPI_Win_free(&b.win);
    if (!st && donor == NULL && at->announce)
        announce_memory(comm, direct, at->direct, reaches_some(&b, comm), own);
    if (st) {
        free(b.caps);
        return st;
    }
    /* libmal's memory is populated when mapped; an allocated window's is touched here. */
    return finish_buffer(at, &b, direct || own ? 0 : bytes, buf);
}

mal_status_t engine_buffer_alloc(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                 engine_buffer_t *buf, int64_t row_bytes, const int64_t *caps,
                                 bool announce)
{
    /* The application's own allocation; its window is refused (platform.c) as the
     * expansion's that built the communicator. Memory follows the method in effect at
     * allocation (mal_set_redist). */
    alloc_at_t at = {comm, count, xfer->direct, "mal_expand", announce, false};
    return buffer_alloc(&at, buf, row_bytes, caps, xfer->method == MAL_REDIST_SHMEM);
}

mal_status_t engine_buffer_alloc_in(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                    engine_buffer_t *buf, int64_t row_bytes,
                                    const int64_t *caps, const engine_buffer_t *donor)
{
    /* Every process that held the structure offers its spare as the donor: without one,
     * this process is joining (its mal_init), otherwise the call is an expansion's. */
    alloc_at_t at = {comm, count, xfer->direct, donor ? "mal_expand" : "mal_init (joining)",
                     false, true};
    return alloc_over(&at, buf, row_bytes, caps, donor);
}

mal_status_t engine_buffer_regrow(MPI_Comm comm, int *count, const engine_transfer_t *xfer,
                                  engine_buffer_t *buf, int64_t row_bytes, const int64_t *caps,
                                  bool symmetric)
{
    /* Only a rebalance regrows, over mal_comm(): an initialised process's call. */
    alloc_at_t at = {comm, count, xfer->direct, "mal_expand", false, false};
    if (buf->pending) { /* memory kept from a reconfiguration: reused where it fits */
        engine_buffer_t fresh = {.win = MPI_WIN_NULL};
        mal_status_t st = alloc_over(&at, &fresh, row_bytes, caps, buf);
        engine_buffer_settle(&fresh, buf);
        engine_buffer_free(count, buf); /* unmaps only what was not reused */
        *buf = fresh;
        return st;
    }
    if (buf->peers == NULL && !buf->own) { /* the same kind on every rank */
        engine_buffer_free(count, buf);
        return buffer_alloc(&at, buf, row_bytes, caps, symmetric);
    }
    int64_t *copy = NULL;
    int rank;
    MPI_Comm_rank(comm, &rank);
    mal_status_t st = agree_caps(comm, caps, row_bytes, &copy);
    if (!st)
        st = buf->own ? engine_window_own_regrow(comm, buf, caps[rank] * row_bytes)
                      : engine_direct_regrow(comm, buf, caps[rank] * row_bytes);
    if (st) {
        free(copy);
        if (buf->base != NULL) /* the agreement failed before any memory moved */
            engine_buffer_free(count, buf);
        else { /* direct regrow failed: nothing left on any rank */
            free(buf->caps);
            *buf = (engine_buffer_t){.win = MPI_WIN_NULL};
            (*count)--;
        }
        return st;
    }
    free(buf->caps);
    buf->caps = copy;
    return MAL_OK;
}

bool engine_buffer_present(const engine_buffer_t *buf)
{
    return buf->win != MPI_WIN_NULL || buf->symmetric || buf->peers != NULL;
}

const char *engine_buffer_kind(const engine_buffer_t *buf)
{
    return buf->peers != NULL ? "direct" : buf->symmetric ? "symmetric"
           : buf->win != MPI_WIN_NULL ? "window" : "none";
}

void engine_buffer_free(int *count, engine_buffer_t *buf)
{
    /* Debug mode may have protected it (a spare freed between reconfigurations). */
    engine_stale_release(buf->base, buf->mapped);
    if (engine_buffer_present(buf))
        (*count)--;
    if (buf->own)
        engine_window_own_free(buf);
    else if (buf->win != MPI_WIN_NULL)
        MPI_Win_free(&buf->win);
    else if (buf->peers != NULL || (buf->pending && buf->base != NULL))
        engine_direct_free(buf);
    else if (buf->symmetric)
        engine_shmem_free(buf->base);
    free(buf->near);
    free(buf->caps);
    *buf = (engine_buffer_t){.win = MPI_WIN_NULL};
}

engine_buffer_t engine_buffer_keep(int *count, engine_buffer_t *b, int64_t *caps)
{
    engine_buffer_t kept = {.win = MPI_WIN_NULL, .base = b->base, .mapped = b->mapped,
                            .caps = caps, .pending = true};
    if (b->own) { /* its window is freed with the others, in registry order */
        b->lent = true;
        return kept;
    }
    free(b->peers);
    free(b->caps);
    *b = (engine_buffer_t){.win = MPI_WIN_NULL};
    (*count)--;
    return kept;
}
