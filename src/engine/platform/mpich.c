/* MPICH's side (MPICH 4.0.2 of Debian 12, Hydra; derivatives alike where they share the
 * code). */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "core.h"
#include "platform.h"

#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* MPICH's error strings are stacks, one line per function ("fn(line)....: text"), the
 * cause last: that line's text. */
static const char *innermost(const char *text)
{
    const char *line = strrchr(text, '\n');
    line = line != NULL ? line + 1 : text;
    const char *colon = strstr(line, ": ");
    return colon != NULL && colon[2] != '\0' ? colon + 2 : line;
}

/* MPI_Comm_spawn in MPICH's ch4 device first opens a port (MPID_Open_port), and the
 * ch4:ucx network module before MPICH 4.3 has no dynamic processes: its port functions
 * answer "not supported with ucx netmod", and the spawn fails with only "Error in spawn
 * call" (docs/design.md, "Two MPI families"). Opening a port and closing it again asks
 * the same question without starting anything. MPI_Open_port reports to MPI_COMM_SELF's
 * error handler (MPI 4; MPI_COMM_WORLD's before), so both return errors meanwhile. */
static bool mpich_can_spawn(const char *version, char *why, size_t len)
{
    MPI_Errhandler self, world;
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME];
    int rc = MPI_Open_port(MPI_INFO_NULL, port);
    if (rc == MPI_SUCCESS)
        MPI_Close_port(port);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    MPI_Errhandler_free(&self);
    MPI_Errhandler_free(&world);
    if (rc == MPI_SUCCESS)
        return true;
    char text[MPI_MAX_ERROR_STRING];
    engine_mpi_error_text(rc, text);
    snprintf(why, len, "%s cannot start processes (MPI_Open_port, which MPI_Comm_spawn "
             "needs, failed: %s); expansions need an MPI with dynamic processes: Open MPI, "
             "or an MPICH build whose device has them (ch4:ucx from MPICH 4.3, ch4:ofi, "
             "ch3)", version, innermost(text));
    return false;
}

/* Hydra's PMI sets it for every process it starts. */
static bool mpich_launched(void)
{
    return getenv("PMI_SIZE") != NULL;
}

/* Hydra places any number of processes on its hosts, in turn. */
static bool mpich_oversubscribes(void)
{
    return true;
}

/* Hydra's hostfile ("host:N") is not Open MPI's: the room comes from elsewhere. */
static const char *mpich_hostfile(const char **variable)
{
    (void)variable;
    return NULL;
}

/* MPICH selects no components libmal must judge: its windows span jobs alike on every
 * rank (ch4's one RMA path). Nothing is read. */
static void mpich_probe(engine_mpi_selection_t *out, int thread_level)
{
    (void)thread_level;
    out->known = false;
}

/* MPICH's spawn ends in MPI_Comm_accept on a port with no time-out (ch4_spawn.c of
 * MPICH 4.0: the accept's "timeout" info is not passed by spawn; only a connect has
 * MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT): a lost start waits for ever; only Hydra's
 * MPIEXEC_TIMEOUT, which ends the whole job, bounds it. Nothing to set. */
static void mpich_bound_spawns(int seconds)
{
    (void)seconds;
}

/* MPICH needs nothing set before MPI_Init for expansions. */
static void mpich_settle_at_load(void)
{
}

static int mpich_spawn_bound(const char **setting, const char **value)
{
    *setting = NULL;
    *value = NULL;
    return 0;
}

/* Hydra takes any exit after the job's end as its end; it has no such setting. */
static bool mpich_clean_exit_allowed(void)
{
    return true;
}

/* Hydra's spawn reads the info keys path, wdir, host, hosts and hostfile only; the
 * children get the environment of mpiexec, not of their parent. */
static int mpich_spawn_environment(MPI_Info info, const char *assignment)
{
    (void)info;
    (void)assignment;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

/* MPICH 4.0's MPI_Finalize over UCX can hang after the application's work is done
 * (docs/design.md, "Two MPI families"): each process closes its UCX endpoints, waits
 * for the closes, then blocks in a PMI barrier without progressing UCX, so a peer whose
 * close still needs an answer from it waits for ever (pmodels/mpich pull request 6596
 * removed that barrier after MPICH 4.1). Measured across the emulated hosts (UCX over
 * TCP): plain MPI programs hung now and then, libmal's jobs in up to half the runs.
 * Bounded here: an attribute of MPI_COMM_SELF, whose deletion is the first thing
 * MPI_Finalize does (the MPI standard's hook for it), starts a thread that watches
 * until MPI_Finalized says finalize returned (MPICH: an atomic read, callable from any
 * thread). A process still closing after `seconds` enters the barrier and then PMI's
 * finalize in its own name (Hydra's PMI-1 lines, on its PMI_FD), so that the processes
 * waiting there go on and finish as they would have, and ends itself with status 0
 * (what it would have done after MPI_Finalize is lost; its output is flushed first).
 * Its finalizing thread is parked first (a real-time signal whose handler only waits):
 * freed by a peer's end, it would enter the same barrier a second time. Ending it
 * without the barrier left the others waiting, or made mpiexec fail to answer a
 * barrier of a process gone. One still waiting after three times the bound ends as
 * well. */
static int finalize_bound;
static pthread_t finalizer;  /* the thread in MPI_Finalize                        */
static pid_t finalizer_tid;  /* the same, as /proc names it                        */

static void park_thread(int sig)
{
    (void)sig;
    for (;;)
        pause();
}

/* Stops the finalizing thread where it is, for good: nothing of it runs again. */
static void park_finalizer(void)
{
    struct sigaction park = {.sa_handler = park_thread};
    sigemptyset(&park.sa_mask);
    if (sigaction(SIGRTMIN + 1, &park, NULL) == 0 && pthread_kill(finalizer, SIGRTMIN + 1) == 0)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL); /* let it take it */
}

/* The finalizing thread's system call, from /proc: its number and first argument.
 * Read without stdio or malloc: the thread may be parked holding their locks. */
static bool finalizer_syscall(long *nr, unsigned long *arg)
{
    char path[64], text[128];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)finalizer_tid);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return false;
    text[n] = '\0';
    char *end = NULL;
    *nr = strtol(text, &end, 10); /* "running" for a thread on a core: no number */
    if (end == text || strncmp(end, " 0x", 3) != 0)
        return false;
    *arg = strtoul(end + 3, NULL, 16);
    return true;
}

/* Hydra's PMI socket, when the process speaks PMI-1 (MPICH's default) over it. */
static int pmi1_socket(void)
{
    const char *fd = getenv("PMI_FD"), *version = getenv("MPIR_CVAR_PMI_VERSION");
    if (fd == NULL || (version != NULL && strcmp(version, "1") != 0))
        return -1;
    return (int)strtol(fd, NULL, 10);
}

/* Whether the finalizing thread waits in a read of the PMI socket: the barrier. */
static bool waiting_in_pmi(int pmi)
{
    long nr = -1;
    unsigned long fd = 0;
    return pmi >= 0 && finalizer_syscall(&nr, &fd) && nr == SYS_read && fd == (unsigned)pmi;
}

/* One PMI-1 exchange in this process's name: `command`, then every line Hydra sends
 * until one holding `reply`, each read within `seconds`. NULL when done, else what
 * went wrong. */
static const char *pmi1_exchange(int pmi, const char *command, const char *reply,
                                 int seconds)
{
    size_t len = strlen(command);
    if (write(pmi, command, len) != (ssize_t)len)
        return "could not write to the PMI socket";
    char text[4096];
    size_t used = 0;
    for (;;) {
        struct pollfd p = {.fd = pmi, .events = POLLIN};
        if (poll(&p, 1, seconds * 1000) != 1)
            return "no answer";
        ssize_t n = read(pmi, text + used, sizeof text - 1 - used);
        if (n <= 0)
            return n == 0 ? "the PMI socket closed" : "could not read the PMI socket";
        used += (size_t)n;
        text[used] = '\0';
        if (strstr(text, reply) != NULL)
            return NULL;
        char *last = strrchr(text, '\n'); /* keep only an unfinished line */
        if (last != NULL) {
            used = strlen(last + 1);
            memmove(text, last + 1, used + 1);
        }
        if (used == sizeof text - 1)
            used = 0;
    }
}

/* What MPI_Finalize has left to tell Hydra, in this process's name: the barrier its
 * peers wait in, then PMI's finalize, so that Hydra sees this process end as theirs do.
 * What happened, for the notice. */
static void finish_with_hydra(int pmi, int seconds, char *how, size_t len)
{
    const char *barrier = pmi >= 0 ? pmi1_exchange(pmi, "cmd=barrier_in\n",
                                                   "cmd=barrier_out", seconds)
                                   : "no PMI-1 socket";
    const char *finalize = barrier == NULL ? pmi1_exchange(pmi, "cmd=finalize\n",
                                                           "cmd=finalize_ack", seconds)
                                           : "not tried";
    if (barrier == NULL && finalize == NULL)
        snprintf(how, len, "finished with Hydra for its peers");
    else
        snprintf(how, len, "could not finish with Hydra (barrier: %s; finalize: %s)",
                 barrier != NULL ? barrier : "done", finalize != NULL ? finalize : "done");
}

/* After park_finalizer: write(2) only, no stdio (flushed before the parking). */
static void end_process(long waited_ms, const char *how)
{
    char line[320];
    int n = snprintf(line, sizeof line, "libmal: MPI_Finalize has not returned after %ld s "
                     "(MPICH 4.0 over UCX can wait for a peer that no longer answers); this "
                     "process %s and ends itself with status 0 (MAL_RECONF_TIMEOUT sets the "
                     "bound)\n", waited_ms / 1000, how);
    ssize_t written = write(STDERR_FILENO, line, (size_t)n);
    (void)written; /* nothing else to tell it to */
    _exit(0);
}

static void *watch_finalize(void *arg)
{
    (void)arg;
    struct timespec tick = {0, 50 * 1000 * 1000};
    long bound_ms = finalize_bound * 1000L;
    int pmi = pmi1_socket();
    for (long waited_ms = 0;; waited_ms += 50) {
        int done = 0;
        MPI_Finalized(&done);
        if (done)
            return NULL;
        if (waited_ms >= 3 * bound_ms) {
            fflush(NULL);
            end_process(waited_ms, "still waits");
        }
        if (waited_ms >= bound_ms && !waiting_in_pmi(pmi)) {
            fflush(NULL); /* while the finalizing thread may still release stdio's locks */
            park_finalizer();
            char how[160];
            if (!waiting_in_pmi(pmi)) { /* parked, and not in the barrier after all */
                finish_with_hydra(pmi, finalize_bound, how, sizeof how);
                end_process(waited_ms, how);
            }
        }
        nanosleep(&tick, NULL);
    }
}

static int start_watch(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)value;
    (void)extra;
    pthread_t thread;
    finalizer = pthread_self();
    finalizer_tid = (pid_t)syscall(SYS_gettid);
    if (pthread_create(&thread, NULL, watch_finalize, NULL) == 0)
        pthread_detach(thread);
    return MPI_SUCCESS;
}

static void mpich_bound_finalize(int seconds)
{
    if (finalize_bound > 0) /* armed already (one attribute per process) */
        return;
    int key = MPI_KEYVAL_INVALID;
    finalize_bound = seconds;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, start_watch, &key, NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) != MPI_SUCCESS)
        finalize_bound = 0;
}

const engine_mpi_side_t engine_mpi_mpich = {
    .can_spawn = mpich_can_spawn,
    .launched = mpich_launched,
    .oversubscribes = mpich_oversubscribes,
    .hostfile = mpich_hostfile,
    .probe = mpich_probe,
    .window_fix = "use MAL_MEMORY=direct on one host",
    .slots_fix = "give mpiexec the slots (-hosts HOST:SLOTS)",
    .bound_spawns = mpich_bound_spawns,
    .settle_at_load = mpich_settle_at_load,
    .spawn_bound = mpich_spawn_bound,
    .clean_exit_allowed = mpich_clean_exit_allowed,
    .clean_exit_setting = NULL,
    .bound_finalize = mpich_bound_finalize,
    .daemons_outside_slurm = "HYDRA_LAUNCHER=ssh",
    .spawn_environment = mpich_spawn_environment,
};
