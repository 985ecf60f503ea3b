/* spawn_loop: the smallest reproduction of the spawn hang (docs/design.md, "The spawn
 * hang"), without libmal. The parents spawn one child per cycle and the child leaves
 * again, the way a libmal expansion by one and the release of that process do:
 *
 *   parents: MPI_Comm_spawn (over MPI_COMM_SELF from rank 0, or over MPI_COMM_WORLD
 *            with --collective), MPI_Intercomm_merge, a small MPI_Bcast over the merged
 *            communicator, MPI_Comm_free of it, MPI_Comm_disconnect of the
 *            intercommunicator (from rank 0's pair when spawned over MPI_COMM_SELF);
 *   child:   the same from its side, then MPI_Finalize.
 *
 * It prints one line per cycle with its time, so a hang shows as the last cycle that
 * completed. Usage (--help prints it): tools/malrun -n 2 build/bench/spawn_loop
 * [--cycles N] [--collective] [--reap] [--rss] [--pause MS] [--batch K]
 * [--disconnect-first] (run it under `timeout`: a hang is the finding).
 *   --rss       rank 0 prints its VmRSS and mpiexec's (its parent's) before the first
 *               cycle and after every 100th, to see what the runtime keeps per spawn;
 *   --pause MS  the parents sleep MS milliseconds after each cycle;
 *   --batch K   each spawn starts K children (does a loss come per call or per process?);
 *   --disconnect-first  the children disconnect the parent intercommunicator before
 *               they free the communicators merged from it.
 * A collective run ends (MPI_Abort, exit code 3) at its first lost start. */
#define _POSIX_C_SOURCE 200809L /* readlink, nanosleep */
#include "cli.h"
#include "mal_version.h"

#include <mpi.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIBLINGS 256

/* The launcher's children (our parent's): the processes a spawn adds on this host. */
static int list_siblings(pid_t *pids, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    pid_t parent = getppid();
    while (d != NULL && (e = readdir(d)) != NULL && n < max) {
        char path[300];
        int pid = 0, ppid = 0;
        snprintf(path, sizeof path, "/proc/%.32s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fscanf(f, "%d %*s %*c %d", &pid, &ppid) == 2 && ppid == parent)
            pids[n++] = pid;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static pid_t stuck[MAX_SIBLINGS];
static int nstuck;

/* Remember the children a failed spawn left behind (--reap): the launcher's children
 * that were not there before the spawn. */
static void note_new_siblings(const pid_t *before, int nbefore)
{
    pid_t now[MAX_SIBLINGS];
    int n = list_siblings(now, MAX_SIBLINGS);
    for (int i = 0; i < n && nstuck < MAX_SIBLINGS; i++) {
        int old = 0;
        for (int j = 0; j < nbefore && !old; j++)
            old = now[i] == before[j];
        if (!old)
            stuck[nstuck++] = now[i];
    }
}

/* End them before MPI_Finalize: SIGTERM, which a child still inside MPI_Init turns into
 * exit(0) (a launcher with orte_allowed_exit_without_sync then sees a normal end).
 * Ending them at once instead made every later spawn of the run hang. */
static void end_stuck_children(void)
{
    for (int i = 0; i < nstuck; i++) {
        printf("spawn_loop: ending stuck child %d\n", (int)stuck[i]);
        kill(stuck[i], SIGTERM);
    }
}

static void exit_quietly(int sig)
{
    (void)sig;
    _exit(0);
}

/* What the command line asks for; the child gets the options that shape its side. */
struct options {
    int cycles, collective, reap, rss, pause, batch, disconnect_first;
    int child; /* --child: this process was spawned by another spawn_loop */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tools/malrun -n 2 spawn_loop [--cycles N] [--collective] [--reap] [--rss]\n"
            "                    [--pause MS] [--batch K] [--disconnect-first]\n"
            "       spawn_loop --help | --version\n"
            "Spawns children that leave again, one cycle after the other, with MPI calls\n"
            "only; run it under timeout: a hang is the finding.\n"
            "  --cycles N          cycles to run (default 100)\n"
            "  --collective        spawn over MPI_COMM_WORLD, not from rank 0 over\n"
            "                      MPI_COMM_SELF\n"
            "  --reap              end, before MPI_Finalize, the children a failed spawn\n"
            "                      left behind\n"
            "  --rss               rank 0 prints its and mpiexec's VmRSS before the first\n"
            "                      cycle and after every 100th\n"
            "  --pause MS          the parents sleep MS milliseconds after each cycle\n"
            "  --batch K           each spawn starts K children (default 1, at most %d)\n"
            "  --disconnect-first  the children disconnect from their parents before they\n"
            "                      free the communicators merged with them\n" CLI_STANDARD_USAGE
            "(--child, with the options of the child's side, is what the children get.)\n"
            "Exit status: 0, 1 when the program cannot find itself, 2 for a usage error,\n"
            "3 when a --collective run ends at a lost spawn.\n",
            MAX_SIBLINGS);
}

static const char *version(void)
{
    return MAL_VERSION; /* the headers it was built with: spawn_loop links no libmal */
}

static const cli_t cli = {"spawn_loop", version, usage};

/* Read before MPI_Init, by the parents and by the children alike. */
static struct options parse_options(int argc, char **argv)
{
    enum { CYCLES = 1, COLLECTIVE, REAP, RSS, PAUSE, BATCH, DISCONNECT_FIRST, CHILD };
    static const struct option longopts[] = {
        {"cycles", required_argument, NULL, CYCLES},
        {"collective", no_argument, NULL, COLLECTIVE},
        {"reap", no_argument, NULL, REAP},
        {"rss", no_argument, NULL, RSS},
        {"pause", required_argument, NULL, PAUSE},
        {"batch", required_argument, NULL, BATCH},
        {"disconnect-first", no_argument, NULL, DISCONNECT_FIRST},
        {"child", no_argument, NULL, CHILD},
        CLI_STANDARD_OPTIONS,
        {0}};
    struct options o = {.cycles = 100, .batch = 1};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        switch (c) {
        case CYCLES:
            o.cycles = (int)cli_integer(&cli, "--cycles", optarg, 1, INT_MAX);
            break;
        case PAUSE:
            o.pause = (int)cli_integer(&cli, "--pause", optarg, 0, 3600 * 1000);
            break;
        case BATCH: /* the lists of the launcher's children hold MAX_SIBLINGS */
            o.batch = (int)cli_integer(&cli, "--batch", optarg, 1, MAX_SIBLINGS);
            break;
        case COLLECTIVE:
            o.collective = 1;
            break;
        case REAP:
            o.reap = 1;
            break;
        case RSS:
            o.rss = 1;
            break;
        case DISCONNECT_FIRST:
            o.disconnect_first = 1;
            break;
        default:
            o.child = 1;
        }
    }
    return o;
}

/* The child's side of one cycle. Spawned over MPI_COMM_SELF the children first merge
 * with rank 0 (pair), then are bridged to everybody; spawned collectively they merge
 * once. By default the merged communicators are freed before the parent
 * intercommunicator is disconnected; --disconnect-first reverses that. */
static void child(MPI_Comm parent, const struct options *o)
{
    MPI_Comm pair = MPI_COMM_NULL, world_side = MPI_COMM_NULL, merged;
    if (o->collective) {
        MPI_Intercomm_merge(parent, 1, &merged);
    } else {
        MPI_Intercomm_merge(parent, 1, &pair);
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, pair, 0, 77, &world_side);
        MPI_Intercomm_merge(world_side, 1, &merged);
    }
    int cycle = 0;
    MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
    if (o->disconnect_first)
        MPI_Comm_disconnect(&parent);
    MPI_Comm_free(&merged);
    if (world_side != MPI_COMM_NULL)
        MPI_Comm_free(&world_side);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    if (!o->disconnect_first)
        MPI_Comm_disconnect(&parent);
}

static void report_failure(int cycle, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    printf("spawn_loop: cycle %d spawn failed: %s\n", cycle, msg);
    fflush(stdout);
}

/* Spawn o->batch children from the root of `comm`; on the root a failure is reported
 * and (--reap) the processes it left are recorded. Returns the root's MPI result. */
static int spawn_children(const char *self, MPI_Comm comm, int cycle,
                          const struct options *o, MPI_Comm *inter)
{
    char *argv[] = {"--child", NULL, NULL, NULL};
    int n = 1, me;
    if (o->collective)
        argv[n++] = "--collective";
    if (o->disconnect_first)
        argv[n++] = "--disconnect-first";
    MPI_Comm_rank(comm, &me);
    pid_t before[MAX_SIBLINGS];
    int nbefore = me == 0 ? list_siblings(before, MAX_SIBLINGS) : 0;
    int rc = MPI_Comm_spawn(self, argv, o->batch, MPI_INFO_NULL, 0, comm, inter,
                            MPI_ERRCODES_IGNORE);
    if (rc != MPI_SUCCESS && me == 0) {
        report_failure(cycle, rc);
        if (o->reap)
            note_new_siblings(before, nbefore);
    }
    return rc;
}

/* Collectively, a root whose spawn timed out leaves the other parents inside
 * MPI_Comm_spawn for ever (Open MPI 4.1 returns before telling them): the run can only
 * end here, and the caller counts the cycles and starts it again. */
static void end_lost_collective_run(int cycle)
{
    printf("spawn_loop: collective run ends at lost cycle %d\n", cycle);
    fflush(stdout);
    end_stuck_children();
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* One cycle on the parents' side; the root spawns alone unless o->collective. */
static void cycle_once(const char *self, int cycle, const struct options *o)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm inter = MPI_COMM_NULL, merged;
    if (o->collective) {
        if (spawn_children(self, MPI_COMM_WORLD, cycle, o, &inter) != MPI_SUCCESS)
            end_lost_collective_run(cycle);
        MPI_Intercomm_merge(inter, 0, &merged);
    } else {
        /* as libmal: rank 0 spawns over MPI_COMM_SELF and brings the others in by
         * creating an intercommunicator between MPI_COMM_WORLD and the children */
        MPI_Comm pair = MPI_COMM_NULL, world_side;
        int ok = 1;
        if (me == 0) {
            ok = spawn_children(self, MPI_COMM_SELF, cycle, o, &inter) == MPI_SUCCESS;
            if (ok)
                MPI_Intercomm_merge(inter, 0, &pair);
        }
        /* with MPI_ERRORS_RETURN a spawn that timed out is skipped by everyone */
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok)
            return;
        /* the children join through pair: merged with rank 0, then rank 0 bridges */
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, pair, 1, 77, &world_side);
        MPI_Intercomm_merge(world_side, 0, &merged);
        MPI_Comm_free(&world_side);
        if (pair != MPI_COMM_NULL)
            MPI_Comm_free(&pair);
    }
    MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
    MPI_Comm_free(&merged);
    if (inter != MPI_COMM_NULL)
        MPI_Comm_disconnect(&inter);
}

/* VmRSS of a process in KiB, or -1 when /proc does not say. */
static long vm_rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

/* Rank 0's and the launcher's (our parent's) resident memory after `cycle` cycles. */
static void print_rss(int cycle)
{
    printf("spawn_loop: rss after %d cycles: rank0 %ld KiB, mpiexec %ld KiB\n", cycle,
           vm_rss_kib(getpid()), vm_rss_kib(getppid()));
    fflush(stdout);
}

static void pause_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&t, &t) != 0)
        ;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    char self[4096]; /* what the parents spawn */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "spawn_loop: cannot find its own executable: %s\n", strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    self[n] = '\0';
    if (o.child)
        signal(SIGTERM, exit_quietly); /* until MPI_Init returns: see end_stuck_children */
    MPI_Init(&argc, &argv);
    if (o.child)
        signal(SIGTERM, SIG_DFL);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent, &o);
        MPI_Finalize();
        return 0;
    }
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* a spawn bounded by pmix_base_exchange_timeout returns its error here */
    MPI_Comm spawn_comm = o.collective ? MPI_COMM_WORLD : MPI_COMM_SELF;
    MPI_Comm_set_errhandler(spawn_comm, MPI_ERRORS_RETURN);
    if (o.rss && me == 0)
        print_rss(0);
    for (int c = 1; c <= o.cycles; c++) {
        double t0 = MPI_Wtime();
        cycle_once(self, c, &o);
        if (me == 0) {
            printf("spawn_loop: cycle %d %.3f s\n", c, MPI_Wtime() - t0);
            fflush(stdout);
        }
        if (o.rss && me == 0 && c % 100 == 0)
            print_rss(c);
        pause_ms(o.pause);
    }
    if (me == 0)
        printf("spawn_loop: PASS %d cycles\n", o.cycles);
    end_stuck_children();
    MPI_Finalize();
    return 0;
}
