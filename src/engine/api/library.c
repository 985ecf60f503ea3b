/* The calls about the library itself rather than a running application: its version,
 * the names of methods and status codes, the last error message, what this build
 * supports, and the hooks of libmal-pmpi (include/mal_pmpi.h). Each is local and callable
 * before mal_init(); the work is done in the layer that owns the fact. */
#include "core.h"
#include "mal.h"
#include "mal_pmpi.h"
#include "memory.h"
#include "platform.h"

const char *mal_version(void)
{
    return MAL_VERSION; /* the header's, compiled in when libmal was built */
}

void mal_version_numbers(int *major, int *minor, int *patch)
{
    if (major != NULL)
        *major = MAL_VERSION_MAJOR;
    if (minor != NULL)
        *minor = MAL_VERSION_MINOR;
    if (patch != NULL)
        *patch = MAL_VERSION_PATCH;
}

const char *mal_redist_name(mal_redist_t method)
{
    return engine_redist_name(method);
}

const char *mal_strerror(mal_status_t status)
{
    return engine_strerror(status);
}

const char *mal_error_message(void)
{
    return engine_error_message();
}

bool mal_redist_supported(mal_redist_t method)
{
    return engine_redist_supported(method);
}

bool mal_spawn_supported(const char **why)
{
    return engine_spawn_supported(why);
}

void mal_pmpi_attach(void)
{
    engine_pmpi_attach();
}

bool mal_pmpi_finalize_shmem(void)
{
    return engine_pmpi_finalize_shmem();
}
