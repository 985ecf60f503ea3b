/* pool_soak: random reconfigurations with the process pool (and asynchronous
 * expansion), every element checked on every active process after every one, and the
 * resources of every process counted at the end.
 *
 * Usage: pool_soak [--seed S] [--steps N] [--rows R] [--work-us U] [--race] [--pingpong]
 *                  [--faults P] [--verbose]
 *   under tools/malrun -n 2, with MAL_POOL=1 (else released processes end, as in
 *   mal_soak), optionally MAL_PREFETCH=K and MAL_ASYNC=1 (read by libmal; the soak reads
 *   MAL_ASYNC too, to plan its expansions).
 *
 * mal_soak cannot run with the pool: a released process that an expansion takes back
 * returns MAL_RECONFIGURED from the mal_shrink that released it, iterations later, which
 * its loop counts as a failure. Here every process's loop follows mal_iteration(): a
 * process that comes back (from mal_shrink, or from mal_init when spawned into the pool)
 * checks its data at the iteration it finds and goes on with the others.
 *
 * Each iteration: every active process checks every element it holds (two block arrays:
 * "x", rewritten every iteration with the iteration number as version, and "m",
 * MAL_READ_MOSTLY, never changed), the rows cover the whole array once, and the failures
 * are summed over mal_comm(). Then, drawn from the seed and the iteration alone (every
 * active process draws alike), an action: +1/+2 (per call or batched), -k of random
 * ranks (rank 0 included), a rebalance with random weights, mal_pool_release, or none.
 * The set stays within 1..4 processes. With MAL_ASYNC=1 the expansions come from a plan
 * (the only way libmal starts them in the background): "+k" every 8 iterations; the loop
 * makes room for them and does nothing while one is pending.
 *
 * --race lets the loop act while an asynchronous expansion is pending: mal_expand,
 * mal_shrink, mal_pool_release and mal_rebalance must then be refused
 * (MAL_ERR_UNSUPPORTED, the background thread owns the pool) and nothing may change.
 *
 * --faults P: in P percent of the actions one rank's direct transfers fail (libmal's
 * MAL_FAULT_DIRECT, as in mal_soak): the action succeeds or is abandoned, and then the
 * old set, its layout and data must go on (woken processes park again).
 *
 * --pingpong: only "release one of the two processes (a random one), take it back", so
 * the set at the end is the set of the base sample and the growth figures are leaks.
 *
 * The last action's iteration is carried to joiners (mal_register_value), so a process
 * that joins through a direct action does not draw a second action at that iteration.
 *
 * End: every active process reports its spawns/reuses (mal_pool_info), the growth of its
 * resident memory, descriptors, windows and communicators since its base sample (taken
 * 20 iterations after it joined) and mal_buffer_count(); rank 0 prints one line,
 * "pool_soak: PASS ..." or "pool_soak: FAIL ...". */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "mal.h"
#include "soak_probe.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PROCS 4
#define COLS 4
#define ASYNC_PERIOD 8
#define WARM 20

typedef struct {
    uint64_t seed;
    long long steps, rows;
    long work_us;
    bool verbose, async;
    bool race; /* direct actions while an asynchronous expansion is pending */
    bool pingpong; /* release rank 0 or 1 of two, take it back at the next: leaks */
    int faults;    /* percent of actions with one rank's direct transfers failing */
} options_t;

/* Carried to joiners: the iteration of the last direct action, and tallies. */
typedef struct {
    long long acted_at;
    long long expands, shrinks, rebalances, releases, failed;
} carried_t;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t value(uint64_t g, uint64_t k, uint64_t version)
{
    return mix(g * COLS + k + (version << 40));
}

static int comm_size(void)
{
    int n = 0;
    MPI_Comm_size(mal_comm(), &n);
    return n;
}

static int comm_rank(void)
{
    int r = -1;
    MPI_Comm_rank(mal_comm(), &r);
    return r;
}

static void write_version(mal_array_t *a, long long version)
{
    uint64_t *v = mal_local_data(a);
    for (int64_t r = 0; r < mal_local_rows(a); r++)
        for (int k = 0; k < COLS; k++)
            v[r * COLS + k] = value((uint64_t)(mal_first_row(a) + r), (uint64_t)k,
                                    (uint64_t)version);
}

static long long count_bad(mal_array_t *a, long long version)
{
    const uint64_t *v = mal_local_data(a);
    long long bad = 0;
    for (int64_t r = 0; r < mal_local_rows(a); r++)
        for (int k = 0; k < COLS; k++)
            bad += v[r * COLS + k] != value((uint64_t)(mal_first_row(a) + r), (uint64_t)k,
                                            (uint64_t)version);
    return bad;
}

/* Wrong elements and rows held, summed over mal_comm(): {bad x, bad m, rows x, rows m}. */
static bool check(mal_array_t *x, mal_array_t *m, long long it, long long rows, bool verbose)
{
    long long s[4] = {count_bad(x, it), count_bad(m, 0), mal_local_rows(x), mal_local_rows(m)};
    if (verbose && (s[0] || s[1]))
        fprintf(stderr, "pool_soak[%d]: it %lld: %lld bad in x (rows %lld+%lld), %lld in m\n",
                comm_rank(), it, s[0], (long long)mal_first_row(x), s[2], s[1]);
    MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_LONG_LONG, MPI_SUM, mal_comm());
    bool ok = s[0] == 0 && s[1] == 0 && s[2] == rows && s[3] == rows;
    if (!ok && comm_rank() == 0)
        fprintf(stderr, "pool_soak: FAIL it %lld: %lld wrong in x, %lld wrong in m, rows %lld "
                "and %lld of %lld\n", it, s[0], s[1], s[2], s[3], rows);
    return ok;
}

/* ---- the actions ----------------------------------------------------------------- */

typedef struct {
    char kind; /* 'e', 's', 'r', 'p' (pool release), 0 none */
    int count;
    int ranks[MAX_PROCS];
    mal_spawn_mode_t mode;
    bool weighted;
    double weights[MAX_PROCS];
    int fault_rank; /* its direct transfers fail (libmal's MAL_FAULT_DIRECT), or -1 */
} action_t;

static int async_count(const options_t *o, long long plan_it)
{
    return 1 + (int)(mix(o->seed * 7919 + (uint64_t)plan_it) % 2);
}

static void draw_weights(action_t *a, uint64_t *r, int n)
{
    a->weighted = (*r = mix(*r)) % 2;
    for (int i = 0; i < n; i++)
        a->weights[i] = (double)((*r = mix(*r)) % 4); /* zeros included */
    bool any = false;
    for (int i = 0; i < n; i++)
        any |= a->weights[i] > 0;
    if (!any)
        a->weights[0] = 1;
}

static void draw_shrink(action_t *a, uint64_t *r, int size, int count)
{
    a->kind = 's';
    a->count = count;
    int all[MAX_PROCS];
    for (int i = 0; i < size; i++)
        all[i] = i;
    for (int i = 0; i < count; i++) { /* a random draw without repeats */
        int j = i + (int)((*r = mix(*r)) % (uint64_t)(size - i));
        int t = all[i];
        all[i] = all[j];
        all[j] = t;
        a->ranks[i] = all[i];
    }
    draw_weights(a, r, size - count);
}

/* The action at iteration `it` for `size` processes, `parked` in the pool. */
static action_t draw_kind(const options_t *o, long long it, int size, int parked)
{
    action_t a = {0};
    uint64_t r = mix(o->seed ^ mix((uint64_t)it));
    if (o->pingpong) {
        if (size == 2)
            draw_shrink(&a, &r, size, 1);
        else if (size == 1)
            a = (action_t){.kind = 'e', .count = 1, .mode = MAL_SPAWN_PER_CALL};
        return a;
    }
    if (o->async && (it + 1) % ASYNC_PERIOD == 0) { /* room for the plan's expansion */
        int over = size + async_count(o, it + 1) - MAX_PROCS;
        if (over > 0)
            draw_shrink(&a, &r, size, over);
        return a;
    }
    int pick = (int)((r = mix(r)) % 100);
    if (pick < 30 && size < MAX_PROCS && !o->async) {
        a.kind = 'e';
        a.count = 1 + (int)((r = mix(r)) % (uint64_t)(size + 2 <= MAX_PROCS ? 2 : 1));
        a.mode = (r = mix(r)) % 2 ? MAL_SPAWN_BATCHED : MAL_SPAWN_PER_CALL;
        draw_weights(&a, &r, size + a.count);
    } else if (pick < 30 && size < MAX_PROCS && parked > 0) { /* async: a pool expansion */
        a.kind = 'e';
        a.count = 1;
        a.mode = MAL_SPAWN_DEFAULT;
        draw_weights(&a, &r, size + 1);
    } else if (pick < 60 && size > 1) {
        draw_shrink(&a, &r, size, 1 + (int)((r = mix(r)) % (uint64_t)(size - 1)));
    } else if (pick < 70) {
        a.kind = 'r';
        draw_weights(&a, &r, size);
        a.weighted = true;
    } else if (pick < 74 && parked > 0) {
        a.kind = 'p';
        a.count = (int)((r = mix(r)) % (uint64_t)(parked + 1));
    }
    return a;
}

static action_t draw(const options_t *o, long long it, int size, int parked)
{
    action_t a = draw_kind(o, it, size, parked);
    uint64_t r = mix(o->seed * 31 + mix((uint64_t)it + 77));
    a.fault_rank = (int)(r % 100) < o->faults ? (int)(mix(r) % (uint64_t)size) : -1;
    return a;
}

static void describe(const action_t *a, long long it, int size, char *buf, size_t len)
{
    int n = snprintf(buf, len, "it %lld, %d procs: ", it, size);
    if (a->kind == 'e')
        n += snprintf(buf + n, len - (size_t)n, "+%d%s", a->count,
                      a->mode == MAL_SPAWN_BATCHED ? "b" : "p");
    else if (a->kind == 's')
        for (int i = 0; i < a->count; i++)
            n += snprintf(buf + n, len - (size_t)n, "%s%d", i ? ":" : "-@", a->ranks[i]);
    else if (a->kind == 'r')
        n += snprintf(buf + n, len - (size_t)n, "rebalance");
    else if (a->kind == 'p')
        n += snprintf(buf + n, len - (size_t)n, "pool release %d", a->count);
    if (a->weighted && a->kind != 'p')
        n += snprintf(buf + n, len - (size_t)n, " weighted");
    if (a->fault_rank >= 0)
        snprintf(buf + n, len - (size_t)n, ", transfers of rank %d fail", a->fault_rank);
}

static mal_status_t perform_kind(const action_t *a)
{
    const double *w = a->weighted ? a->weights : NULL;
    switch (a->kind) {
    case 'e': return mal_expand(a->count, a->mode, w);
    case 's': return mal_shrink(a->count, a->ranks, w);
    case 'r': return mal_rebalance(w);
    case 'p': return mal_pool_release(a->count);
    default: return MAL_OK;
    }
}

static mal_status_t perform(const action_t *a)
{
    bool fault = a->fault_rank == comm_rank();
    if (fault)
        setenv("MAL_FAULT_DIRECT", "1", 1);
    mal_status_t st = perform_kind(a);
    if (fault)
        unsetenv("MAL_FAULT_DIRECT");
    return st;
}

/* ---- the loop ---------------------------------------------------------------------- */

typedef struct {
    const options_t *o;
    mal_array_t *x, *m;
    carried_t carried;
    bool sampled;
    long long base_at;
    soak_probe_t base;
    int base_buffers;
} run_t;

static bool pending(void)
{
    mal_pool_info_t p;
    return mal_pool_info(&p) == MAL_OK && p.async_pending;
}

static int parked(void)
{
    mal_pool_info_t p;
    return mal_pool_info(&p) == MAL_OK ? p.parked : 0;
}

static void work(long us)
{
    if (us <= 0)
        return;
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* A direct action at iteration `it`. Returns MAL_REMOVED (leave), a status < 0 (a
 * failure the soak counts), or MAL_OK / MAL_RECONFIGURED. */
static mal_status_t act(run_t *run, long long it)
{
    if (run->carried.acted_at == it || (pending() && !run->o->race))
        return MAL_OK;
    action_t a = draw(run->o, it, comm_size(), parked());
    if (a.kind == 0)
        return MAL_OK;
    char text[160];
    describe(&a, it, comm_size(), text, sizeof text);
    if (run->o->verbose && comm_rank() == 0)
        printf("pool_soak: %s\n", text);
    run->carried.acted_at = it;
    if (pending()) { /* --race: refused while the background thread owns the pool */
        mal_status_t st = perform(&a);
        if (st == MAL_ERR_UNSUPPORTED)
            return MAL_OK;
        fprintf(stderr, "pool_soak: %s during an asynchronous expansion: %s, not refused\n",
                text, st < 0 ? mal_error_message() : "done");
        return st < 0 ? st : MAL_ERR_ARG;
    }
    run->carried.expands += a.kind == 'e';
    run->carried.shrinks += a.kind == 's';
    run->carried.rebalances += a.kind == 'r';
    run->carried.releases += a.kind == 'p';
    mal_status_t st = perform(&a);
    if (st < 0 && (run->o->verbose || a.fault_rank < 0))
        fprintf(stderr, "pool_soak: %s failed: %s\n", text, mal_error_message());
    if (st < 0 && a.fault_rank >= 0) { /* abandoned on purpose: the old set goes on */
        run->carried.failed++;
        return MAL_OK;
    }
    return st;
}

/* The iterations of this process from where it is; false on a failure. *removed on a
 * process released for good. */
static bool iterate(run_t *run, bool *removed)
{
    for (;;) {
        long long it = mal_iteration();
        if (!check(run->x, run->m, it, run->o->rows, run->o->verbose))
            return false;
        if (!run->sampled && it >= run->base_at) {
            soak_probe_read(&run->base);
            run->base_buffers = mal_buffer_count();
            run->sampled = true;
        }
        if (it >= run->o->steps)
            return true;
        mal_status_t st = act(run, it);
        if (st == MAL_REMOVED) {
            *removed = true;
            return true;
        }
        if (st < 0)
            return false;
        if (st == MAL_RECONFIGURED || mal_iteration() != it)
            continue; /* check again; a process woken from the pool finds a later iteration */
        write_version(run->x, it + 1);
        work(run->o->work_us);
        st = mal_step();
        if (st == MAL_REMOVED) {
            *removed = true;
            return true;
        }
        if (st < 0) {
            fprintf(stderr, "pool_soak: mal_step at %lld: %s\n", it, mal_error_message());
            return false;
        }
    }
}

/* ---- setup and verdict -------------------------------------------------------------- */

/* The plan of the asynchronous expansions: "+k" every ASYNC_PERIOD iterations. */
static char *async_plan(const options_t *o)
{
    size_t len = (size_t)(o->steps / ASYNC_PERIOD + 1) * 24 + 1;
    char *plan = calloc(len, 1);
    size_t n = 0;
    for (long long it = ASYNC_PERIOD; plan != NULL && it < o->steps; it += ASYNC_PERIOD)
        n += (size_t)snprintf(plan + n, len - n, "%s%lld:+%d", n ? "," : "", it,
                              async_count(o, it));
    return plan;
}

static bool setup(run_t *run, char *plan)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.summary = run->o->verbose;
    cfg.policy = "off";
    cfg.plan = plan != NULL ? plan : "";
    if (mal_init(MPI_COMM_WORLD, &cfg) != MAL_OK) {
        fprintf(stderr, "pool_soak: mal_init: %s\n", mal_error_message());
        return false;
    }
    run->base_at = mal_iteration() + WARM;
    if (mal_register_value("pool_soak", &run->carried, sizeof run->carried) != MAL_OK ||
        mal_alloc_window("x", MPI_UINT64_T, run->o->rows, COLS, MAL_BLOCK, &run->x) != MAL_OK ||
        mal_alloc_window("m", MPI_UINT64_T, run->o->rows, COLS, MAL_BLOCK | MAL_READ_MOSTLY,
                         &run->m) != MAL_OK) {
        fprintf(stderr, "pool_soak: setup: %s\n", mal_error_message());
        return false;
    }
    if (mal_is_initial_process()) {
        run->carried.acted_at = -1;
        write_version(run->x, 0);
        write_version(run->m, 0);
    }
    return true;
}

enum { F_RSS, F_FDS, F_WINS, F_COMMS, F_GROUPS, F_BUFS, F_SPAN, F_N };

static void report(const run_t *run, bool ok)
{
    soak_probe_t now;
    soak_probe_read(&now);
    const soak_probe_t *b = &run->base;
    double mine[F_N] = {0};
    if (run->sampled) {
        mine[F_RSS] = (double)(now.rss_kb - b->rss_kb);
        mine[F_FDS] = (double)(now.fds - b->fds);
        mine[F_WINS] = (double)(now.windows - b->windows);
        mine[F_COMMS] = (double)(now.comms - b->comms);
        mine[F_GROUPS] = (double)(now.groups - b->groups);
        mine[F_BUFS] = mal_buffer_count() - run->base_buffers;
        mine[F_SPAN] = (double)(run->o->steps - run->base_at);
    }
    double all[MAX_PROCS * F_N] = {0};
    int okall = ok;
    MPI_Allreduce(MPI_IN_PLACE, &okall, 1, MPI_INT, MPI_MIN, mal_comm());
    MPI_Gather(mine, F_N, MPI_DOUBLE, all, F_N, MPI_DOUBLE, 0, mal_comm());
    mal_pool_info_t p = {0};
    mal_pool_info(&p);
    if (comm_rank() != 0)
        return;
    const carried_t *c = &run->carried;
    printf("pool_soak: %s seed %llu, %lld iterations, %lld expands, %lld shrinks, %lld "
           "rebalances, %lld pool releases, %lld abandoned; pool: %d active, %d parked, %lld spawned, %lld "
           "reused, %lld released\n", okall ? "PASS" : "FAIL", (unsigned long long)run->o->seed,
           run->o->steps, c->expands, c->shrinks, c->rebalances, c->releases, c->failed, p.active,
           p.parked, (long long)p.spawned, (long long)p.reused, (long long)p.released);
    for (int r = 0; r < comm_size(); r++) {
        const double *f = &all[r * F_N];
        printf("pool_soak:   rank %d over %.0f it: rss %+.0f kB, fds %+.0f, windows %+.0f, "
               "comms %+.0f, groups %+.0f, buffers %+.0f\n", r, f[F_SPAN], f[F_RSS],
               f[F_FDS], f[F_WINS], f[F_COMMS], f[F_GROUPS], f[F_BUFS]);
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: pool_soak [--seed S] [--steps N] [--rows R] [--work-us U] "
            "[--race] [--pingpong] [--faults P] [--verbose]\n"
            "(run under tools/malrun; the header of bench/pool_soak.c says what each does)\n"
            CLI_STANDARD_USAGE
            "Exit status: 0 after PASS, 1 after FAIL, 2 for a usage error.\n");
}

static const cli_t cli = {"pool_soak", mal_version, usage};

/* Every process parses, before MPI starts (a spawned one gets the same arguments). */
static void parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.seed = 1, .steps = 200, .rows = 1000, .work_us = 1000};
    static const struct option longopts[] = {
        {"verbose", no_argument, NULL, 'v'},       {"race", no_argument, NULL, 'r'},
        {"pingpong", no_argument, NULL, 'p'},      {"faults", required_argument, NULL, 'f'},
        {"seed", required_argument, NULL, 's'},    {"steps", required_argument, NULL, 'n'},
        {"rows", required_argument, NULL, 'R'},    {"work-us", required_argument, NULL, 'w'},
        CLI_STANDARD_OPTIONS,                      {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'v' || c == 'r' || c == 'p')
            *(c == 'v' ? &o->verbose : c == 'r' ? &o->race : &o->pingpong) = true;
        else if (c == 'f')
            o->faults = (int)cli_integer(&cli, "--faults", optarg, 0, 100);
        else if (c == 's')
            o->seed = (unsigned long long)cli_integer(&cli, "--seed", optarg, 0, LLONG_MAX);
        else if (c == 'n')
            o->steps = cli_integer(&cli, "--steps", optarg, 1, LLONG_MAX);
        else if (c == 'R')
            o->rows = cli_integer(&cli, "--rows", optarg, MAX_PROCS, LLONG_MAX);
        else
            o->work_us = (long)cli_integer(&cli, "--work-us", optarg, 0, 1000000000);
    }
    const char *async = getenv("MAL_ASYNC");
    o->async = async != NULL && atoi(async) > 0;
}

int main(int argc, char **argv)
{
    options_t o;
    parse(argc, argv, &o);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setvbuf(stdout, NULL, _IOLBF, 0);
    run_t run = {.o = &o};
    char *plan = o.async ? async_plan(&o) : NULL;
    bool removed = false, ok = setup(&run, plan) && iterate(&run, &removed);
    int status = !ok;
    if (!removed && mal_comm() != MPI_COMM_NULL)
        report(&run, ok);
    else if (!ok)
        fprintf(stderr, "pool_soak: a released process failed\n");
    mal_finalize();
    free(plan);
    MPI_Finalize();
    return status;
}
