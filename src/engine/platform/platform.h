/* What differs between the MPI families libmal runs on (Open MPI, MPICH and its
 * derivatives), behind one interface: which family this process runs, and what it can
 * do. The rest of libmal asks here instead of testing a family itself (docs/design.md,
 * "Two MPI families"). Each family has its side (openmpi.c, mpich.c); platform.c picks
 * one from MPI_Get_library_version, which works before MPI_Init too. */
#ifndef MAL_PLATFORM_H
#define MAL_PLATFORM_H

#include "mal_status.h"

#include <mpi.h>

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    ENGINE_MPI_OPEN_MPI,
    ENGINE_MPI_MPICH, /* MPICH, and derivatives whose version line says MPICH        */
    ENGINE_MPI_OTHER
} engine_mpi_family_t;

/* One family's answers. */
typedef struct {
    /* Whether this process can start processes (MPI_Comm_spawn): true, or false with
     * the reason in why (len bytes), which names the library (`version`). Cheap; the
     * same on every process of a job (one library, one build). */
    bool (*can_spawn)(const char *version, char *why, size_t len);
    /* Whether this process was started by the family's launcher (its environment says
     * so): a singleton's MPI_UNIVERSE_SIZE says nothing of the room it may spawn into. */
    bool (*launched)(void);
    /* Whether the launcher lets spawned processes oversubscribe its slots, as far as
     * the environment says. */
    bool (*oversubscribes)(void);
    /* The hostfile the launcher was given through the environment, in Open MPI's syntax
     * ("host slots=N"), and the variable that named it; NULL when none. */
    const char *(*hostfile)(const char **variable);
} engine_mpi_side_t;

engine_mpi_family_t engine_mpi_family(void);
const engine_mpi_side_t *engine_mpi_side(void);
/* The library's own version line, first line only ("MPICH Version:	4.0.2", "Open MPI
 * v4.1.4, ..."), for messages. */
const char *engine_mpi_version(void);

/* Whether expansions can spawn here, probed on first use and then kept; why says what
 * the library answered when they cannot. */
bool engine_spawn_supported(const char **why);
/* At mal_init, collective over the initial processes: where the family's side probes
 * (not Open MPI's), every process keeps the same answer, no if any process's probe said
 * no, since the answer decides branches taken before collective calls. */
void engine_spawn_agree(MPI_Comm comm);

/* The sides. An MPI libmal was not built for is asked as MPICH is: its probe is plain
 * MPI, and nothing of Open MPI's launcher is read. */
extern const engine_mpi_side_t engine_mpi_open_mpi;
extern const engine_mpi_side_t engine_mpi_mpich;

#endif /* MAL_PLATFORM_H */
