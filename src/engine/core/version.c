/* The version of the running library: the header's macros, compiled in when libmal
 * was built, so a program can compare them with the header it was compiled with. */
#include "mal.h"

const char *mal_version(void)
{
    return MAL_VERSION;
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
