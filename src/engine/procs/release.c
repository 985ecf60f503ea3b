/* Returning emptied nodes to Slurm (MAL_RELEASE_NODES; docs/guide/running.md, "Slurm").
 *
 * Slurm 22.05 takes nodes back from a running job with `scontrol update JobId=J
 * NodeList=<the nodes it keeps>` (measured here: 10-25 ms, the node idle in sinfo at
 * once). It ends every process of the job on the nodes that leave it (slurmctld's
 * abort_job_on_nodes, whatever srun --no-kill says), so a node goes back only when
 * nothing of the application is left there:
 *  - no active process and none parked in the pool;
 *  - no initial process, active or released: a released initial process waits in
 *    mal_finalize for the rest of its MPI job (procs/dpm.c, engine_park), so the hosts of
 *    the initial processes are marked at mal_init (room_kept) and never returned;
 *  - no process started inside a Slurm step (SLURM_STEP_ID in its environment): under
 *    Open MPI's default launch in an allocation (plm slurm) mpiexec's daemon on that node
 *    is a task of an srun step of the job, which Slurm would end, and mpiexec aborts the
 *    whole application when it loses a daemon (measured: "ORTE has lost communication
 *    with a remote daemon"). Daemons started by ssh or rsh (Open MPI: OMPI_MCA_plm=rsh;
 *    the family's setting in platform/) are not the job's in Slurm's eyes: they stay
 *    there, idle, until mpiexec ends.
 * Every process of the shrinking set says where it runs before the shrink (the survey);
 * after it, rank 0 of the processes that stay decides from the survey, the pool and the
 * marks, runs scontrol and broadcasts the hosts returned, and every process drops them
 * from its room, which spawned and woken processes receive with their join message
 * (joininfo.c). */
#include "core.h"
#include "monitor.h"
#include "platform.h"
#include "procs.h"
#include "report.h"
#include "settings.h"
#include "spawning.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* scontrol's own wait: with accounting, slurmctld holds an update of a job it just
 * resized up to 5 s for the job's database index, then fails it (measured 5.2 s). */
#define RELEASE_BOUND_S 10.0
#define RELEASE_OUTPUT_MAX 512

static bool releasing(const engine_settings_t *s)
{
    return s->release_nodes && s->room_job != NULL && s->room.nhosts > 0;
}

void engine_release_start(const engine_parts_t *parts)
{
    engine_settings_t *s = parts->conf;
    engine_group_t *g = parts->group;
    if (s->release_nodes && s->room_job == NULL && g->rank == 0 && s->summary)
        engine_notice("libmal: MAL_RELEASE_NODES: the job's room is not a Slurm allocation "
                      "(%s): no node will be returned\n",
                      s->room_source != NULL ? s->room_source : "none");
    if (!releasing(s))
        return;
    int n = s->room.nhosts;
    int *here = calloc((size_t)n, sizeof *here);
    s->room_kept = calloc((size_t)n, sizeof *s->room_kept);
    int ok = here != NULL && s->room_kept != NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, g->comm);
    int mine = ok ? engine_room_host_of_mine(&s->room, g->comm) : -1;
    if (mine >= 0)
        here[mine] = 1;
    if (ok)
        PMPI_Allreduce(MPI_IN_PLACE, here, n, MPI_INT, MPI_MAX, g->comm);
    for (int h = 0; ok && h < n; h++)
        s->room_kept[h] = here[h] != 0;
    free(here);
    if (!ok) {
        /* Off in the settings object too, and no marks sent on: a process that joins
         * later must take the same (no) survey at a shrink as the others. */
        s->release_nodes = false;
        parts->settings->value[SETTING_RELEASE_NODES].num = 0;
        free(s->room_kept);
        s->room_kept = NULL;
        if (g->rank == 0)
            engine_notice("libmal: MAL_RELEASE_NODES: no memory to mark the initial "
                          "processes' hosts: no node will be returned\n");
    }
}

void engine_release_survey(const engine_parts_t *parts, engine_release_survey_t *survey)
{
    *survey = (engine_release_survey_t){0};
    const engine_settings_t *s = parts->conf;
    engine_group_t *g = parts->group;
    if (!releasing(s))
        return;
    int *where = malloc(2 * (size_t)g->size * sizeof *where);
    bool *drop = calloc((size_t)s->room.nhosts, sizeof *drop);
    int ok = where != NULL && drop != NULL;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, g->comm);
    if (!ok) { /* nothing is returned at this shrink */
        free(where);
        free(drop);
        return;
    }
    int mine[2] = {engine_room_host_of_mine(&s->room, g->comm), getenv("SLURM_STEP_ID") != NULL};
    PMPI_Allgather(mine, 2, MPI_INT, where, 2, MPI_INT, g->comm);
    *survey = (engine_release_survey_t){g->size, where, drop};
}

void engine_release_survey_free(engine_release_survey_t *survey)
{
    free(survey->where);
    free(survey->drop);
    *survey = (engine_release_survey_t){0};
}

/* ---- rank 0: which hosts the shrink emptied -------------------------------------------- */

/* Whether host `name` is one of MAL_HOSTS (the application's own placement). */
static bool named_by_hosts(const char *hosts, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = hosts; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, name, n) == 0)
            return true;
        p += n + (p[n] != '\0');
    }
    return false;
}

typedef struct {
    bool *emptied;              /* per host: the shrink left no process there        */
    bool *stepped;              /* ... and one that was there ran in a Slurm step    */
    bool *held;                 /* ... but released initial processes wait there     */
    int returnable, stepped_n, held_n;
} emptied_t;

/* The hosts where the old set had processes and the new one has none, none parked in
 * the pool: returnable, or kept for a reason (initial processes, a Slurm step, MAL_HOSTS). */
static bool find_emptied(const engine_parts_t *parts, const engine_procs_t *procs,
                         const bool *leaving, const engine_release_survey_t *sv, emptied_t *e)
{
    const engine_settings_t *s = parts->conf;
    const alloc_t *a = &s->room;
    int n = a->nhosts, *staying = calloc((size_t)n, sizeof *staying);
    bool *had = calloc((size_t)n, sizeof *had), *step = calloc((size_t)n, sizeof *step);
    *e = (emptied_t){calloc((size_t)n, sizeof(bool)), calloc((size_t)n, sizeof(bool)),
                     calloc((size_t)n, sizeof(bool)), 0, 0, 0};
    bool ok = staying && had && step && e->emptied && e->stepped && e->held;
    for (int r = 0; ok && r < sv->nprocs; r++) {
        int h = sv->where[2 * r];
        if (h < 0 || h >= n)
            continue;
        had[h] = true;
        staying[h] += !leaving[r];
        step[h] |= sv->where[2 * r + 1] != 0;
    }
    /* A parked process holds its host; one whose host matches none of the room's names
     * exactly (a processor name with a domain, say) could be on any: nothing is
     * returned then. */
    for (int i = 0; ok && procs->world != MPI_COMM_NULL && i < procs->nparked; i++) {
        bool found = false;
        for (int h = 0; h < n; h++)
            if (procs->parked[i].host == engine_host_hash(a->hosts[h].name)) {
                staying[h]++;
                found = true;
            }
        for (int h = 0; !found && h < n; h++)
            staying[h]++;
    }
    for (int h = 0; ok && h < n; h++) {
        if (!had[h] || staying[h] > 0 || named_by_hosts(s->hosts, a->hosts[h].name))
            continue;
        bool kept = s->room_kept != NULL && s->room_kept[h];
        e->emptied[h] = true;
        e->held[h] = kept;
        e->stepped[h] = !kept && step[h];
        e->held_n += kept;
        e->stepped_n += e->stepped[h];
        e->returnable += !kept && !step[h];
    }
    free(staying);
    free(had);
    free(step);
    return ok;
}

static void free_emptied(emptied_t *e)
{
    free(e->emptied);
    free(e->stepped);
    free(e->held);
}

/* ---- rank 0: scontrol ---------------------------------------------------------------- */

/* environ without two variables: LD_BIND_NOW (Slurm's client plugins reference
 * slurmctld's symbols, which only lazy binding leaves unresolved; with it scontrol dies
 * "Can't find plugin for select/cons_tres", measured; tools/malrun sets it for the
 * application) and SLURM_JOBID (with it scontrol writes slurm_job_J_resize.sh and .csh
 * into the current directory). NULL without memory. */
static char **scontrol_environment(void)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = malloc((n + 1) * sizeof *env);
    size_t k = 0;
    for (size_t i = 0; env != NULL && i < n; i++)
        if (strncmp(environ[i], "LD_BIND_NOW=", 12) != 0 &&
            strncmp(environ[i], "SLURM_JOBID=", 12) != 0)
            env[k++] = environ[i];
    if (env != NULL)
        env[k] = NULL;
    return env;
}

typedef struct {
    int status;                 /* waitpid's, -1 when it did not end (or not known)   */
    int spawn_error;            /* posix_spawnp's error, 0 when it started            */
    bool timed_out;
    double seconds;
    char output[RELEASE_OUTPUT_MAX]; /* its stdout and stderr, as much as fits       */
} run_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Read the child's output until it closes it or the deadline passes. */
static void read_output(int fd, double deadline, run_t *r)
{
    size_t used = 0;
    for (;;) {
        double left = deadline - now();
        if (left <= 0) {
            r->timed_out = true;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue; /* the deadline is checked above */
        char chunk[256];
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t keep = (size_t)got < sizeof r->output - 1 - used ? (size_t)got
                                                                 : sizeof r->output - 1 - used;
        memcpy(r->output + used, chunk, keep);
        used += keep;
    }
    r->output[used] = '\0';
}

/* Wait for the child until the deadline; past it, kill it. */
static void reap(pid_t pid, double deadline, run_t *r)
{
    for (;;) {
        int status = 0;
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) {
            r->status = status;
            return;
        }
        if (got < 0 && errno != EINTR)
            return; /* not ours to wait for (SIGCHLD ignored): status unknown */
        if (r->timed_out || now() >= deadline) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return;
        }
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
}

/* argv run with its output captured and a bound: posix_spawn, not fork, so that the
 * MPI library's registered memory is never copied into a child. */
static void run_bounded(char *const argv[], run_t *r)
{
    *r = (run_t){.status = -1};
    double start = now(), deadline = start + RELEASE_BOUND_S;
    int fds[2];
    char **env = scontrol_environment();
    posix_spawn_file_actions_t fa;
    if (env == NULL || pipe(fds) != 0) {
        r->spawn_error = env == NULL ? ENOMEM : errno;
        free(env);
        return;
    }
    /* Neither end reaches another child this process starts meanwhile. */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    r->spawn_error = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(fds[1]);
    if (r->spawn_error == 0) {
        read_output(fds[0], deadline, r);
        reap(pid, deadline, r);
    }
    close(fds[0]);
    r->seconds = now() - start;
}

/* What went wrong, for the notice and the report: "" when scontrol succeeded. */
static void describe_failure(const run_t *r, char *why, size_t len)
{
    char output[RELEASE_OUTPUT_MAX];
    snprintf(output, sizeof output, "%s", r->output);
    output[strcspn(output, "\n")] = '\0'; /* its first line */
    if (r->spawn_error != 0)
        snprintf(why, len, "scontrol could not be started: %s", strerror(r->spawn_error));
    else if (r->timed_out)
        snprintf(why, len, "scontrol did not finish within %.0f s (killed)", RELEASE_BOUND_S);
    else if (r->status == -1)
        snprintf(why, len, "scontrol's exit status is unknown (SIGCHLD ignored)");
    else if (WIFSIGNALED(r->status))
        snprintf(why, len, "scontrol ended by signal %d%s%s", WTERMSIG(r->status),
                 output[0] ? ": " : "", output);
    else if (WEXITSTATUS(r->status) != 0)
        snprintf(why, len, "scontrol exited with status %d%s%s", WEXITSTATUS(r->status),
                 output[0] ? ": " : "", output);
    else
        why[0] = '\0';
}

/* ---- rank 0: the decision, its notice and its record ------------------------------------ */

typedef struct {
    const char *outcome;        /* "returned", "kept", "failed"                       */
    char *nodes, *remaining;    /* malloc'd node lists                                */
    char reason[RELEASE_OUTPUT_MAX + 128];
    double seconds;
    long long slots_after;
} told_t;

static void tell(const engine_parts_t *parts, const told_t *t)
{
    const engine_settings_t *s = parts->conf;
    const char *job = s->room_job, *nodes = t->nodes ? t->nodes : "?";
    bool many = t->nodes != NULL && strpbrk(t->nodes, ",[") != NULL;
    long long it = (long long)parts->group->iteration;
    if (strcmp(t->outcome, "returned") == 0 && s->summary)
        engine_notice("libmal: returned node%s %s to Slurm (job %s) after the shrink at "
                      "iteration %lld: no process of the application runs there; the job "
                      "keeps %s, %lld slots (scontrol %.3f s)\n", many ? "s" : "", nodes,
                      job, it, t->remaining ? t->remaining : "?", t->slots_after, t->seconds);
    else if (strcmp(t->outcome, "unknown") == 0)
        engine_notice("libmal: node%s %s may have been returned to Slurm (job %s) after the "
                      "shrink at iteration %lld: %s; libmal no longer places processes there "
                      "(%.3f s)\n", many ? "s" : "", nodes, job, it, t->reason, t->seconds);
    else if (strcmp(t->outcome, "failed") == 0)
        engine_notice("libmal: could not return node%s %s to Slurm (job %s) after the "
                      "shrink at iteration %lld: %s; the application goes on, and no node "
                      "will be returned in this run (%.3f s)\n", many ? "s" : "", nodes, job,
                      it, t->reason, t->seconds);
    else if (s->summary)
        engine_notice("libmal: node%s %s kept in Slurm job %s after the shrink at iteration "
                      "%lld: %s\n", many ? "s" : "", nodes, job, it, t->reason);
    if (s->report != NULL)
        report_nodes(s->report, &(report_nodes_t){it, job, nodes, t->outcome,
                                                  t->remaining ? t->remaining : "",
                                                  t->reason[0] ? t->reason : NULL,
                                                  t->slots_after, t->seconds});
}

static void say_kept(const engine_parts_t *parts, const bool *which, const char *reason)
{
    told_t t = {.outcome = "kept", .nodes = alloc_format_nodelist(&parts->conf->room, which),
                .slots_after = parts->conf->room.slots};
    bool *all = calloc((size_t)parts->conf->room.nhosts, sizeof *all);
    for (int h = 0; all != NULL && h < parts->conf->room.nhosts; h++)
        all[h] = true;
    t.remaining = all != NULL ? alloc_format_nodelist(&parts->conf->room, all) : NULL;
    snprintf(t.reason, sizeof t.reason, "%s", reason);
    tell(parts, &t);
    free(all);
    free(t.nodes);
    free(t.remaining);
}

/* "KEY=value", malloc'd; NULL without memory. */
static char *argument(const char *key, const char *value)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *arg = malloc(len);
    if (arg != NULL)
        snprintf(arg, len, "%s=%s", key, value);
    return arg;
}

/* Run scontrol for the hosts in drop[]; true when Slurm took them. */
static bool give_back(const engine_parts_t *parts, const bool *drop)
{
    const alloc_t *a = &parts->conf->room;
    bool *keep = calloc((size_t)a->nhosts, sizeof *keep);
    told_t t = {.outcome = "failed"};
    long long left = 0;
    for (int h = 0; keep != NULL && h < a->nhosts; h++) {
        keep[h] = !drop[h];
        left += keep[h] ? a->hosts[h].slots : 0;
    }
    t.nodes = keep != NULL ? alloc_format_nodelist(a, drop) : NULL;
    t.remaining = t.nodes != NULL ? alloc_format_nodelist(a, keep) : NULL;
    char *job_arg = argument("JobId", parts->conf->room_job);
    char *list_arg = t.remaining != NULL ? argument("NodeList", t.remaining) : NULL;
    if (job_arg != NULL && list_arg != NULL) {
        char *argv[] = {"scontrol", "update", job_arg, list_arg, NULL};
        run_t r;
        run_bounded(argv, &r);
        describe_failure(&r, t.reason, sizeof t.reason);
        t.seconds = r.seconds;
        /* Killed at the bound, or its status lost (SIGCHLD ignored, or reaped by the
         * application): Slurm may have taken the nodes, so they leave the room anyway. */
        bool unknown = r.spawn_error == 0 && (r.timed_out || r.status == -1);
        t.outcome = t.reason[0] == '\0' ? "returned" : unknown ? "unknown" : "failed";
    } else {
        snprintf(t.reason, sizeof t.reason, "no memory for scontrol's arguments");
    }
    bool returned = strcmp(t.outcome, "failed") != 0;
    t.slots_after = returned ? left : a->slots;
    tell(parts, &t);
    free(job_arg);
    free(list_arg);
    free(t.nodes);
    free(t.remaining);
    free(keep);
    return returned;
}

static void say_stepped(const engine_parts_t *parts, const bool *stepped)
{
    char why[512];
    snprintf(why, sizeof why, "the application's processes there were started inside a "
             "Slurm step, so the launcher's daemon there is a task of the job (mpiexec "
             "launched it with srun): Slurm would end it with the node, and mpiexec aborts "
             "when it loses a daemon. Nodes are returned when the daemons run outside the "
             "job (%s); no node will be returned in this run",
             engine_mpi_side()->daemons_outside_slurm);
    say_kept(parts, stepped, why);
}

/* Rank 0: the hosts to drop in survey->drop; the count returned, 0 for none, -1 when
 * the setting must go off (scontrol failed, or a Slurm step holds an emptied host). */
static int decide(const engine_parts_t *parts, const engine_procs_t *procs, const bool *leaving,
                  engine_release_survey_t *sv)
{
    emptied_t e;
    int result = 0;
    if (!find_emptied(parts, procs, leaving, sv, &e)) {
        free_emptied(&e);
        return 0; /* no memory: nothing returned this time */
    }
    if (e.held_n > 0)
        say_kept(parts, e.held, "released initial processes wait there for the rest of "
                 "their MPI job to finalize (the MPI runtime ends a job's processes "
                 "together)");
    if (e.stepped_n > 0) {
        say_stepped(parts, e.stepped);
        result = -1;
    }
    for (int h = 0; result == 0 && h < parts->conf->room.nhosts; h++)
        sv->drop[h] = e.emptied[h] && !e.held[h] && !e.stepped[h];
    if (result == 0 && e.returnable > 0)
        result = give_back(parts, sv->drop) ? e.returnable : -1;
    free_emptied(&e);
    return result;
}

/* ---- every process that stays -------------------------------------------------------- */

/* The room without the returned hosts (and their marks), on every rank alike. */
static void drop_from_room(engine_settings_t *s, const bool *drop)
{
    int kept = 0;
    for (int h = 0; s->room_kept != NULL && h < s->room.nhosts; h++)
        if (!drop[h])
            s->room_kept[kept++] = s->room_kept[h];
    alloc_drop_hosts(&s->room, drop);
    char text[512];
    snprintf(text, sizeof text, "Slurm allocation (job %s, %d node%s and %lld slot%s left "
             "after nodes were returned to Slurm)", s->room_job, s->room.nhosts,
             s->room.nhosts == 1 ? "" : "s", (long long)s->room.slots,
             s->room.slots == 1 ? "" : "s");
    char *source = strdup(text);
    if (source != NULL) {
        free(s->room_source);
        s->room_source = source;
    }
}

void engine_release_nodes(const engine_parts_t *parts, const engine_procs_t *procs,
                          const bool *leaving, engine_release_survey_t *survey)
{
    engine_group_t *g = parts->group;
    if (survey->nprocs == 0 || g->comm == MPI_COMM_NULL)
        return;
    /* Only rank 0 runs scontrol (up to RELEASE_BOUND_S): the others wait with sleeps. */
    int outcome = g->rank == 0 ? decide(parts, procs, leaving, survey) : 0;
    engine_bcast_flag(&outcome, g->comm);
    if (outcome > 0) {
        PMPI_Bcast(survey->drop, parts->conf->room.nhosts, MPI_C_BOOL, 0, g->comm);
        drop_from_room(parts->conf, survey->drop);
    } else if (outcome < 0) {
        /* Off for good, in the settings object too: a process that joins later reads it. */
        parts->conf->release_nodes = false;
        parts->settings->value[SETTING_RELEASE_NODES].num = 0;
    }
}
