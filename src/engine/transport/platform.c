/* What this Open MPI will do for libmal, read once per process through MPI_T, and the
 * refusals that follow from it (docs/design.md, "Plain mpiexec").
 *
 * Two combinations of Debian's defaults never end (measured, docs/design.md):
 * - A spawn that finds no free slot fails, and Open MPI 4.1's mpiexec then waits for
 *   ever after the job has ended (the application PASSes, mpiexec never exits). Room to
 *   spawn is MPI_UNIVERSE_SIZE minus the processes running, unless the launcher allows
 *   oversubscription.
 * - MPI_Win_allocate on a communicator that joins processes of different jobs (after an
 *   expansion) with osc sm or rdma: sm accepts only where every peer is known to be on
 *   the node, which the spawning rank knows and the others do not, so one rank enters
 *   sm's collective set-up while the others get MPI_ERR_WIN: a hang. osc ucx and pt2pt
 *   create such windows on every rank.
 * MPI_T shows the requested component lists (cvars "pml", "osc"), not the selected ones;
 * what was selected shows in which components still have their version variables
 * registered ("pml_ob1_major_version"): Open MPI deregisters them when it closes a
 * component it did not select (pml) or that cannot run (osc keeps every usable one:
 * it chooses per window). MPI_T_init_thread costs 0.3 s here (it registers every
 * framework's parameters), so the probe runs only where a check needs it: a plan that
 * spawns, or a window over processes of different jobs. */
#include "core.h"
#include "memory.h"
#include "platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static engine_platform_t platform;
static bool probed;

/* Append `name` to the comma-separated list `list` of `size` bytes. */
static void list_add(char *list, size_t size, const char *name)
{
    size_t used = strlen(list);
    snprintf(list + used, size - used, "%s%s", used ? "," : "", name);
}

/* "<framework>_<component>_major_version" -> component, for pml and osc. */
static void note_component(const char *var)
{
    static const char suffix[] = "_major_version";
    size_t n = strlen(var), s = sizeof suffix - 1;
    if (n <= s + 4 || strcmp(var + n - s, suffix) != 0)
        return;
    char name[64];
    size_t len = n - s - 4;
    if (len == 0 || len >= sizeof name)
        return;
    memcpy(name, var + 4, len);
    name[len] = '\0';
    if (strchr(name, '_') != NULL) /* pml_base_..., not a component */
        return;
    if (strncmp(var, "pml_", 4) == 0)
        list_add(platform.pml, sizeof platform.pml, name);
    else if (strncmp(var, "osc_", 4) == 0)
        list_add(platform.osc, sizeof platform.osc, name);
}

/* Value of a control variable bound to no object, as text (strings) or a number. */
static void read_cvar(int index, MPI_Datatype type, char *text, size_t size, long long *number)
{
    MPI_T_cvar_handle h;
    int count = 0;
    *number = 0;
    text[0] = '\0';
    if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS)
        return;
    if (type == MPI_CHAR && count > 0 && (size_t)count <= size) {
        MPI_T_cvar_read(h, text);
    } else if (type != MPI_CHAR && count == 1) {
        unsigned char raw[16] = {0}; /* booleans, ints and longs: nonzero is what counts */
        int bytes = 0;
        MPI_Type_size(type, &bytes);
        if (bytes > 0 && (size_t)bytes <= sizeof raw) {
            MPI_T_cvar_read(h, raw);
            for (int i = 0; i < bytes; i++)
                *number |= raw[i];
        }
    }
    MPI_T_cvar_handle_free(&h);
}

/* Whether the launcher lets spawned processes oversubscribe the slots: --oversubscribe
 * (rmaps_base_oversubscribe) or --map-by ...:OVERSUBSCRIBE, from the environment or
 * Open MPI's parameter files, which the application reads as mpiexec does. */
static void note_launch(const char *name, MPI_Datatype type, int index)
{
    char text[256];
    long long number;
    if (strcmp(name, "rmaps_base_oversubscribe") == 0) {
        read_cvar(index, type, text, sizeof text, &number);
        platform.oversubscribe |= number != 0;
    } else if (strcmp(name, "rmaps_base_mapping_policy") == 0) {
        read_cvar(index, type, text, sizeof text, &number);
        const char *mod = strchr(text, ':');
        for (; mod != NULL; mod = strchr(mod + 1, ':'))
            if (strncasecmp(mod + 1, "oversubscribe", 13) == 0)
                platform.oversubscribe = true;
    }
}

static void read_control_variables(void)
{
    int provided = 0, count = 0, level = MPI_THREAD_SINGLE;
    /* Open MPI 4.1 sets the library's thread level to what MPI_T_init_thread asks
     * (measured: MPI_Query_thread said single after it, in a program initialised with
     * MPI_THREAD_MULTIPLE, and MPI's locks go with it): ask for the level in force. */
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS)
        return;
    MPI_T_cvar_get_num(&count);
    for (int i = 0; i < count; i++) {
        char name[256], desc[8];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        /* Variables of closed components answer with an error: skipped. */
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc,
                                &desc_len, &bind, &scope) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        note_component(name);
        note_launch(name, type, i);
    }
    MPI_T_finalize();
}

/* Windows on communicators spanning jobs: every osc component this process may choose
 * must decide alike on every rank (ucx and pt2pt do), and one must accept: ucx, or
 * pt2pt below MPI_THREAD_MULTIPLE (which it refuses on every rank, measured). */
static bool windows_span_jobs(void)
{
    char list[sizeof platform.osc];
    memcpy(list, platform.osc, sizeof list);
    char *save = NULL;
    bool accepts = false;
    for (char *c = strtok_r(list, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save)) {
        bool pt2pt = strcmp(c, "pt2pt") == 0;
        if (strcmp(c, "ucx") != 0 && !pt2pt)
            return false;
        accepts |= !pt2pt || platform.thread_level < MPI_THREAD_MULTIPLE;
    }
    return accepts;
}

int engine_universe_size(void)
{
    /* A singleton (started without mpiexec, which sets OMPI_COMM_WORLD_SIZE for every
     * process it starts) sees MPI_UNIVERSE_SIZE 1 yet spawns into the cores of the
     * runtime it starts: its room is not known. */
    int *universe = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    bool launched = engine_mpi_side()->launched();
    return flag && universe != NULL && launched ? *universe : 0;
}

const engine_platform_t *engine_platform(void)
{
    if (probed)
        return &platform;
    probed = true;
    read_control_variables();
    MPI_Query_thread(&platform.thread_level);
    /* Judged only where Open MPI's components were recognised. */
    platform.known = platform.osc[0] != '\0';
    platform.windows_span_jobs = platform.known && windows_span_jobs();
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

/* The fix named by every refusal: the project's launcher, or its variables. */
#define PLATFORM_FIX_OSC                                                                    \
    "launch with tools/malrun, or set OMPI_MCA_osc=ucx (and for pml ucx OMPI_MCA_pml=ucx "  \
    "OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any), or use MAL_MEMORY=direct on "  \
    "one host"
#define PLATFORM_FIX_SLOTS                                                                  \
    "launch with tools/malrun, or mpiexec --oversubscribe "                                 \
    "(OMPI_MCA_rmaps_base_oversubscribe=1), or give mpiexec the slots (--host HOST:SLOTS)"

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
 * expansion and probed already when its plan spawns, not one per joiner: the probe costs
 * 0.3 s and joiners run the same Open MPI with the same settings). */
mal_status_t engine_window_allowed(MPI_Comm comm, const char *call)
{
    if (!spans_jobs(comm))
        return MAL_OK;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    struct {
        int refused;
        char osc[sizeof platform.osc];
    } verdict = {0, ""};
    if (rank == 0) {
        const engine_platform_t *p = engine_platform();
        verdict.refused = !p->windows_span_jobs && p->known;
        snprintf(verdict.osc, sizeof verdict.osc, "%.*s", (int)sizeof verdict.osc - 1, p->osc);
    }
    PMPI_Bcast(&verdict, (int)sizeof verdict, MPI_BYTE, 0, comm);
    if (!verdict.refused)
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "%s: an MPI window over processes of different "
                       "jobs (spawned ones) with osc %s would hang (MPI_Win_allocate fails on "
                       "some ranks and waits on the others); " PLATFORM_FIX_OSC,
                       call, verdict.osc);
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
    if (p->oversubscribe || engine_mpi_side()->oversubscribes() || p->universe <= 0 ||
        spawns <= room)
        return MAL_OK;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: the plan spawns %d process%s in all "
                       "(the first at iteration %lld) but mpiexec has room for %d "
                       "(MPI_UNIVERSE_SIZE %d, "
                       "%d running, oversubscription off), and after a spawn that finds no "
                       "slot Open MPI's mpiexec never exits; " PLATFORM_FIX_SLOTS,
                       spawns, spawns == 1 ? "" : "es", (long long)iteration,
                       room > 0 ? room : 0, p->universe, p->world);
}

mal_status_t engine_platform_check(const schedule_t *plan, bool direct)
{
    size_t first = 0;
    int spawns = plan_spawns(plan, &first);
    if (spawns == 0)
        return MAL_OK;
    const engine_platform_t *p = engine_platform();
    int64_t iteration = plan->actions[first].iteration;
    mal_status_t st = check_slots(p, spawns, iteration);
    if (st || direct || p->windows_span_jobs || !p->known)
        return st;
    return engine_fail(MAL_ERR_UNSUPPORTED, "mal_init: MAL_MEMORY=window and a plan that "
                       "spawns processes (iteration %lld) need osc ucx: with osc %s (pml %s, "
                       "thread level %s), MPI_Win_allocate over spawned and initial "
                       "processes fails on some ranks and hangs the others; " PLATFORM_FIX_OSC,
                       (long long)iteration, p->osc, p->pml[0] ? p->pml : "unknown",
                       engine_thread_level_name(p->thread_level));
}

void engine_platform_announce(void)
{
    const engine_platform_t *p = engine_platform();
    char slots[32] = "unknown slots";
    if (p->universe > 0)
        snprintf(slots, sizeof slots, "%d slot%s", p->universe, p->universe == 1 ? "" : "s");
    engine_notice("libmal: MPI: pml %s, osc %s, thread level %s, %s for %d process%s%s\n",
           p->pml[0] ? p->pml : "unknown", p->osc[0] ? p->osc : "unknown",
           engine_thread_level_name(p->thread_level), slots, p->world,
           p->world == 1 ? "" : "es", p->oversubscribe ? " (oversubscription on)" : "");
}
