#include "bench_launch.h"
#include "selfpath.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

bool bench_under_launcher(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
           getenv("PMI_RANK") != NULL;
}

const char *bench_self_path(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    return path;
}

/* Seconds one launched job may take (MAL_BENCH_TIMEOUT, default 600): a job that hangs
 * (an MPI_Comm_spawn that never returns: docs/design.md, "The spawn hang") is ended with
 * SIGTERM, which mpiexec forwards to the whole job, instead of hanging the driver. */
static double time_limit(void)
{
    const char *env = getenv("MAL_BENCH_TIMEOUT");
    double v = env != NULL ? atof(env) : 0.0;
    return v > 0 ? v : 600.0;
}

static int wait_bounded(pid_t pid, const char *launcher)
{
    const struct timespec tick = {0, 50 * 1000 * 1000};
    double limit = time_limit(), waited = 0;
    int status = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR)
            return -1;
        if (waited >= limit) {
            fprintf(stderr, "%s did not finish within %g s (MAL_BENCH_TIMEOUT): ended\n",
                    launcher, limit);
            kill(pid, SIGTERM);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return 124;
        }
        nanosleep(&tick, NULL);
        waited += 0.05;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* An installed benchmark's launcher is the malrun installed beside it; in the build tree
 * (no malrun there) mpiexec. */
static const char *default_launcher(void)
{
    static const char *const rel[] = {"malrun"};
    static char path[4096];
    if (path[0] == '\0' && !self_find(rel, 1, X_OK, path, sizeof path))
        snprintf(path, sizeof path, "mpiexec");
    return path;
}

int bench_launch(int nranks, char *const args[])
{
    const char *launcher = getenv("MAL_LAUNCHER");
    if (launcher == NULL || *launcher == '\0')
        launcher = default_launcher();
    int n = 0;
    while (args[n] != NULL)
        n++;
    char count[16];
    snprintf(count, sizeof count, "%d", nranks);
    char **argv = calloc((size_t)n + 4, sizeof *argv);
    if (argv == NULL)
        return -1;
    argv[0] = (char *)launcher;
    argv[1] = "-n";
    argv[2] = count;
    memcpy(argv + 3, args, (size_t)n * sizeof *argv);
    pid_t pid;
    int rc = posix_spawnp(&pid, launcher, NULL, NULL, argv, environ);
    free(argv);
    if (rc != 0) {
        fprintf(stderr, "cannot start %s: %s (set MAL_LAUNCHER, e.g. to tools/malrun)\n",
                launcher, strerror(rc));
        return -1;
    }
    return wait_bounded(pid, launcher);
}
