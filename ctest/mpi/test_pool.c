/* The process pool (mal_config_t.pool, prefetch) and asynchronous expansion (async).
 *
 * Usage: test_pool MODE, under tools/malrun with 2 ranks. Each mode runs a plan over a
 * block array whose every element's value is a function of its global position, checks
 * every element on every process after every reconfiguration, and checks the pool's
 * counters (mal_pool_info) where they tell whether a process was spawned or reused:
 * - reuse:    pool on; "2:-1,4:+1": the released initial rank 1 parks and is taken back
 *             (no spawn); "6:-@0,8:+1": the initial rank 0 too.
 * - prefetch: prefetch 2; "3:+2": both processes come from the pool, none is spawned
 *             during the expansion; "6:-1": the shrink refills the pool to 2.
 * - release:  pool on; "2:-1" then mal_pool_release(-1): the parked process leaves with
 *             MAL_REMOVED, the counters say it.
 * - release_plan: pool on; "2:-1!" releases rank 1 for good (not parked), so "4:+1"
 *             spawns.
 * - stale:    pool on; "2:-1", a new array registered at 3, "4:+1": the parked process
 *             holds the old registry, so it is released and one is spawned instead.
 * - async:    async on (MPI_THREAD_MULTIPLE), "3:+2,5:-1": the expansion completes in a
 *             later step than it started, spawns 2, its read-mostly rows copied ahead, and
 *             the data is as in a static run; the shrink that fell due meanwhile runs
 *             late; reconfiguring calls are refused meanwhile.
 * - async_single: async asked in a program initialised with MPI_THREAD_SINGLE: said on
 *             stderr, and the expansion is synchronous.
 * - async_newcomer: async on, and the new process fails while joining in the background
 *             (MAL_FAULT_JOIN=nomem: it cannot take its join information and exits): the
 *             expansion is abandoned with MAL_ERR_SPAWN, the application goes on.
 * - async_fail: async on with a spawn that cannot start (MAL_FAULT_SPAWN_HANG): the
 *             expansion is abandoned in the background; the application goes on with its
 *             two processes and its data. */
#include "mal.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

#define ROWS 4096
#define COLS 8
#define ITERS 12

static double value(int64_t g, int64_t k) { return (double)(g * COLS + k) + 0.25; }

static void fill(mal_array_t *a)
{
    double *v = mal_local_data(a);
    for (int64_t r = 0; r < mal_local_rows(a); r++)
        for (int64_t k = 0; k < COLS; k++)
            v[r * COLS + k] = value(mal_first_row(a) + r, k);
}

/* Every element of every process's part, summed over mal_comm(); also that the parts
 * cover every row once. */
static void check_data(mal_array_t *a, const char *when)
{
    const double *v = mal_local_data(a);
    long long bad = 0, rows = mal_local_rows(a);
    for (int64_t r = 0; r < mal_local_rows(a); r++)
        for (int64_t k = 0; k < COLS; k++)
            bad += v[r * COLS + k] != value(mal_first_row(a) + r, k);
    long long sums[2] = {bad, rows};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, mal_comm());
    CHECK(sums[0] == 0, "%s: %lld wrong elements", when, sums[0]);
    CHECK(sums[1] == ROWS, "%s: the parts hold %lld rows, not %d", when, sums[1], ROWS);
}

static const char *plan_of(const char *mode)
{
    if (strcmp(mode, "reuse") == 0)
        return "2:-1,4:+1,6:-@0,8:+1";
    if (strcmp(mode, "prefetch") == 0)
        return "3:+2,6:-1";
    if (strcmp(mode, "async") == 0) /* the shrink falls due in the background phase */
        return "3:+2,5:-1";
    if (strcmp(mode, "async_fail") == 0 || strcmp(mode, "async_single") == 0 ||
        strcmp(mode, "async_newcomer") == 0)
        return "3:+1";
    if (strcmp(mode, "stale") == 0)
        return "2:-1,4:+1";
    if (strcmp(mode, "release_plan") == 0)
        return "2:-1!,4:+1";
    return "2:-1";
}

static void configure(const char *mode, mal_config_t *cfg)
{
    mal_config_init(cfg);
    cfg->plan = plan_of(mode);
    cfg->pool = strcmp(mode, "reuse") == 0 || strcmp(mode, "release") == 0 ||
                strcmp(mode, "stale") == 0 || strcmp(mode, "release_plan") == 0;
    cfg->prefetch = strcmp(mode, "prefetch") == 0 ? 2 : 0;
    cfg->async = strncmp(mode, "async", 5) == 0;
}

/* What the counters must say once the plan is done, on the active processes. */
static void check_counters(const char *mode, const mal_pool_info_t *p, int64_t it)
{
    if (strcmp(mode, "reuse") == 0 && it >= 8) {
        CHECK(p->spawned == 0 && p->reused == 2, "reuse: %lld spawned, %lld reused",
              (long long)p->spawned, (long long)p->reused);
        CHECK(p->active == 2 && p->parked == 0, "reuse: %d active, %d parked", p->active,
              p->parked);
    }
    if (strcmp(mode, "prefetch") == 0 && it >= 3 && it < 6)
        CHECK(p->spawned == 2 && p->reused == 2 && p->parked == 0 && p->active == 4,
              "prefetch: %lld spawned, %lld reused, %d parked, %d active",
              (long long)p->spawned, (long long)p->reused, p->parked, p->active);
    if (strcmp(mode, "prefetch") == 0 && it >= 6) /* the shrink refilled the pool */
        CHECK(p->spawned == 4 && p->parked == 2 && p->active == 3,
              "prefetch after the shrink: %lld spawned, %d parked, %d active",
              (long long)p->spawned, p->parked, p->active);
    if (strcmp(mode, "release_plan") == 0 && it >= 2) /* "-1!": not parked */
        CHECK(p->parked == 0 && p->reused == 0 && p->spawned == (it >= 4 ? 1 : 0),
              "release_plan: %d parked, %lld reused, %lld spawned", p->parked,
              (long long)p->reused, (long long)p->spawned);
    if (strcmp(mode, "stale") == 0 && it >= 4)
        CHECK(p->spawned == 1 && p->reused == 0 && p->released == 1,
              "stale: %lld spawned, %lld reused, %lld released", (long long)p->spawned,
              (long long)p->reused, (long long)p->released);
    if (strncmp(mode, "async_", 6) == 0 && strcmp(mode, "async_single") != 0)
        CHECK(p->active == 2, "%s: %d active", mode, p->active);
}

static void after_reconfig(const char *mode, mal_array_t *a)
{
    char when[64];
    snprintf(when, sizeof when, "%s, after iteration %lld", mode, (long long)mal_iteration());
    check_data(a, when);
    mal_reconfig_stats_t s;
    mal_last_reconfig(&s);
    if (strcmp(mode, "async") == 0 && s.action == MAL_ACTION_EXPAND)
        CHECK(s.async && s.switch_seconds < s.total_seconds && s.spawned == 2 &&
                  s.bytes_ahead == s.bytes_moved && s.bytes_moved > 0,
              "async: the expansion was not asynchronous (async %d, switch %.3f s of %.3f "
              "s, %d spawned, %lld of %lld bytes copied ahead)", (int)s.async,
              s.switch_seconds, s.total_seconds, s.spawned, (long long)s.bytes_ahead,
              (long long)s.bytes_moved);
}

/* Whether an asynchronous expansion is still under way (the same on every rank). */
static bool pending(void)
{
    mal_pool_info_t p;
    return mal_pool_info(&p) == MAL_OK && p.async_pending;
}

/* The application loop; returns when released or done. It goes on past ITERS while an
 * asynchronous expansion runs (one iteration here is far shorter than a spawn). */
static void run(const char *mode, mal_array_t *a)
{
    mal_array_t *extra = NULL;
    bool refused = false;
    int after = 3; /* steps after the end: a plan entry that fell due late runs in them */
    while (mal_iteration() < ITERS || pending() || after-- > 0) {
        if (strcmp(mode, "async") == 0 && pending() && !refused) {
            refused = true; /* the background phase relies on the layout staying */
            CHECK(mal_rebalance(NULL) == MAL_ERR_UNSUPPORTED &&
                      strstr(mal_error_message(), "asynchronous expansion") != NULL,
                  "mal_rebalance during an asynchronous expansion: %s", mal_error_message());
        }
        if (strcmp(mode, "stale") == 0 && mal_iteration() == 3 && extra == NULL &&
            mal_comm() != MPI_COMM_NULL)
            CHECK(mal_alloc_window("extra", MPI_DOUBLE, 64, 1, MAL_BLOCK, &extra) == MAL_OK,
                  "extra: %s", mal_error_message());
        mal_status_t st = mal_step();
        if (st == MAL_REMOVED)
            return;
        /* An abandoned background expansion is reported, not returned. */
        CHECK(st >= 0, "mal_step: %s", mal_error_message());
        if (st == MAL_RECONFIGURED)
            after_reconfig(mode, a);
        if (strcmp(mode, "release") == 0 && mal_iteration() == 3) {
            CHECK(mal_pool_release(-1) == MAL_OK, "mal_pool_release: %s", mal_error_message());
            mal_pool_info_t p;
            mal_pool_info(&p);
            CHECK(p.parked == 0 && p.released == 1, "release: %d parked, %lld released",
                  p.parked, (long long)p.released);
        }
        mal_pool_info_t p;
        if (mal_pool_info(&p) == MAL_OK)
            check_counters(mode, &p, mal_iteration());
    }
    check_data(a, "at the end");
    mal_pool_info_t p;
    if (strcmp(mode, "async") == 0 && mal_pool_info(&p) == MAL_OK)
        CHECK(p.spawned == 2 && p.active == 3, "async: %lld spawned, %d active at the end "
              "(the plan's shrink runs late, after the switch)", (long long)p.spawned,
              p.active);
    mal_reconfig_stats_t s;
    mal_last_reconfig(&s);
    if (strcmp(mode, "async_single") == 0)
        CHECK(!s.async && s.status == MAL_OK && s.procs_after == 3 && s.spawned == 1,
              "async_single: the expansion: async %d, %s, %d processes after, %d spawned "
              "(expected synchronous)", (int)s.async, mal_strerror(s.status), s.procs_after,
              s.spawned);
    if (strcmp(mode, "async_newcomer") == 0)
        CHECK(s.async && s.status == MAL_ERR_SPAWN && s.procs_after == 2,
              "async_newcomer: the last reconfiguration: async %d, %s, %d processes after",
              (int)s.async, mal_strerror(s.status), s.procs_after);
    if (strcmp(mode, "async_fail") == 0)
        CHECK(s.async && s.status == MAL_ERR_TIMEOUT && s.procs_after == 2,
              "async_fail: the last reconfiguration: async %d, %s, %d processes after",
              (int)s.async, mal_strerror(s.status), s.procs_after);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "reuse";
    int provided = 0;
    bool single = strcmp(mode, "async_single") == 0; /* async asked without the level */
    MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE,
                    &provided);
    mal_config_t cfg;
    configure(mode, &cfg);
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("x", MPI_DOUBLE, ROWS, COLS, MAL_BLOCK | MAL_READ_MOSTLY, &a) ==
              MAL_OK, "mal_alloc_window: %s", mal_error_message());
    if (mal_is_initial_process())
        fill(a);
    else
        check_data(a, "joined");
    run(mode, a);
    int rank = -1;
    if (mal_comm() != MPI_COMM_NULL)
        MPI_Comm_rank(mal_comm(), &rank);
    /* Every active process's failures reach mal_comm()'s rank 0, which gives the verdict
     * (spawned processes have their own MPI_COMM_WORLD). */
    if (mal_comm() != MPI_COMM_NULL)
        MPI_Allreduce(MPI_IN_PLACE, &mpitest_failures, 1, MPI_INT, MPI_SUM, mal_comm());
    mal_finalize();
    if (rank == 0)
        printf("test_pool: %s (%s, %d failed checks)\n", mpitest_failures ? "FAIL" : "PASS",
               mode, mpitest_failures);
    MPI_Finalize();
    return mpitest_failures != 0;
}
