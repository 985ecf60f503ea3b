/* Status strings and the per-process error message. */
#include "core.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Per thread: an asynchronous expansion's background thread (procs/async.c) records its
 * own errors, which the main thread takes over when it completes or abandons it. */
/* A message names files (a hostfile's path may be long) and its 2-3 values: 1024 keeps
 * such a refusal whole; the rest is room for the call named before it. */
#define MESSAGE_MAX 1024
static _Thread_local char last_message[MESSAGE_MAX + 128];
static bool log_errors = true;
/* The public call in progress, named first by every message (engine_enter). */
static _Thread_local const char *current_call = "";
static _Thread_local bool enclosed; /* inside mal_step: the calls it makes keep its name */
/* This process's rank in mal_comm() while libmal is initialised, -1 otherwise: a fact of
 * the process (one libmal per process), set by mal_init, a join and a shrink. */
static int log_rank = -1;

void engine_set_log_rank(int rank)
{
    log_rank = rank;
}

void engine_enter(const char *call)
{
    if (!enclosed)
        current_call = call;
}

void engine_enclose(bool on)
{
    enclosed = on;
}

/* Whether `message` already starts with the name of `call` (followed by a character
 * that cannot continue the name: "mal_alloc_window(" but not "mal_alloc_array_aligned"
 * for mal_alloc_window). */
static bool names_call(const char *message, const char *call)
{
    size_t n = strlen(call);
    if (strncmp(message, call, n) != 0)
        return false;
    unsigned char next = (unsigned char)message[n];
    return !isalnum(next) && next != '_';
}

void engine_set_logging(bool on)
{
    log_errors = on;
}

bool engine_logging(void)
{
    return log_errors;
}

const char *engine_strerror(mal_status_t status)
{
    switch (status) {
#define MAL_STATUS_CASE_(name, value, text) \
    case name:                              \
        return text;
        MAL_STATUS_LIST(MAL_STATUS_CASE_)
#undef MAL_STATUS_CASE_
    }
    return "unknown libmal status";
}

const char *engine_error_message(void)
{
    return last_message;
}

/* Who says it: "libmal[2]" (the rank in mal_comm()) while libmal is initialised;
 * outside it, and in mal_init, the rank in MPI_COMM_WORLD ("libmal[world 2]"; in a
 * process an expansion spawned, whose MPI_COMM_WORLD is its spawn's, "libmal[spawned,
 * world 0]"), so every message says which process wrote it; "libmal" without MPI. */
static void log_prefix(char *out, size_t len)
{
    int up = 0, down = 0, world = -1;
    MPI_Comm parent = MPI_COMM_NULL;
    if (log_rank < 0) {
        MPI_Initialized(&up);
        MPI_Finalized(&down);
    }
    if (up && !down) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &world);
        MPI_Comm_get_parent(&parent);
    }
    if (log_rank >= 0)
        snprintf(out, len, "libmal[%d]", log_rank);
    else if (world >= 0)
        snprintf(out, len, "libmal[%sworld %d]", parent != MPI_COMM_NULL ? "spawned, " : "",
                 world);
    else
        snprintf(out, len, "libmal");
}

mal_status_t engine_fail(mal_status_t status, const char *fmt, ...)
{
    char text[MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (*current_call == '\0' || names_call(text, current_call))
        snprintf(last_message, sizeof last_message, "%s", text);
    else
        snprintf(last_message, sizeof last_message, "%s: %s", current_call, text);
    if (!log_errors)
        return status;
    char who[48];
    log_prefix(who, sizeof who);
    fprintf(stderr, "%s: %s: %s\n", who, engine_strerror(status), last_message);
    return status;
}

/* The one place that passes MPI_STATUSES_IGNORE: MPICH defines it as (MPI_Status *)1 and
 * declares the parameter an array, which GCC 12 takes for an empty array the call would
 * overrun (-Wstringop-overflow, at every call where it sees the constant). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
int engine_waitall(int n, MPI_Request *reqs, bool quiet)
{
    return quiet ? PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE)
                 : MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void engine_mpi_error_text(int rc, char text[MPI_MAX_ERROR_STRING])
{
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, MPI_MAX_ERROR_STRING, "MPI error %d", rc);
}

mal_status_t engine_mpi_check(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return MAL_OK;
    char text[MPI_MAX_ERROR_STRING];
    engine_mpi_error_text(rc, text);
    return engine_fail(MAL_ERR_MPI, "%s failed: %s", call, text);
}
