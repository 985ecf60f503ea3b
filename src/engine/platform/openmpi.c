/* Open MPI's side (Open MPI 4.1.4 of Debian 12 with its external PMIx 4.2; the names
 * Open MPI 5 renames are read under both; docs/design.md, "Two MPI families"). */
#include "allocation.h"
#include "openmpi_impl.h"

#include <stdio.h>
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

/* Bounded spawns (docs/design.md, "The spawn hang"). The root's wait for a lost start
 * is the runtime's connect/accept exchange, bounded by the MCA parameter
 * pmix_base_exchange_timeout, which the runtime reads at MPI_Init. Open MPI 4.1's
 * server counts a request's time-out down by 4 every 2 s tick and fails it only from a
 * count in (2, 4], so the value written is 4 * ceil(T / 2): it fails after T seconds
 * rounded up to even. Open MPI 5 has no such parameter known to libmal (untested). */
#define EXCHANGE_PARAM "OMPI_MCA_pmix_base_exchange_timeout"

static void open_mpi_bound_spawns(int seconds)
{
    if (getenv(EXCHANGE_PARAM) != NULL)
        return;
    char value[32];
    snprintf(value, sizeof value, "%d", 4 * ((seconds + 1) / 2));
    setenv(EXCHANGE_PARAM, value, 0);
}

static int open_mpi_spawn_bound(const char **setting, const char **value)
{
    const char *text = getenv(EXCHANGE_PARAM);
    *setting = EXCHANGE_PARAM;
    *value = text;
    long v = text != NULL ? strtol(text, NULL, 10) : 0;
    /* See above: the count fails only from (2, 4]. */
    if (v <= 2 || (v % 4 != 0 && v % 4 != 3))
        return 0;
    return (int)((v + 3) / 4 * 2);
}

/* Ranks of the launcher let a process leave without MPI_Finalize only when told to
 * (tools/malrun tells Open MPI 4's; 5's PRRTE registers the same parameter as
 * prte_allowed_exit_without_sync). */
static bool open_mpi_clean_exit_allowed(void)
{
    static const char *const names[] = {"OMPI_MCA_orte_allowed_exit_without_sync",
                                        "PRTE_MCA_prte_allowed_exit_without_sync"};
    return is_true(first_set(names, 2, NULL));
}

/* Open MPI's spawn takes the child's environment from the "env" info key ("NAME=VALUE",
 * one per line). */
static int open_mpi_spawn_environment(MPI_Info info, const char *assignment)
{
    return MPI_Info_set(info, "env", assignment);
}

/* Open MPI 4.1 waits in its final fence without blocking and progresses UCX meanwhile
 * (opal_common_ucx_mca_pmix_fence), so the hang MPICH 4.0 has (mpich.c) cannot form:
 * nothing to bound. */
static void open_mpi_bound_finalize(int seconds)
{
    (void)seconds;
}

const engine_mpi_side_t engine_mpi_open_mpi = {
    .can_spawn = open_mpi_can_spawn,
    .launched = open_mpi_launched,
    .oversubscribes = open_mpi_oversubscribes,
    .hostfile = open_mpi_hostfile,
    .probe = engine_open_mpi_probe,
    .window_fix = "launch with tools/malrun, or set OMPI_MCA_osc=ucx (and for pml ucx "
                  "OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any), "
                  "or use MAL_MEMORY=direct on one host",
    .slots_fix = "after a spawn that finds no slot Open MPI's mpiexec never exits; launch "
                 "with tools/malrun, or mpiexec --oversubscribe "
                 "(OMPI_MCA_rmaps_base_oversubscribe=1), or give mpiexec the slots "
                 "(--host HOST:SLOTS)",
    .bound_spawns = open_mpi_bound_spawns,
    .spawn_bound = open_mpi_spawn_bound,
    .clean_exit_allowed = open_mpi_clean_exit_allowed,
    .clean_exit_setting = "OMPI_MCA_orte_allowed_exit_without_sync=1 (Open MPI 5: "
                          "PRTE_MCA_prte_allowed_exit_without_sync=1)",
    .bound_finalize = open_mpi_bound_finalize,
    .daemons_outside_slurm = "OMPI_MCA_plm=rsh",
    .spawn_environment = open_mpi_spawn_environment,
};
