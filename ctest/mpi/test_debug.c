/* Debug mode (MAL_DEBUG=1; docs/guide/troubleshooting.md): the two mistakes a malleable
 * program makes silently, each made on purpose by one mode, and the same program without
 * them. Linked with libmal-pmpi. Modes (argv[1]); the plan comes from MAL_PLAN:
 *   stale       structure "y" is written through the pointer read before the loop, never
 *               read again ("x" is read again every iteration): after a reconfiguration
 *               the write must die with libmal's line naming "y" (ctest matches it)
 *   reread      both read again every iteration: every row bit-exact at the end, with
 *               debug mode on or off alike
 *   world       a shrink, then MPI_Allreduce on MPI_COMM_WORLD, which waits for the
 *               released process for ever: libmal-pmpi must name the call and abort first
 *   world_clean MPI_COMM_WORLD used before mal_init, while it still holds the
 *               application's processes and after mal_finalize, mal_comm() after the
 *               shrink: nothing may be reported */
#include "mal.h"
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>

#define ROWS 4099
#define ITERS 8

typedef enum { STALE, REREAD, WORLD, WORLD_CLEAN } test_mode_t;

/* What iteration `it` adds to global row `g` of structure `k`: the sum over the run is
 * exact in doubles, so the end is checked bit for bit wherever the rows went. */
static double term(int k, int64_t g, int64_t it)
{
    return (double)(3 * g + k) + 0.5 * (double)it;
}

static double expected(int k, int64_t g)
{
    return (double)ITERS * (double)(3 * g + k) + 0.25 * ITERS * (ITERS - 1);
}

static void add_iteration(const mal_array_t *a, double *data, int k, int64_t it)
{
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        data[i] += term(k, mal_first_row(a) + i, it);
}

static void check_rows(const mal_array_t *a, int k)
{
    const double *data = mal_local_data(a);
    long bad = 0;
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        bad += data[i] != expected(k, mal_first_row(a) + i);
    CHECK(bad == 0, "%ld wrong rows of structure %d", bad, k);
}

/* A sum over `comm` of one per process, checked against its size. */
static void count_over(MPI_Comm comm)
{
    long one = 1, all = 0;
    int size = 0;
    MPI_Allreduce(&one, &all, 1, MPI_LONG, MPI_SUM, comm);
    MPI_Comm_size(comm, &size);
    CHECK(all == size, "a sum over %d processes gave %ld", size, all);
}

/* The loop; false on a process the plan released. */
static bool iterate(test_mode_t mode, mal_array_t *x, mal_array_t *y)
{
    double *y_before = mal_local_data(y); /* the mistake of the stale mode */
    bool reconfigured = false;
    mal_status_t st = MAL_OK;
    for (int64_t it = mal_iteration(); it < ITERS && st != MAL_REMOVED; it++) {
        add_iteration(x, mal_local_data(x), 0, it);
        add_iteration(y, mode == STALE ? y_before : mal_local_data(y), 1, it);
        if (mode == WORLD && reconfigured)
            count_over(MPI_COMM_WORLD); /* the mistake of the world mode */
        if (mode == WORLD_CLEAN)
            count_over(reconfigured ? mal_comm() : MPI_COMM_WORLD);
        st = mal_step();
        CHECK(st == MAL_OK || st == MAL_RECONFIGURED || st == MAL_REMOVED, "mal_step: %s",
              mal_error_message());
        reconfigured |= st == MAL_RECONFIGURED;
    }
    return st != MAL_REMOVED;
}

static test_mode_t mode_of(const char *name)
{
    static const char *const names[] = {"stale", "reread", "world", "world_clean"};
    for (int m = 0; m < 4; m++)
        if (name != NULL && strcmp(name, names[m]) == 0)
            return (test_mode_t)m;
    fprintf(stderr, "test_debug: FAIL (unknown mode '%s')\n", name ? name : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return STALE;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_mode_t mode = mode_of(argc > 1 ? argv[1] : NULL);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (mode == WORLD_CLEAN && parent == MPI_COMM_NULL)
        count_over(MPI_COMM_WORLD); /* before mal_init: the program's own */
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.summary = false;
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
    mal_array_t *x = NULL, *y = NULL;
    if (st == MAL_OK) {
        mal_alloc_window("x", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &x);
        mal_alloc_window("y", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &y);
        CHECK(x != NULL && y != NULL, "mal_alloc_window: %s", mal_error_message());
    }
    if (x != NULL && y != NULL && iterate(mode, x, y)) {
        check_rows(x, 0);
        check_rows(y, 1);
    }
    mal_finalize();
    if (mode == WORLD_CLEAN)
        count_over(MPI_COMM_WORLD); /* after mal_finalize: the program's own again */
    int rc = mpitest_verdict("test_debug", "every row bit-exact, nothing reported");
    MPI_Finalize();
    return rc;
}
