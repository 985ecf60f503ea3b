/* Status strings and the per-process error message. */
#include "engine.h"

#include <stdarg.h>
#include <stdio.h>

static char last_message[512];
static bool log_errors = true;

void engine_set_logging(bool on)
{
    log_errors = on;
}

const char *mal_strerror(mal_status_t status)
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

const char *mal_error_message(void)
{
    return last_message;
}

mal_status_t engine_fail(mal_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (!log_errors)
        return status;
    if (engine.initialized)
        fprintf(stderr, "libmal[%d]: %s: %s\n", engine.rank, mal_strerror(status),
                last_message);
    else
        fprintf(stderr, "libmal: %s: %s\n", mal_strerror(status), last_message);
    return status;
}

mal_status_t engine_mpi_check(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return MAL_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    return engine_fail(MAL_ERR_MPI, "%s failed: %s", call, text);
}

mal_status_t engine_require_init(const char *call)
{
    if (!engine.initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "%s called before mal_init", call);
    if (engine.removed)
        return engine_fail(MAL_ERR_RELEASED, "%s called on a process that a shrink released "
                           "(only mal_finalize is left)", call);
    return MAL_OK;
}
