/* A user program's own globals cannot clash with libmal's internals: this program
 * defines a global named `engine`, the name of libmal's internal state, which libmal.so
 * used to export (the program's definition then replaced it and libmal crashed). It also
 * calls the previous release's names (mal.h's deprecated aliases), which must still
 * compile and reach the same calls. */
#include "mal.h"
#include "mpitest.h"

#include <string.h>

int engine[64] = {1};

static void check_engine_untouched(void)
{
    int zeros = 0;
    for (int i = 1; i < 64; i++)
        zeros += engine[i] == 0;
    CHECK(engine[0] == 1 && zeros == 63, "libmal wrote into the program's global engine");
}

/* Old and new names of one release give the same answers. */
static void check_aliases(mal_array_t *a)
{
    CHECK(mal_initialized() && mal_is_initialized(), "mal_initialized");
    CHECK(mal_is_initial() && mal_is_initial_process(), "mal_is_initial");
    CHECK(mal_find_window("v") == a && mal_find_array("v") == a, "mal_find_window");
    CHECK(mal_window_count() == mal_buffer_count() && mal_buffer_count() > 0,
          "mal_window_count %d", mal_buffer_count());
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.summary = false;
    mal_array_t *a = NULL;
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
    if (st == MAL_OK)
        st = mal_alloc_window("v", MPI_DOUBLE, 64, 2, MAL_BLOCK, &a);
    CHECK(st == MAL_OK, "mal_alloc_window: %s", mal_error_message());
    if (st == MAL_OK) {
        double *v = mal_local_data(a);
        for (int64_t i = 0; i < 2 * mal_local_rows(a); i++)
            v[i] = (double)(2 * mal_first_row(a) + i);
        check_aliases(a);
        CHECK(mal_free_window(a) == MAL_OK, "mal_free_window: %s", mal_error_message());
        CHECK(mal_finalize() == MAL_OK, "mal_finalize: %s", mal_error_message());
    }
    check_engine_untouched();
    int rc = mpitest_verdict("test_user_global", "a program's global engine is its own");
    MPI_Finalize();
    return rc;
}
