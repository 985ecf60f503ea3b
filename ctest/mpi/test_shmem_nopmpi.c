/* A program that does not link libmal-pmpi asks for the SHMEM transport (MAL_REDIST=shmem,
 * under oshrun): mal_init refuses it with MAL_ERR_UNSUPPORTED naming the fix, instead of
 * starting SHMEM whose finalize would crash the program's MPI_Finalize at exit; nothing
 * is left initialised and the program ends normally. */
#include "mal.h"
#include "mpitest.h"

#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mal_status_t st = mal_init(MPI_COMM_WORLD, NULL);
    CHECK(st == MAL_ERR_UNSUPPORTED, "mal_init returned %s, not MAL_ERR_UNSUPPORTED",
          mal_strerror(st));
    const char *msg = mal_error_message();
    CHECK(strstr(msg, "mal::pmpi") != NULL && strstr(msg, "-lmal-pmpi") != NULL,
          "the message does not name the fix: %s", msg);
    CHECK(!mal_is_initialized(), "a refused SHMEM init left libmal initialised");
    int rc = mpitest_verdict("test_shmem_nopmpi", "SHMEM refused without libmal-pmpi, "
                             "the fix named");
    MPI_Finalize();
    return rc;
}
