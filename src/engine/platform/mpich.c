/* MPICH's side (MPICH 4.0.2 of Debian 12, Hydra; derivatives alike where they share the
 * code). */
#include "core.h"
#include "platform.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPICH's error strings are stacks, one line per function ("fn(line)....: text"), the
 * cause last: that line's text. */
static const char *innermost(const char *text)
{
    const char *line = strrchr(text, '\n');
    line = line != NULL ? line + 1 : text;
    const char *colon = strstr(line, ": ");
    return colon != NULL && colon[2] != '\0' ? colon + 2 : line;
}

/* MPI_Comm_spawn in MPICH's ch4 device first opens a port (MPID_Open_port), and the
 * ch4:ucx network module before MPICH 4.3 has no dynamic processes: its port functions
 * answer "not supported with ucx netmod", and the spawn fails with only "Error in spawn
 * call" (docs/design.md, "Two MPI families"). Opening a port and closing it again asks
 * the same question without starting anything. MPI_Open_port reports to MPI_COMM_SELF's
 * error handler (MPI 4; MPI_COMM_WORLD's before), so both return errors meanwhile. */
static bool mpich_can_spawn(const char *version, char *why, size_t len)
{
    MPI_Errhandler self, world;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME];
    int rc = MPI_Open_port(MPI_INFO_NULL, port);
    if (rc == MPI_SUCCESS)
        MPI_Close_port(port);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    MPI_Errhandler_free(&self);
    MPI_Errhandler_free(&world);
    if (rc == MPI_SUCCESS)
        return true;
    char text[MPI_MAX_ERROR_STRING];
    engine_mpi_error_text(rc, text);
    snprintf(why, len, "%s cannot start processes (MPI_Open_port, which MPI_Comm_spawn "
             "needs, failed: %s); expansions need an MPI with dynamic processes: Open MPI, "
             "or an MPICH build whose device has them (ch4:ucx from MPICH 4.3, ch4:ofi, "
             "ch3)", version, innermost(text));
    return false;
}

/* Hydra's PMI sets it for every process it starts. */
static bool mpich_launched(void)
{
    return getenv("PMI_SIZE") != NULL;
}

/* Hydra places any number of processes on its hosts, in turn. */
static bool mpich_oversubscribes(void)
{
    return true;
}

/* Hydra's hostfile ("host:N") is not Open MPI's: the room comes from elsewhere. */
static const char *mpich_hostfile(const char **variable)
{
    (void)variable;
    return NULL;
}

/* MPICH selects no components libmal must judge: its windows span jobs alike on every
 * rank (ch4's one RMA path). Nothing is read. */
static void mpich_probe(engine_mpi_selection_t *out, int thread_level)
{
    (void)thread_level;
    out->known = false;
}

/* MPICH's spawn ends in MPI_Comm_accept on a port with no time-out (ch4_spawn.c of
 * MPICH 4.0: the accept's "timeout" info is not passed by spawn; only a connect has
 * MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT): a lost start waits for ever; only Hydra's
 * MPIEXEC_TIMEOUT, which ends the whole job, bounds it. Nothing to set. */
static void mpich_bound_spawns(int seconds)
{
    (void)seconds;
}

static int mpich_spawn_bound(const char **setting, const char **value)
{
    *setting = NULL;
    *value = NULL;
    return 0;
}

/* Hydra takes any exit after the job's end as its end; it has no such setting. */
static bool mpich_clean_exit_allowed(void)
{
    return true;
}

/* Hydra's spawn reads the info keys path, wdir, host, hosts and hostfile only; the
 * children get the environment of mpiexec, not of their parent. */
static int mpich_spawn_environment(MPI_Info info, const char *assignment)
{
    (void)info;
    (void)assignment;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

const engine_mpi_side_t engine_mpi_mpich = {
    .can_spawn = mpich_can_spawn,
    .launched = mpich_launched,
    .oversubscribes = mpich_oversubscribes,
    .hostfile = mpich_hostfile,
    .probe = mpich_probe,
    .window_fix = "use MAL_MEMORY=direct on one host",
    .slots_fix = "give mpiexec the slots (-hosts HOST:SLOTS)",
    .bound_spawns = mpich_bound_spawns,
    .spawn_bound = mpich_spawn_bound,
    .clean_exit_allowed = mpich_clean_exit_allowed,
    .clean_exit_setting = NULL,
    .daemons_outside_slurm = "HYDRA_LAUNCHER=ssh",
    .spawn_environment = mpich_spawn_environment,
};
