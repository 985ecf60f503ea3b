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
 * completed. Usage: tools/malrun -n 2 build/bench/spawn_loop [--cycles N] [--collective]
 * [--reap] [--rss] [--pause MS] (run it under `timeout`: a hang is the finding).
 *   --rss       rank 0 prints its VmRSS and mpiexec's (its parent's) before the first
 *               cycle and after every 100th, to see what the runtime keeps per spawn;
 *   --pause MS  the parents sleep MS milliseconds after each cycle. */
#define _POSIX_C_SOURCE 200809L /* readlink, nanosleep */
#include <mpi.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

static void child(MPI_Comm parent)
{
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    int cycle = 0;
    MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
    MPI_Comm_free(&merged);
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

/* One cycle on the parents' side; the root spawns alone unless `collective`. */
static void cycle_once(const char *self, int cycle, int collective, int reap)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *argv[] = {"--child", collective ? "--collective" : NULL, NULL};
    MPI_Comm inter = MPI_COMM_NULL, merged;
    if (collective) {
        MPI_Comm_spawn(self, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        MPI_Intercomm_merge(inter, 0, &merged);
    } else {
        /* as libmal: rank 0 spawns over MPI_COMM_SELF and brings the others in by
         * creating an intercommunicator between MPI_COMM_WORLD and the child */
        MPI_Comm pair = MPI_COMM_NULL, world_side;
        int ok = 1;
        if (me == 0) {
            pid_t before[MAX_SIBLINGS];
            int nbefore = list_siblings(before, MAX_SIBLINGS);
            int rc = MPI_Comm_spawn(self, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                                    MPI_ERRCODES_IGNORE);
            ok = rc == MPI_SUCCESS;
            if (ok)
                MPI_Intercomm_merge(inter, 0, &pair);
            else
                report_failure(cycle, rc);
            if (!ok && reap)
                note_new_siblings(before, nbefore);
        }
        /* with MPI_ERRORS_RETURN a spawn that timed out is skipped by everyone */
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!ok)
            return;
        /* the child joins through pair: merge with rank 0, then rank 0 bridges */
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
    int is_child = argc > 1 && strcmp(argv[1], "--child") == 0;
    if (is_child)
        signal(SIGTERM, exit_quietly); /* until MPI_Init returns: see reap_new_siblings */
    MPI_Init(&argc, &argv);
    if (is_child)
        signal(SIGTERM, SIG_DFL);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int cycles = 100, collective = 0, reap = 0, rss = 0, pause = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
            cycles = atoi(argv[++i]);
        else if (strcmp(argv[i], "--collective") == 0)
            collective = 1;
        else if (strcmp(argv[i], "--reap") == 0)
            reap = 1;
        else if (strcmp(argv[i], "--rss") == 0)
            rss = 1;
        else if (strcmp(argv[i], "--pause") == 0 && i + 1 < argc)
            pause = atoi(argv[++i]);
    }
    if (parent != MPI_COMM_NULL) {
        /* spawned over MPI_COMM_SELF the child first merges with rank 0 (pair), then
         * is bridged to everybody; spawned collectively it merges once */
        if (collective) {
            child(parent);
        } else {
            MPI_Comm pair, world_side, merged;
            MPI_Intercomm_merge(parent, 1, &pair);
            MPI_Intercomm_create(MPI_COMM_SELF, 0, pair, 0, 77, &world_side);
            MPI_Intercomm_merge(world_side, 1, &merged);
            int cycle;
            MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
            MPI_Comm_free(&merged);
            MPI_Comm_free(&world_side);
            MPI_Comm_free(&pair);
            MPI_Comm_disconnect(&parent);
        }
        MPI_Finalize();
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* a spawn bounded by pmix_base_exchange_timeout returns its error here */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rss && me == 0)
        print_rss(0);
    for (int c = 1; c <= cycles; c++) {
        double t0 = MPI_Wtime();
        cycle_once(self, c, collective, reap);
        if (me == 0) {
            printf("spawn_loop: cycle %d %.3f s\n", c, MPI_Wtime() - t0);
            fflush(stdout);
        }
        if (rss && me == 0 && c % 100 == 0)
            print_rss(c);
        pause_ms(pause);
    }
    if (me == 0)
        printf("spawn_loop: PASS %d cycles\n", cycles);
    end_stuck_children();
    MPI_Finalize();
    return 0;
}
