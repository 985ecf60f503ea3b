#include "bench_launch.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

int bench_launch(int nranks, char *const args[])
{
    const char *launcher = getenv("MAL_LAUNCHER");
    if (launcher == NULL || *launcher == '\0')
        launcher = "mpiexec";
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
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
