/* The version: the header's macros equal project(VERSION) (passed by ctest/CMakeLists.txt
 * as MAL_TEST_PROJECT_VERSION), and the library's mal_version() and
 * mal_version_numbers() equal the macros. No MPI call: both are callable before
 * MPI_Init. Compiled without the deprecated aliases: mal.h stands without them. */
#define MAL_NO_DEPRECATED
#include "mal.h"
#include "unittest.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%d.%d.%d", MAL_VERSION_MAJOR, MAL_VERSION_MINOR,
             MAL_VERSION_PATCH);
    CHECK(strcmp(MAL_VERSION, MAL_TEST_PROJECT_VERSION) == 0, "MAL_VERSION %s, project %s",
          MAL_VERSION, MAL_TEST_PROJECT_VERSION);
    CHECK(strcmp(numbers, MAL_VERSION) == 0, "macros %s, MAL_VERSION %s", numbers,
          MAL_VERSION);
    CHECK(MAL_VERSION_NUMBER ==
              MAL_VERSION_MAJOR * 10000 + MAL_VERSION_MINOR * 100 + MAL_VERSION_PATCH,
          "MAL_VERSION_NUMBER %d", MAL_VERSION_NUMBER);
    CHECK(mal_version() != NULL && strcmp(mal_version(), MAL_VERSION) == 0,
          "mal_version() %s, MAL_VERSION %s", mal_version() ? mal_version() : "(null)",
          MAL_VERSION);
    int major = -1, minor = -1, patch = -1;
    mal_version_numbers(&major, &minor, &patch);
    CHECK(major == MAL_VERSION_MAJOR && minor == MAL_VERSION_MINOR &&
              patch == MAL_VERSION_PATCH,
          "mal_version_numbers %d.%d.%d, macros %s", major, minor, patch, MAL_VERSION);
    mal_version_numbers(NULL, NULL, NULL); /* every pointer may be NULL */
    printf("test_version: %s (%s)\n", failures ? "FAIL" : "PASS", mal_version());
    return failures != 0;
}
