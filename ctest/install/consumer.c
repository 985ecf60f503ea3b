/* A program built against an installed libmal, once through CMake (mal::mal) and once
 * through pkg-config (mal.pc); the installed mal_version.h is found beside mal.h and
 * agrees with the installed library. */
#include <mal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mal_array_t *a = NULL;
    int ok = mal_init(MPI_COMM_WORLD, NULL) == MAL_OK &&
             mal_alloc_window("v", MPI_DOUBLE, 10, 1, MAL_BLOCK, &a) == MAL_OK &&
             mal_free_array(a) == MAL_OK && mal_finalize() == MAL_OK &&
             strcmp(mal_version(), MAL_VERSION) == 0;
    printf("consumer: %s\n", ok ? "PASS" : "FAIL");
    MPI_Finalize();
    return ok ? 0 : 1;
}
