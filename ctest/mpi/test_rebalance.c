/* Random rebalance sequences, every method, bit-exact against a closed-form function of
 * the global index. Data are rewritten between rebalances (with a new step salt) so a
 * stale buffer can never pass for a correct one.
 *
 * Usage: test_rebalance [--methods m1,m2,...] (default rma,alltoallv,p2p,rma-get). The
 * methods take turns on the same structures, allocated under the first (mal_init's):
 * "shmem,alltoallv,p2p" moves symmetric-heap data (run it under oshrun). */
#include "mal.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

#define SEQUENCES_PER_METHOD 50
#define STEPS_PER_SEQUENCE 3
#define MAX_METHODS 8

typedef struct {
    const char *type_name;
    MPI_Datatype type;
    int64_t rows, row_len;
    mal_distribution_t dist;
    mal_array_t *array;
} spec_t;

static uint64_t cell(int a, int64_t g, int64_t c, int comp, uint64_t step)
{
    return mpitest_mix(((uint64_t)a << 56) ^ ((uint64_t)g << 20) ^ ((uint64_t)c << 4) ^
                       (uint64_t)comp ^ (step * 0x51ed27ULL));
}

/* Element (g, c) of array a at `step`, written into `out` (extent of the type). */
static void element(const spec_t *s, int a, int64_t g, int64_t c, uint64_t step, void *out)
{
    if (strcmp(s->type_name, "int") == 0) {
        int v = (int)cell(a, g, c, 0, step);
        memcpy(out, &v, sizeof v);
        return;
    }
    int comps = strcmp(s->type_name, "double3") == 0 ? 3 : 1;
    for (int k = 0; k < comps; k++) {
        double v = (double)(cell(a, g, c, k, step) >> 11) * 0.5; /* exact in a double */
        memcpy((char *)out + k * sizeof v, &v, sizeof v);
    }
}

static size_t elem_bytes(const spec_t *s)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(s->type, &lb, &extent);
    return (size_t)extent;
}

static void fill(const spec_t *s, int a, uint64_t step)
{
    char *p = mal_local_data(s->array);
    size_t eb = elem_bytes(s);
    int64_t first = mal_first_row(s->array), rows = mal_local_rows(s->array);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < s->row_len; c++)
            element(s, a, first + r, c, step, p + ((size_t)(r * s->row_len + c)) * eb);
}

static int64_t verify(const spec_t *s, int a, uint64_t step)
{
    const char *p = mal_local_data(s->array);
    size_t eb = elem_bytes(s);
    char expect[32];
    int64_t first = mal_first_row(s->array), rows = mal_local_rows(s->array), bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < s->row_len; c++) {
            element(s, a, first + r, c, step, expect);
            bad += memcmp(expect, p + ((size_t)(r * s->row_len + c)) * eb, eb) != 0;
        }
    return bad;
}

static void random_weights(uint64_t *rng, int p, double *w)
{
    int positive = 0;
    for (int r = 0; r < p; r++) {
        uint64_t x = mpitest_rand(rng) % 8;
        w[r] = x < 2 ? 0.0 : (double)x * 0.37; /* some zero weights */
        positive += w[r] > 0;
    }
    if (!positive)
        w[mpitest_rand(rng) % (uint64_t)p] = 1.0;
}

static void check_layout(const spec_t *s, int p)
{
    int64_t mine[2] = {mal_first_row(s->array), mal_local_rows(s->array)};
    int64_t *all = malloc(2 * (size_t)p * sizeof *all);
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, mal_comm());
    int64_t next = 0;
    for (int r = 0; r < p && s->dist == MAL_BLOCK; r++) {
        CHECK(all[2 * r] == next, "%s: rank %d starts at %lld, expected %lld", s->type_name,
              r, (long long)all[2 * r], (long long)next);
        next += all[2 * r + 1];
    }
    CHECK(s->dist != MAL_BLOCK || next == s->rows, "layout does not cover the rows");
    free(all);
}

/* The --methods list; returns how many, 0 on a bad list. */
static int parse_methods(int argc, char **argv, mal_redist_t *methods)
{
    const char *list = argc == 3 && strcmp(argv[1], "--methods") == 0
                           ? argv[2] : argc == 1 ? "rma,alltoallv,p2p,rma-get" : NULL;
    int n = 0;
    for (const char *p = list; p != NULL && *p && n < MAX_METHODS; n++) {
        size_t len = strcspn(p, ",");
        mal_redist_t m = MAL_REDIST_DEFAULT;
        for (int k = MAL_REDIST_RMA; k <= MAL_REDIST_SHMEM; k++)
            if (strlen(mal_redist_name((mal_redist_t)k)) == len &&
                strncmp(p, mal_redist_name((mal_redist_t)k), len) == 0)
                m = (mal_redist_t)k;
        if (m == MAL_REDIST_DEFAULT)
            return 0;
        methods[n] = m;
        p += len + (p[len] == ',');
    }
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mal_redist_t methods[MAX_METHODS];
    int nmethods = parse_methods(argc, argv, methods);
    if (nmethods == 0) {
        fprintf(stderr, "usage: test_rebalance [--methods rma,rma-get,alltoallv,p2p,shmem]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.redist = methods[0];
    CHECK(mal_init(MPI_COMM_WORLD, &cfg) == MAL_OK, "mal_init: %s", mal_error_message());
    int p, rank;
    MPI_Comm_size(mal_comm(), &p);
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Datatype double3;
    MPI_Type_contiguous(3, MPI_DOUBLE, &double3);
    MPI_Type_commit(&double3);
    spec_t specs[] = {
        {"double", MPI_DOUBLE, 257, 1, MAL_BLOCK, NULL},
        {"double", MPI_DOUBLE, 1000, 7, MAL_BLOCK, NULL},
        {"double", MPI_DOUBLE, 2, 5, MAL_BLOCK, NULL}, /* fewer rows than ranks */
        {"double", MPI_DOUBLE, 100003, 2, MAL_BLOCK, NULL}, /* 1.6 MB: rendezvous sizes */
        {"int", MPI_INT, 333, 1, MAL_BLOCK, NULL},
        {"int", MPI_INT, 91, 13, MAL_BLOCK, NULL},
        {"int", MPI_INT, 1, 3, MAL_BLOCK, NULL}, /* a single row */
        {"double3", double3, 150, 1, MAL_BLOCK, NULL},
        {"double3", double3, 64, 4, MAL_BLOCK, NULL},
        {"double", MPI_DOUBLE, 50, 3, MAL_REPLICATED, NULL},
        {"double3", double3, 9, 2, MAL_REPLICATED, NULL},
    };
    int n = (int)(sizeof specs / sizeof specs[0]);
    for (int a = 0; a < n; a++) {
        char name[32];
        snprintf(name, sizeof name, "a%d", a);
        CHECK(mal_alloc_window(name, specs[a].type, specs[a].rows, specs[a].row_len,
                               specs[a].dist, &specs[a].array) == MAL_OK,
              "alloc %s: %s", name, mal_error_message());
    }
    uint64_t rng = 12345, step = 0;
    double *w = malloc((size_t)p * sizeof *w);
    int64_t bad = 0, rebalances = 0, unchanged_checked = 0, in_place = 0, swapped = 0;
    int64_t grown = 0;
    for (int seq = 0; seq < nmethods * SEQUENCES_PER_METHOD; seq++) {
        CHECK(mal_set_redist(methods[seq % nmethods]) == MAL_OK, "set_redist: %s",
              mal_error_message());
        for (int k = 0; k < STEPS_PER_SEQUENCE; k++) {
            for (int a = 0; a < n; a++)
                fill(&specs[a], a, step);
            bool repeat = k > 0 && mpitest_rand(&rng) % 4 == 0;
            if (!repeat)
                random_weights(&rng, p, w);
            mal_status_t st = mal_rebalance(w);
            CHECK(st == MAL_OK, "rebalance: %s", mal_error_message());
            mal_rebalance_stats_t stats;
            mal_last_rebalance(&stats);
            CHECK(stats.method == methods[seq % nmethods], "method %d used", (int)stats.method);
            in_place += stats.layout_changed && stats.in_place;
            grown += stats.windows_created;
            swapped += stats.layout_changed && !stats.in_place;
            if (repeat) {
                CHECK(!stats.layout_changed && stats.windows_created == 0 &&
                          stats.bytes_received == 0, "unchanged weights moved data");
                unchanged_checked++;
            }
            for (int a = 0; a < n; a++) {
                bad += verify(&specs[a], a, step);
                check_layout(&specs[a], p);
            }
            rebalances++;
            step++;
        }
    }
    CHECK(bad == 0, "%lld elements differ from the closed form", (long long)bad);
    /* Both placements must have been exercised for the run to prove anything. */
    CHECK(p == 1 || (in_place > 0 && swapped > 0 && grown > 0),
          "in place %lld, swapped %lld, windows grown %lld", (long long)in_place,
          (long long)swapped, (long long)grown);
    for (int a = 0; a < n; a++)
        CHECK(mal_free_array(specs[a].array) == MAL_OK, "free");
    CHECK(mal_buffer_count() == 0, "%d windows left", mal_buffer_count());
    CHECK(mal_finalize() == MAL_OK, "finalize");
    char summary[256];
    snprintf(summary, sizeof summary,
             "%d ranks, %s first, %d sequences, %lld rebalances x %d structures bit-exact "
             "(%lld in place, %lld to the second buffer, %lld windows grown), %lld "
             "unchanged-weight rebalances moved nothing", p, mal_redist_name(methods[0]),
             nmethods * SEQUENCES_PER_METHOD,
             (long long)rebalances, n, (long long)in_place, (long long)swapped,
             (long long)grown, (long long)unchanged_checked);
    int rc = mpitest_verdict("test_rebalance", summary);
    free(w);
    MPI_Type_free(&double3);
    MPI_Finalize();
    return rc;
}
