/* The OpenSHMEM runtime under the shmem transport (transport_shmem.c): structures on the
 * symmetric heap, rows pulled with shmem_getmem_nbi and completed with shmem_quiet. MPI
 * stays in charge of everything else (agreement, plans, the baselines): Open MPI's
 * oshmem runs on the same runtime, so one program uses both.
 *
 * Two facts of Open MPI 4.1's oshmem shape this file:
 * - shmem_finalize finalizes MPI itself, and MPI_Finalize before or after it crashes.
 *   libmal-pmpi therefore wraps MPI_Finalize (src/pmpi/pmpi.c): when libmal started
 *   SHMEM, the program's MPI_Finalize runs shmem_finalize instead, through
 *   mal_pmpi_finalize_shmem. libmal itself defines no MPI_ name, so mal_init refuses
 *   SHMEM in a program that does not link libmal-pmpi (it says so when loaded).
 * - The heap is sized at start (SMA_SYMMETRIC_SIZE, 256 MiB by default); shmem_malloc
 *   beyond it returns NULL on every PE alike. */
#include "core.h"
#include "mal_pmpi.h"
#include "memory.h"
#include "transport.h"

#include <stdlib.h>

/* libmal-pmpi is linked (its constructor said so): the program's MPI_Finalize reaches
 * mal_pmpi_finalize_shmem. A fact of the process, whatever mal_init does. */
static bool pmpi_attached;

void engine_pmpi_attach(void)
{
    pmpi_attached = true;
}

#ifdef MAL_HAVE_SHMEM
#include <dlfcn.h>
#include <shmem.h>

static bool started;     /* shmem_init called by libmal in this process */
static int *pe_of_rank;  /* mal_comm() rank -> PE */

bool engine_redist_supported(mal_redist_t method)
{
    return method >= MAL_REDIST_RMA && method <= MAL_REDIST_AUTO;
}

bool engine_shmem_active(void)
{
    return started;
}

/* shmem_init is collective over every process of the job: refuse before it when the
 * communicator is smaller, or the others would wait forever. */
static mal_status_t check_spans_job(MPI_Comm comm, int *size)
{
    int world;
    MPI_Comm_size(comm, size);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (*size != world)
        return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: MAL_REDIST=shmem needs mal_init "
                           "over all %d processes of the job (SHMEM's PE set), not %d",
                           world, *size);
    /* Without libmal-pmpi the program's MPI_Finalize would crash after shmem_finalize
     * (see the head of this file): refused now rather than at exit. */
    if (!pmpi_attached)
        return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: MAL_REDIST=shmem needs the "
                           "program linked with libmal-pmpi (CMake: mal::pmpi; by hand: "
                           "-lmal-pmpi before -lmal), whose MPI_Finalize ends SHMEM");
    return MAL_OK;
}

/* shmem_init loads Open MPI's common UCX library (for its spml ucx), which registers a
 * memory-release hook with Open MPI; shmem_finalize unloads the library but leaves the
 * hook registered when nothing else (pml or osc ucx) holds it, and the next free inside
 * MPI's finalization (osc rdma's, under Debian's defaults) jumps into unmapped code
 * (docs/design.md, platform facts). Pinning the library keeps the hook callable. */
static void keep_ucx_hooks_loaded(void)
{
    dlopen("libmca_common_ucx.so.40", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* Everything that can fail locally is settled and agreed before the collective calls. */
mal_status_t engine_shmem_start(MPI_Comm comm)
{
    int size;
    mal_status_t st = check_spans_job(comm, &size);
    int *map = st ? NULL : realloc(pe_of_rank, (size_t)size * sizeof *map);
    if (map != NULL)
        pe_of_rank = map;
    else if (!st)
        st = engine_fail(MAL_ERR_NOMEM, "mal_init: no memory for %d PE numbers", size);
    if ((st = engine_agree_in(comm, st, 0, "mal_init (SHMEM transport)")))
        return st;
    if (!started) {
        shmem_init();
        keep_ucx_hooks_loaded();
    }
    started = true;
    int me = shmem_my_pe();
    return engine_mpi_check(PMPI_Allgather(&me, 1, MPI_INT, map, 1, MPI_INT, comm),
                            "mal_init: MPI_Allgather of PE numbers");
}

mal_status_t engine_shmem_alloc(size_t bytes, char **out)
{
    /* Some allocators answer NULL to a zero size; one word keeps "present" unambiguous. */
    *out = shmem_malloc(bytes ? bytes : sizeof(long));
    if (*out != NULL)
        return MAL_OK;
    const char *limit = getenv("SMA_SYMMETRIC_SIZE");
    return engine_fail(MAL_ERR_NOMEM, "shmem_malloc of %zu bytes failed: the symmetric heap "
                       "(SMA_SYMMETRIC_SIZE=%s) is too small for this structure", bytes,
                       limit ? limit : "unset, 256 MiB");
}

void engine_shmem_free(char *base)
{
    shmem_free(base);
}

mal_status_t engine_shmem_transfer(bool put, char *buf, char *remote, int64_t bytes,
                                   int peer)
{
    if (put)
        shmem_putmem_nbi(remote, buf, (size_t)bytes, pe_of_rank[peer]);
    else
        shmem_getmem_nbi(buf, remote, (size_t)bytes, pe_of_rank[peer]);
    return MAL_OK;
}

mal_status_t engine_shmem_quiet(void)
{
    shmem_quiet();
    return MAL_OK;
}

/* See the head of this file. A program that also calls shmem_finalize itself has
 * finalized MPI already: then there is nothing left to do. */
bool engine_pmpi_finalize_shmem(void)
{
    if (!started)
        return false;
    started = false;
    free(pe_of_rank);
    pe_of_rank = NULL;
    int done = 0;
    PMPI_Finalized(&done);
    if (!done)
        shmem_finalize();
    PMPI_Finalized(&done);
    return done;
}

#else /* built without OpenSHMEM */

static mal_status_t not_built(void)
{
    return engine_fail(MAL_ERR_UNSUPPORTED, "MAL_REDIST=shmem: this libmal was built without "
                       "OpenSHMEM (MAL_WITH_SHMEM=OFF, or oshmem not found at configure time)");
}

bool engine_redist_supported(mal_redist_t method)
{
    return (method >= MAL_REDIST_RMA && method <= MAL_REDIST_RMA_GET) ||
           method == MAL_REDIST_AUTO;
}

bool engine_shmem_active(void)
{
    return false;
}

bool engine_pmpi_finalize_shmem(void)
{
    return false;
}

mal_status_t engine_shmem_start(MPI_Comm comm)
{
    (void)comm;
    return not_built();
}

mal_status_t engine_shmem_alloc(size_t bytes, char **out)
{
    (void)bytes;
    *out = NULL;
    return not_built();
}

void engine_shmem_free(char *base)
{
    (void)base;
}

mal_status_t engine_shmem_transfer(bool put, char *buf, char *remote, int64_t bytes,
                                   int peer)
{
    (void)put, (void)buf, (void)remote, (void)bytes, (void)peer;
    return not_built();
}

mal_status_t engine_shmem_quiet(void)
{
    return not_built();
}

#endif
