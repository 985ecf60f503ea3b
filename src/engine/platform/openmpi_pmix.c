/* What Open MPI 5's launcher (PRRTE) tells its processes only through PMIx: the job's
 * mapping policy. PRRTE keeps its settings (PRTE_MCA_..., --oversubscribe) to itself,
 * where Open MPI 4.1's mpiexec exported them to every process; the job-level key
 * PMIX_MAPBY reads "BYCORE:OVERSUBSCRIBE" or "BYCORE:NOOVERSUBSCRIBE" (measured with
 * PMIx 5.0.7, docs/design.md "Open MPI 5"). Built with MAL_HAVE_PMIX only. */
#include "allocation.h"
#include "openmpi_impl.h"

#include <strings.h> /* pmix_common.h uses strncasecmp */
#include <pmix.h>
#include <string.h>

/* PMIx_Init after Open MPI's counts a reference, PMIx_Finalize gives it back. */
const char *engine_open_mpi_mapping(char *buf, size_t len)
{
    pmix_proc_t me, job;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return NULL;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    const char *out = NULL;
    if (PMIx_Get(&job, PMIX_MAPBY, NULL, 0, &val) == PMIX_SUCCESS && val != NULL) {
        if (val->type == PMIX_STRING && val->data.string != NULL && len > 0) {
            strncpy(buf, val->data.string, len - 1);
            buf[len - 1] = '\0';
            out = buf;
        }
        PMIX_VALUE_RELEASE(val);
    }
    PMIx_Finalize(NULL, 0);
    return out;
}
