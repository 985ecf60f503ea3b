/* Debug mode's check of the application's communicators (include/mal_pmpi.h): libmal-pmpi
 * asks before each MPI call it wraps forwards to MPI, so a call that would wait for
 * processes that are no longer the application's is named instead of hanging. Only what
 * can be told for certain is checked: MPI_COMM_WORLD once the processes of mal_comm() are
 * no longer its own. A communicator libmal freed cannot be told from a new one the
 * program made at the same address, and is left to MPI. */
#include "api.h"
#include "core.h"
#include "mal_pmpi.h"
#include "settings.h"

/* Whether two communicators hold the same processes (in any order). */
static bool same_processes(MPI_Comm a, MPI_Comm b)
{
    MPI_Group ga, gb;
    int result = MPI_UNEQUAL;
    MPI_Comm_group(a, &ga);
    MPI_Comm_group(b, &gb);
    MPI_Group_compare(ga, gb, &result);
    MPI_Group_free(&ga);
    MPI_Group_free(&gb);
    return result != MPI_UNEQUAL;
}

/* Whether MPI_COMM_WORLD stands for the application's processes in this program: an
 * initial process's mal_init was given them (not a part of MPI_COMM_WORLD kept for work
 * of the program's own); a process an expansion started was never meant to use its own
 * MPI_COMM_WORLD, its spawn call's processes. */
static bool world_was_the_application(const engine_state_t *e)
{
    return !e->procs.initial || same_processes(MPI_COMM_WORLD, e->procs.job);
}

void mal_pmpi_check_comm(MPI_Comm comm, const char *call)
{
    const engine_state_t *e = engine_context();
    if (comm != MPI_COMM_WORLD || !e->initialized || e->group.comm == MPI_COMM_NULL ||
        settings_num(&e->settings, SETTING_DEBUG) == 0 || !world_was_the_application(e) ||
        same_processes(MPI_COMM_WORLD, e->group.comm))
        return;
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const engine_group_t *g = &e->group;
    /* Aborted, not warned: the call would wait for processes that never take part (a
     * released one), or gather processes that are not the application's. */
    engine_notice("libmal[%d]: mal_debug: %s on MPI_COMM_WORLD while the application's "
                  "processes are mal_comm() (%d process%s, MPI_COMM_WORLD has %d%s): use "
                  "mal_comm()\n", g->rank, call != NULL ? call : "an MPI call", g->size,
                  g->size == 1 ? "" : "es", world, world == g->size ? ", not the same" : "");
    MPI_Abort(g->comm, 1);
}
