/* What the job may grow into, read at mal_init (docs/guide/running.md, "Slurm"), and its
 * two uses at an expansion: the limit (an expansion beyond the slots is refused before
 * anything is spawned, with a notice naming the limit and where it comes from, and the
 * application goes on with its processes and data) and the placement (new processes fill
 * the free slots host by host, unless MAL_HOSTS or the policy names hosts).
 *
 * Sources, the first found wins: MAL_ALLOCATION=off (none); MAL_HOSTFILE; a Slurm
 * allocation (SLURM_JOB_NODELIST with SLURM_JOB_CPUS_PER_NODE over SLURM_CPUS_PER_TASK,
 * else SLURM_TASKS_PER_NODE, already per task); mpiexec's hostfile when given
 * through its variable (the platform layer's side says which: Open MPI's
 * OMPI_MCA_orte_default_hostfile, or 5's PRTE_MCA_prte_default_hostfile; `mpiexec
 * --hostfile` leaves no trace in the processes' environment but MPI_UNIVERSE_SIZE);
 * MPI_UNIVERSE_SIZE while oversubscription is off. With oversubscription on, the
 * universe is only the cores of this node, which the launcher was told to exceed
 * (tools/malrun); a resource manager's
 * or a hostfile's slots are what the job was given and hold even then.
 *
 * Released initial processes that wait for their job-mates are not counted: they use
 * no CPU. Parked ones of the pool are (they are woken before anything is spawned). */
#include "core.h"
#include "memory.h"
#include "monitor.h"
#include "platform.h"
#include "procs.h"
#include "reconf.h"
#include "settings.h"
#include "spawning.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOM_SOURCE_MAX 512
/* The parser's message, which names the hostfile's path, inside engine_fail's 1024. */
#define ROOM_ERR_MAX 900

static mal_status_t set_source(engine_settings_t *s, const char *text)
{
    s->room_source = strdup(text);
    return s->room_source != NULL ? MAL_OK
                                  : engine_fail(MAL_ERR_NOMEM, "mal_init: no memory for the "
                                                "allocation's description");
}

static mal_status_t from_hostfile(engine_settings_t *s, const char *path, const char *variable)
{
    char err[ROOM_ERR_MAX], text[ROOM_SOURCE_MAX];
    /* A host without a slot count takes one (Open MPI counts that host's cores, which
     * a process on another host cannot know, and every rank must judge alike). */
    if (alloc_read_hostfile(path, 1, &s->room, err, sizeof err) != MAL_OK)
        return engine_fail(MAL_ERR_ARG, "mal_init: %s: %s (MAL_ALLOCATION=off ignores it)",
                           variable, err);
    snprintf(text, sizeof text, "hostfile %s (%s: %d host%s, %lld slot%s)", path, variable,
             s->room.nhosts, s->room.nhosts == 1 ? "" : "s", (long long)s->room.slots,
             s->room.slots == 1 ? "" : "s");
    return set_source(s, text);
}

static mal_status_t from_slurm(engine_settings_t *s, const char *nodelist)
{
    const char *counts_var = "SLURM_JOB_CPUS_PER_NODE", *counts = getenv(counts_var);
    if (counts == NULL) {
        counts_var = "SLURM_TASKS_PER_NODE";
        counts = getenv(counts_var);
    }
    if (counts == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_init: SLURM_JOB_NODELIST is set but neither "
                           "SLURM_JOB_CPUS_PER_NODE nor SLURM_TASKS_PER_NODE "
                           "(MAL_ALLOCATION=off ignores the allocation)");
    bool tasks = strcmp(counts_var, "SLURM_TASKS_PER_NODE") == 0;
    int per_task = alloc_slurm_divisor(tasks, getenv("SLURM_CPUS_PER_TASK"));
    char err[ROOM_ERR_MAX], text[ROOM_SOURCE_MAX], cpus[64] = "";
    if (alloc_from_slurm(nodelist, counts, per_task, &s->room, err, sizeof err) != MAL_OK)
        return engine_fail(MAL_ERR_ARG, "mal_init: Slurm's SLURM_JOB_NODELIST and %s: %s "
                           "(MAL_ALLOCATION=off ignores the allocation)", counts_var, err);
    if (per_task > 1)
        snprintf(cpus, sizeof cpus, ", %d CPUs per task", per_task);
    const char *job = getenv("SLURM_JOB_ID");
    /* Only the job's own id can give its nodes back (procs/release.c). */
    if (job != NULL && (s->room_job = strdup(job)) == NULL)
        return engine_fail(MAL_ERR_NOMEM, "mal_init: no memory for the Slurm job's id");
    snprintf(text, sizeof text, "Slurm allocation (job %s: %d node%s, %lld %s%s)",
             job != NULL ? job : "?", s->room.nhosts, s->room.nhosts == 1 ? "" : "s",
             (long long)s->room.slots, per_task > 1 ? "slots" : tasks ? "tasks" : "CPUs", cpus);
    return set_source(s, text);
}

/* Oversubscription may also come from Open MPI's parameter files, which only the probe
 * reads (0.3 s): it is paid only before an expansion would be refused. */
static mal_status_t from_universe(engine_settings_t *s)
{
    int universe = engine_universe_size();
    if (universe <= 0 || engine_mpi_side()->oversubscribes() ||
        (engine_platform_probed() && engine_platform()->selected.oversubscribe))
        return MAL_OK;
    s->room.slots = universe;
    s->room_unconfirmed = !engine_platform_probed();
    char text[ROOM_SOURCE_MAX];
    snprintf(text, sizeof text, "MPI_UNIVERSE_SIZE (the slots mpiexec has, oversubscription "
             "off)");
    return set_source(s, text);
}

mal_status_t engine_room_resolve(const settings_t *set, engine_settings_t *s)
{
    const char *mode = settings_text(set, SETTING_ALLOCATION);
    if (mode != NULL && strcmp(mode, "off") == 0)
        return MAL_OK;
    if (mode != NULL && strcmp(mode, "auto") != 0)
        return engine_fail(MAL_ERR_ARG, "mal_init: MAL_ALLOCATION='%s' is not auto or off",
                           mode);
    const char *hostfile = settings_text(set, SETTING_HOSTFILE);
    if (hostfile != NULL)
        return from_hostfile(s, hostfile, "MAL_HOSTFILE");
    const char *nodelist = getenv("SLURM_JOB_NODELIST");
    if (nodelist != NULL)
        return from_slurm(s, nodelist);
    const char *variable = NULL;
    const char *mpiexec_hostfile = engine_mpi_side()->hostfile(&variable);
    if (mpiexec_hostfile != NULL)
        return from_hostfile(s, mpiexec_hostfile, variable);
    return from_universe(s);
}

void engine_room_free(engine_settings_t *s)
{
    alloc_free(&s->room);
    free(s->room_source);
    free(s->room_job);
    free(s->room_kept);
    s->room_source = NULL;
    s->room_job = NULL;
    s->room_kept = NULL;
}

uint64_t engine_room_fingerprint(const engine_settings_t *s, uint64_t hash)
{
    int64_t v[2] = {s->room.slots, s->room.nhosts};
    hash = engine_hash(hash, v, sizeof v);
    for (int h = 0; h < s->room.nhosts; h++)
        hash = engine_hash(hash, s->room.hosts[h].name, strlen(s->room.hosts[h].name));
    if (s->room_job != NULL)
        hash = engine_hash(hash, s->room_job, strlen(s->room_job));
    return hash;
}

void engine_room_announce(const engine_settings_t *s)
{
    if (s->room.slots <= 0)
        return;
    engine_notice("libmal: resources: %s: expansions up to %lld processes%s\n",
                  s->room_source, (long long)s->room.slots,
                  s->room.nhosts == 0 ? ""
                  : s->hosts != NULL ? ", placed by MAL_HOSTS"
                                     : ", new ones placed on its free slots host by host");
}

/* ---- at an expansion ------------------------------------------------------------------- */

/* Parked processes (as engine_pool_parked, which this file cannot call: the pool asks
 * the room for its free slots, and the files form no cycle). */
static int parked_count(const engine_procs_t *procs)
{
    return procs->world != MPI_COMM_NULL ? procs->nparked : 0;
}

bool engine_room_fits(const engine_group_t *g, const engine_settings_t *s, int count)
{
    if (s->room.slots <= 0 || (int64_t)g->size + count <= s->room.slots)
        return true;
    /* Every rank probes alike: the same parameters, the same answer. */
    return s->room_unconfirmed && engine_platform()->selected.oversubscribe;
}

bool engine_room_allows(const engine_parts_t *parts, const engine_procs_t *procs, int count)
{
    return count <= parked_count(procs) || engine_room_fits(parts->group, parts->conf, count);
}

mal_status_t engine_room_check(const engine_parts_t *parts, const engine_procs_t *procs, int count)
{
    engine_group_t *g = parts->group;
    if (engine_room_allows(parts, procs, count))
        return MAL_OK;
    const engine_settings_t *s = parts->conf;
    /* Every rank finds the same refusal: the notice is printed once, by rank 0. */
    bool logging = engine_logging();
    engine_set_logging(logging && g->rank == 0);
    mal_status_t st = engine_fail(MAL_ERR_LIMIT, "mal_expand: %d more process%s refused: "
                                  "%d -> %d processes goes beyond the %lld slot%s of the %s; "
                                  "the application goes on with its %d process%s "
                                  "(MAL_ALLOCATION=off lifts the limit)", count,
                                  count == 1 ? "" : "es", g->size, g->size + count,
                                  (long long)s->room.slots, s->room.slots == 1 ? "" : "s",
                                  s->room_source, g->size, g->size == 1 ? "" : "es");
    engine_set_logging(logging);
    return st;
}

int engine_room_free_slots(const engine_group_t *g, const engine_settings_t *conf,
                           const engine_procs_t *procs)
{
    int64_t slots = conf->room.slots;
    if (slots <= 0)
        return INT_MAX;
    int64_t left = slots - g->size - parked_count(procs);
    return left > 0 ? (int)left : 0;
}

int engine_room_host_of_mine(const alloc_t *a, MPI_Comm comm)
{
    /* localhost and 127.* name the launcher's host: rank 0's is taken for it, by every
     * rank alike (a rank elsewhere is not "localhost"). */
    char name[MPI_MAX_PROCESSOR_NAME] = "", first[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    memcpy(first, name, sizeof first);
    PMPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, comm);
    return alloc_find_host(a, name, first);
}

/* Processes per allocation host: the active ones (each says where it runs) and the
 * parked ones (the pool knows their hosts). Collective over g->comm; NULL on every rank
 * when one is out of memory. */
static int *running_per_host(const engine_parts_t *parts, const engine_procs_t *procs)
{
    engine_group_t *g = parts->group;
    const alloc_t *a = &parts->conf->room;
    int *where = malloc((size_t)g->size * sizeof *where);
    int *running = calloc((size_t)a->nhosts, sizeof *running);
    int ok = where != NULL && running != NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, g->comm);
    if (ok) {
        int mine = engine_room_host_of_mine(a, g->comm);
        PMPI_Allgather(&mine, 1, MPI_INT, where, 1, MPI_INT, g->comm);
        for (int r = 0; r < g->size; r++)
            if (where[r] >= 0)
                running[where[r]]++;
        for (int i = 0; i < parked_count(procs); i++)
            for (int h = 0; h < a->nhosts; h++)
                running[h] += procs->parked[i].host == engine_host_hash(a->hosts[h].name);
    }
    free(where);
    if (!ok) {
        free(running);
        running = NULL;
    }
    return running;
}

/* The host names of place[0..n-1], comma-separated. */
static char *names_of(const alloc_t *a, const int *place, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(a->hosts[place[i]].name) + 1;
    char *list = calloc(len, 1);
    for (int i = 0; list != NULL && i < n; i++) {
        if (i > 0)
            strcat(list, ",");
        strcat(list, a->hosts[place[i]].name);
    }
    return list;
}

bool engine_room_place(const engine_parts_t *parts, engine_procs_t *procs, int count)
{
    engine_group_t *g = parts->group;
    const engine_settings_t *s = parts->conf;
    int spawning = count - (count < parked_count(procs) ? count : parked_count(procs));
    if (s->room.nhosts == 0 || s->hosts != NULL || procs->spawn_hosts != NULL ||
        spawning == 0)
        return false;
    int *running = running_per_host(parts, procs);
    int *place = malloc((size_t)spawning * sizeof *place);
    int n = running != NULL && place != NULL ? alloc_place(&s->room, running, spawning, place)
                                             : 0;
    /* The slots were checked in all, not per host: a process running outside the
     * allocation's hosts leaves its slot free. The rest go to the placed hosts in turn.
     * Without memory for the list, the runtime places them (only rank 0 spawns). */
    char *list = n > 0 ? names_of(&s->room, place, n) : NULL;
    if (list != NULL && g->rank == 0 && s->summary)
        engine_notice("libmal: placing %d new process%s on %s: the first free slots of the "
                      "%s\n", spawning, spawning == 1 ? "" : "es", list, s->room_source);
    free(running);
    free(place);
    procs->spawn_hosts = list;
    procs->spawn_hosts_base = procs->spawned;
    return list != NULL;
}

void engine_room_unplace(engine_procs_t *procs, bool placed)
{
    if (!placed)
        return;
    free(procs->spawn_hosts);
    procs->spawn_hosts = NULL;
}
