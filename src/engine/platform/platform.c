/* The MPI family of this process, from the library's version string (MPI 3: callable
 * before MPI_Init and after MPI_Finalize), and what follows from it. */
#include "platform.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    bool known;
    engine_mpi_family_t family;
    char version[128];
    bool spawn_probed, spawn_ok;
    char spawn_why[512];
} platform_state_t;

static platform_state_t state;

static void identify(void)
{
    if (state.known)
        return;
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS)
        text[0] = '\0';
    text[len < (int)sizeof text ? len : (int)sizeof text - 1] = '\0';
    state.family = strstr(text, "Open MPI") != NULL ? ENGINE_MPI_OPEN_MPI
                   : strstr(text, "MPICH") != NULL  ? ENGINE_MPI_MPICH
                                                    : ENGINE_MPI_OTHER;
    size_t line = strcspn(text, "\n,");
    snprintf(state.version, sizeof state.version, "%.*s", (int)line, text);
    for (char *c = state.version; *c != '\0'; c++) /* "MPICH Version:\t4.0.2" */
        *c = *c == '\t' ? ' ' : *c;
    state.known = true;
}

engine_mpi_family_t engine_mpi_family(void)
{
    identify();
    return state.family;
}

const engine_mpi_side_t *engine_mpi_side(void)
{
    if (engine_mpi_family() != ENGINE_MPI_OPEN_MPI)
        return &engine_mpi_mpich;
    return engine_mpi_major() >= 5 ? &engine_mpi_open_mpi5 : &engine_mpi_open_mpi;
}

/* The first number of the version line: "Open MPI v5.0.7, ...", "MPICH Version: 4.2.1". */
int engine_mpi_major(void)
{
    const char *v = engine_mpi_version();
    v += strcspn(v, "0123456789");
    return atoi(v);
}

const char *engine_mpi_version(void)
{
    identify();
    return state.version;
}

void engine_spawn_agree(MPI_Comm comm)
{
    if (engine_mpi_family() == ENGINE_MPI_OPEN_MPI) /* its side answers without a probe */
        return;
    int ok = engine_spawn_supported(NULL), all = ok;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    if (ok && !all)
        snprintf(state.spawn_why, sizeof state.spawn_why, "another process of the job "
                 "found that %s cannot start processes", state.version);
    state.spawn_ok = all;
}

bool engine_spawn_supported(const char **why)
{
    if (!state.spawn_probed) {
        state.spawn_ok = engine_mpi_side()->can_spawn(engine_mpi_version(), state.spawn_why,
                                                      sizeof state.spawn_why);
        state.spawn_probed = true;
    }
    if (why != NULL)
        *why = state.spawn_why;
    return state.spawn_ok;
}
