/* The checks of the MPI library and launcher (src/engine/transport/platform.c): run under plain
 * mpiexec (tools/plainrun: Debian's osc sm/rdma, pml ob1, no oversubscription) each
 * combination that would hang must be refused at once with MAL_ERR_UNSUPPORTED and a
 * message naming the call and the fix; under tools/malrun the same set-up is accepted.
 *
 * Usage: test_platform SCENARIO refused|accepted
 *   slots          a plan that spawns; refused when mpiexec has no free slot and no
 *                  oversubscription
 *   window_plan    the same plan with every structure in MPI windows; refused when the
 *                  osc components cannot span spawned processes
 *   window_expand  windows and no plan: mal_expand spawns, and the reconfiguration
 *                  refuses the window over old and new processes (refused only; the
 *                  data stay bit-exact and a rebalance afterwards works)
 *   slots_expand   no plan, no free slot, no oversubscription: mal_expand is refused
 *                  with MAL_ERR_LIMIT before spawning (MPI_UNIVERSE_SIZE is the limit,
 *                  procs/room.c), and mpiexec still exits (refused only)
 *   spawn          whether the MPI can start processes (mal_spawn_supported); refused
 *                  (MPICH 4.0's ch4:ucx): mal_expand and a plan's expansion at its step
 *                  are refused with MAL_ERR_UNSUPPORTED and the reason, the data stay
 *                  bit-exact, a rebalance and the next steps work; with MAL_POOL,
 *                  MAL_PREFETCH and MAL_ASYNC (MPI_THREAD_MULTIPLE) the same: the
 *                  prefetch is ignored, the expansion refused alike */
#include "mal.h"
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 1001

static void check_message(const char *const *parts, size_t n)
{
    const char *msg = mal_error_message();
    for (size_t i = 0; i < n; i++)
        CHECK(strstr(msg, parts[i]) != NULL, "message lacks \"%s\": %s", parts[i], msg);
}

static void expect_status(mal_status_t st, mal_status_t want, const char *const *parts,
                          size_t n)
{
    CHECK(st == want, "expected %s, got %s: %s", mal_strerror(want), mal_strerror(st),
          mal_error_message());
    if (want != MAL_OK)
        check_message(parts, n);
}

static void expect(mal_status_t st, bool refused, const char *const *parts, size_t n)
{
    expect_status(st, refused ? MAL_ERR_UNSUPPORTED : MAL_OK, parts, n);
}

static double value(int64_t row, int version)
{
    return (double)row * 3.0 + version * 0.5;
}

static void fill(mal_array_t *a, int version)
{
    double *d = mal_local_data(a);
    for (int64_t i = 0; i < mal_local_rows(a); i++)
        d[i] = value(mal_first_row(a) + i, version);
}

/* Every row of the whole structure, bit-exact, wherever it lives now. */
static void verify(mal_array_t *a, int version, const char *when)
{
    const double *d = mal_local_data(a);
    int64_t wrong = 0, rows = mal_local_rows(a), total = 0;
    for (int64_t i = 0; i < rows; i++)
        wrong += d[i] != value(mal_first_row(a) + i, version);
    MPI_Allreduce(&rows, &total, 1, MPI_INT64_T, MPI_SUM, mal_comm());
    CHECK(wrong == 0, "%s: %lld rows wrong", when, (long long)wrong);
    CHECK(total == ROWS, "%s: %lld rows in all, expected %d", when, (long long)total, ROWS);
}

/* mal_expand(1) is refused with `want` and a message with `parts`; nothing changes. */
static void refused_expand(const char *memory, mal_status_t want, const char *const *parts,
                           size_t n)
{
    mal_array_t *a = NULL;
    mal_status_t st = mal_alloc_window("data", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &a);
    CHECK(st == MAL_OK, "mal_alloc_window: %s", mal_error_message());
    if (st != MAL_OK)
        return;
    CHECK(strcmp(mal_memory_name(a), memory) == 0, "memory is %s", mal_memory_name(a));
    fill(a, 1);
    int size = 0, size_after = 0, windows = mal_buffer_count();
    MPI_Comm_size(mal_comm(), &size);
    st = mal_expand(1, MAL_SPAWN_DEFAULT, NULL);
    expect_status(st, want, parts, n);
    MPI_Comm_size(mal_comm(), &size_after);
    CHECK(size_after == size, "%d processes after the refused expansion, %d before",
          size_after, size);
    CHECK(mal_buffer_count() == windows, "%d windows after, %d before", mal_buffer_count(),
          windows);
    verify(a, 1, "after the refused expansion");
    double weights[2] = {1.0, 3.0};
    st = mal_rebalance(size == 2 ? weights : NULL);
    CHECK(st == MAL_OK, "mal_rebalance after the refusal: %s", mal_error_message());
    verify(a, 1, "after a rebalance");
    mal_free_array(a);
}

/* Where the MPI cannot spawn: mal_expand and the plan's "2:+1" at its step are refused
 * with the reason, nothing changes, and the run goes on. */
static void spawn_refused(void)
{
    static const char *const parts[] = {"mal_expand: 1 process to spawn, but",
                                        "cannot start processes", "MPI_Open_port"};
    refused_expand("direct", MAL_ERR_UNSUPPORTED, parts, sizeof parts / sizeof *parts);
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("planned", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &a) == MAL_OK,
          "mal_alloc_window: %s", mal_error_message());
    if (a == NULL)
        return;
    fill(a, 2);
    CHECK(mal_step() == MAL_CONTINUE, "step 1: %s", mal_error_message());
    mal_status_t st = mal_step(); /* the plan's expansion, at iteration 2 */
    static const char *const step_parts[] = {"mal_step: mal_expand: 1 process to spawn",
                                             "cannot start processes"};
    expect_status(st, MAL_ERR_UNSUPPORTED, step_parts, sizeof step_parts / sizeof *step_parts);
    verify(a, 2, "after the refused step");
    CHECK(mal_step() == MAL_CONTINUE, "the step after: %s", mal_error_message());
    mal_free_array(a);
}

int main(int argc, char **argv)
{
    /* MAL_ASYNC (the spawn scenario's pool variant) needs every thread level. */
    int provided = 0;
    if (getenv("MAL_ASYNC") != NULL)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    const char *scenario = argc > 2 ? argv[1] : "";
    bool refused = argc > 2 && strcmp(argv[2], "refused") == 0;
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    if (strcmp(scenario, "slots") == 0 || strcmp(scenario, "window_plan") == 0)
        cfg.plan = "1:+1";
    if (strcmp(scenario, "spawn") == 0 && refused)
        cfg.plan = "2:+1";
    if (strcmp(scenario, "window_plan") == 0 || strcmp(scenario, "window_expand") == 0)
        cfg.memory = MAL_MEMORY_WINDOW;
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    /* A spawned process gets here only if the expansion it was spawned for went
     * through, which this test must have refused. */
    CHECK(mal_is_initial_process() || !mal_is_initialized(), "a spawned process joined");
    if (strcmp(scenario, "slots") == 0) {
        static const char *const parts[] = {"mal_init: the plan spawns 1 process",
                                            "oversubscription off", "tools/malrun",
                                            "--oversubscribe"};
        expect(st, refused, parts, sizeof parts / sizeof *parts);
    } else if (strcmp(scenario, "window_plan") == 0) {
        static const char *const parts[] = {"mal_init: MAL_MEMORY=window and a plan that "
                                            "spawns", "OMPI_MCA_osc=ucx", "tools/malrun"};
        expect(st, refused, parts, sizeof parts / sizeof *parts);
    } else if (strcmp(scenario, "window_expand") == 0 && refused) {
        static const char *const parts[] = {"mal_expand: an MPI window over processes of "
                                            "different jobs", "OMPI_MCA_osc=ucx",
                                            "tools/malrun"};
        CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
        if (st == MAL_OK)
            refused_expand("window", MAL_ERR_UNSUPPORTED, parts, sizeof parts / sizeof *parts);
    } else if (strcmp(scenario, "slots_expand") == 0 && refused) {
        static const char *const parts[] = {"mal_expand: 1 more process refused: 2 -> 3 "
                                            "processes goes beyond the 2 slots of the "
                                            "MPI_UNIVERSE_SIZE", "oversubscription off"};
        CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
        if (st == MAL_OK)
            refused_expand("direct", MAL_ERR_LIMIT, parts, sizeof parts / sizeof *parts);
    } else if (strcmp(scenario, "spawn") == 0) {
        CHECK(st == MAL_OK, "mal_init: %s", mal_error_message());
        const char *why = NULL;
        CHECK(mal_spawn_supported(&why) == !refused, "mal_spawn_supported says %s%s%s",
              refused ? "yes" : "no", why != NULL ? ": " : "", why != NULL ? why : "");
        if (st == MAL_OK && refused)
            spawn_refused();
    } else {
        CHECK(false, "usage: test_platform slots|window_plan|window_expand|slots_expand|"
              "spawn refused|accepted");
    }
    if (mal_is_initialized())
        mal_finalize();
    int code = mpitest_verdict("test_platform", scenario);
    MPI_Finalize();
    return code;
}
