/* Unit tests of src/predict: every expected value is worked out by hand from the
 * formulas in predict.h, never recomputed with the code under test. */
#include "predict.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unittest.h"

/* Hand-written expectations are exact decimals or simple fractions; 1e-12 relative
 * absorbs only the rounding of the arithmetic, never a wrong term. */
static int near(double got, double want)
{
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

/* CHECK for a number: says what was got and wanted. */
#define CHECK_NEAR(got, want, ...) check_near(__LINE__, (got), (want), __VA_ARGS__)

static void check_near(int line, double got, double want, const char *fmt, ...)
{
    if (near(got, want))
        return;
    failures++;
    fprintf(stderr, "%s:%d: got %.17g, want %.17g: ", __FILE__, line, got, want);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* alpha = 1, beta = 0.5, gamma = 0.25 and nothing else, so each term is visible. */
static predict_params_t hockney(void)
{
    predict_params_t m = {0};
    m.alpha = 1.0;
    m.beta = 0.5;
    m.gamma = 0.25;
    return m;
}

/* ---- communication ----------------------------------------------------------------- */

static void test_op_names(void)
{
    CHECK(strcmp(predict_op_name(PREDICT_OP_SEND), "send") == 0, "send");
    CHECK(strcmp(predict_op_name(PREDICT_OP_BARRIER), "barrier") == 0, "barrier");
    CHECK(strcmp(predict_op_name(PREDICT_OP_ALLREDUCE), "allreduce") == 0, "allreduce");
    CHECK(strcmp(predict_op_name(PREDICT_OP_ALLTOALL), "alltoall") == 0, "alltoall");
    CHECK(strcmp(predict_op_name(PREDICT_OP_COUNT), "?") == 0, "count is out of range");
    CHECK(strcmp(predict_op_name((predict_op_t)-1), "?") == 0, "negative op");
}

static void test_send_and_barrier(void)
{
    predict_params_t m = hockney();
    /* alpha + n beta = 1 + 500, whatever p, including a self message at p = 1. */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_SEND, 1, 1000), 501, "send p=1");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_SEND, 16, 1000), 501, "send p=16");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_SEND, 4, -5), 1, "send negative bytes");
    /* L alpha with L = 0, 1, 2, 2, 3, 3, 4 */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 1, 0), 0, "barrier p=1");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 2, 0), 1, "barrier p=2");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 3, 0), 2, "barrier p=3");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 4, 0), 2, "barrier p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 5, 0), 3, "barrier p=5");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 8, 0), 3, "barrier p=8");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 16, 0), 4, "barrier p=16");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BARRIER, 17, 0), 5, "barrier p=17");
}

static void test_bcast(void)
{
    predict_params_t m = hockney();
    /* short: L (1 + 500) */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 2, 1000), 501, "bcast p=2");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 3, 1000), 1002, "bcast p=3");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 4, 1000), 1002, "bcast p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 8, 1000), 1503, "bcast p=8 short");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 16, 1000), 2004, "bcast p=16 short");
    /* 16 KiB but fewer than 8 processes: still binomial, 2 (1 + 8192) */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 4, 16384), 16386, "bcast p=4 long");
    /* long: (L + p - 1) + 2 (p-1)/p 16384 0.5 = (3 + 7) + 14336 and (4 + 15) + 15360 */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 8, 16384), 14346, "bcast p=8 long");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 16, 16384), 15379, "bcast p=16 long");
    /* the switch: 12287 bytes is 3 (1 + 6143.5), 12288 is 10 + 7/8 12288 */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 8, 12287), 18433.5, "bcast below 12 KiB");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 8, 12288), 10762, "bcast at 12 KiB");
    /* negative bytes count as 0: L alpha */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_BCAST, 4, -10), 2, "bcast negative bytes");
}

/* REDUCE and ALLREDUCE have the same formulas. */
static void test_reduce(predict_op_t op, const char *name)
{
    predict_params_t m = hockney();
    /* short, n = 1000: L (1 + 500 + 250) */
    CHECK_NEAR(predict_op_cost(&m, op, 2, 1000), 751, "%s p=2", name);
    CHECK_NEAR(predict_op_cost(&m, op, 3, 1000), 1502, "%s p=3", name);
    CHECK_NEAR(predict_op_cost(&m, op, 4, 1000), 1502, "%s p=4", name);
    CHECK_NEAR(predict_op_cost(&m, op, 8, 1000), 2253, "%s p=8", name);
    CHECK_NEAR(predict_op_cost(&m, op, 16, 1000), 3004, "%s p=16", name);
    /* 2 KiB is still short: L (1 + 1024 + 512) */
    CHECK_NEAR(predict_op_cost(&m, op, 8, 2048), 4611, "%s at 2 KiB", name);
    /* long, n = 4096: 2 L + (p-1)/p (4096 + 1024) */
    CHECK_NEAR(predict_op_cost(&m, op, 2, 4096), 2562, "%s p=2 long", name);
    CHECK_NEAR(predict_op_cost(&m, op, 3, 4096), 4.0 + 10240.0 / 3.0, "%s p=3 long", name);
    CHECK_NEAR(predict_op_cost(&m, op, 4, 4096), 3844, "%s p=4 long", name);
    CHECK_NEAR(predict_op_cost(&m, op, 8, 4096), 4486, "%s p=8 long", name);
    CHECK_NEAR(predict_op_cost(&m, op, 16, 4096), 4808, "%s p=16 long", name);
    /* 2049 bytes, p = 2: 2 + 1/2 (2049 + 512.25) */
    CHECK_NEAR(predict_op_cost(&m, op, 2, 2049), 1282.625, "%s just above 2 KiB", name);
}

static void test_gathers_and_alltoall(void)
{
    predict_params_t m = hockney();
    /* allgather short, n = 1000: L + (p-1)/p 500 */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 2, 1000), 251, "allgather p=2");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 3, 1000), 2.0 + 1000.0 / 3.0,
               "allgather p=3");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 4, 1000), 377, "allgather p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 8, 1000), 440.5, "allgather p=8");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 16, 1000), 472.75, "allgather p=16");
    /* below 80 KiB: 2 + 3/4 40959.5; at 80 KiB, ring: (p-1) + (p-1)/p 40960 */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 4, 81919), 30721.625,
               "allgather below 80 KiB");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 2, 81920), 20481, "allgather ring p=2");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 4, 81920), 30723, "allgather ring p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLGATHER, 16, 81920), 38415,
               "allgather ring p=16");
    /* gather and scatter: L + (p-1)/p n/2 at every size */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_GATHER, 4, 1000), 377, "gather p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_GATHER, 4, 100000), 37502, "gather p=4 large");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_SCATTER, 8, 100000), 43753, "scatter p=8");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_SCATTER, 3, 1000), 2.0 + 1000.0 / 3.0,
               "scatter p=3");
    /* alltoall: (p-1) (1 + n/p 0.5) */
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLTOALL, 2, 1000), 251, "alltoall p=2");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLTOALL, 3, 1000), 2.0 + 1000.0 / 3.0,
               "alltoall p=3");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLTOALL, 4, 1000), 378, "alltoall p=4");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLTOALL, 8, 1000), 444.5, "alltoall p=8");
    CHECK_NEAR(predict_op_cost(&m, PREDICT_OP_ALLTOALL, 16, 1000), 483.75, "alltoall p=16");
}

static void test_single_process(void)
{
    predict_params_t m = hockney();
    for (int op = PREDICT_OP_BARRIER; op < PREDICT_OP_COUNT; op++) {
        CHECK(predict_op_cost(&m, (predict_op_t)op, 1, 100000) == 0, "%s p=1",
              predict_op_name((predict_op_t)op));
        CHECK(predict_op_cost(&m, (predict_op_t)op, 0, 1000) == 0, "%s p=0",
              predict_op_name((predict_op_t)op));
    }
}

static void test_comm_model(void)
{
    predict_params_t m = hockney();
    predict_comm_profile_t prof = {{0}, {0}};
    CHECK(predict_comm_model(&m, &prof, 4, 10) == 0, "empty profile");
    prof.calls[PREDICT_OP_SEND] = 2;
    prof.bytes[PREDICT_OP_SEND] = 1000;
    prof.calls[PREDICT_OP_ALLREDUCE] = 1;
    prof.bytes[PREDICT_OP_ALLREDUCE] = 1000;
    prof.calls[PREDICT_OP_BARRIER] = 3;
    /* p = 4: 2 * 501 + 1502 + 3 * 2 = 2510 per iteration */
    CHECK_NEAR(predict_comm_model(&m, &prof, 4, 10), 25100, "profile at p=4");
    /* p = 1: only the sends cost, 2 * 501 */
    CHECK_NEAR(predict_comm_model(&m, &prof, 1, 10), 10020, "profile at p=1");
    CHECK_NEAR(predict_comm_model(&m, &prof, 4, 0.5), 1255, "half an iteration");
}

static void test_lambda(void)
{
    CHECK_NEAR(predict_lambda(2, 3), 1.5, "real / model");
    CHECK(2 * predict_lambda(2, 3) == 3, "model * lambda reproduces the measurement");
    CHECK_NEAR(0.3 * predict_lambda(0.3, 0.7), 0.7, "model * lambda, inexact");
    CHECK(predict_lambda(0, 1) == 1, "no model");
    CHECK(predict_lambda(1, 0) == 1, "nothing measured");
    CHECK(predict_lambda(0, 0) == 1, "neither");
    CHECK(predict_lambda(-1, 2) == 1, "negative model");
    CHECK(predict_lambda(2, -1) == 1, "negative measurement");
}

/* ---- computation and processes ------------------------------------------------------ */

static void test_extrapolate(void)
{
    double constant[3] = {4, 4, 4}, line[3] = {3, 5, 7}, falling[3] = {10, 6, 2};
    CHECK_NEAR(predict_extrapolate(constant, 3), 4, "constant series");
    CHECK_NEAR(predict_extrapolate(line, 3), 9, "exact line");
    CHECK(predict_extrapolate(falling, 3) == 0, "10, 6, 2 would give -2: clamped");
    /* 1, 2, 2, 3: mean index 1.5, mean 2, slope 3 / 5, so 2 + 0.6 * 2.5 */
    double noisy[4] = {1, 2, 2, 3};
    CHECK_NEAR(predict_extrapolate(noisy, 4), 3.5, "least squares");
    double two[2] = {10, 8};
    CHECK_NEAR(predict_extrapolate(two, 2), 6, "two points");
    double one = 7, negative = -3;
    CHECK(predict_extrapolate(&one, 1) == 7, "n = 1");
    CHECK(predict_extrapolate(&negative, 1) == 0, "n = 1 is never negative either");
    CHECK(predict_extrapolate(NULL, 0) == 0, "n = 0");
    CHECK(predict_extrapolate(NULL, -1) == 0, "n < 0");
}

static void test_power_and_comp(void)
{
    CHECK(predict_shared_power(10, 2, 4) == 10, "more cores than processes");
    CHECK(predict_shared_power(10, 2, 2) == 10, "one core each");
    CHECK_NEAR(predict_shared_power(10, 4, 2), 5, "two processes per core");
    CHECK_NEAR(predict_shared_power(10, 3, 2), 20.0 / 3.0, "three on two cores");

    double work[3] = {2, 4, 6}, balanced[3] = {1, 2, 3}, skewed[3] = {1, 1, 3};
    CHECK_NEAR(predict_comp(3, work, balanced), 12.0 / 6.0, "balanced: sum / sum");
    CHECK_NEAR(predict_comp(3, work, skewed), 4, "the slowest part wins");
    double idle_work[2] = {0, 4}, idle_power[2] = {0, 2};
    CHECK_NEAR(predict_comp(2, idle_work, idle_power), 2, "zero-work part skipped");
    double stuck_work[2] = {1, 4};
    CHECK(isinf(predict_comp(2, stuck_work, idle_power)), "work without power");
    CHECK(predict_comp(0, NULL, NULL) == 0, "no parts");
}

static void test_spawn_remove(void)
{
    predict_params_t m = {0};
    m.spawn_seconds = 0.5;
    m.remove_seconds = 0.25;
    CHECK(predict_spawn(&m, 0) == 0 && predict_remove(&m, 0) == 0, "nothing to do");
    CHECK_NEAR(predict_spawn(&m, 1), 0.5, "spawn 1");
    CHECK_NEAR(predict_spawn(&m, 4), 2, "spawn 4");
    CHECK_NEAR(predict_remove(&m, 1), 0.25, "remove 1");
    CHECK_NEAR(predict_remove(&m, 4), 1, "remove 4");
}

/* A pooled process is woken (0.01 s), not spawned (0.5 s). */
static void test_grow_from_pool(void)
{
    predict_params_t m = {0};
    m.spawn_seconds = 0.5;
    m.pool_wake_seconds = 0.01;
    CHECK_NEAR(predict_grow(&m, 4, 0, 1), 2, "no pool: four spawns");
    CHECK_NEAR(predict_grow(&m, 4, 1, 1), 1.51, "three spawns, one wake");
    CHECK_NEAR(predict_grow(&m, 4, 4, 1), 0.04, "four wakes");
    CHECK_NEAR(predict_grow(&m, 4, 9, 1), 0.04, "more parked than needed: four wakes");
    CHECK_NEAR(predict_grow(&m, 4, -1, 1), 2, "negative pooled counts as none");
    CHECK(predict_grow(&m, 0, 3, 1) == 0, "nothing added");
    CHECK(predict_grow(&m, 2, 2, 1) < predict_spawn(&m, 2), "the pool is cheaper than spawning");
}

/* A lone spawn costs 0.5 s, of which 0.2 s are its call and merge, paid once per host
 * (spawn call); the rest, 0.3 s, per process. Woken processes make no call. */
static void test_grow_per_host(void)
{
    predict_params_t m = {0};
    m.spawn_seconds = 0.5;
    m.spawn_host_seconds = 0.2;
    m.pool_wake_seconds = 0.01;
    CHECK_NEAR(predict_grow(&m, 1, 0, 1), 0.5, "one process alone: spawn_seconds");
    CHECK_NEAR(predict_grow(&m, 4, 0, 3), 1.8, "four spawns on three hosts");
    CHECK_NEAR(predict_grow(&m, 4, 0, 0), 1.4, "no host count: one call");
    CHECK_NEAR(predict_grow(&m, 4, 0, 4), 2, "one call each: four lone spawns");
    CHECK_NEAR(predict_grow(&m, 2, 0, 5), 1, "no more calls than processes");
    CHECK_NEAR(predict_grow(&m, 4, 1, 2), 1.31, "three spawns on two hosts, one wake");
    CHECK_NEAR(predict_grow(&m, 2, 2, 2), 0.02, "all woken: no spawn call");
    predict_expand_cost_t c = predict_expand(&m, &(predict_expand_t){.procs = 4, .hosts = 3});
    CHECK_NEAR(c.process, 1.8, "the expansion's process term prices the hosts");
    m.spawn_host_seconds = 0.7;
    CHECK_NEAR(predict_grow(&m, 4, 0, 1), 0.5, "a call's share above a lone spawn: all of it");
}

/* spawn 0.5, wake 0.01, epoch 0.1, slowdown 1.25 (a second of background work costs
 * the application s - 1 = 0.25 s and takes s = 1.25 s of wall time); moving takes 2.1 s
 * (epoch + 2 s of copies), a quarter of the copies read-mostly; a spawned process
 * populates in 0.4 s. */
static predict_params_t expand_params(void)
{
    predict_params_t m = {0};
    m.spawn_seconds = 0.5;
    m.pool_wake_seconds = 0.01;
    m.epoch_seconds = 0.1;
    m.async_slowdown = 1.25;
    return m;
}

static void test_expand_sync(void)
{
    predict_params_t m = expand_params();
    predict_expand_t x = {.procs = 2, .populate = 0.4, .move = 2.1, .read_mostly = 0.25};
    predict_expand_cost_t c = predict_expand(&m, &x);
    CHECK_NEAR(c.process, 1.0, "two spawns");
    CHECK_NEAR(c.redist, 2.5, "population + move");
    CHECK_NEAR(c.switch_seconds, 3.5, "synchronous: the application waits for everything");
    CHECK(c.background == 0, "no background");
    x.pooled = 2;
    c = predict_expand(&m, &x);
    CHECK_NEAR(c.process, 0.02, "two wakes");
    CHECK_NEAR(c.redist, 2.1, "pooled processes keep their memory: the move only");
    x.pooled = 1;
    c = predict_expand(&m, &x);
    CHECK_NEAR(c.process, 0.51, "one spawn, one wake");
    CHECK_NEAR(c.redist, 2.5, "the spawned one populates");
}

static void test_expand_async(void)
{
    predict_params_t m = expand_params();
    predict_expand_t x = {.procs = 2, .async = true, .populate = 0.4, .move = 2.1,
                          .read_mostly = 0.25};
    predict_expand_cost_t c = predict_expand(&m, &x);
    /* work alone = 1.0 spawn + 0.4 populate + 0.5 read-mostly copies = 1.9 s */
    CHECK_NEAR(c.background, 1.9 * 1.25, "background: 1.9 s of work, stretched 1.25x");
    CHECK_NEAR(c.switch_seconds, 1.6, "switch: epoch + the 1.5 s of other copies");
    CHECK_NEAR(c.process, 0.25, "spawn in the background: 1.0 s x 0.25");
    CHECK_NEAR(c.redist, 1.6 + 0.9 * 0.25, "switch + 0.9 s of background x 0.25");
    CHECK_NEAR(c.process + c.redist, 1.6 + 1.9 * 0.25, "stall: switch + slowdown");
    predict_expand_cost_t sync = predict_expand(&m, &(predict_expand_t){
        .procs = 2, .populate = 0.4, .move = 2.1, .read_mostly = 0.25});
    CHECK(c.process + c.redist < sync.process + sync.redist, "async stalls less at 1.25x");

    m.async_slowdown = 1;
    c = predict_expand(&m, &x);
    CHECK_NEAR(c.process + c.redist, 1.6, "an undisturbed background: the switch alone");
    CHECK_NEAR(c.background, 1.9, "an undisturbed background takes its work's time");
    m.async_slowdown = 0; /* a parameter set written before the key: no slowdown */
    c = predict_expand(&m, &x);
    CHECK_NEAR(c.process + c.redist, 1.6, "slowdown 0 counts as 1");
    m.async_slowdown = 3; /* 2 s lost per second of background work */
    x.read_mostly = 1;
    c = predict_expand(&m, &x);
    CHECK_NEAR(c.switch_seconds, 0.1, "everything read-mostly: the switch is the epoch");
    CHECK_NEAR(c.background, 3.4 * 3, "(1.0 + 0.4 + 2.0) x 3");
    CHECK_NEAR(c.process + c.redist, 0.1 + 3.4 * 2, "stall at slowdown 3");
    CHECK(c.process + c.redist > sync.process + sync.redist,
          "at 3x the background costs more than waiting: %g s", c.process + c.redist);

    x.pooled = 2; /* the pool serves it whole: synchronous */
    c = predict_expand(&m, &x);
    CHECK(c.background == 0, "a pooled expansion does not go to the background");
    CHECK_NEAR(c.switch_seconds, 0.02 + 2.1, "wakes + move, no population");
}

/* ---- redistribution ------------------------------------------------------------------ */

static int load_is(const predict_load_t *l, int64_t bytes, int64_t ops)
{
    return l->remote_bytes == bytes && l->ops == ops;
}

static void test_plan_load_pair(void)
{
    /* [0,4,8] -> [0,2,8]: rows 2..3 move from part 0 to part 1, the rest stays. */
    int64_t ob[3] = {0, 4, 8}, nb[3] = {0, 2, 8};
    predict_load_t l[2] = {{.local_bytes = 77}, {0}};
    predict_plan_load(ob, nb, 2, 8, PREDICT_RMA_PULL, l);
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 16, 1), "pull: the destination gets all");
    CHECK(l[0].local_bytes == 77, "local bytes are the caller's");
    memset(l, 0, sizeof l);
    predict_plan_load(ob, nb, 2, 8, PREDICT_RMA_PUSH, l);
    CHECK(load_is(&l[0], 16, 1) && load_is(&l[1], 0, 0), "push: the source puts all");
    memset(l, 0, sizeof l);
    predict_plan_load(ob, nb, 2, 8, PREDICT_RMA_SPLIT, l);
    CHECK(load_is(&l[0], 8, 1) && load_is(&l[1], 8, 1), "split: one pair copies half each");
    /* accumulation: a second structure of 100-byte rows adds 200 bytes and an op */
    memset(l, 0, sizeof l);
    predict_plan_load(ob, nb, 2, 8, PREDICT_RMA_PULL, l);
    predict_plan_load(ob, nb, 2, 100, PREDICT_RMA_PULL, l);
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 216, 2), "two structures add up: %lld/%lld",
          (long long)l[1].remote_bytes, (long long)l[1].ops);
    memset(l, 0, sizeof l);
    predict_plan_load(ob, ob, 2, 8, PREDICT_RMA_SPLIT, l);
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 0, 0), "nothing moves");
}

static void test_plan_load_expand_shrink(void)
{
    /* expansion: the joiner (part 1, empty before) takes rows 3..5 of part 0 */
    int64_t before[3] = {0, 6, 6}, after[3] = {0, 3, 6};
    predict_load_t l[2] = {{0}};
    predict_plan_load(before, after, 2, 4, PREDICT_RMA_PUSH, l);
    CHECK(load_is(&l[0], 12, 1) && load_is(&l[1], 0, 0), "expansion push");
    memset(l, 0, sizeof l);
    predict_plan_load(before, after, 2, 4, PREDICT_RMA_PULL, l);
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 12, 1), "expansion pull");
    /* split of 3 rows with in = out = 3: 3 * 3 / 6 = 1.5 rounds to 2 pushed, 1 pulled */
    memset(l, 0, sizeof l);
    predict_plan_load(before, after, 2, 4, PREDICT_RMA_SPLIT, l);
    CHECK(load_is(&l[0], 8, 1) && load_is(&l[1], 4, 1), "expansion split %lld/%lld",
          (long long)l[0].remote_bytes, (long long)l[1].remote_bytes);
    /* shrink: the leaver (part 1, empty after) hands its 3 rows to part 0 */
    memset(l, 0, sizeof l);
    predict_plan_load(after, before, 2, 4, PREDICT_RMA_PULL, l);
    CHECK(load_is(&l[0], 12, 1) && load_is(&l[1], 0, 0), "shrink pull");
}

static void test_plan_load_one_to_all(void)
{
    /* [0,9,9,9] -> [0,3,6,9], 1-byte rows: part 0 sends 3 rows to each of 1 and 2.
     * Split: 3 * in 3 / (in 3 + out 6) = 1 row pushed per segment, 2 pulled. */
    int64_t ob[4] = {0, 9, 9, 9}, nb[4] = {0, 3, 6, 9};
    predict_load_t l[3] = {{0}};
    predict_plan_load(ob, nb, 3, 1, PREDICT_RMA_SPLIT, l);
    CHECK(load_is(&l[0], 2, 2) && load_is(&l[1], 2, 1) && load_is(&l[2], 2, 1),
          "one-to-all split");
    memset(l, 0, sizeof l);
    predict_plan_load(ob, nb, 3, 1, PREDICT_RMA_PUSH, l);
    CHECK(load_is(&l[0], 6, 2) && load_is(&l[1], 0, 0) && load_is(&l[2], 0, 0),
          "one-to-all push");
    memset(l, 0, sizeof l);
    predict_plan_load(ob, nb, 3, 1, PREDICT_RMA_PULL, l);
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 3, 1) && load_is(&l[2], 3, 1),
          "one-to-all pull");
}

/* More parts than rows, zero-weight (empty) parts, every row in one part, no rows at
 * all, and the statuses. */
static void test_plan_load_edges(void)
{
    /* 2 rows from part 0 spread over 5 parts, of which 3 stay empty. */
    int64_t ob[6] = {0, 2, 2, 2, 2, 2}, nb[6] = {0, 0, 1, 1, 2, 2};
    predict_load_t l[5] = {{0}};
    CHECK(predict_plan_load(ob, nb, 5, 8, PREDICT_RMA_PULL, l) == MAL_OK, "status");
    CHECK(load_is(&l[0], 0, 0) && load_is(&l[1], 8, 1) && load_is(&l[2], 0, 0) &&
          load_is(&l[3], 8, 1) && load_is(&l[4], 0, 0), "more parts than rows");
    /* Everything to the last part: the others send, the empty ones cost nothing. */
    int64_t all_last[6] = {0, 0, 0, 0, 0, 2};
    memset(l, 0, sizeof l);
    CHECK(predict_plan_load(nb, all_last, 5, 8, PREDICT_RMA_PUSH, l) == MAL_OK, "status");
    CHECK(load_is(&l[1], 8, 1) && load_is(&l[3], 8, 1) && load_is(&l[4], 0, 0) &&
          load_is(&l[0], 0, 0) && load_is(&l[2], 0, 0), "all rows to one part");
    int64_t none[6] = {0};
    memset(l, 0, sizeof l);
    CHECK(predict_plan_load(none, none, 5, 8, PREDICT_RMA_SPLIT, l) == MAL_OK &&
          load_is(&l[0], 0, 0) && load_is(&l[4], 0, 0), "no rows at all");
    CHECK(predict_plan_load(ob, nb, 0, 8, PREDICT_RMA_PULL, l) == MAL_ERR_ARG, "no parts");
}

static predict_params_t redist_params(int cores)
{
    predict_params_t m = {0};
    m.epoch_seconds = 1;
    m.window_seconds = 0.5;
    m.window_byte_seconds = 0.001;
    m.get_latency = 0.1;
    m.get_bandwidth = 100;
    m.cold_get_bandwidth = 100;
    m.copy_bandwidth = 1000;
    m.cores = cores;
    return m;
}

static void test_redist(void)
{
    predict_params_t m = redist_params(2);
    /* t = 0.2 + 1 + 1 = 2.2, 0, 0.1 + 0.5 = 0.6: the max 2.2 beats 2.8 / 2 cores */
    predict_load_t one_busy[3] = {{.remote_bytes = 100, .ops = 2, .local_bytes = 1000},
                                  {0}, {.remote_bytes = 50, .ops = 1}};
    CHECK_NEAR(predict_redist(&m, 3, one_busy, 0, 0), 1 + 2.2, "max regime");
    /* four ranks of 1 s each on 2 cores: 4 / 2 = 2 beats the max 1; windows
     * 3 * 0.5 and 2000 * 0.001 come on top */
    predict_load_t even[4] = {{.remote_bytes = 100}, {.remote_bytes = 100},
                              {.remote_bytes = 100}, {.remote_bytes = 100}};
    CHECK_NEAR(predict_redist(&m, 4, even, 0, 0), 1 + 2, "sum / cores regime");
    CHECK_NEAR(predict_redist(&m, 4, even, 3, 2000), 1 + 1.5 + 2 + 2, "with windows");
    predict_params_t four = redist_params(4);
    CHECK_NEAR(predict_redist(&four, 4, even, 0, 0), 1 + 1, "one core each: the max");
    predict_params_t none = redist_params(0);
    CHECK_NEAR(predict_redist(&none, 4, even, 0, 0), 1 + 4, "cores 0 counts as 1");
    CHECK_NEAR(predict_redist(&m, 0, NULL, 0, 0), 1, "nothing to copy: the epoch");
    /* cold bytes at their own bandwidth: 60 warm at 100 B/s + 40 cold at 10 B/s */
    predict_params_t cold = redist_params(1);
    cold.cold_get_bandwidth = 10;
    predict_load_t mixed[1] = {{.remote_bytes = 100, .cold_bytes = 40}};
    CHECK_NEAR(predict_redist(&cold, 1, mixed, 0, 0), 1 + 0.6 + 4, "cold and warm bytes");
    /* across hosts: of 100 remote bytes, 50 cross (20 of them cold), at the link's
     * bandwidths; the other 50 (20 cold) as on one host */
    predict_params_t link = redist_params(1);
    link.cold_get_bandwidth = 10;
    for (int e = 0; e < PREDICT_EXECUTORS; e++) {
        link.redist_bw[PREDICT_LINK_NET][PREDICT_WARM][e] = e == 1 ? 30 : 3;
        link.redist_bw[PREDICT_LINK_NET][PREDICT_COLD][e] = e == 2 ? 5 : 1;
    }
    CHECK_NEAR(predict_net_bandwidth(&link, PREDICT_WARM), 30, "fastest warm across hosts");
    CHECK_NEAR(predict_net_bandwidth(&link, PREDICT_COLD), 5, "fastest cold across hosts");
    predict_load_t crossing[1] = {{.remote_bytes = 100, .cold_bytes = 40, .net_bytes = 50,
                                   .net_cold_bytes = 20}};
    CHECK_NEAR(predict_redist(&link, 1, crossing, 0, 0), 1 + 0.3 + 2 + 1 + 4,
               "one host's bytes and the link's each at theirs");
}

/* The bytes a rank copies from or to a part on another host are its net bytes. */
static void test_plan_load_hosts(void)
{
    /* [0,4,8,8] -> [0,2,4,8]: rows 2..3 go 0 -> 1 (one host), rows 4..7 go 1 -> 2. */
    int64_t ob[4] = {0, 4, 8, 8}, nb[4] = {0, 2, 4, 8};
    double host[3] = {1, 1, 2};
    predict_load_t l[3] = {{0}};
    CHECK(predict_plan_load_hosts(ob, nb, 3, 8, PREDICT_RMA_PULL, host, l) == MAL_OK,
          "hosts");
    int64_t net = l[0].net_bytes + l[1].net_bytes + l[2].net_bytes;
    int64_t remote = l[0].remote_bytes + l[1].remote_bytes + l[2].remote_bytes;
    CHECK(l[2].net_bytes == l[2].remote_bytes && l[1].net_bytes == 0 &&
              net == remote - l[1].remote_bytes,
          "part 2's pulls cross, part 1's do not: net %lld of %lld", (long long)net,
          (long long)remote);
    memset(l, 0, sizeof l);
    predict_plan_load_hosts(ob, nb, 3, 8, PREDICT_RMA_PULL, NULL, l);
    CHECK(l[0].net_bytes + l[1].net_bytes + l[2].net_bytes == 0, "no hosts: one host");
}

/* ---- one interval ---------------------------------------------------------------------- */

static void test_interval(void)
{
    predict_interval_t t = {1, 2, 3, 4};
    CHECK(predict_total(&t) == 10, "total");
    CHECK_NEAR(predict_rel_error(110, 100), 0.1, "over");
    CHECK_NEAR(predict_rel_error(90, 100), -0.1, "under");
    CHECK(predict_rel_error(100, 100) == 0, "exact");
    CHECK(predict_rel_error(0, 0) == 0, "both zero");
    CHECK(predict_rel_error(5, 0) == INFINITY, "nothing measured, something predicted");
    CHECK(predict_rel_error(-5, 0) == -INFINITY, "negative over zero");
}

/* ---- calibration file ------------------------------------------------------------------ */

static void fill_sentinel(predict_params_t *p)
{
    memset(p, 0xA5, sizeof *p);
}

static int same_params(const predict_params_t *a, const predict_params_t *b)
{
    /* bit-identical fields, padding aside */
    return memcmp(&a->alpha, &b->alpha, sizeof a->alpha) == 0 &&
           memcmp(&a->beta, &b->beta, sizeof a->beta) == 0 &&
           memcmp(&a->gamma, &b->gamma, sizeof a->gamma) == 0 &&
           memcmp(&a->get_bandwidth, &b->get_bandwidth, sizeof a->get_bandwidth) == 0 &&
           memcmp(&a->cold_get_bandwidth, &b->cold_get_bandwidth,
                  sizeof a->cold_get_bandwidth) == 0 &&
           memcmp(&a->get_latency, &b->get_latency, sizeof a->get_latency) == 0 &&
           memcmp(&a->copy_bandwidth, &b->copy_bandwidth, sizeof a->copy_bandwidth) == 0 &&
           memcmp(&a->epoch_seconds, &b->epoch_seconds, sizeof a->epoch_seconds) == 0 &&
           memcmp(&a->window_seconds, &b->window_seconds, sizeof a->window_seconds) == 0 &&
           memcmp(&a->window_byte_seconds, &b->window_byte_seconds,
                  sizeof a->window_byte_seconds) == 0 &&
           memcmp(&a->spawn_seconds, &b->spawn_seconds, sizeof a->spawn_seconds) == 0 &&
           memcmp(&a->spawn_host_seconds, &b->spawn_host_seconds,
                  sizeof a->spawn_host_seconds) == 0 &&
           memcmp(&a->fault_byte_seconds, &b->fault_byte_seconds,
                  sizeof a->fault_byte_seconds) == 0 &&
           memcmp(&a->remove_seconds, &b->remove_seconds, sizeof a->remove_seconds) == 0 &&
           memcmp(&a->pool_wake_seconds, &b->pool_wake_seconds,
                  sizeof a->pool_wake_seconds) == 0 &&
           memcmp(&a->async_slowdown, &b->async_slowdown, sizeof a->async_slowdown) == 0 &&
           memcmp(a->redist_bw, b->redist_bw, sizeof a->redist_bw) == 0 &&
           a->cores == b->cores;
}

/* Parse `text` as file "test.cal" into *out. */
static mal_status_t parse_text(const char *text, predict_params_t *out, char *err,
                               size_t errlen)
{
    FILE *f = tmpfile();
    if (!f) {
        CHECK(0, "tmpfile failed");
        return MAL_ERR_NOMEM;
    }
    fputs(text, f);
    rewind(f);
    mal_status_t st = predict_params_parse(f, "test.cal", out, err, errlen);
    fclose(f);
    return st;
}

/* The defaults are a valid calibration: written out, the reader accepts them as they are. */
static void test_defaults(void)
{
    predict_params_t p, back;
    predict_params_default(&p);
    char buf[4096] = "", err[256] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    CHECK(f != NULL && predict_params_write(f, &p, "defaults") == MAL_OK, "write defaults");
    if (f != NULL)
        fclose(f);
    f = fmemopen(buf, strlen(buf), "r");
    CHECK(f != NULL && predict_params_parse(f, "defaults", &back, err, sizeof err) == MAL_OK,
          "defaults refused: %s", err);
    if (f != NULL)
        fclose(f);
    CHECK(memcmp(&p, &back, offsetof(predict_params_t, cores)) == 0 && p.cores == back.cores &&
              memcmp(p.redist_bw, back.redist_bw, sizeof p.redist_bw) == 0,
          "defaults changed on the way");
    CHECK(p.alpha > 0 && p.beta > 0 && p.spawn_seconds > 0 && p.cores >= 1,
          "a default the model cannot use");
}

static void test_round_trip(void)
{
    predict_params_t p = {
        .alpha = 1.0 / 3.0, .beta = 0.1, .gamma = 1e-300, .get_bandwidth = 5e9 + 0.5,
        .cold_get_bandwidth = 3e8 + 0.25,
        .get_latency = 2e-6, .copy_bandwidth = 1.0 / 7.0, .epoch_seconds = 0,
        .window_seconds = 123456789.125, .window_byte_seconds = 4.9e-324,
        .fault_byte_seconds = 1.0 / 9.0, .spawn_seconds = 0.08, .spawn_host_seconds = 0.0625,
        .remove_seconds = 1e300, .pool_wake_seconds = 2.5e-3,
        .async_slowdown = 1.0 + 1.0 / 3.0, .cores = 7,
        .redist_bw = {{{1.5e9, 0, 2.25e9, 1.0 / 3.0}, {7e8, 8e8, 9e8, 1e9}},
                      {{0, 0, 0, 0}, {1e300, 2, 3, 4}}},
    };
    FILE *f = tmpfile();
    CHECK(f != NULL, "tmpfile");
    if (!f)
        return;
    CHECK(predict_params_write(f, &p, "calibrated on host x\nsecond line") == MAL_OK, "write");
    rewind(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    const char *comment = "# calibrated on host x\n# second line\n";
    CHECK(strncmp(text, comment, strlen(comment)) == 0,
          "header as comments: %.60s", text);
    rewind(f);
    predict_params_t back;
    fill_sentinel(&back);
    char err[256] = "";
    CHECK(predict_params_parse(f, "round", &back, err, sizeof err) == MAL_OK, "read back: %s",
          err);
    CHECK(same_params(&p, &back), "every field bit-identical");
    fclose(f);

    predict_params_default(&p);
    f = tmpfile();
    CHECK(f && predict_params_write(f, &p, NULL) == MAL_OK, "write without header");
    if (!f)
        return;
    rewind(f);
    fill_sentinel(&back);
    CHECK(predict_params_parse(f, "defaults", &back, err, sizeof err) == MAL_OK, "%s", err);
    CHECK(same_params(&p, &back), "defaults round trip");
    fclose(f);
}

/* MAL_REDIST_AUTO's choice: the fastest measured executor, the first on a tie, the
 * documented defaults' choice where the file measured none; the key names. */
static void test_fastest_executor(void)
{
    predict_params_t d, p;
    predict_params_default(&d);
    for (int link = 0; link < PREDICT_LINKS; link++)
        for (int state = 0; state < PREDICT_STATES; state++) {
            int k = predict_fastest_executor(&d, link, state);
            CHECK(k >= 0 && k < PREDICT_EXECUTORS, "default choice %d out of range", k);
            for (int m = 0; m < PREDICT_EXECUTORS && k >= 0; m++)
                CHECK(d.redist_bw[link][state][m] <= d.redist_bw[link][state][k],
                      "default choice %d is not the fastest (link %d state %d)", k, link,
                      state);
        }
    p = d;
    double bw[PREDICT_EXECUTORS] = {1e9, 2e9, 9e9, 3e9};
    memcpy(p.redist_bw[PREDICT_LINK_HOST][PREDICT_COLD], bw, sizeof bw);
    CHECK(predict_fastest_executor(&p, PREDICT_LINK_HOST, PREDICT_COLD) == 2, "p2p fastest");
    double tie[PREDICT_EXECUTORS] = {1e9, 5e9, 5e9, 0};
    memcpy(p.redist_bw[PREDICT_LINK_NET][PREDICT_WARM], tie, sizeof tie);
    CHECK(predict_fastest_executor(&p, PREDICT_LINK_NET, PREDICT_WARM) == 1, "tie: the first");
    memset(p.redist_bw[PREDICT_LINK_NET][PREDICT_COLD], 0, sizeof bw);
    CHECK(predict_fastest_executor(&p, PREDICT_LINK_NET, PREDICT_COLD) ==
              predict_fastest_executor(&d, PREDICT_LINK_NET, PREDICT_COLD),
          "nothing measured: the defaults' choice");
    CHECK(strcmp(predict_redist_key(PREDICT_LINK_NET, PREDICT_COLD, 3),
                 "redist_net_cold_rma-get") == 0 &&
              strcmp(predict_redist_key(PREDICT_LINK_HOST, PREDICT_WARM, 0),
                     "redist_host_warm_rma") == 0,
          "key names");
    /* A file naming one executor of one class: the others keep the defaults. */
    char file[2048], err[256] = "";
    snprintf(file, sizeof file, "alpha = 1e-6\nbeta = 1e-10\ngamma = 1e-10\n"
             "get_bandwidth = 5e9\nget_latency = 1e-6\ncopy_bandwidth = 8e9\n"
             "epoch_seconds = 1e-4\nwindow_seconds = 1e-4\nwindow_byte_seconds = 1e-10\n"
             "spawn_seconds = 0.1\nremove_seconds = 0.001\ncores = 2\n"
             "redist_net_warm_p2p = 1e12\n");
    CHECK(parse_text(file, &p, err, sizeof err) == MAL_OK, "one redist key: %s", err);
    CHECK(predict_fastest_executor(&p, PREDICT_LINK_NET, PREDICT_WARM) == 2,
          "the file's p2p, not the defaults' choice");
    CHECK(p.redist_bw[PREDICT_LINK_HOST][PREDICT_COLD][0] ==
              d.redist_bw[PREDICT_LINK_HOST][PREDICT_COLD][0],
          "a key the file lacks keeps its default");
}

static void test_write_error(void)
{
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        return; /* not Linux: nothing to test */
    predict_params_t p;
    predict_params_default(&p);
    CHECK(predict_params_write(full, &p, "header") == MAL_ERR_ARG, "write error reported");
    fclose(full);
}

static void test_good_file(void)
{
    const char *text = "# calibration of the test host\n"
                       "\n"
                       "   alpha\t=\t1e-6   # per message\n"
                       "beta=2e-10\n"
                       "   \t  \n"
                       "gamma = 3e-10#no space\n"
                       "  # indented comment\n"
                       "get_bandwidth = 4e9\r\n"
                       "get_latency = 0\n"
                       "copy_bandwidth = 6.5e9\n"
                       "epoch_seconds = 1e-4\n"
                       "window_seconds = 2e-4\n"
                       "window_byte_seconds = 3e-10\n"
                       "spawn_seconds = 0.25\n"
                       "remove_seconds = 0.0125\n"
                       "cores = 16"; /* no final newline */
    predict_params_t p;
    fill_sentinel(&p);
    char err[256] = "";
    CHECK(parse_text(text, &p, err, sizeof err) == MAL_OK, "good file refused: %s", err);
    CHECK(p.alpha == 1e-6 && p.beta == 2e-10 && p.gamma == 3e-10, "hockney values");
    CHECK(p.get_bandwidth == 4e9 && p.get_latency == 0 && p.copy_bandwidth == 6.5e9,
          "copy values");
    CHECK(p.cold_get_bandwidth == 4e9, "a file without cold_get_bandwidth: %g, not "
          "get_bandwidth", p.cold_get_bandwidth);
    CHECK(p.epoch_seconds == 1e-4 && p.window_seconds == 2e-4 &&
              p.window_byte_seconds == 3e-10, "window values");
    CHECK(p.spawn_seconds == 0.25 && p.remove_seconds == 0.0125 && p.cores == 16,
          "process values");
    predict_params_t def;
    predict_params_default(&def);
    CHECK(p.pool_wake_seconds == def.pool_wake_seconds &&
              p.async_slowdown == def.async_slowdown && def.async_slowdown >= 1,
          "a file without the pool and async keys: the defaults (%g, %g)",
          p.pool_wake_seconds, p.async_slowdown);
    CHECK(p.spawn_host_seconds == 0 && def.spawn_host_seconds > 0 &&
              p.fault_byte_seconds == def.fault_byte_seconds,
          "a file without the per-host and fault keys: 0 (priced as before) and the "
          "default (%g, %g)",
          p.spawn_host_seconds, p.fault_byte_seconds);
    char with_keys[1024];
    snprintf(with_keys, sizeof with_keys,
             "%s\npool_wake_seconds = 0.003\nasync_slowdown = 1.75\n"
             "spawn_host_seconds = 0.04\n", text);
    CHECK(parse_text(with_keys, &p, err, sizeof err) == MAL_OK, "pool keys refused: %s", err);
    CHECK(p.pool_wake_seconds == 0.003 && p.async_slowdown == 1.75 &&
              p.spawn_host_seconds == 0.04, "pool and per-host values");
}

/* The twelve lines of a good file; line k (1-based) holds good_lines[k - 1]. */
static const char *const good_lines[] = {
    "alpha = 1e-6",           "beta = 2e-10",          "gamma = 3e-10",
    "get_bandwidth = 4e9",    "get_latency = 1e-6",    "copy_bandwidth = 6e9",
    "epoch_seconds = 1e-4",   "window_seconds = 1e-4", "window_byte_seconds = 1e-10",
    "spawn_seconds = 0.1",    "remove_seconds = 0.01", "cores = 2",
};
#define NLINES ((int)(sizeof good_lines / sizeof good_lines[0]))

/* The good file with line `replace` (1-based, 0 for none) replaced by `with` (NULL
 * drops it) and `extra` (may be NULL) appended as a last line. */
static void build_file(char *buf, size_t size, int replace, const char *with,
                       const char *extra)
{
    buf[0] = '\0';
    for (int k = 1; k <= NLINES; k++) {
        const char *line = k == replace ? with : good_lines[k - 1];
        if (line)
            snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", line);
    }
    if (extra)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s\n", extra);
}

/* The file must be refused, with every one of `expect` (NULL-terminated) in the message
 * and *out untouched. */
static void expect_refused(const char *text, const char *what, const char *const *expect)
{
    predict_params_t p, sentinel;
    fill_sentinel(&p);
    fill_sentinel(&sentinel);
    char err[512] = "";
    CHECK(parse_text(text, &p, err, sizeof err) == MAL_ERR_ARG, "%s: accepted", what);
    for (const char *const *e = expect; *e; e++)
        CHECK(strstr(err, *e) != NULL, "%s: '%s' not in message \"%s\"", what, *e, err);
    CHECK(memcmp(&p, &sentinel, sizeof p) == 0, "%s: *out was changed", what);
}

static void refuse_line(int replace, const char *with, const char *extra, const char *what,
                        const char *const *expect)
{
    char buf[4096];
    build_file(buf, sizeof buf, replace, with, extra);
    expect_refused(buf, what, expect);
}

static void test_bad_values(void)
{
    refuse_line(0, NULL, "alphaa = 1", "unknown key",
                (const char *const[]){"test.cal:13:", "unknown key 'alphaa'", NULL});
    refuse_line(2, "beta = abc", NULL, "not a number",
                (const char *const[]){"test.cal:2:", "'beta'", "not a number", "abc", NULL});
    refuse_line(3, "gamma = 1.0x", NULL, "trailing garbage",
                (const char *const[]){"test.cal:3:", "'gamma'", "1.0x", NULL});
    refuse_line(3, "gamma = 1.0 2.0", NULL, "two numbers",
                (const char *const[]){"test.cal:3:", "'gamma'", NULL});
    refuse_line(1, "alpha =", NULL, "empty value",
                (const char *const[]){"test.cal:1:", "'alpha'", NULL});
    refuse_line(1, "alpha = -1", NULL, "negative",
                (const char *const[]){"test.cal:1:", "'alpha'", NULL});
    refuse_line(7, "epoch_seconds = nan", NULL, "NaN",
                (const char *const[]){"test.cal:7:", "'epoch_seconds'", NULL});
    refuse_line(8, "window_seconds = inf", NULL, "infinity",
                (const char *const[]){"test.cal:8:", "'window_seconds'", NULL});
    refuse_line(9, "window_byte_seconds = 1e999", NULL, "overflow",
                (const char *const[]){"test.cal:9:", "'window_byte_seconds'", NULL});
    refuse_line(4, "get_bandwidth = 0", NULL, "zero get bandwidth",
                (const char *const[]){"test.cal:4:", "'get_bandwidth'", NULL});
    refuse_line(6, "copy_bandwidth = 0", NULL, "zero copy bandwidth",
                (const char *const[]){"test.cal:6:", "'copy_bandwidth'", NULL});
    refuse_line(12, "cores = 1.5", NULL, "fractional cores",
                (const char *const[]){"test.cal:12:", "'cores'", NULL});
    refuse_line(12, "cores = 0", NULL, "zero cores",
                (const char *const[]){"test.cal:12:", "'cores'", NULL});
    refuse_line(12, "cores = 1e10", NULL, "cores beyond int",
                (const char *const[]){"test.cal:12:", "'cores'", NULL});
    refuse_line(0, NULL, "async_slowdown = 0.5", "slowdown below 1",
                (const char *const[]){"test.cal:13:", "'async_slowdown' must be >= 1", NULL});
    refuse_line(0, NULL, "pool_wake_seconds = -1", "negative wake",
                (const char *const[]){"test.cal:13:", "'pool_wake_seconds'", NULL});
}

static void test_bad_structure(void)
{
    refuse_line(0, NULL, "beta = 1", "duplicate key",
                (const char *const[]){"test.cal:13:", "'beta' appears twice",
                                      "first on line 2", NULL});
    refuse_line(5, "get_latency 2e-6", NULL, "no '='",
                (const char *const[]){"test.cal:5:", "expected 'key = value'", NULL});
    refuse_line(5, "= 2e-6", NULL, "no key",
                (const char *const[]){"test.cal:5:", "expected 'key = value'", NULL});
    refuse_line(3, NULL, NULL, "missing key",
                (const char *const[]){"test.cal: missing key 'gamma'", NULL});
    refuse_line(12, "# cores = 2", NULL, "commented out key",
                (const char *const[]){"test.cal: missing key 'cores'", NULL});
    expect_refused("", "empty file", (const char *const[]){"missing key 'alpha'", NULL});
}

/* A line of 1023 characters fits, one of 1024 does not. */
static void test_long_lines(void)
{
    char comment[1100], buf[4096];
    memset(comment, ' ', sizeof comment);
    comment[0] = '#';
    comment[1023] = '\0';
    build_file(buf, sizeof buf, 0, NULL, comment);
    predict_params_t p;
    char err[256] = "";
    CHECK(parse_text(buf, &p, err, sizeof err) == MAL_OK, "1023 characters refused: %s", err);
    comment[1023] = ' ';
    comment[1024] = '\0';
    build_file(buf, sizeof buf, 0, NULL, comment);
    expect_refused(buf, "1024 characters", (const char *const[]){"test.cal:13:", "longer", NULL});
    build_file(buf, sizeof buf, 0, NULL, NULL);
    memmove(buf + 1030, buf, strlen(buf) + 1); /* a 1029-character first line */
    memset(buf, ' ', 1030);
    buf[1029] = '\n';
    expect_refused(buf, "long first line", (const char *const[]){"test.cal:1:", NULL});
}

static void test_read_path(void)
{
    predict_params_t p, sentinel;
    fill_sentinel(&p);
    fill_sentinel(&sentinel);
    char err[512] = "";
    const char *missing = "/nonexistent-dir/predict.cal";
    CHECK(predict_params_read(missing, &p, err, sizeof err) == MAL_ERR_ARG,
          "missing file accepted");
    CHECK(strstr(err, "/nonexistent-dir/predict.cal: cannot open: ") == err, "message %s", err);
    CHECK(memcmp(&p, &sentinel, sizeof p) == 0, "*out changed on a missing file");

    char path[] = "/tmp/test_predict_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    predict_params_t written;
    predict_params_default(&written);
    written.cores = 5;
    CHECK(f && predict_params_write(f, &written, "test") == MAL_OK, "write file");
    if (f)
        fclose(f);
    CHECK(predict_params_read(path, &p, err, sizeof err) == MAL_OK, "read file: %s", err);
    CHECK(same_params(&p, &written), "file round trip");
    unlink(path);
}

/* A tiny or absent message buffer must not be overrun. */
static void test_small_error_buffer(void)
{
    char buf[4096], err[8];
    predict_params_t p;
    build_file(buf, sizeof buf, 2, "beta = abc", NULL);
    memset(err, 'x', sizeof err);
    CHECK(parse_text(buf, &p, err, 4) == MAL_ERR_ARG && err[3] == '\0' && err[4] == 'x',
          "message cut to the buffer");
    CHECK(parse_text(buf, &p, NULL, 0) == MAL_ERR_ARG, "no message buffer");
}

int main(void)
{
    test_op_names();
    test_send_and_barrier();
    test_bcast();
    test_reduce(PREDICT_OP_REDUCE, "reduce");
    test_reduce(PREDICT_OP_ALLREDUCE, "allreduce");
    test_gathers_and_alltoall();
    test_single_process();
    test_comm_model();
    test_lambda();
    test_extrapolate();
    test_power_and_comp();
    test_spawn_remove();
    test_grow_from_pool();
    test_grow_per_host();
    test_expand_sync();
    test_expand_async();
    test_plan_load_pair();
    test_plan_load_hosts();
    test_plan_load_expand_shrink();
    test_plan_load_one_to_all();
    test_plan_load_edges();
    test_redist();
    test_interval();
    test_defaults();
    test_round_trip();
    test_fastest_executor();
    test_write_error();
    test_good_file();
    test_bad_values();
    test_bad_structure();
    test_long_lines();
    test_read_path();
    test_small_error_buffer();
    if (failures) {
        printf("test_predict: %d checks failed\n", failures);
        return 1;
    }
    printf("test_predict: PASS\n");
    return 0;
}
