/* What the MPI library will do for libmal, asked of its family's side once per process
 * (platform/: Open MPI's is read through MPI_T), and the refusals that follow from it
 * (docs/design.md, "Plain mpiexec").
 *
 * Two combinations of Open MPI's defaults never end (measured, docs/design.md):
 * - A spawn that finds no free slot fails, and Open MPI 4.1's mpiexec then waits for
 *   ever after the job has ended (the application PASSes, mpiexec never exits). Room to
 *   spawn is MPI_UNIVERSE_SIZE minus the processes running, unless the launcher allows
 *   oversubscription (Hydra always does).
 * - MPI_Win_allocate on a communicator that joins processes of different jobs (after an
 *   expansion) with osc sm or rdma: sm accepts only where every peer is known to be on
 *   the node, which the spawning rank knows and the others do not, so one rank enters
 *   sm's collective set-up while the others get MPI_ERR_WIN: a hang. osc ucx and pt2pt
 *   create such windows on every rank.
 * The probe costs 0.3 s on Open MPI, so it runs only where a check needs it: a plan that
 * spawns, or a window over processes of different jobs. */
#include "core.h"
#include "memory.h"
#include "platform.h"

#include <stdio.h>
#include <stdlib.h>

int engine_universe_size(void)
{
    /* A singleton (started without the launcher, which marks every process it starts)
     * sees MPI_UNIVERSE_SIZE 1 yet spawns into the cores of the
     * runtime it starts: its room is not known. */
    int *universe = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    bool launched = engine_mpi_side()->launched();
    return flag && universe != NULL && launched ? *universe : 0;
}

static engine_platform_t platform;
static bool probed;

const engine_platform_t *engine_platform(void)
{
    if (probed)
        return &platform;
    probed = true;
    MPI_Query_thread(&platform.thread_level);
    engine_mpi_side()->probe(&platform.selected, platform.thread_level);
    platform.universe = engine_universe_size();
    MPI_Comm_size(MPI_COMM_WORLD, &platform.world);
    return &platform;
}

bool engine_platform_probed(void)
{
    return probed;
}

const char *engine_thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    }
    return "unknown";
}

/* Whether `comm` holds processes of another job than this one (spawned ones, or their
 * parents): some member is not in this process's MPI_COMM_WORLD. The answer is the same
 * on every member. */
static bool spans_jobs(MPI_Comm comm)
{
    MPI_Group group, world;
    int size = 0;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(group, &size);
    int *ranks = malloc(2 * (size_t)size * sizeof *ranks);
    bool spans = false;
    if (ranks != NULL) {
        for (int r = 0; r < size; r++)
            ranks[r] = r;
        MPI_Group_translate_ranks(group, size, ranks, world, ranks + size);
        for (int r = 0; r < size && !spans; r++)
            spans = ranks[size + r] == MPI_UNDEFINED;
    }
    free(ranks);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    return spans;
}

/* Rank 0 of `comm` answers for all (one probe, by a process that started the
 * expansion and probed already when its plan spawns, not one per joiner: Open MPI's
 * probe costs 0.3 s and joiners run the same library with the same settings). */
mal_status_t engine_window_allowed(MPI_Comm comm, const char *call)
{
    if (!spans_jobs(comm))
        return MAL_OK;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    struct {
        int refused;
        char osc[sizeof platform.selected.osc];
    } verdict = {0, ""};
    if (rank == 0) {
        const engine_mpi_selection_t *sel = &engine_platform()->selected;
        verdict.refused = !sel->windows_span_jobs && sel->known;
        snprintf(verdict.osc, sizeof verdict.osc, "%.*s", (int)sizeof verdict.osc - 1, sel->osc);
    }
    PMPI_Bcast(&verdict, (int)sizeof verdict, MPI_BYTE, 0, comm);
    if (!verdict.refused)
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "%s: an MPI window over processes of different "
                       "jobs (spawned ones) with osc %s would hang (MPI_Win_allocate fails on "
                       "some ranks and waits on the others); %s",
                       call, verdict.osc, engine_mpi_side()->window_fix);
}

/* The processes the plan adds in all (every release is counted as still holding its
 * slot: a released process may wait for its job-mates) and its first expansion. */
static int plan_spawns(const schedule_t *plan, size_t *first)
{
    int total = 0;
    for (size_t i = plan->count; i-- > 0;)
        if (plan->actions[i].kind == SCHEDULE_EXPAND) {
            total += plan->actions[i].count;
            *first = i;
        }
    return total;
}

static mal_status_t check_slots(const engine_platform_t *p, int spawns, int64_t iteration)
{
    int room = p->universe - p->world;
    if (p->selected.oversubscribe || engine_mpi_side()->oversubscribes() || p->universe <= 0 ||
        spawns <= room)
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: the plan spawns %d process%s in all "
                       "(the first at iteration %lld) but the launcher has room for %d "
                       "(MPI_UNIVERSE_SIZE %d, %d running, oversubscription off); %s",
                       spawns, spawns == 1 ? "" : "es", (long long)iteration,
                       room > 0 ? room : 0, p->universe, p->world,
                       engine_mpi_side()->slots_fix);
}

mal_status_t engine_platform_check(const schedule_t *plan, bool direct)
{
    size_t first = 0;
    int spawns = plan_spawns(plan, &first);
    if (spawns == 0)
        return MAL_OK;
    const engine_platform_t *p = engine_platform();
    const engine_mpi_selection_t *sel = &p->selected;
    int64_t iteration = plan->actions[first].iteration;
    mal_status_t st = check_slots(p, spawns, iteration);
    if (st || direct || sel->windows_span_jobs || !sel->known)
        return st;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: MAL_MEMORY=window and a plan that "
                       "spawns processes (iteration %lld) need osc ucx: with osc %s (pml %s, "
                       "thread level %s), MPI_Win_allocate over spawned and initial "
                       "processes fails on some ranks and hangs the others; %s",
                       (long long)iteration, sel->osc, sel->pml[0] ? sel->pml : "unknown",
                       engine_thread_level_name(p->thread_level),
                       engine_mpi_side()->window_fix);
}

void engine_platform_announce(void)
{
    const engine_platform_t *p = engine_platform();
    const engine_mpi_selection_t *sel = &p->selected;
    char slots[32] = "unknown slots";
    if (p->universe > 0)
        snprintf(slots, sizeof slots, "%d slot%s", p->universe, p->universe == 1 ? "" : "s");
    engine_notice("libmal: MPI: pml %s, osc %s, thread level %s, %s for %d process%s%s\n",
           sel->pml[0] ? sel->pml : "unknown", sel->osc[0] ? sel->osc : "unknown",
           engine_thread_level_name(p->thread_level), slots, p->world,
           p->world == 1 ? "" : "es", sel->oversubscribe ? " (oversubscription on)" : "");
}
