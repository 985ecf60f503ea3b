/* Halos, neighbours and swaps through every kind of layout change: mal_alloc_halo,
 * mal_neighbors, mal_halo_exchange and mal_swap_arrays.
 *
 * After every change, on every rank (one holding zero rows and a joiner included): both
 * grids hold their rows bit-exactly, each the rows it held before (a swap follows
 * them); writing every halo row changes no owned row (the room is there, outside the
 * block); the halo exchange fills exactly the rows the halo stands for, from as many
 * ranks as they need (a halo of 2 beside blocks of 1 row), and leaves the rows beyond
 * the grid and an empty rank's halo alone; the neighbours are the nearest ranks holding
 * rows, and an MPI_Sendrecv with them on mal_comm() brings the adjacent rows.
 *
 *   test_halo rebalance  the exchange's messages counted as the application's by the
 *                        monitor (libmal-pmpi); random rebalances (zero weights
 *                        included), a swap at most steps; then swaps made on rank 0
 *                        only: the next rebalance and
 *                        the free fail on every rank with MAL_ERR_MISMATCH, nothing
 *                        moved, and mal_finalize still frees (it would hang otherwise)
 *   test_halo plan       a plan from the start's process count: expansions, a rebalance
 *                        to zero rows and back, a release of rank 0; one swap per
 *                        iteration, as a stencil's double buffer */
#include "mal.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

#define ROWS 37
#define LEN 3
#define HALO 2
#define STEPS 60
#define ITERS 12
#define SENTINEL (-0.25)

static double cell(int64_t g, int64_t c, int64_t version)
{
    return (double)(mpitest_mix((uint64_t)(g * LEN + c) * 1000003u + (uint64_t)version) >> 12);
}

static void fill(mal_array_t *a, int64_t version)
{
    double *d = mal_local_data(a);
    int64_t first = mal_first_row(a);
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        for (int64_t c = 0; c < LEN; c++)
            d[i * LEN + c] = cell(first + i, c, version);
}

static int64_t count_bad(const mal_array_t *a, int64_t version)
{
    const double *d = mal_local_data(a);
    int64_t first = mal_first_row(a), bad = 0;
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        for (int64_t c = 0; c < LEN; c++)
            bad += d[i * LEN + c] != cell(first + i, c, version);
    return bad;
}

/* Every halo row, before the block and after it (adjacent on an empty rank): local row
 * indices -HALO .. -1 and rows .. rows + HALO - 1. */
static void poison_halo(mal_array_t *a)
{
    double *d = mal_local_data(a);
    int64_t rows = mal_local_rows(a);
    for (int64_t k = 1; k <= HALO; k++)
        for (int64_t c = 0; c < LEN; c++) {
            d[-k * LEN + c] = SENTINEL;
            d[(rows + k - 1) * LEN + c] = SENTINEL;
        }
}

/* Local row `i` (a halo row when outside 0 .. rows - 1) holds global row first + i of
 * `version`, or the sentinel where that row is beyond the grid or `filled` is false. */
static int64_t count_bad_row(const mal_array_t *a, int64_t i, int64_t version, bool filled)
{
    const double *d = mal_local_data(a);
    int64_t g = mal_first_row(a) + i, bad = 0;
    bool in_grid = g >= 0 && g < ROWS && filled;
    for (int64_t c = 0; c < LEN; c++)
        bad += d[i * LEN + c] != (in_grid ? cell(g, c, version) : SENTINEL);
    return bad;
}

static int64_t count_bad_halo(const mal_array_t *a, int64_t version, bool filled)
{
    int64_t rows = mal_local_rows(a), bad = 0;
    filled = filled && rows > 0; /* an empty rank's halo is left alone */
    for (int64_t k = 1; k <= HALO; k++)
        bad += count_bad_row(a, -k, version, filled) +
               count_bad_row(a, rows + k - 1, version, filled);
    return bad;
}

/* The nearest ranks holding rows, from every rank's row count. */
static void check_neighbors(const mal_array_t *a, const char *when)
{
    int rank, size, up = -7, down = -7;
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Comm_size(mal_comm(), &size);
    int64_t mine = mal_local_rows(a), *rows = malloc((size_t)size * sizeof *rows);
    MPI_Allgather(&mine, 1, MPI_INT64_T, rows, 1, MPI_INT64_T, mal_comm());
    int want_up = MPI_PROC_NULL, want_down = MPI_PROC_NULL;
    for (int r = rank - 1; r >= 0 && mine > 0 && want_up == MPI_PROC_NULL; r--)
        want_up = rows[r] > 0 ? r : MPI_PROC_NULL;
    for (int r = rank + 1; r < size && mine > 0 && want_down == MPI_PROC_NULL; r++)
        want_down = rows[r] > 0 ? r : MPI_PROC_NULL;
    CHECK(mal_neighbors(a, &up, &down) == MAL_OK, "%s: mal_neighbors: %s", when,
          mal_error_message());
    CHECK(up == want_up && down == want_down, "%s: rank %d (%lld rows) has neighbours %d and "
          "%d, expected %d and %d", when, rank, (long long)mine, up, down, want_up, want_down);
    free(rows);
}

/* The pattern of a stencil without the helper: the adjacent row from each neighbour. */
static void sendrecv_adjacent(mal_array_t *a)
{
    int up, down;
    mal_neighbors(a, &up, &down);
    double *d = mal_local_data(a);
    int64_t rows = mal_local_rows(a);
    MPI_Sendrecv(d, LEN, MPI_DOUBLE, up, 0, d + rows * LEN, LEN, MPI_DOUBLE, down, 0,
                 mal_comm(), MPI_STATUS_IGNORE);
    MPI_Sendrecv(d + (rows - 1) * LEN, LEN, MPI_DOUBLE, down, 1, d - LEN, LEN, MPI_DOUBLE,
                 up, 1, mal_comm(), MPI_STATUS_IGNORE);
}

/* The halo of `a` (holding `version`) after a layout change; `b`, the other grid (holding
 * `other`), keeps its rows whatever is written around `a`'s. */
static void check_halo(mal_array_t *a, int64_t version, mal_array_t *b, int64_t other,
                       const char *when)
{
    poison_halo(a);
    CHECK(count_bad(a, version) == 0 && count_bad(b, other) == 0,
          "%s: writing the halo changed owned rows", when);
    CHECK(count_bad_halo(a, version, false) == 0, "%s: the halo does not hold what was "
          "written", when);
    CHECK(mal_halo_exchange(a) == MAL_OK, "%s: mal_halo_exchange: %s", when,
          mal_error_message());
    CHECK(count_bad_halo(a, version, true) == 0, "%s: the exchanged halo is wrong", when);
    CHECK(count_bad(a, version) == 0, "%s: the exchange changed owned rows", when);
    check_neighbors(a, when);
    poison_halo(a);
    sendrecv_adjacent(a); /* on an empty rank too: its neighbours are MPI_PROC_NULL */
    int64_t rows = mal_local_rows(a), bad = 0;
    if (rows > 0)
        bad = count_bad_row(a, -1, version, true) + count_bad_row(a, rows, version, true);
    CHECK(bad == 0, "%s: the rows from the neighbours are wrong", when);
}

static bool alloc_grids(mal_array_t **u, mal_array_t **v)
{
    mal_status_t st = mal_alloc_halo("u", MPI_DOUBLE, ROWS, LEN, HALO, u);
    if (st == MAL_OK)
        st = mal_alloc_halo("v", MPI_DOUBLE, ROWS, LEN, HALO, v);
    CHECK(st == MAL_OK, "mal_alloc_halo: %s", mal_error_message());
    CHECK(st != MAL_OK || mal_halo_rows(*u) == HALO, "mal_halo_rows is %lld",
          (long long)mal_halo_rows(*u));
    return st == MAL_OK;
}

/* Swap, checking that the handles exchanged their rows, not copied them. */
static void swap(mal_array_t *u, mal_array_t *v, int64_t *ver_u, int64_t *ver_v)
{
    void *du = mal_local_data(u), *dv = mal_local_data(v);
    CHECK(mal_swap_arrays(u, v) == MAL_OK, "mal_swap_arrays: %s", mal_error_message());
    CHECK(mal_local_data(u) == dv && mal_local_data(v) == du, "the swap moved no buffer");
    int64_t t = *ver_u;
    *ver_u = *ver_v;
    *ver_v = t;
}

/* Rank 0 alone swaps: the ranks hold different buffers, which a rebalance and a free
 * refuse before anything moves. */
static void test_mismatch(mal_array_t *u, mal_array_t *v, int64_t *ver_u, int64_t *ver_v,
                          const double *w)
{
    int rank;
    MPI_Comm_rank(mal_comm(), &rank);
    if (rank == 0)
        swap(u, v, ver_u, ver_v);
    void *du = mal_local_data(u);
    CHECK(mal_rebalance(w) == MAL_ERR_MISMATCH, "a rebalance after uneven swaps: %s",
          mal_error_message());
    CHECK(strcmp(mal_error_message(), "mal_rebalance: the ranks swapped arrays differently "
                 "(every rank of mal_comm() must make the same mal_swap_arrays calls)") == 0,
          "message: %s", mal_error_message());
    CHECK(mal_free_array(u) == MAL_ERR_MISMATCH &&
              strcmp(mal_error_message(), "mal_free_array: arguments differ between ranks") ==
                  0,
          "a free after uneven swaps: %s", mal_error_message());
    CHECK(mal_local_data(u) == du && count_bad(u, *ver_u) == 0 && count_bad(v, *ver_v) == 0,
          "a refused rebalance changed the grids");
    if (rank == 0)
        swap(u, v, ver_u, ver_v);
    CHECK(mal_rebalance(w) == MAL_OK, "the rebalance after even swaps: %s",
          mal_error_message());
    CHECK(count_bad(u, *ver_u) == 0 && count_bad(v, *ver_v) == 0, "rows after the rebalance");
    if (rank == 0) /* uneven again: mal_finalize must free every window all the same */
        swap(u, v, ver_u, ver_v);
}

/* An iteration with one exchange on the even split, where every block is wider than the
 * halo: the monitor counts one message sent to each neighbour (libmal-pmpi). */
static void check_counted(mal_array_t *u)
{
    int rank, size;
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Comm_size(mal_comm(), &size);
    mal_monitor_t before, after;
    mal_step();
    mal_monitor_read(&before);
    CHECK(mal_halo_exchange(u) == MAL_OK, "mal_halo_exchange: %s", mal_error_message());
    mal_step();
    mal_monitor_read(&after);
    int64_t sent = (rank > 0) + (rank < size - 1);
    CHECK(after.comm_calls - before.comm_calls == sent, "the monitor counted %lld messages of "
          "the exchange, not %lld", (long long)(after.comm_calls - before.comm_calls),
          (long long)sent);
}

static void run_rebalances(void)
{
    int size;
    MPI_Comm_size(mal_comm(), &size);
    mal_array_t *u, *v;
    if (!alloc_grids(&u, &v))
        return;
    check_counted(u);
    int64_t ver_u = 0, ver_v = 1;
    fill(u, ver_u);
    fill(v, ver_v);
    check_halo(u, ver_u, v, ver_v, "allocation");
    double *w = malloc((size_t)size * sizeof *w);
    uint64_t seed = 271828;
    for (int step = 0; step < STEPS; step++) {
        char when[64];
        snprintf(when, sizeof when, "rebalance %d", step);
        mpitest_weights(&seed, size, 3, 40, w); /* a third of the ranks emptied */
        CHECK(mal_rebalance(w) == MAL_OK, "%s: %s", when, mal_error_message());
        CHECK(count_bad(u, ver_u) == 0 && count_bad(v, ver_v) == 0, "%s: rows lost", when);
        check_halo(u, ver_u, v, ver_v, when);
        check_halo(v, ver_v, u, ver_u, when);
        if (step % 3 != 2) /* an odd number of swaps between some rebalances */
            swap(u, v, &ver_u, &ver_v);
        fill(u, ver_u = 2 * step + 2); /* the next iterate, as a stencil writes it */
    }
    if (size > 1)
        test_mismatch(u, v, &ver_u, &ver_v, w);
    free(w);
}

/* ---- through a plan ------------------------------------------------------------------- */

/* From the start's process count: two expansions or one, a rank with zero rows (first,
 * inner or last), all rows back, rank 0 released. */
static const char *plan_for(int size)
{
    switch (size) {
    case 1: return "2:+2,4:w=1:0:1,6:w=1:1:1,8:-@0,10:+1";
    case 2: return "2:+1,4:w=0:1:1,6:w=1:2:1,8:-@0,10:+2";
    case 3: return "2:+1,4:w=1:0:0:1,6:w=1:1:1:1,8:-@0";
    default: return "2:w=1:0:1:0,4:w=1:1:1:1,6:-@0,8:+1";
    }
}

/* A joiner is handed the grids it received; a call without the halo is refused. */
static void check_join_mismatch(void)
{
    mal_array_t *wrong = NULL;
    CHECK(mal_alloc_window("u", MPI_DOUBLE, ROWS, LEN, MAL_BLOCK, &wrong) == MAL_ERR_MISMATCH,
          "a joiner's mal_alloc_window of a halo array: %s", mal_error_message());
    CHECK(strcmp(mal_error_message(), "mal_alloc_window(\"u\") on a joining process: a halo "
                 "of 0 rows, but the application holds 2") == 0,
          "message: %s", mal_error_message());
}

/* Every process reports its own failures: released ones leave before the end. */
static void verdict(bool kept)
{
    int fails = mpitest_failures, total = 0, rank = 0;
    if (!kept) {
        if (fails)
            printf("test_halo: FAIL (a released process saw %d failures)\n", fails);
        return;
    }
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, mal_comm());
    MPI_Comm_rank(mal_comm(), &rank);
    if (rank == 0 && total)
        printf("test_halo: FAIL (%d failed checks)\n", total);
    else if (rank == 0)
        printf("test_halo: PASS (halos, neighbours and swaps through a plan)\n");
}

static void run_plan(void)
{
    if (!mal_is_initial_process())
        check_join_mismatch();
    mal_array_t *u, *v;
    if (!alloc_grids(&u, &v))
        return;
    /* u holds iterate `it` at the start of iteration it, v the one before. */
    int64_t it = mal_iteration();
    if (mal_is_initial_process()) {
        fill(u, 0);
        fill(v, -1);
    }
    bool kept = true;
    for (; it < ITERS && kept; it++) {
        char when[64];
        snprintf(when, sizeof when, "iteration %lld", (long long)it);
        CHECK(count_bad(u, it) == 0 && count_bad(v, it - 1) == 0, "%s: rows lost", when);
        check_halo(u, it, v, it - 1, when);
        fill(v, it + 1);
        int64_t ver_u = it, ver_v = it + 1;
        swap(u, v, &ver_u, &ver_v);
        mal_status_t st = mal_step();
        CHECK(st >= 0, "%s: mal_step: %s", when, mal_error_message());
        kept = st != MAL_REMOVED;
    }
    if (kept)
        CHECK(count_bad(u, ITERS) == 0 && count_bad(v, ITERS - 1) == 0, "the last rows");
    verdict(kept);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bool plan = argc > 1 && strcmp(argv[1], "plan") == 0;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.plan = plan ? plan_for(size) : NULL; /* a joiner takes its parents' */
    cfg.policy = "off";
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
    int rc = 0;
    if (st == MAL_OK && plan) {
        run_plan();
        rc = mpitest_failures != 0;
    } else if (st == MAL_OK) {
        run_rebalances();
    }
    mal_finalize();
    if (!plan)
        rc = mpitest_verdict("test_halo", "halos, neighbours and swaps through rebalances");
    MPI_Finalize();
    return rc;
}
