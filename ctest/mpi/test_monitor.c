/* The monitor's numbers are sane: per-iteration CPU time <= wall time, totals monotone,
 * the application's communication counted exactly (two collectives per iteration, with
 * their bytes, none of libmal's own calls), reported work summed, a load change
 * detected, a prediction made at a planned rebalance and checked one interval later;
 * bad input refused (mal_set_work, mal_monitor_read, calibration files).
 * Built twice: linked with the PMPI wrappers (libmal-pmpi), and without them
 * (MAL_TEST_WITHOUT_PMPI, test_monitor_nopmpi), where no communication is counted and
 * everything else holds. */
#include "mal.h"
#include "mpitest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MAL_TEST_WITHOUT_PMPI
#define TEST_NAME "test_monitor_nopmpi"
#else
#define TEST_NAME "test_monitor"
#endif

#define ITERS 60
#define REBALANCE_AT 30
#define LOAD_FROM 45

static volatile double sink;

/* Arithmetic that takes a few milliseconds; `reps` scales it. */
static void compute(int reps)
{
    double s = 0;
    for (int i = 0; i < reps * 200000; i++)
        s += sqrt((double)i);
    sink = s;
}

static void check_monotone(const mal_monitor_t *a, const mal_monitor_t *b)
{
    CHECK(b->iterations == a->iterations + 1, "iterations %lld then %lld",
          (long long)a->iterations, (long long)b->iterations);
    CHECK(b->wall_seconds > a->wall_seconds && b->cpu_seconds >= a->cpu_seconds &&
              b->comm_seconds >= a->comm_seconds && b->work >= a->work &&
              b->comm_calls >= a->comm_calls && b->comm_bytes >= a->comm_bytes,
          "a total went down");
    CHECK(b->counter == -1 || b->counter >= a->counter, "counter went down");
}

static void check_iteration(const mal_monitor_t *m, int procs, int64_t it)
{
    CHECK(m->last_cpu <= m->last_wall + 1e-6, "iteration %lld: CPU %.9f s > wall %.9f s",
          (long long)it, m->last_cpu, m->last_wall);
#ifdef MAL_TEST_WITHOUT_PMPI
    /* No wrapper library: libmal intercepts nothing, the iteration is all computation. */
    (void)procs;
    CHECK(m->last_comm == 0 && m->comm_seconds == 0 && m->comm_calls == 0 &&
              m->comm_bytes == 0,
          "iteration %lld: comm %.9f s, %lld calls, %.0f bytes without the wrappers",
          (long long)it, m->last_comm, (long long)m->comm_calls, m->comm_bytes);
    return;
#endif
    CHECK(m->last_comm > 0 && m->last_comm <= m->last_wall, "iteration %lld: comm %.9f s",
          (long long)it, m->last_comm);
    /* Exactly the loop's Allreduce (1 double) and Allgather (1 double per rank). */
    CHECK(m->comm_calls == 2 * m->iterations, "%lld calls after %lld iterations",
          (long long)m->comm_calls, (long long)m->iterations);
    CHECK(m->comm_bytes == (double)m->iterations * 8.0 * (1 + procs), "%.0f bytes",
          m->comm_bytes);
}

static void loop(void)
{
    mal_monitor_t before, after;
    CHECK(mal_monitor_read(&before) == MAL_OK, "mal_monitor_read");
    double reported = 0;
    int rank = 0, procs = 1;
    for (int64_t it = mal_iteration(); it < ITERS; it++) {
        MPI_Comm comm = mal_comm();
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &procs);
        /* From LOAD_FROM on, rank 0 computes twice as long for the same work. */
        compute(it >= LOAD_FROM && rank == 0 ? 6 : 3);
        double one = 1, all[64];
        MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Allgather(&one, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm);
        CHECK(mal_set_work(1000.0) == MAL_OK && mal_set_work(500.0) == MAL_OK, "set_work");
        reported += 1500.0;
        mal_status_t st = mal_step();
        CHECK(st >= 0, "mal_step at %lld: %s", (long long)it, mal_error_message());
        CHECK(mal_monitor_read(&after) == MAL_OK, "mal_monitor_read");
        check_monotone(&before, &after);
        check_iteration(&after, procs, it);
        before = after;
    }
    const char *counter = mal_monitor_counter();
    CHECK(counter != NULL && *counter != '\0', "counter name");
    bool none = strncmp(counter, "none", 4) == 0;
    CHECK(none ? after.counter == -1 : after.counter > 0, "counter %lld with '%s'",
          after.counter, counter);
    CHECK(none ? after.work == reported : after.work > 0, "work %.1f, reported %.1f",
          after.work, reported);
    if (rank == 0 && none) /* cost per work unit doubled: a load change */
        CHECK(after.load_changes >= 1, "no load change detected on rank 0");
}

static void check_prediction(int procs)
{
    mal_prediction_t p;
    CHECK(mal_last_prediction(&p) == MAL_OK, "mal_last_prediction");
    if (procs < 2) /* a one-process rebalance changes nothing: it is still predicted */
        return;
    CHECK(p.iteration == REBALANCE_AT && p.action == MAL_ACTION_REBALANCE,
          "prediction at %lld, action %d", (long long)p.iteration, (int)p.action);
    CHECK(p.measured && p.interval == 10, "measured %d, interval %lld", p.measured,
          (long long)p.interval);
    CHECK(p.comp > 0 && p.comp_measured > 0 && p.comm >= 0 && p.redist > 0 &&
              p.redist_measured > 0 && p.process == 0,
          "comp %g/%g comm %g redist %g/%g process %g", p.comp, p.comp_measured, p.comm,
          p.redist, p.redist_measured, p.process);
}

static void bad_input(void)
{
    CHECK(mal_set_work(-1.0) == MAL_ERR_ARG, "negative work");
    CHECK(mal_set_work(NAN) == MAL_ERR_ARG, "NaN work");
    CHECK(mal_set_work(INFINITY) == MAL_ERR_ARG, "infinite work");
    CHECK(mal_monitor_read(NULL) == MAL_ERR_ARG, "NULL monitor");
    CHECK(mal_last_prediction(NULL) == MAL_ERR_ARG, "NULL prediction");
}

/* A calibration file with `line3` as its third line (each rank its own file). */
static const char *calibration_file(int rank, const char *line3)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/mal_test_monitor_%d_%d.txt", (int)getpid(), rank);
    FILE *f = fopen(path, "w");
    fprintf(f, "# test\nalpha = 1e-6\n%s\ngamma = 1e-10\nget_bandwidth = 5e9\n"
               "get_latency = 1e-6\ncopy_bandwidth = 8e9\nepoch_seconds = 1e-4\n"
               "window_seconds = 1e-4\nwindow_byte_seconds = 1e-10\nspawn_seconds = 0.1\n"
               "remove_seconds = 0.001\ncores = 2\n", line3);
    fclose(f);
    return path;
}

static void calibration(int rank)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.log_errors = false;
    cfg.calibration = calibration_file(rank, "beta = fast");
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_ERR_ARG, "bad calibration accepted");
    CHECK(strstr(mal_error_message(), ":3:") != NULL && strstr(mal_error_message(), "beta"),
          "message '%s' does not name line 3 and the key", mal_error_message());
    remove(cfg.calibration);
    cfg.calibration = calibration_file(rank, "# beta is missing");
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_ERR_ARG, "partial calibration accepted");
    CHECK(strstr(mal_error_message(), "beta") != NULL, "message '%s' does not name beta",
          mal_error_message());
    remove(cfg.calibration);
    cfg.calibration = "/nonexistent/calibration.txt";
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_ERR_ARG, "missing calibration accepted");
    CHECK(!mal_is_initialized(), "initialised after a failed mal_init");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    calibration(rank);
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.summary = false;
    cfg.sample_interval = 10;
    cfg.grace = 2;
    char plan[64];
    snprintf(plan, sizeof plan, "%d:w=%s", REBALANCE_AT, procs == 1 ? "1" :
             procs == 2 ? "1:2" : procs == 3 ? "1:2:1" : "1:2:1:2");
    cfg.plan = plan;
    /* A file from the environment (mal-calibrate's, in mpi.mal_calibrate), else one here. */
    bool from_env = getenv("MAL_CALIBRATION") != NULL;
    cfg.calibration = from_env ? NULL : calibration_file(rank, "beta = 2.5e-10");
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    if (!from_env)
        remove(cfg.calibration);
    mal_array_t *a;
    CHECK(mal_alloc_window("a", MPI_DOUBLE, 4096, 16, MAL_BLOCK, &a) == MAL_OK, "alloc");
    loop();
    check_prediction(procs);
    bad_input();
    mal_finalize();
    int code = mpitest_verdict(TEST_NAME, "monitor totals, PMPI counts, prediction");
    MPI_Finalize();
    return code;
}
