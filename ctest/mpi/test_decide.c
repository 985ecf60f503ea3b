/* The policy inside mal_step: in loaded mode, a rank that computes three times slower per
 * row (as if another user shared its core) gets fewer rows after the first sampling
 * interval, the data stay bit-exact, the report names the policy's reason; a plan
 * overrides the policy; a broken availability file or policy text makes mal_init fail
 * with MAL_ERR_ARG naming the line or item, and nothing is left initialised.
 *
 * Usage: test_decide [shmem]. shmem (under oshrun): the loaded-rank case alone, on the
 * SHMEM transport with the data on the symmetric heap and release allowed: the policy,
 * held to the fixed PE set, rebalances and never releases. */
#include "mal.h"
#include "mpitest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 3000
#define COLS 8
#define ITERS 40
#define SLOWDOWN 3

static volatile double sink;

static double value_of(int64_t row, int64_t col)
{
    return (double)(row * COLS + col) + 0.25;
}

/* Work proportional to the rows held; rank 1 pays SLOWDOWN times per row. */
static void compute(int64_t rows, int rank)
{
    int reps = rank == 1 ? SLOWDOWN : 1;
    double s = 0;
    for (int64_t i = 0; i < rows * 400 * reps; i++)
        s += sqrt((double)i);
    sink = s;
}

static void check_data(const mal_array_t *a, int64_t it)
{
    const double *v = mal_local_data(a);
    int64_t first = mal_first_row(a), rows = mal_local_rows(a), bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < COLS; c++)
            bad += v[r * COLS + c] != value_of(first + r, c);
    CHECK(bad == 0, "iteration %lld: %lld values differ", (long long)it, (long long)bad);
}

static mal_array_t *alloc_filled(void)
{
    mal_array_t *a = NULL;
    CHECK(mal_alloc_window("x", MPI_DOUBLE, ROWS, COLS, MAL_BLOCK, &a) == MAL_OK, "alloc");
    double *v = mal_local_data(a);
    for (int64_t r = 0; r < mal_local_rows(a); r++)
        for (int64_t c = 0; c < COLS; c++)
            v[r * COLS + c] = value_of(mal_first_row(a) + r, c);
    return a;
}

/* Iterate; returns how many rebalances the policy carried out. */
static int run(mal_array_t *a)
{
    int rebalances = 0;
    for (int64_t it = mal_iteration(); it < ITERS; it++) {
        int rank;
        MPI_Comm_rank(mal_comm(), &rank);
        compute(mal_local_rows(a), rank);
        double one = 1;
        MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_SUM, mal_comm());
        mal_set_work((double)mal_local_rows(a));
        mal_status_t st = mal_step();
        CHECK(st >= 0, "mal_step at %lld: %s", (long long)it, mal_error_message());
        if (st == MAL_RECONFIGURED) {
            mal_decision_t d;
            CHECK(mal_last_decision(&d) == MAL_OK && d.action == MAL_ACTION_REBALANCE &&
                      d.iteration == it + 1 && strstr(d.reason, "balance") != NULL,
                  "decision at %lld: action %d, it %lld, '%s'", (long long)it, (int)d.action,
                  (long long)d.iteration, d.reason);
            rebalances++;
            check_data(a, it);
        }
    }
    check_data(a, ITERS);
    return rebalances;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static void expect_init_error(mal_config_t *cfg, const char *needle)
{
    mal_status_t st = mal_init(MPI_COMM_WORLD, cfg);
    CHECK(st == MAL_ERR_ARG && strstr(mal_error_message(), needle) != NULL,
          "mal_init: %s, '%s' lacks '%s'", mal_strerror(st), mal_error_message(), needle);
    CHECK(!mal_is_initialized(), "nothing initialised after a refused configuration");
    if (mal_is_initialized())
        mal_finalize();
}

static void test_bad_configuration(int rank)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/mal_test_decide_%d_%d.avail", (int)getpid(), rank);
    write_file(path, "# host cores class gflops price\nhere 2 local 1.0 0\nthere x local 1.0 0\n");
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.availability = path;
    expect_init_error(&cfg, ":3: cores 'x'");
    remove(path);
    cfg.availability = NULL;
    cfg.policy = "mode=fast";
    expect_init_error(&cfg, "mode must be dedicated or loaded");
    cfg.policy = "speedup=0.3";
    expect_init_error(&cfg, "total_iterations");
    cfg.iterations = -5;
    cfg.policy = NULL;
    expect_init_error(&cfg, "iterations");
}

/* The loaded rank ends with clearly fewer rows than the others (3x slower per row: an
 * even share of the work would give it about a third). */
static void check_layout(const mal_array_t *a, int rank, int procs)
{
    int64_t rows = mal_local_rows(a), r0 = rows;
    MPI_Bcast(&r0, 1, MPI_INT64_T, 0, mal_comm());
    if (rank == 1)
        CHECK(rows < r0 * 0.7, "loaded rank 1 holds %lld rows, rank 0 %lld", (long long)rows,
              (long long)r0);
    (void)procs;
}

static void test_loaded_rebalance(int rank, int procs, const char *report, bool shmem)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.policy = shmem ? "mode=loaded,inhibit=15" : "mode=loaded,release=0,inhibit=15";
    cfg.redist = shmem ? MAL_REDIST_SHMEM : MAL_REDIST_DEFAULT;
    cfg.sample_interval = 10;
    cfg.grace = 2;
    cfg.report = report;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    mal_array_t *a = alloc_filled();
    int rebalances = run(a);
    int now = 0;
    MPI_Comm_size(mal_comm(), &now);
    CHECK(now == procs, "the process set changed from %d to %d", procs, now);
    if (procs >= 2) {
        CHECK(rebalances >= 1 && rebalances <= 2, "%d rebalances by the policy", rebalances);
        check_layout(a, rank, procs);
    } else {
        CHECK(rebalances == 0, "one process: %d rebalances", rebalances);
    }
    mal_finalize();
    if (rank != 0 || procs < 2)
        return;
    FILE *f = fopen(report, "r");
    char line[4096];
    bool found = false;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        found |= strstr(line, "\"decided_by\":\"policy\"") != NULL &&
                 strstr(line, "\"reason\":\"balance:") != NULL &&
                 strstr(line, "\"predicted_comp_s\":") != NULL;
    CHECK(found, "the report names the policy's reason and prediction");
    if (f != NULL)
        fclose(f);
}

/* With a plan the policy never decides, however unbalanced the ranks are. */
static void test_plan_overrides(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.policy = "mode=loaded";
    cfg.plan = "1000:+1";
    cfg.sample_interval = 10;
    cfg.grace = 2;
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    mal_array_t *a = alloc_filled();
    CHECK(run(a) == 0, "the policy acted under a plan");
    mal_decision_t d;
    CHECK(mal_last_decision(&d) == MAL_OK && d.iteration == 0, "a decision was made at %lld",
          (long long)d.iteration);
    CHECK(mal_last_decision(NULL) == MAL_ERR_ARG, "NULL refused");
    mal_finalize();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    char report[64];
    snprintf(report, sizeof report, "/tmp/mal_test_decide_%d.jsonl", (int)getpid());
    MPI_Bcast(report, sizeof report, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        remove(report);
    bool shmem = argc > 1 && strcmp(argv[1], "shmem") == 0;
    if (!shmem)
        test_bad_configuration(rank);
    test_loaded_rebalance(rank, procs, report, shmem);
    if (!shmem)
        test_plan_overrides();
    if (rank == 0)
        remove(report);
    int rc = mpitest_verdict("test_decide", shmem ? "loaded rank rebalanced by the policy "
                             "on the SHMEM transport, PE set kept" : "loaded rank rebalanced "
                             "by the policy, plan overrides, bad configuration refused");
    MPI_Finalize();
    return rc;
}
