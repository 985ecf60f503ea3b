/* Grow and shrink through mal_step: every scenario is a plan run one action per
 * iteration. Before each step every process rewrites its rows with the next version of
 * a closed form; after it, every process (joiners included) checks every element
 * bit-exactly, so data lost, stale or misplaced by a reconfiguration is caught. It also
 * checks the status each process gets (MAL_REMOVED exactly on the released ranks), the
 * process count and rank order, the iteration a joiner resumes at, the carried value,
 * the window count, and that communicators do not leak.
 *
 * Usage: test_malleable SCENARIO. Plans use W for "weights for the current size". */
#include "mal.h"
#include "mpitest.h"
#include "sparse_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    const char *ops;      /* one action per iteration, ';'-separated              */
    const char *hosts;    /* MAL_HOSTS for the scenario ("@" = this host)       */
    const char *program;  /* spawn_program override                             */
    int fail_at;          /* 1-based iteration whose action must fail, 0 = none */
    bool fault;           /* it fails by a direct transfer of the last rank failing
                           * (MAL_FAULT_DIRECT), not by a spawn                   */
    mal_status_t failure; /* status of the failing action; MAL_OK: MAL_ERR_SPAWN */
    const char *join_fault; /* MAL_FAULT_JOIN of the last process spawned: it cannot
                             * join, so the expansion fails (MAL_ERR_SPAWN)        */
} scenario_t;

static const scenario_t scenarios[] = {
    {"expand", "+1p;+2b", NULL, NULL, 0, false, MAL_OK, NULL},
    {"shrink_spawned", "+2p;-1;-1", NULL, NULL, 0, false, MAL_OK, NULL},
    {"shrink_initial", "+2p;-@0;-@0", NULL, NULL, 0, false, MAL_OK, NULL},
    {"expand_after_shrink", "+1;-@0;+2b", NULL, NULL, 0, false, MAL_OK, NULL},
    {"rebalance_after_expand", "+2b;W;-1;W", NULL, NULL, 0, false, MAL_OK, NULL},
    {"stress20", "+1;W;-1;+2b;-@1;W;+1p;-2;+1;-@0;W;+2p;-1;-1;+1b;W;-@0;+1;-2;W", NULL, NULL,
     0, false, MAL_OK, NULL},
    /* A skewed rebalance right after an expansion, then back: old and new processes must
     * agree on every buffer's capacities although only the old ones kept memory. */
    {"skew_after_expand", "+2b;w=4:1:1:1;w=1:1:1:1;w=1:1:1:5;-2", NULL, NULL, 0, false,
     MAL_OK, NULL},
    {"fail_missing_program", "+1", NULL, "/nonexistent/libmal-test-program", 1, false,
     MAL_OK, NULL},
    {"fail_bad_host", "+1", "nosuchhost.invalid", NULL, 1, false, MAL_OK, NULL},
    {"fail_second_spawn", "+2p;-1", "@,nosuchhost.invalid", NULL, 1, false, MAL_OK, NULL},
    /* A spawn whose children never start (run with MAL_FAULT_SPAWN_HANG, as when the
     * runtime loses their start): bounded by MAL_RECONF_TIMEOUT, then the run goes on. */
    {"fail_spawn_timeout", "+1;W;W", NULL, NULL, 1, false, MAL_ERR_TIMEOUT, NULL},
    /* A transfer failing half-way: the reconfiguration is abandoned everywhere, the
     * data stay as they were, and the next actions work. */
    {"fault_expand", "+1;W;-1", NULL, NULL, 1, true, MAL_OK, NULL},
    {"fault_rebalance", "W;+1;W;-1", NULL, NULL, 1, true, MAL_OK, NULL},
    {"fault_shrink", "+1;-@0;W", NULL, NULL, 2, true, MAL_OK, NULL},
    /* A spawned process that cannot read what rank 0 sends it (the last of a batch:
     * its sibling, who read it, leaves too), or has no memory to receive it: both
     * exit, and the application goes on with its processes and data. */
    {"fault_join_unpack", "+2b;W", NULL, NULL, 1, false, MAL_OK, "unpack"},
    {"fault_join_nomem", "+1;W", NULL, NULL, 1, false, MAL_OK, "nomem"},
    /* Run with MAL_HOSTFILE of 3 slots from 2 processes: the second expansion goes
     * beyond them and is refused before spawning; after a release there is room again. */
    {"limit", "+1;+1;W;-1;+1", NULL, NULL, 2, false, MAL_ERR_LIMIT, NULL},
};

#define ROWS 1009
#define COLS 3

static const scenario_t *find_scenario(const char *name)
{
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

/* Ranks named by "-@R:R:...". */
static int ranks_listed(const char *op)
{
    int n = 1;
    for (const char *p = op; *p; p++)
        n += *p == ':';
    return n;
}

/* The ops as a plan "1:op,2:op,..." with W expanded to weights for the size the
 * process count has reached there (r + 1 for rank r). */
static char *build_plan(const char *ops, int size, int fail_at)
{
    char *plan = calloc(8192, 1), *copy = strdup(ops);
    int it = 1;
    for (char *op = strtok(copy, ";"); op != NULL; op = strtok(NULL, ";"), it++) {
        char entry[512];
        if (strcmp(op, "W") == 0) {
            int n = snprintf(entry, sizeof entry, "%d:w=", it);
            for (int r = 0; r < size; r++)
                n += snprintf(entry + n, sizeof entry - (size_t)n, "%s%d", r ? ":" : "", r + 1);
        } else {
            snprintf(entry, sizeof entry, "%d:%s", it, op);
            bool failed = it == fail_at;
            int count = atoi(op + (op[1] == '@' ? 2 : 1));
            if (op[0] == '+' && !failed)
                size += count;
            else if (op[0] == '-' && !failed)
                size -= op[1] == '@' ? ranks_listed(op) : count;
        }
        strcat(plan, it > 1 ? "," : "");
        strcat(plan, entry);
    }
    free(copy);
    return plan;
}

static double value(int64_t row, int64_t col, int64_t version, int salt)
{
    return (double)(row * 7919 + col * 104729 + version * 1299709 + salt);
}

typedef struct {
    mal_array_t *block, *ints, *repl;
    mal_csr_t *sparse;          /* with one heavy row and empty rows           */
    mal_array_t *aligned;       /* follows the matrix's rows                   */
} data_t;

/* Matrix and aligned vector: the same rows, the data of `version`, and nonzeros split
 * by the weights of the last action (W: r + 1, otherwise even) to within one row. */
static int64_t check_sparse(const data_t *d, int64_t version, const char *last_op)
{
    int64_t bad = sp_count_bad(d->sparse, 1, version);
    const double *x = mal_local_data(d->aligned);
    int64_t f = mal_csr_first_row(d->sparse), n = mal_csr_local_rows(d->sparse);
    if (mal_first_row(d->aligned) != f || mal_local_rows(d->aligned) != n)
        return bad + 1;
    for (int64_t i = 0; i < n; i++)
        bad += x[i] != value(f + i, 0, version, 3);
    int rank, size;
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Comm_size(mal_comm(), &size);
    bool weighted = strcmp(last_op, "W") == 0;
    double share = weighted ? (double)(rank + 1) / ((double)size * (size + 1) / 2.0)
                            : 1.0 / size;
    if (strncmp(last_op, "w=", 2) == 0) { /* literal weights, one per rank */
        double w[64], total = 0;
        int n = 0;
        for (const char *q = last_op + 2; q != NULL && n < 64; q = strchr(q, ':'), n++) {
            q += *q == ':';
            w[n] = atof(q);
            total += w[n];
        }
        share = rank < n && total > 0 ? w[rank] / total : 0.0;
    }
    double ideal = share * (double)sp_total_nnz(1);
    CHECK(fabs((double)mal_csr_local_nnz(d->sparse) - ideal) <= sp_max_row(1) + 1.0,
          "rank %d holds %lld nonzeros, ideal %g", rank,
          (long long)mal_csr_local_nnz(d->sparse), ideal);
    return bad;
}

static void write_version(const data_t *d, int64_t version)
{
    double *b = mal_local_data(d->block);
    int *in = mal_local_data(d->ints);
    double *rp = mal_local_data(d->repl);
    int64_t f = mal_first_row(d->block), n = mal_local_rows(d->block);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < COLS; c++)
            b[i * COLS + c] = value(f + i, c, version, 1);
    f = mal_first_row(d->ints);
    n = mal_local_rows(d->ints);
    for (int64_t i = 0; i < n; i++)
        in[i] = (int)(f + i) * 31 + (int)version;
    for (int64_t i = 0; i < ROWS / 2; i++)
        rp[i] = value(i, 0, version, 2);
    sp_write_values(d->sparse, version);
    double *x = mal_local_data(d->aligned);
    f = mal_first_row(d->aligned);
    for (int64_t i = 0; i < mal_local_rows(d->aligned); i++)
        x[i] = value(f + i, 0, version, 3);
}

static void check_version(const data_t *d, int64_t version, const char *last_op)
{
    const double *b = mal_local_data(d->block);
    const int *in = mal_local_data(d->ints);
    const double *rp = mal_local_data(d->repl);
    int64_t f = mal_first_row(d->block), n = mal_local_rows(d->block), bad = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < COLS; c++)
            bad += b[i * COLS + c] != value(f + i, c, version, 1);
    f = mal_first_row(d->ints);
    n = mal_local_rows(d->ints);
    for (int64_t i = 0; i < n; i++)
        bad += in[i] != (int)(f + i) * 31 + (int)version;
    for (int64_t i = 0; i < ROWS / 2; i++)
        bad += rp[i] != value(i, 0, version, 2);
    bad += check_sparse(d, version, last_op);
    CHECK(bad == 0, "%lld wrong elements at version %lld", (long long)bad, (long long)version);
    /* The rows of all parts together cover every row exactly once. */
    int64_t rows = mal_local_rows(d->block), total = 0;
    MPI_Allreduce(&rows, &total, 1, MPI_INT64_T, MPI_SUM, mal_comm());
    CHECK(total == ROWS, "parts cover %lld rows, not %d", (long long)total, ROWS);
}

/* A freshly duplicated communicator takes the lowest free slot of Open MPI's table
 * (its Fortran handle), so leaked communicators show as a handle that keeps growing. */
static int comm_slot_probe(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    int slot = (int)MPI_Comm_c2f(c);
    MPI_Comm_free(&c);
    return slot;
}

static int comm_size(void)
{
    int size;
    MPI_Comm_size(mal_comm(), &size);
    return size;
}

/* Whether the action `op` releases `rank`, given the size before it. */
static bool released_by(const char *op, int rank, int size)
{
    if (op[0] != '-')
        return false;
    if (op[1] != '@')
        return rank >= size - atoi(op + 1);
    for (const char *p = op + 1; p != NULL; p = strchr(p + 1, ':'))
        if (atoi(p + 1) == rank)
            return true;
    return false;
}

static const char *op_at(const char *ops, int64_t it, char *buf, size_t len)
{
    const char *p = ops;
    for (int64_t i = 1; i < it && p != NULL; i++)
        p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL;
    if (p == NULL)
        return "";
    size_t n = strcspn(p, ";");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
    return buf;
}

static void check_step(const scenario_t *sc, int64_t it, mal_status_t st, int rank_before,
                       int size_before, int64_t *reconfigs)
{
    char buf[64];
    const char *op = op_at(sc->ops, it, buf, sizeof buf);
    bool fail = it == sc->fail_at, leaving = !fail && released_by(op, rank_before, size_before);
    if (fail && sc->fault) {
        bool faulty = rank_before == size_before - 1;
        CHECK(st == (faulty ? MAL_ERR_MPI : MAL_ERR_REMOTE), "iteration %lld (%s): rank %d "
              "got status %d (%s) after an injected transfer fault", (long long)it, op,
              rank_before, (int)st, mal_strerror(st));
        CHECK(!faulty || strstr(mal_error_message(), "MAL_FAULT_DIRECT") != NULL,
              "message '%s' does not name the fault", mal_error_message());
        CHECK(strncmp(mal_error_message(), "mal_step: ", 10) == 0,
              "message '%s' does not start with the call made, mal_step", mal_error_message());
        CHECK(comm_size() == size_before, "%d processes after a failed action, not %d",
              comm_size(), size_before);
        return;
    }
    if (fail) {
        mal_status_t expected = sc->failure ? sc->failure : MAL_ERR_SPAWN;
        CHECK(st == expected, "iteration %lld (%s): status %d (%s), expected %s",
              (long long)it, op, (int)st, mal_strerror(st), mal_strerror(expected));
        CHECK(strncmp(mal_error_message(), "mal_step: ", 10) == 0,
              "message '%s' does not start with the call made, mal_step", mal_error_message());
        CHECK(expected != MAL_ERR_LIMIT ||
                  strstr(mal_error_message(), "3 -> 4 processes goes beyond the 3 slots of "
                         "the hostfile") != NULL,
              "message '%s' does not name the limit and its source", mal_error_message());
        CHECK(sc->join_fault == NULL || rank_before != 0 ||
                  strstr(mal_error_message(), "join information") != NULL,
              "message '%s' does not say the spawned process could not join",
              mal_error_message());
        CHECK(comm_size() == size_before, "%d processes after a failed expansion, not %d",
              comm_size(), size_before);
        return;
    }
    CHECK(st == (leaving ? MAL_REMOVED : MAL_RECONFIGURED),
          "iteration %lld (%s): rank %d of %d got status %d (%s)", (long long)it, op,
          rank_before, size_before, (int)st, mal_strerror(st));
    if (st == MAL_REMOVED || st < 0)
        return;
    (*reconfigs)++;
    int rank, size, below = 0;
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Comm_size(mal_comm(), &size);
    for (int r = 0; r < rank_before; r++)
        below += released_by(op, r, size_before);
    CHECK(rank == rank_before - below, "iteration %lld (%s): rank %d became %d, expected %d",
          (long long)it, op, rank_before, rank, rank_before - below);
    int expected = op[0] == '+' ? size_before + atoi(op + 1) : size_before;
    for (int r = 0; op[0] == '-' && r < size_before; r++)
        expected -= released_by(op, r, size_before);
    CHECK(size == expected, "iteration %lld (%s): %d processes, expected %d", (long long)it,
          op, size, expected);
}

static void setup_config(const scenario_t *sc, mal_config_t *cfg, char **plan_out)
{
    mal_config_init(cfg);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *plan_out = build_plan(sc->ops, size, sc->fail_at);
    cfg->plan = *plan_out;
    cfg->spawn_program = sc->program;
    static char hosts[512];
    if (sc->hosts != NULL) {
        char self[256];
        gethostname(self, sizeof self);
        snprintf(hosts, sizeof hosts, "%s", sc->hosts);
        if (hosts[0] == '@')
            snprintf(hosts, sizeof hosts, "%s%s", self, sc->hosts + 1);
        cfg->hosts = hosts;
    }
}

static void run(const scenario_t *sc)
{
    int nops = 1;
    for (const char *p = sc->ops; *p; p++)
        nops += *p == ';';
    data_t d;
    mal_alloc_window("block", MPI_DOUBLE, ROWS, COLS, MAL_BLOCK, &d.block);
    mal_alloc_window("ints", MPI_INT, ROWS + 2, 1, MAL_BLOCK, &d.ints);
    mal_alloc_window("repl", MPI_DOUBLE, ROWS / 2, 1, MAL_REPLICATED, &d.repl);
    mal_alloc_csr("sparse", SP_ROWS, SP_COLS, MPI_DOUBLE, &d.sparse);
    if (mal_is_initial_process()) { /* joiners receive the matrix with its rows */
        int64_t *rp, first = mal_csr_first_row(d.sparse), count = mal_csr_local_rows(d.sparse);
        mal_colind_t *c;
        double *v;
        int64_t nnz = sp_block(first, count, 1, 0, &rp, &c, &v);
        mal_status_t st = mal_csr_set_rows(d.sparse, count, nnz, rp, c, v);
        CHECK(st == MAL_OK, "mal_csr_set_rows: %s", mal_error_message());
        free(rp);
        free(c);
        free(v);
    }
    mal_alloc_array_aligned("aligned", MPI_DOUBLE, 1, d.sparse, &d.aligned);
    int64_t token = 0, joined_at = mal_iteration();
    mal_register_value("token", &token, sizeof token);
    CHECK(mal_is_initial_process() == (joined_at == 0), "joined at %lld but initial=%d",
          (long long)joined_at, (int)mal_is_initial_process());
    CHECK(token == joined_at * 1000003, "carried token %lld at iteration %lld",
          (long long)token, (long long)joined_at);
    if (mal_is_initial_process())
        write_version(&d, 0);
    int slot0 = comm_slot_probe();
    int64_t reconfigs = 0;
    char last[64] = "";
    for (int64_t it = mal_iteration(); it < nops; it++) {
        check_version(&d, it, it > 0 ? op_at(sc->ops, it, last, sizeof last) : "");
        write_version(&d, it + 1);
        token = (it + 1) * 1000003;
        int rank, size;
        MPI_Comm_rank(mal_comm(), &rank);
        MPI_Comm_size(mal_comm(), &size);
        bool fault = sc->fault && it + 1 == sc->fail_at && rank == size - 1;
        if (fault)
            setenv("MAL_FAULT_DIRECT", "1", 1);
        mal_status_t st = mal_step();
        if (fault)
            unsetenv("MAL_FAULT_DIRECT");
        check_step(sc, it + 1, st, rank, size, &reconfigs);
        if (st == MAL_REMOVED) {
            CHECK(mal_comm() == MPI_COMM_NULL, "a released process still has a communicator");
            CHECK(mal_step() == MAL_REMOVED, "mal_step after release is not MAL_REMOVED");
            if (mpitest_failures)
                printf("test_malleable: FAIL (a released process saw %d failures)\n",
                       mpitest_failures);
            return;
        }
        CHECK(mal_buffer_count() <= 13, "%d windows held (6 block structures with 2 "
              "buffers, 1 replicated: at most 13)", mal_buffer_count());
    }
    check_version(&d, nops, op_at(sc->ops, nops, last, sizeof last));
    int slot = comm_slot_probe();
    CHECK(slot <= slot0 + 3, "communicator handles grew from %d to %d over %lld "
          "reconfigurations (leak)", slot0, slot, (long long)reconfigs);
    int fails = mpitest_failures, total = 0, rank;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, mal_comm());
    MPI_Comm_rank(mal_comm(), &rank);
    if (rank == 0 && total)
        printf("test_malleable: FAIL (%d failed checks)\n", total);
    else if (rank == 0)
        printf("test_malleable: PASS (%s, %lld reconfigurations, %d processes at the end)\n",
               sc->name, (long long)reconfigs, comm_size());
}

/* Whether structures live in direct memory here (the fault knob acts on it alone). */
static bool direct_memory(void)
{
    mal_array_t *probe;
    if (mal_alloc_window("probe", MPI_DOUBLE, 8, 1, MAL_BLOCK, &probe) != MAL_OK)
        return false;
    bool direct = strcmp(mal_memory_name(probe), "direct") == 0;
    mal_free_array(probe);
    return direct;
}

/* On the last process of a spawn (its MPI_COMM_WORLD), the scenario's join fault. */
static void inject_join_fault(const scenario_t *sc)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (sc->join_fault != NULL && parent != MPI_COMM_NULL && rank == size - 1)
        setenv("MAL_FAULT_JOIN", sc->join_fault, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const scenario_t *sc = argc > 1 ? find_scenario(argv[1]) : NULL;
    if (sc == NULL) {
        fprintf(stderr, "test_malleable: FAIL (unknown scenario '%s')\n",
                argc > 1 ? argv[1] : "");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    inject_join_fault(sc);
    mal_config_t cfg;
    char *plan = NULL;
    setup_config(sc, &cfg, &plan);
    mal_status_t st = mal_init(MPI_COMM_WORLD, &cfg);
    CHECK(st == MAL_OK, "mal_init: %s", mal_strerror(st));
    /* Joiners skip the probe: it is collective among the initial processes only. */
    if (st == MAL_OK && sc->fault && mal_is_initial_process() && !direct_memory())
        printf("test_malleable: SKIP (%s needs direct memory; this run has windows)\n",
               sc->name);
    else if (st == MAL_OK)
        run(sc);
    mal_finalize();
    free(plan);
    MPI_Finalize();
    return mpitest_failures ? 1 : 0;
}
