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

/* What the library selected for this process, as far as its side can read it (Open
 * MPI: through MPI_T, docs/design.md "Plain mpiexec"); all zero where it cannot. */
typedef struct {
    bool known;             /* the side recognised the library's one-sided components */
    char pml[64];           /* the selected pml ("ob1", "ucx"), "" unknown           */
    char osc[128];          /* usable osc components, comma-separated                */
    bool windows_span_jobs; /* each of them creates windows over processes of
                             * different jobs on every rank alike                    */
    bool oversubscribe;     /* the launcher lets spawns oversubscribe its slots      */
} engine_mpi_selection_t;

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
    /* What the library selected (`out` zeroed by the caller; `thread_level` the level in
     * force). May cost 0.3 s (Open MPI's MPI_T): called only where a check needs it. */
    void (*probe)(engine_mpi_selection_t *out, int thread_level);
    /* The fixes a refusal names: for a window that would hang over spawned processes,
     * and for a plan that spawns past the launcher's room (with why that never ends). */
    const char *window_fix;
    const char *slots_fix;

    /* Bounded spawns (procs/spawnguard.c). At load, before MPI_Init: have the runtime
     * fail a spawn whose start it lost after `seconds`, unless the user set its bound. */
    void (*bound_spawns)(int seconds);
    /* The bound in force, in seconds (0: none, a lost start waits for ever), and the
     * setting that holds it with its value (NULL where the family has none). */
    int (*spawn_bound)(const char **setting, const char **value);
    /* Whether the launcher takes a process's exit without MPI_Finalize for a normal end,
     * and the setting that makes it so (NULL where the family has none). */
    bool (*clean_exit_allowed)(void);
    const char *clean_exit_setting;
    /* Put `assignment` ("NAME=VALUE") in the environment of the processes a spawn with
     * `info` starts: an MPI return code; MPI_ERR_UNSUPPORTED_OPERATION where the family
     * has no spawn info key for it. */
    int (*spawn_environment)(MPI_Info info, const char *assignment);
    /* Bound this process's MPI_Finalize to `seconds` where the family's can hang after
     * the work is done (called at mal_init; once per process is enough). */
    void (*bound_finalize)(int seconds);
    /* At load, before MPI_Init: the settings without which expansions cannot work on
     * this family's runtime, each unless the user set it (Open MPI 5: coll han off). */
    void (*settle_at_load)(void);
    /* Under Slurm: the setting that starts the launcher's daemons with ssh/rsh, outside
     * the job's steps, so that Slurm can take back a node (procs/release.c). */
    const char *daemons_outside_slurm;
} engine_mpi_side_t;

engine_mpi_family_t engine_mpi_family(void);
const engine_mpi_side_t *engine_mpi_side(void);
/* The library's own version line, first line only ("MPICH Version:	4.0.2", "Open MPI
 * v4.1.4, ..."), for messages. */
const char *engine_mpi_version(void);
/* The library's major version (Open MPI 5.0.7: 5), 0 when its version line has none. */
int engine_mpi_major(void);

/* Whether expansions can spawn here, probed on first use and then kept; why says what
 * the library answered when they cannot. */
bool engine_spawn_supported(const char **why);
/* At mal_init, collective over the initial processes: where the family's side probes
 * (not Open MPI's), every process keeps the same answer, no if any process's probe said
 * no, since the answer decides branches taken before collective calls. */
void engine_spawn_agree(MPI_Comm comm);

/* The sides. An MPI libmal was not built for is asked as MPICH is: its probe is plain
 * MPI, and nothing of Open MPI's launcher is read. */
extern const engine_mpi_side_t engine_mpi_open_mpi;  /* Open MPI 4.1 (and older) */
extern const engine_mpi_side_t engine_mpi_open_mpi5; /* Open MPI 5 and later       */
extern const engine_mpi_side_t engine_mpi_mpich;

#endif /* MAL_PLATFORM_H */
