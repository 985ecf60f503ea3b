/* Dynamic process management: spawning, merging, parking, and leaving MPI.
 *
 * How processes come and go here follows what was measured on Open MPI 4.1 (docs/design.md,
 * platform facts, and the experiments noted in docs/guide/library.md):
 * - MPI_Comm_spawn is called by rank 0 over MPI_COMM_SELF, never over the whole
 *   communicator: when a spawn fails (no free slot, unknown host) Open MPI returns the
 *   error on the root only and leaves the other ranks inside the call for ever. Rank 0
 *   then tells everyone the outcome, and the children are brought in with
 *   MPI_Intercomm_create through the pair communicator rank 0 shares with them.
 * - A missing or non-executable program makes mpiexec abort the whole job, so it is
 *   checked with access() before spawning.
 * - Spawn intercommunicators are disconnected and merged communicators freed as soon as
 *   the join is done (MPI_Comm_disconnect on a merged communicator hangs).
 * - MPI finalizes per job: a process may only leave MPI together with the rest of its
 *   job. Every process of a job meets the others in one non-blocking barrier on the
 *   job communicator before MPI_Finalize, polled with growing sleeps so a parked process
 *   uses no CPU to speak of. */
#include "core.h"
#include "monitor.h"
#include "procs.h"
#include "reconf.h"
#include "report.h"
#include "settings.h"
#include "spawning.h"

#include <errno.h>
#include <stddef.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define JOIN_TAG 7412

/* The policy's hosts for the expansion under way, else the configured list. */
char *engine_spawn_host(const engine_procs_t *procs, const engine_settings_t *conf, int64_t index)
{
    if (procs->spawn_hosts != NULL)
        return engine_host_at(procs->spawn_hosts, (int)(index - procs->spawn_hosts_base));
    return engine_host_at(conf->hosts, (int)index);
}

const char *engine_spawn_host_span(const engine_procs_t *procs, const engine_settings_t *conf,
                                   int64_t index, size_t *len)
{
    if (procs->spawn_hosts != NULL)
        return engine_host_span(procs->spawn_hosts, (int)(index - procs->spawn_hosts_base),
                                len);
    return engine_host_span(conf->hosts, (int)index, len);
}

/* Whether the name resolves. An unknown host is refused here rather than by the MPI
 * runtime: after a spawn failed in the runtime, Open MPI 4.1 lets the application go on
 * but its MPI_Finalize never returns (the failed job stays in the final fence). */
static mal_status_t check_host(const char *host)
{
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, NULL, &res);
    if (res != NULL)
        freeaddrinfo(res);
    if (rc != 0)
        return engine_fail(MAL_ERR_SPAWN, "mal_expand: cannot spawn on host '%s': %s", host,
                           gai_strerror(rc));
    return MAL_OK;
}

/* A spawn's commands: one per run of equal hosts among its processes. Open MPI 4.1 maps
 * the processes of one MPI_Comm_spawn over its "host" list in its own slot order, not one
 * per entry, and a list such as "malB,malC,malC" left children failing in MPI_Init (num
 * local peers) while the root got MPI_ERR_OTHER; MPI_Comm_spawn_multiple with one host
 * per command places each run where it is named (docs/design.md, "Dozens of processes
 * on four hosts"). Without hosts, one command. */
typedef struct {
    int count;
    int *procs;                 /* processes of each command, at most n commands      */
    MPI_Info *infos;
    char **programs;
    char ***argvs;
} spawn_cmds_t;

static void free_commands(spawn_cmds_t *c)
{
    for (int k = 0; k < c->count; k++)
        if (c->infos[k] != MPI_INFO_NULL)
            MPI_Info_free(&c->infos[k]);
    free(c->procs);
    free(c->infos);
    free(c->programs);
    free(c->argvs);
    *c = (spawn_cmds_t){0};
}

/* A new command of one process: the mark that tells a child libmal spawned it
 * (spawnguard.c), and its host (NULL: the runtime places). */
static mal_status_t add_command(spawn_cmds_t *c, const char *host)
{
    MPI_Info *info = &c->infos[c->count];
    c->procs[c->count++] = 1;
    mal_status_t st = engine_mpi_check(MPI_Info_create(info), "mal_expand: MPI_Info_create");
    if (st)
        *info = MPI_INFO_NULL;
    if (!st)
        st = engine_spawn_mark(*info);
    if (!st && host != NULL)
        st = check_host(host);
    /* "host" places the process in both families (Open MPI; Hydra reads it too). */
    if (!st && host != NULL)
        st = engine_mpi_check(MPI_Info_set(*info, "host", host), "mal_expand: MPI_Info_set");
    return st;
}

/* The commands for `n` processes starting at call `index`: one host per call, or the
 * next n hosts of the list for a batch. */
static mal_status_t spawn_commands(const engine_procs_t *procs, const engine_settings_t *conf,
                                   int n, int index, spawn_cmds_t *c)
{
    *c = (spawn_cmds_t){.procs = malloc((size_t)n * sizeof *c->procs),
                        .infos = malloc((size_t)n * sizeof *c->infos),
                        .programs = malloc((size_t)n * sizeof *c->programs),
                        .argvs = malloc((size_t)n * sizeof *c->argvs)};
    if (c->procs == NULL || c->infos == NULL || c->programs == NULL || c->argvs == NULL) {
        free_commands(c);
        return engine_fail(MAL_ERR_NOMEM, "mal_expand: no memory for the spawn's commands");
    }
    if (procs->spawn_hosts == NULL && conf->hosts == NULL) {
        mal_status_t st = add_command(c, NULL);
        if (st)
            free_commands(c);
        else
            c->procs[0] = n;
        return st;
    }
    mal_status_t st = MAL_OK;
    char *last = NULL;
    for (int i = 0; i < n && !st; i++) {
        char *host = engine_spawn_host(procs, conf, index + i);
        if (host == NULL)
            st = engine_fail(MAL_ERR_NOMEM, "mal_expand: no memory for the host list");
        else if (last != NULL && strcmp(host, last) == 0)
            c->procs[c->count - 1]++;
        else
            st = add_command(c, host);
        free(last);
        last = host;
    }
    free(last);
    if (st)
        free_commands(c);
    return st;
}

/* A second after a lost start, then two: the attempt right after one failed at once
 * ("does not support spawn") in a measured run. */
static void pause_before_retry(bool summary, int attempts)
{
    if (summary)
        engine_notice("libmal: spawn lost by the MPI runtime; trying again (attempt %d of "
                      "%d)\n", attempts + 1, ENGINE_SPAWN_ATTEMPTS);
    struct timespec ts = {attempts, 0};
    nanosleep(&ts, NULL);
}

/* One MPI_Comm_spawn, or MPI_Comm_spawn_multiple over several hosts. A failure that
 * took the whole bound is the runtime losing the start. Any process a failed spawn left
 * on this host is recorded (ended at mal_finalize): an attempt right after a lost start
 * failed at once but had started a child, which failed in MPI_Init at the end of the run
 * and made mpirun exit 1. */
static int spawn_once(const char *program, char **argv, int n, spawn_cmds_t *c,
                      MPI_Comm *inter, bool *timed_out)
{
    pid_t before[ENGINE_MAX_SIBLINGS];
    int nbefore = engine_spawn_siblings(before, ENGINE_MAX_SIBLINGS);
    double t0 = MPI_Wtime();
    int rc;
    if (c->count == 1) {
        rc = MPI_Comm_spawn(program, argv, n, c->infos[0], 0, MPI_COMM_SELF, inter,
                            MPI_ERRCODES_IGNORE);
    } else {
        for (int k = 0; k < c->count; k++) {
            c->programs[k] = (char *)program;
            c->argvs[k] = argv;
        }
        rc = MPI_Comm_spawn_multiple(c->count, c->programs,
                                     argv != MPI_ARGV_NULL ? c->argvs : MPI_ARGVS_NULL,
                                     c->procs, c->infos, 0, MPI_COMM_SELF, inter,
                                     MPI_ERRCODES_IGNORE);
    }
    int bound = engine_spawn_bound();
    *timed_out = rc != MPI_SUCCESS && bound > 0 && MPI_Wtime() - t0 >= bound - 1.0;
    if (rc != MPI_SUCCESS)
        engine_spawn_note_stuck(before, nbefore);
    return rc;
}

static mal_status_t spawn_failed(int rc, int n, const char *program, bool lost,
                                 int attempts)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (lost)
        return engine_fail(MAL_ERR_TIMEOUT, "mal_expand: MPI_Comm_spawn of %d x '%s': the MPI "
                           "runtime lost the new processes' start (no answer within %d s; "
                           "docs/design.md, the spawn hang), %d attempt(s), the last: %s; the "
                           "application goes on with its processes (MAL_RECONF_TIMEOUT sets "
                           "the bound)", n, program, engine_spawn_bound(), attempts, msg);
    return engine_fail(MAL_ERR_SPAWN, "mal_expand: MPI_Comm_spawn of %d x '%s' failed: %s", n,
                       program, msg);
}

mal_status_t engine_spawn(const engine_procs_t *procs, const engine_settings_t *conf, int n,
                          int call_index, MPI_Comm *inter, MPI_Comm *pair)
{
    const char *program = conf->program;
    if (access(program, X_OK) != 0)
        return engine_fail(MAL_ERR_SPAWN, "mal_expand: cannot spawn '%s': %s (mpiexec would "
                           "abort the job)", program, strerror(errno));
    spawn_cmds_t cmds;
    mal_status_t st = spawn_commands(procs, conf, n, call_index, &cmds);
    if (st)
        return st;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    /* A lost start is transient (docs/design.md): a later attempt usually succeeds,
     * though the one right after it can fail at once, the runtime still recovering. */
    bool lost = false;
    int rc = MPI_SUCCESS, attempts = 0;
    do {
        if (attempts > 0)
            pause_before_retry(conf->summary, attempts);
        bool timed_out = false;
        rc = spawn_once(program, conf->argv, n, &cmds, inter, &timed_out);
        lost = lost || timed_out;
        attempts++;
    } while (rc != MPI_SUCCESS && lost && attempts < ENGINE_SPAWN_ATTEMPTS);
    free_commands(&cmds);
    if (rc != MPI_SUCCESS)
        return spawn_failed(rc, n, program, lost, attempts);
    MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN);
    st = engine_mpi_check(MPI_Intercomm_merge(*inter, 0, pair), "MPI_Intercomm_merge");
    if (st)
        MPI_Comm_disconnect(inter);
    return st;
}

/* Bridge `local` and the other side of `pair` (rank 0 of local talks to `remote` in
 * pair), then merge: the children ask for the high half, so they get the last ranks. */
static mal_status_t bridge_and_merge(MPI_Comm local, MPI_Comm pair, int remote, int high,
                                     MPI_Comm *joined)
{
    MPI_Comm inter;
    int rc = MPI_Intercomm_create(local, 0, pair, remote, JOIN_TAG, &inter);
    mal_status_t st = engine_mpi_check(rc, "MPI_Intercomm_create");
    if (st)
        return st;
    st = engine_mpi_check(MPI_Intercomm_merge(inter, high, joined), "MPI_Intercomm_merge");
    MPI_Comm_free(&inter);
    if (!st)
        MPI_Comm_set_errhandler(*joined, MPI_ERRORS_RETURN);
    return st;
}

mal_status_t engine_join_members(MPI_Comm members, MPI_Comm pair, MPI_Comm *joined)
{
    /* In the pair, rank 0 is this side's root and rank 1 the children's leader. */
    return bridge_and_merge(members, pair, 1, 0, joined);
}

mal_status_t engine_join_children(MPI_Comm pair, MPI_Comm *joined)
{
    return bridge_and_merge(MPI_COMM_WORLD, pair, 0, 1, joined);
}

double engine_cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void engine_bcast_flag(int *flag, MPI_Comm comm)
{
    MPI_Request req;
    if (PMPI_Ibcast(flag, 1, MPI_INT, 0, comm, &req) != MPI_SUCCESS) {
        *flag = 0;
        return;
    }
    int done = 0;
    long ns = 20000;
    while (PMPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        engine_backoff(&ns, ENGINE_FLAG_POLL_CAP_NS);
}

void engine_backoff(long *ns, long cap)
{
    struct timespec ts = {0, *ns};
    nanosleep(&ts, NULL);
    if (*ns < cap)
        *ns = *ns * 2 < cap ? *ns * 2 : cap;
}

/* Resident memory of this process, from /proc/self/statm; 0 when unknown. */
static long long resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long pages = 0, resident = 0;
    if (f != NULL && fscanf(f, "%lld %lld", &pages, &resident) != 2)
        resident = 0;
    if (f != NULL)
        fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

void engine_pool_say_parked(const engine_procs_t *procs, const engine_settings_t *conf, bool woken,
                            double wall, double cpu)
{
    report_parked_t r = {procs->initial, woken ? "wake" : "release", wall, cpu,
                         resident_bytes()};
    if (conf->summary)
        engine_notice("libmal: parked %s process left the pool (%s) after %.3f s, CPU %.4f s "
               "(%.2f%%), resident %.1f MiB\n", procs->initial ? "initial" : "spawned",
               r.left_by, wall, cpu, wall > 0 ? 100.0 * cpu / wall : 0.0,
               (double)r.rss_bytes / (1 << 20));
    if (conf->report != NULL)
        report_parked(conf->report, &r);
}

static void say_parked(const engine_procs_t *procs, const engine_settings_t *conf, double wall,
                       double cpu)
{
    if (conf->summary)
        engine_notice("libmal: released %s process parked %.3f s until its job finalized, "
               "CPU %.4f s (%.2f%%)\n", procs->initial ? "initial" : "spawned", wall, cpu,
               wall > 0 ? 100.0 * cpu / wall : 0.0);
    if (conf->report != NULL)
        report_parked(conf->report,
                      &(report_parked_t){procs->initial, "finalize", wall, cpu,
                                         resident_bytes()});
}

void engine_park(const engine_procs_t *procs, const engine_settings_t *conf, bool report)
{
    double t0 = MPI_Wtime(), c0 = engine_cpu_seconds();
    MPI_Request req;
    if (MPI_Ibarrier(procs->job, &req) != MPI_SUCCESS)
        return;
    int done = 0;
    long ns = 50000;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        engine_backoff(&ns, ENGINE_PARK_POLL_CAP_NS);
    if (report)
        say_parked(procs, conf, MPI_Wtime() - t0, engine_cpu_seconds() - c0);
}

_Noreturn void engine_leave_abandoned(engine_procs_t *procs, MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL)
        MPI_Comm_free(comm);
    engine_park(procs, NULL, false);
    MPI_Comm_free(&procs->job);
    MPI_Finalize();
    exit(0);
}
