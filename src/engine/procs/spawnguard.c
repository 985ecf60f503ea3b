/* Bounded spawns: what keeps a lost process start from hanging the application.
 *
 * On Open MPI 4.1 with PMIx 4.2 the runtime now and then loses a new process's start
 * (docs/design.md, "The spawn hang"): mpirun's PMIx server accepts the child's
 * connection but never reads its first request, so the child waits in MPI_Init and the
 * spawning root in PMIx_Lookup, both for ever by default. This file bounds both sides,
 * through the family's side (platform/) for what the runtime is told:
 *
 * - The root's wait: when the library is loaded (before the application's MPI_Init,
 *   where the runtime reads its settings), the side is given MAL_RECONF_TIMEOUT to set
 *   its runtime's bound unless the user set one (Open MPI: pmix_base_exchange_timeout;
 *   MPICH has none, docs/design.md, "Two MPI families").
 * - The child libmal spawned (marked by MAL_SPAWNED in its spawn environment, where the
 *   family's spawn can set it) turns SIGTERM into exit(0) until its mal_init. The root
 *   records the processes a failed spawn left on this host (the launcher's new
 *   children) and ends them just before MPI_Finalize: ending them at once made every
 *   later spawn of the run hang, and a launcher told to take an exit without
 *   MPI_Finalize for a normal end (tools/malrun tells Open MPI's) takes exit(0) for one;
 *   without it, mpirun may report an abnormal end once the application finished,
 *   instead of waiting for the lost process for ever.
 * - MAL_FAULT_SPAWN_HANG (testing): a libmal-spawned child stops before main, as a
 *   lost start does, so the time-out path can be tested on purpose. */
#include "core.h"
#include "platform.h"
#include "settings.h"
#include "spawning.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPAWNED_MARK "MAL_SPAWNED"

/* File-static, not in libmal's state: all of it is a fact of the process, not of one
 * mal_init. The bound is read once when the library is loaded (before MPI_Init, which
 * reads the runtime's parameter); the SIGTERM guard lasts from the process's start to
 * its first mal_init; the processes lost spawns left are this host's until MPI ends.
 * Parsed once at load with settings.c's parser; mal_init reports a bad value
 * (engine_reconf_timeout_check), from the text read at load. */
static int reconf_timeout;
static char reconf_timeout_text[64];
static bool guarding_sigterm;
static struct sigaction sigterm_before;
/* Processes failed spawns left on this host, ended at finalize. */
static pid_t stuck[ENGINE_MAX_SIBLINGS];
static int nstuck;

static void parse_timeout(void)
{
    const char *text = setting_env(SETTING_RECONF_TIMEOUT);
    int64_t v = setting_row(SETTING_RECONF_TIMEOUT)->fallback;
    if (text != NULL) {
        snprintf(reconf_timeout_text, sizeof reconf_timeout_text, "%s", text);
        if (!setting_parse_number(SETTING_RECONF_TIMEOUT, text, &v))
            v = setting_row(SETTING_RECONF_TIMEOUT)->fallback;
    }
    reconf_timeout = (int)v;
}

static void exit_as_unstarted(int sig)
{
    (void)sig;
    _exit(0);
}

__attribute__((constructor)) static void bound_spawns_at_load(void)
{
    parse_timeout();
    engine_mpi_side()->settle_at_load();
    engine_mpi_side()->bound_spawns(reconf_timeout);
    if (getenv(SPAWNED_MARK) == NULL)
        return;
    struct sigaction guard = {.sa_handler = exit_as_unstarted};
    sigemptyset(&guard.sa_mask);
    guarding_sigterm = sigaction(SIGTERM, &guard, &sigterm_before) == 0;
    if (setting_flag(SETTING_FAULT_SPAWN_HANG))
        for (;;)
            pause();
}

int engine_spawn_bound(void)
{
    const char *setting, *value;
    return engine_mpi_side()->spawn_bound(&setting, &value);
}

void engine_spawn_bound_notice(void)
{
    const char *setting, *value;
    int bound = engine_mpi_side()->spawn_bound(&setting, &value);
    if (!engine_spawn_supported(NULL))
        return;
    if (bound > reconf_timeout && setting == NULL) /* the runtime's own, fixed bound */
        engine_notice("libmal: spawn: %s waits a fixed %d s for a start it lost; "
                      "MAL_RECONF_TIMEOUT (%d s) cannot shorten that wait (docs/design.md, "
                      "\"Open MPI 5\")\n", engine_mpi_version(), bound, reconf_timeout);
    if (bound > 0)
        return;
    if (setting == NULL)
        engine_notice("libmal: spawn: %s bounds no spawn: one whose start the runtime lost "
                      "would wait for ever (only the launcher's time limit for the whole "
                      "job ends it)\n", engine_mpi_version());
    else
        engine_notice("libmal: spawn: %s=%s never fails a spawn whose start the MPI runtime "
                      "lost (Open MPI 4.1 fails only a multiple of 4 or one less): such a "
                      "spawn would wait for ever; unset it to let MAL_RECONF_TIMEOUT set "
                      "it\n", setting, value != NULL ? value : "(unset)");
}

void engine_finalize_bound(void)
{
    engine_mpi_side()->bound_finalize(reconf_timeout);
}

mal_status_t engine_reconf_timeout_check(void)
{
    int64_t v = 0;
    return setting_number_from(SETTING_RECONF_TIMEOUT, reconf_timeout_text, &v);
}

void engine_spawn_guard_end(void)
{
    struct sigaction now;
    /* Only while the guard is still in place: the program may have set its own. */
    if (guarding_sigterm && sigaction(SIGTERM, NULL, &now) == 0 &&
        now.sa_handler == exit_as_unstarted)
        sigaction(SIGTERM, &sigterm_before, NULL);
    guarding_sigterm = false;
}

mal_status_t engine_spawn_mark(MPI_Info info)
{
    int rc = engine_mpi_side()->spawn_environment(info, SPAWNED_MARK "=1");
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) /* the family cannot: the child goes unguarded */
        return MAL_OK;
    return engine_mpi_check(rc, "mal_expand: MPI_Info_set");
}

/* The launcher's children on this host: our parent's children (pids sorted by /proc). */
int engine_spawn_siblings(pid_t *pids, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    pid_t parent = getppid();
    while (d != NULL && (e = readdir(d)) != NULL && n < max) {
        char path[64];
        int pid = 0, ppid = 0;
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        /* "pid (comm) state ppid": comm may hold spaces, so read after its ')'. */
        char line[512];
        if (fgets(line, sizeof line, f) != NULL) {
            const char *close = strrchr(line, ')');
            pid = atoi(line);
            if (close != NULL && sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == parent)
                pids[n++] = pid;
        }
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

int engine_spawn_note_stuck(const pid_t *before, int nbefore)
{
    pid_t now[ENGINE_MAX_SIBLINGS];
    int n = engine_spawn_siblings(now, ENGINE_MAX_SIBLINGS), added = 0;
    for (int i = 0; i < n && nstuck < ENGINE_MAX_SIBLINGS; i++) {
        bool old = false;
        for (int j = 0; j < nbefore && !old; j++)
            old = now[i] == before[j];
        if (!old) {
            stuck[nstuck++] = now[i];
            added++;
        }
    }
    return added;
}

void engine_spawn_end_stuck(void)
{
    const engine_mpi_side_t *side = engine_mpi_side();
    const char *fix = side->clean_exit_setting;
    if (nstuck > 0 && !side->clean_exit_allowed())
        engine_notice("libmal: ending %d process(es) whose start the MPI runtime lost; "
                      "this launcher may report that as an abnormal end (set %s, as "
                      "tools/malrun does)\n", nstuck, fix != NULL ? fix : "(none known)");
    for (int i = 0; i < nstuck; i++)
        kill(stuck[i], SIGTERM);
    nstuck = 0;
}
