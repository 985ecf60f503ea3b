/* Open MPI's sides: 4.1 (4.1.4 of Debian 12, ORTE, external PMIx 4.2) and 5 (5.0.7 of
 * Debian 13, PRRTE, PMIx 5), which renamed the launcher's settings and stopped passing
 * them to its processes (docs/design.md, "Two MPI families" and "Open MPI 5"). */
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

/* The value of the variable `name` when set and not empty, which then names it. */
static const char *set_value(const char *name, const char **which)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return NULL;
    if (which != NULL)
        *which = name;
    return v;
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
 * it starts (measured with Open MPI 4.1.4); tools/malrun sets it. */
static bool open_mpi_oversubscribes(void)
{
    return is_true(getenv("OMPI_MCA_rmaps_base_oversubscribe")) ||
           alloc_mapping_oversubscribes(getenv("OMPI_MCA_rmaps_base_mapping_policy"));
}

/* PRRTE exports none of its settings: its processes learn the job's mapping policy
 * from PMIx (openmpi_pmix.c), read once. */
static bool open_mpi5_oversubscribes(void)
{
    static int known = -1;
    if (known < 0) {
        char mapping[256];
        known = alloc_mapping_oversubscribes(engine_open_mpi_mapping(mapping, sizeof mapping));
    }
    return known == 1;
}

static const char *open_mpi_hostfile(const char **variable)
{
    return set_value("OMPI_MCA_orte_default_hostfile", variable);
}

/* PRRTE keeps its hostfile to itself too; the user may export PRRTE's name for it, which
 * then says what the launcher was given. */
static const char *open_mpi5_hostfile(const char **variable)
{
    return set_value("PRTE_MCA_prte_default_hostfile", variable);
}

/* Bounded spawns (docs/design.md, "The spawn hang"). The root's wait for a lost start
 * is the runtime's connect/accept exchange, bounded by the MCA parameter
 * pmix_base_exchange_timeout, which the runtime reads at MPI_Init. Open MPI 4.1's
 * server counts a request's time-out down by 4 every 2 s tick and fails it only from a
 * count in (2, 4], so the value written is 4 * ceil(T / 2): it fails after T seconds
 * rounded up to even. */
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

/* Open MPI 5.0 waits for the new processes' side of the connection for a fixed 600 s
 * (ompi/dpm/dpm.c: opal_pmix_base_exchange(..., 600), no parameter). Its one knob,
 * mpi_pmix_connect_timeout (PMIx_Connect's), is left at 0: with any value above 0,
 * prterun spins for ever at the end of a job that spawned (PMIx 5.0.7's connect timer;
 * bench/spawn_loop --cycles 1 under it shows this). docs/design.md, "Open MPI 5". */
#define OPEN_MPI5_EXCHANGE_SECONDS 600

static void open_mpi5_bound_spawns(int seconds)
{
    (void)seconds; /* nothing the runtime takes bounds the wait (above) */
}

static int open_mpi5_spawn_bound(const char **setting, const char **value)
{
    *setting = NULL; /* the exchange's bound has no setting */
    *value = NULL;
    return OPEN_MPI5_EXCHANGE_SECONDS;
}

/* Ranks of the launcher let a process leave without MPI_Finalize only when told to
 * (tools/malrun tells it). Open MPI 4's mpiexec exports the setting to its processes;
 * 5's PRRTE (prte_allowed_exit_without_sync) does not, so there it is known only when
 * the user passed the variable on to the processes too (-x). */
static bool open_mpi_clean_exit_allowed(void)
{
    return is_true(getenv("OMPI_MCA_orte_allowed_exit_without_sync"));
}

static bool open_mpi5_clean_exit_allowed(void)
{
    return is_true(getenv("PRTE_MCA_prte_allowed_exit_without_sync"));
}

/* Open MPI's spawn takes the child's environment from an info key ("NAME=VALUE", one per
 * line): "env" in 4.1; 5.0 renamed it PMIX_ENVAR and warns at each use of "env". */
static int open_mpi_spawn_environment(MPI_Info info, const char *assignment)
{
    return MPI_Info_set(info, "env", assignment);
}

static int open_mpi5_spawn_environment(MPI_Info info, const char *assignment)
{
    return MPI_Info_set(info, "PMIX_ENVAR", assignment);
}

/* Open MPI 5's coll han builds its sub-communicators on first use with an allreduce that
 * deadlocks inside MPI_Intercomm_create over processes of two jobs, which every
 * expansion's join calls (measured with 5.0.7, docs/design.md "Open MPI 5"). Turned off
 * before MPI_Init unless the user chose the collective components. */
static void open_mpi5_settle_at_load(void)
{
    setenv("OMPI_MCA_coll", "^han", 0);
}

static void open_mpi_settle_at_load(void)
{
}

/* Open MPI 4.1 waits in its final fence without blocking and progresses UCX meanwhile
 * (opal_common_ucx_mca_pmix_fence), so the hang MPICH 4.0 has (mpich.c) cannot form:
 * nothing to bound. */
static void open_mpi_bound_finalize(int seconds)
{
    (void)seconds;
}

#define WINDOW_FIX                                                                      \
    "launch with tools/malrun, or set OMPI_MCA_osc=ucx (and for pml ucx OMPI_MCA_pml=ucx "  \
    "OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any), or use MAL_MEMORY=direct on " \
    "one host"

const engine_mpi_side_t engine_mpi_open_mpi = {
    .can_spawn = open_mpi_can_spawn,
    .launched = open_mpi_launched,
    .oversubscribes = open_mpi_oversubscribes,
    .hostfile = open_mpi_hostfile,
    .probe = engine_open_mpi_probe,
    .window_fix = WINDOW_FIX,
    .slots_fix = "after a spawn that finds no slot Open MPI's mpiexec never exits; launch "
                 "with tools/malrun, or mpiexec --oversubscribe "
                 "(OMPI_MCA_rmaps_base_oversubscribe=1), or give mpiexec the slots "
                 "(--host HOST:SLOTS)",
    .bound_spawns = open_mpi_bound_spawns,
    .spawn_bound = open_mpi_spawn_bound,
    .clean_exit_allowed = open_mpi_clean_exit_allowed,
    .clean_exit_setting = "OMPI_MCA_orte_allowed_exit_without_sync=1",
    .bound_finalize = open_mpi_bound_finalize,
    .daemons_outside_slurm = "OMPI_MCA_plm=rsh",
    .spawn_environment = open_mpi_spawn_environment,
    .settle_at_load = open_mpi_settle_at_load,
};

const engine_mpi_side_t engine_mpi_open_mpi5 = {
    .can_spawn = open_mpi_can_spawn,
    .launched = open_mpi_launched,
    .oversubscribes = open_mpi5_oversubscribes,
    .hostfile = open_mpi5_hostfile,
    .probe = engine_open_mpi_probe,
    .window_fix = WINDOW_FIX,
    .slots_fix = "after a spawn that finds no slot Open MPI's mpiexec never exits; launch "
                 "with tools/malrun, or mpiexec --oversubscribe (--map-by :OVERSUBSCRIBE, "
                 "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe), or give "
                 "mpiexec the slots (--host HOST:SLOTS)",
    .bound_spawns = open_mpi5_bound_spawns,
    .spawn_bound = open_mpi5_spawn_bound,
    .clean_exit_allowed = open_mpi5_clean_exit_allowed,
    .clean_exit_setting = "PRTE_MCA_prte_allowed_exit_without_sync=1",
    .bound_finalize = open_mpi_bound_finalize,
    .daemons_outside_slurm = "PRTE_MCA_plm=ssh",
    .spawn_environment = open_mpi5_spawn_environment,
    .settle_at_load = open_mpi5_settle_at_load,
};
