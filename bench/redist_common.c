/* What mal_bench_redist's warm table (mal_bench_redist.c) and its cold mode
 * (redist_cold.c) both use: the patterns, the closed-form data and its checks, the
 * median, the memcpy bound. Neither file calls the other's helpers: the warm table calls
 * the cold mode's entry points, and both call these. */
#include "redist_bench.h"

#include <stdlib.h>
#include <string.h>

const pattern_t patterns[NPATTERNS] = {
    {"uniform-to-skewed", UNIFORM, SKEWED}, {"skewed-to-uniform", SKEWED, UNIFORM},
    {"one-to-all", ONE, UNIFORM},           {"all-to-one", UNIFORM, ONE},
    {"same", UNIFORM, UNIFORM},
};

void weights_of(shape_t s, double *w, int n)
{
    for (int r = 0; r < n; r++)
        w[r] = s == UNIFORM ? 1.0 : s == ONE ? (r == 0) : (double)(r + 1) * (r + 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Exact in a double for any row index below 2^50. */
double value(long long g, long long c, int rep)
{
    return (double)(g * 8 + (c & 3)) + 0.25 * (rep & 3);
}

/* Exact in a double: what a matrix entry holds at repetition `rep`. */
double sparse_value(long long g, long long k, int rep)
{
    return (double)(g * 64 + (k & 63)) + 0.25 * (rep & 3);
}

void fill_sparse(mal_csr_t *m, int rep)
{
    const int64_t *rp = mal_csr_rowptr(m);
    double *v = mal_csr_values(m);
    long long first = mal_csr_first_row(m), rows = mal_csr_local_rows(m);
    for (long long r = 0; r < rows; r++)
        for (int64_t k = rp[r]; k < rp[r + 1]; k++)
            v[k] = sparse_value(first + r, k - rp[r], rep);
}

long long count_bad_sparse(const data_t *d, int rep)
{
    const int64_t *rp = mal_csr_rowptr(d->csr);
    const mal_colind_t *c = mal_csr_colind(d->csr);
    const double *v = mal_csr_values(d->csr);
    long long first = mal_csr_first_row(d->csr), rows = mal_csr_local_rows(d->csr), bad = 0;
    for (long long r = 0; r < rows; r++) {
        int64_t len = mi_row(d->src, first + r, d->row_cols, NULL);
        if (len != rp[r + 1] - rp[r]) {
            bad++;
            continue;
        }
        for (int64_t k = 0; k < len; k++)
            bad += c[rp[r] + k] != d->row_cols[k] ||
                   v[rp[r] + k] != sparse_value(first + r, k, rep);
    }
    return bad;
}

void fill_dense(mal_array_t *a, int rep)
{
    double *d = mal_local_data(a);
    long long first = mal_first_row(a), rows = mal_local_rows(a), len = mal_row_len(a);
    for (long long r = 0; r < rows; r++)
        for (long long c = 0; c < len; c++)
            d[r * len + c] = value(first + r, c, rep);
}

long long count_bad_dense(mal_array_t *a, int rep)
{
    const double *d = mal_local_data(a);
    long long first = mal_first_row(a), rows = mal_local_rows(a), len = mal_row_len(a);
    long long bad = 0;
    for (long long r = 0; r < rows; r++)
        for (long long c = 0; c < len; c++)
            bad += d[r * len + c] != value(first + r, c, rep);
    return bad;
}

double max_over_ranks(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, mal_comm());
    return t;
}

int check(mal_status_t st, const char *what)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (st != MAL_OK && rank == 0)
        fprintf(stderr, "mal_bench_redist: %s: %s\n", what, mal_error_message());
    return st != MAL_OK;
}

/* The physical bound: every rank copies its equal share of the moved volume with
 * memcpy, all at once, between buffers touched beforehand. Sampled right after every
 * timed rebalance, so it sees the same machine state as the methods it bounds. */
/* Buffers grow to the largest share seen (touched outside the timing), so a run needs
 * no more memory for the bound than the pattern calls for. */
static void ensure_bound_capacity(bound_t *b, size_t share)
{
    if (share <= b->capacity)
        return;
    free(b->src);
    free(b->dst);
    b->src = malloc(share);
    b->dst = malloc(share);
    if (b->src == NULL || b->dst == NULL) {
        fprintf(stderr, "mal_bench_redist: no memory for a %zu-byte memcpy bound\n", share);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    memset(b->src, 1, share);
    memset(b->dst, 2, share);
    b->capacity = share;
}

void sample_memcpy(bound_t *b, long long moved)
{
    int nranks;
    MPI_Comm_size(mal_comm(), &nranks);
    size_t share = (size_t)(moved / nranks);
    ensure_bound_capacity(b, share);
    MPI_Barrier(mal_comm());
    double t0 = MPI_Wtime();
    memcpy(b->dst, b->src, share);
    b->samples[b->n++] = max_over_ranks(MPI_Wtime() - t0);
    if (share > 0)
        b->src[(size_t)b->n % share] ^= 1; /* keep the copies observable */
}
