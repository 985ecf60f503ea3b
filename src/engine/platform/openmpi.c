/* Open MPI's side (Open MPI 4.1.4 of Debian 12 with its external PMIx 4.2; the names
 * Open MPI 5 renames are read under both). */
#include "allocation.h"
#include "platform.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Open MPI spawns through its runtime (ORTE, PRRTE in 5): always there. */
static bool open_mpi_can_spawn(const char *version, char *why, size_t len)
{
    (void)version;
    (void)why;
    (void)len;
    return true;
}

/* The first of `names` set and not empty in the environment: Open MPI 4's name first,
 * then Open MPI 5's (PRRTE's) for the same setting. */
static const char *first_set(const char *const *names, size_t n, const char **which)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && *v != '\0') {
            if (which != NULL)
                *which = names[i];
            return v;
        }
    }
    return NULL;
}

/* mpiexec sets it for every process it starts (5 too). */
static bool open_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL;
}

static bool is_true(const char *v)
{
    return v != NULL && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
                         strcasecmp(v, "yes") == 0);
}

/* mpiexec --oversubscribe exports OMPI_MCA_rmaps_base_oversubscribe=1 to the processes
 * it starts (measured with Open MPI 4.1.4); tools/malrun sets it. Open MPI 5 has only
 * the mapping policy's modifier (PRTE_MCA_rmaps_default_mapping_policy). */
static bool open_mpi_oversubscribes(void)
{
    static const char *const policies[] = {"OMPI_MCA_rmaps_base_mapping_policy",
                                           "PRTE_MCA_rmaps_default_mapping_policy"};
    return is_true(getenv("OMPI_MCA_rmaps_base_oversubscribe")) ||
           alloc_mapping_oversubscribes(first_set(policies, 2, NULL));
}

static const char *open_mpi_hostfile(const char **variable)
{
    static const char *const names[] = {"OMPI_MCA_orte_default_hostfile",
                                        "PRTE_MCA_prte_default_hostfile"};
    return first_set(names, 2, variable);
}

const engine_mpi_side_t engine_mpi_open_mpi = {
    .can_spawn = open_mpi_can_spawn,
    .launched = open_mpi_launched,
    .oversubscribes = open_mpi_oversubscribes,
    .hostfile = open_mpi_hostfile,
};
