/* mal_bench_redist --cold: what one reconfiguration costs when it happens once, the way
 * an application pays it. Every measurement runs in fresh processes (the driver
 * launches this program again per pattern, method and repetition), so no window, page
 * mapping or buffer exists before the data are allocated:
 *
 *   alloc_s  allocating the structure at the "from" layout and putting the data in
 *            (libmal: mal_alloc_array_weighted or mal_alloc_csr + mal_csr_set_rows;
 *            the baseline: malloc + first touch of the same bytes);
 *   cold_s   the first rebalance to the "to" layout, everything it needs inside
 *            (libmal: spare growth, page faults, epochs; the baseline: malloc of the
 *            new buffers and MPI_Alltoallv into them, free of the old);
 *   warm_s   the median of further rebalances from -> to in the same processes.
 *
 * Every row is checked after every transfer. The driver prints medians over the fresh
 * runs and ratios to the baseline, which is plain MPI written here, not libmal. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "bench_launch.h"
#include "fragment.h"
#include "plain_redist.h"
#include "redist_bench.h"

static int rank, nranks; /* world rank and mal_comm() size, set by cold_run */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Methods of the cold table, in table order. */
static const int cold_methods[] = {MAL_REDIST_RMA, MAL_REDIST_RMA_GET, MAL_REDIST_ALLTOALLV,
                                   MAL_REDIST_P2P, MAL_REDIST_AUTO, COLD_BASELINE};
#define NCOLD ((int)(sizeof cold_methods / sizeof cold_methods[0]))

static const char *cold_name(int m)
{
    return m == COLD_BASELINE ? COLD_BASELINE_NAME : mal_redist_name((mal_redist_t)m);
}

/* ---- one measurement (a fresh MPI job) ------------------------------------------- */

typedef struct {
    double alloc, cold, warm, memcpy_s;
    long long moved, bad;
    const char *memory;
    const char *executor; /* what the cold move ran (auto's pick) */
} cold_result_t;

/* Bytes that changed owner in the last rebalance, over every rank. */
static long long moved_bytes(void)
{
    mal_rebalance_stats_t st;
    mal_last_rebalance(&st);
    long long in = st.bytes_received, all = 0;
    MPI_Allreduce(&in, &all, 1, MPI_LONG_LONG, MPI_SUM, mal_comm());
    return all;
}

/* The executor of the last rebalance. */
static const char *executor_name(void)
{
    mal_rebalance_stats_t st;
    mal_last_rebalance(&st);
    return mal_redist_name(st.method);
}

static double now_max_since(double t0)
{
    return max_over_ranks(MPI_Wtime() - t0);
}

/* libmal, dense: allocate at the from layout, one cold rebalance, then warm ones. */
static void libmal_dense(const options_t *o, const double *from, const double *to,
                         cold_result_t *res, bound_t *bound)
{
    long long rows = o->size / (o->row_len * (long long)sizeof(double));
    mal_array_t *a;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (check(mal_alloc_array_weighted("bench", MPI_DOUBLE, rows, o->row_len, from, &a),
              "mal_alloc_array_weighted"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    fill_dense(a, 0);
    res->alloc = now_max_since(t0);
    res->memory = mal_memory_name(a);
    MPI_Barrier(mal_comm());
    t0 = MPI_Wtime();
    if (check(mal_rebalance(to), "cold rebalance"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    res->cold = now_max_since(t0);
    res->executor = executor_name();
    res->bad += count_bad_dense(a, 0);
    res->moved = moved_bytes();
    double *warm = malloc((size_t)o->reps * sizeof *warm);
    for (int rep = 1; rep <= o->reps; rep++) {
        if (check(mal_rebalance(from), "setting the layout"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        fill_dense(a, rep);
        MPI_Barrier(mal_comm());
        t0 = MPI_Wtime();
        if (check(mal_rebalance(to), "warm rebalance"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        warm[rep - 1] = now_max_since(t0);
        res->bad += count_bad_dense(a, rep);
        sample_memcpy(bound, res->moved);
    }
    res->warm = median(warm, o->reps);
    free(warm);
    mal_free_array(a);
}

/* libmal, CSR: the matrix arrives at the from layout through mal_csr_set_rows. */
static void libmal_sparse(const options_t *o, const double *from, const double *to,
                          cold_result_t *res, bound_t *bound)
{
    data_t d = {0};
    char err[512];
    if (mi_open(o->sparse, &d.src, err, sizeof err) != 0) {
        fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    long long *rb = malloc(2 * ((size_t)nranks + 1) * sizeof *rb), *zb = rb + nranks + 1;
    plain_nnz_bounds(d.src, from, nranks, rb, zb);
    int64_t *rowptr;
    int32_t *colind;
    double *vals;
    if (mi_block(d.src, rb[rank], rb[rank + 1] - rb[rank], &rowptr, &colind, &vals, err,
                 sizeof err) != 0) {
        fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    d.row_cols = malloc(((size_t)mi_max_row_nnz(d.src) + 1) * sizeof *d.row_cols);
    long long count = rb[rank + 1] - rb[rank];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (check(mal_alloc_csr("bench", mi_rows(d.src), mi_cols(d.src), MPI_DOUBLE, &d.csr),
              "mal_alloc_csr") ||
        check(mal_csr_set_rows(d.csr, count, rowptr[count], rowptr, colind, vals),
              "mal_csr_set_rows"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    fill_sparse(d.csr, 0);
    res->alloc = now_max_since(t0);
    free(rowptr);
    free(colind);
    free(vals);
    res->memory = mal_csr_memory_name(d.csr);
    MPI_Barrier(mal_comm());
    t0 = MPI_Wtime();
    if (check(mal_rebalance(to), "cold rebalance"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    res->cold = now_max_since(t0);
    res->executor = executor_name();
    res->bad += count_bad_sparse(&d, 0);
    res->moved = moved_bytes();
    double *warm = malloc((size_t)o->reps * sizeof *warm);
    for (int rep = 1; rep <= o->reps; rep++) {
        if (check(mal_rebalance(from), "setting the layout"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        fill_sparse(d.csr, rep);
        MPI_Barrier(mal_comm());
        t0 = MPI_Wtime();
        if (check(mal_rebalance(to), "warm rebalance"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        warm[rep - 1] = now_max_since(t0);
        res->bad += count_bad_sparse(&d, rep);
        sample_memcpy(bound, res->moved);
    }
    res->warm = median(warm, o->reps);
    free(warm);
    free(rb);
    mal_free_csr(d.csr);
    mi_close(d.src);
    free(d.row_cols);
}

/* ---- the baseline: plain MPI --------------------------------------------------- */

/* The baseline's data: one to three arrays of items with their layouts, and for a
 * matrix this rank's rows as read from the source before the timing starts (as
 * libmal's are). */
typedef struct {
    int n;
    long long esz[3];
    long long *old_b[3], *new_b[3];
    char *cur[3];
    int64_t *blk_rowptr;
    int32_t *blk_colind;
} plain_t;

static long long part_bytes(const plain_t *pl, int k, bool new_layout)
{
    const long long *b = new_layout ? pl->new_b[k] : pl->old_b[k];
    return (b[rank + 1] - b[rank]) * pl->esz[k];
}

static char *alloc_touched(long long bytes)
{
    char *p = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "mal_bench_redist: no memory for %lld bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    memset(p, 0, bytes > 0 ? (size_t)bytes : 1);
    return p;
}

/* The cold move as such a library does it: new buffers, MPI_Alltoallv, old freed. */
static long long plain_move(plain_t *pl)
{
    long long in = 0;
    for (int k = 0; k < pl->n; k++) {
        long long bytes = part_bytes(pl, k, true);
        char *dst = malloc(bytes > 0 ? (size_t)bytes : 1);
        in += plain_alltoallv(MPI_COMM_WORLD, pl->old_b[k], pl->new_b[k], pl->esz[k], pl->cur[k], dst);
        free(pl->cur[k]);
        pl->cur[k] = dst;
    }
    return in;
}

static void fill_plain_dense(const plain_t *pl, long long row_len, int rep, bool new_layout)
{
    const long long *b = new_layout ? pl->new_b[0] : pl->old_b[0];
    double *d = (double *)pl->cur[0];
    for (long long r = 0; r < b[rank + 1] - b[rank]; r++)
        for (long long c = 0; c < row_len; c++)
            d[r * row_len + c] = value(b[rank] + r, c, rep);
}

static long long bad_plain_dense(const double *d, const long long *b, long long row_len,
                                 int rep)
{
    long long bad = 0;
    for (long long r = 0; r < b[rank + 1] - b[rank]; r++)
        for (long long c = 0; c < row_len; c++)
            bad += d[r * row_len + c] != value(b[rank] + r, c, rep);
    return bad;
}

/* CSR parts: row ends (global nnz offsets), column indices, values. */
static void fill_plain_sparse(const plain_t *pl, int rep)
{
    const long long *rb = pl->old_b[0], *zb = pl->old_b[1];
    int64_t *ends = (int64_t *)pl->cur[0];
    double *vals = (double *)pl->cur[2];
    memcpy(pl->cur[1], pl->blk_colind, (size_t)part_bytes(pl, 1, false));
    for (long long r = 0; r < rb[rank + 1] - rb[rank]; r++) {
        const int64_t *rp = pl->blk_rowptr;
        for (int64_t k = rp[r]; k < rp[r + 1]; k++)
            vals[k] = sparse_value(rb[rank] + r, k - rp[r], rep);
        ends[r] = zb[rank] + rp[r + 1];
    }
}

static long long bad_plain_sparse(const plain_t *pl, const mi_source_t *src, int32_t *row,
                                  int rep)
{
    const long long *rb = pl->new_b[0], *zb = pl->new_b[1];
    const int64_t *ends = (const int64_t *)pl->cur[0];
    const int32_t *cols = (const int32_t *)pl->cur[1];
    const double *vals = (const double *)pl->cur[2];
    long long bad = 0, z = zb[rank];
    for (long long r = rb[rank]; r < rb[rank + 1]; r++) {
        int64_t len = mi_row(src, r, row, NULL);
        bad += ends[r - rb[rank]] != z + len;
        for (int64_t k = 0; k < len && ends[r - rb[rank]] == z + len; k++)
            bad += cols[z - zb[rank] + k] != row[k] ||
                   vals[z - zb[rank] + k] != sparse_value(r, k, rep);
        z += len;
    }
    return bad;
}

static void plain_layouts(const options_t *o, mi_source_t *src, const double *from,
                          const double *to, plain_t *pl)
{
    size_t nb = (size_t)nranks + 1;
    pl->n = src ? 3 : 1;
    for (int k = 0; k < pl->n; k++) {
        pl->old_b[k] = malloc(nb * sizeof(long long));
        pl->new_b[k] = malloc(nb * sizeof(long long));
    }
    if (src == NULL) {
        long long rows = o->size / (o->row_len * (long long)sizeof(double));
        pl->esz[0] = o->row_len * (long long)sizeof(double);
        plain_bounds(from, nranks, rows, pl->old_b[0]);
        plain_bounds(to, nranks, rows, pl->new_b[0]);
        return;
    }
    pl->esz[0] = 8;
    pl->esz[1] = 4;
    pl->esz[2] = 8;
    plain_nnz_bounds(src, from, nranks, pl->old_b[0], pl->old_b[1]);
    plain_nnz_bounds(src, to, nranks, pl->new_b[0], pl->new_b[1]);
    memcpy(pl->old_b[2], pl->old_b[1], nb * sizeof(long long));
    memcpy(pl->new_b[2], pl->new_b[1], nb * sizeof(long long));
    char err[512];
    double *vals = NULL;
    if (mi_block(src, pl->old_b[0][rank], pl->old_b[0][rank + 1] - pl->old_b[0][rank],
                 &pl->blk_rowptr, &pl->blk_colind, &vals, err, sizeof err) != 0) {
        fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    free(vals);
}

static void plain_fill(const plain_t *pl, const options_t *o, const mi_source_t *src,
                       int rep)
{
    if (src)
        fill_plain_sparse(pl, rep);
    else
        fill_plain_dense(pl, o->row_len, rep, false);
}

static long long plain_bad(const plain_t *pl, const options_t *o, const mi_source_t *src,
                           int32_t *row, int rep)
{
    return src ? bad_plain_sparse(pl, src, row, rep)
               : bad_plain_dense((const double *)pl->cur[0], pl->new_b[0], o->row_len, rep);
}

/* Warm: the same move between buffers that exist and were touched, no allocation:
 * the from-layout buffers are refilled, the to-layout ones reused. */
static double plain_warm(plain_t *pl, const options_t *o, const mi_source_t *src,
                         int32_t *row, cold_result_t *res, bound_t *bound)
{
    char *from[3], *to[3];
    for (int k = 0; k < pl->n; k++) {
        from[k] = alloc_touched(part_bytes(pl, k, false));
        to[k] = pl->cur[k];
    }
    double *warm = malloc((size_t)o->reps * sizeof *warm);
    for (int rep = 1; rep <= o->reps; rep++) {
        for (int k = 0; k < pl->n; k++)
            pl->cur[k] = from[k];
        plain_fill(pl, o, src, rep);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < pl->n; k++)
            plain_alltoallv(MPI_COMM_WORLD, pl->old_b[k], pl->new_b[k], pl->esz[k], from[k],
                            to[k]);
        warm[rep - 1] = now_max_since(t0);
        for (int k = 0; k < pl->n; k++)
            pl->cur[k] = to[k];
        res->bad += plain_bad(pl, o, src, row, rep);
        sample_memcpy(bound, res->moved);
    }
    for (int k = 0; k < pl->n; k++)
        free(from[k]);
    double m = median(warm, o->reps);
    free(warm);
    return m;
}

static void baseline(const options_t *o, const double *from, const double *to,
                     cold_result_t *res, bound_t *bound)
{
    mi_source_t *src = NULL;
    char err[512];
    if (o->sparse && mi_open(o->sparse, &src, err, sizeof err) != 0) {
        fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    plain_t pl = {0};
    plain_layouts(o, src, from, to, &pl);
    int32_t *row = src ? malloc(((size_t)mi_max_row_nnz(src) + 1) * sizeof *row) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int k = 0; k < pl.n; k++)
        pl.cur[k] = alloc_touched(part_bytes(&pl, k, false));
    plain_fill(&pl, o, src, 0);
    res->alloc = now_max_since(t0);
    res->memory = "malloc";
    res->executor = "mpi";
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    long long in = plain_move(&pl);
    res->cold = now_max_since(t0);
    res->bad += plain_bad(&pl, o, src, row, 0);
    MPI_Allreduce(&in, &res->moved, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    res->warm = plain_warm(&pl, o, src, row, res, bound);
    for (int k = 0; k < pl.n; k++) {
        free(pl.cur[k]);
        free(pl.old_b[k]);
        free(pl.new_b[k]);
    }
    free(row);
    free(pl.blk_rowptr);
    free(pl.blk_colind);
    mi_close(src);
}

int cold_run(const options_t *o)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mal_config_t cfg;
    mal_config_init(&cfg);
    if (o->headroom >= 0)
        cfg.headroom = o->headroom;
    cfg.redist = o->method == COLD_BASELINE ? MAL_REDIST_ALLTOALLV : (mal_redist_t)o->method;
    cfg.summary = false;
    if (check(mal_init(MPI_COMM_WORLD, &cfg), "mal_init"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    MPI_Comm_size(mal_comm(), &nranks);
    const pattern_t *p = &patterns[o->pattern];
    double *from = malloc(2 * (size_t)nranks * sizeof *from), *to = from + nranks;
    weights_of(p->from, from, nranks);
    weights_of(p->to, to, nranks);
    bound_t bound = {.samples = malloc((size_t)o->reps * sizeof *bound.samples)};
    cold_result_t res = {0};
    if (o->method == COLD_BASELINE)
        baseline(o, from, to, &res, &bound);
    else if (o->sparse)
        libmal_sparse(o, from, to, &res, &bound);
    else
        libmal_dense(o, from, to, &res, &bound);
    long long bad = res.bad;
    MPI_Allreduce(&bad, &res.bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    res.memcpy_s = median(bound.samples, bound.n);
    int failed = 0;
    if (rank == 0) {
        FILE *f = fopen(o->cold_run, "a");
        failed = f == NULL;
        if (f != NULL) {
            fprintf(f, "%s,%s,%d,%lld,%.9f,%.9f,%.9f,%.9f,%lld,%s,%s\n", p->name,
                    cold_name(o->method), nranks, res.moved, res.alloc, res.cold, res.warm,
                    res.memcpy_s, res.bad, res.memory, res.executor);
            fclose(f);
        }
    }
    free(from);
    free(bound.samples);
    free(bound.src);
    free(bound.dst);
    mal_finalize();
    MPI_Finalize();
    return failed || res.bad ? 1 : 0;
}

/* ---- the driver ---------------------------------------------------------------- */

typedef struct {
    double *alloc, *cold, *warm, *mem;
    int n;
    long long moved, bad;
    char memory[16];
    char executors[64]; /* what the runs' cold moves ran, distinct, '/'-separated */
} cold_cell_t;

static void child_args(const options_t *o, const char *file, int pattern, int method,
                       char bufs[][64], char **args)
{
    int n = 0;
    args[n++] = (char *)bench_self_path();
    args[n++] = "--cold-run";
    args[n++] = (char *)file;
    args[n++] = "--pattern";
    args[n++] = (char *)patterns[pattern].name;
    args[n++] = "--method";
    args[n++] = (char *)cold_name(method);
    args[n++] = o->sparse ? "--sparse" : "--size";
    if (o->sparse)
        args[n++] = (char *)o->sparse;
    else
        snprintf(args[n++] = bufs[0], 64, "%lld", o->size);
    args[n++] = "--reps";
    snprintf(args[n++] = bufs[1], 64, "%d", o->reps);
    args[n++] = "--row-len";
    snprintf(args[n++] = bufs[2], 64, "%lld", o->row_len);
    if (o->headroom >= 0) {
        args[n++] = "--headroom";
        snprintf(args[n++] = bufs[3], 64, "%g", o->headroom);
    }
    args[n] = NULL;
}

/* Read the line a run appended and add it to its cell. */
/* `name` added to the cell's list of executors unless there already. */
static void note_executor(cold_cell_t *cell, const char *name)
{
    size_t len = strlen(cell->executors);
    char *at = strstr(cell->executors, name);
    size_t n = strlen(name);
    bool listed = at != NULL && (at == cell->executors || at[-1] == '/') &&
                  (at[n] == '\0' || at[n] == '/');
    if (!listed)
        snprintf(cell->executors + len, sizeof cell->executors - len, "%s%s",
                 len ? "/" : "", name);
}

/* Read the line a run appended and add it to its cell. */
static int collect(const char *file, cold_cell_t *cell)
{
    FILE *f = fopen(file, "r");
    char line[512], last[512] = "";
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        strcpy(last, line);
    if (f != NULL)
        fclose(f);
    char pat[64], meth[64], mem[16], exec[16];
    int ranks;
    long long moved, bad;
    double a, c, w, m;
    if (sscanf(last, "%63[^,],%63[^,],%d,%lld,%lf,%lf,%lf,%lf,%lld,%15[^,],%15s", pat, meth,
               &ranks, &moved, &a, &c, &w, &m, &bad, mem, exec) != 11)
        return -1;
    cell->alloc[cell->n] = a;
    cell->cold[cell->n] = c;
    cell->warm[cell->n] = w;
    cell->mem[cell->n] = m;
    cell->n++;
    cell->moved = moved;
    cell->bad += bad;
    snprintf(cell->memory, sizeof cell->memory, "%s", mem);
    note_executor(cell, exec);
    return 0;
}

static bool wanted(const options_t *o, int k)
{
    return o->method == 0 || o->method == cold_methods[k] || cold_methods[k] == COLD_BASELINE;
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static const char *state_name(int state)
{
    return state == MEMORY_FRAGMENTED ? "fragmented" : "fresh";
}

/* The method column: auto with what it took ("auto:p2p"). */
static const char *method_label(int k, const cold_cell_t *c, char *buf, size_t size)
{
    if (cold_methods[k] != MAL_REDIST_AUTO)
        return cold_name(cold_methods[k]);
    snprintf(buf, size, "auto:%s", c->executors);
    return buf;
}

static void print_cold_pattern(const options_t *o, int state, int pattern, cold_cell_t *cells,
                               FILE *csv)
{
    enum { BASE = NCOLD - 1 };
    cold_cell_t *b = &cells[BASE];
    double b_alloc = median(b->alloc, b->n), b_cold = median(b->cold, b->n);
    double b_warm = median(b->warm, b->n);
    for (int k = 0; k < NCOLD; k++) {
        cold_cell_t *c = &cells[k];
        if (!wanted(o, k) || c->n == 0)
            continue;
        double alloc = median(c->alloc, c->n), cold = median(c->cold, c->n);
        double lo = min_of(c->cold, c->n), hi = max_of(c->cold, c->n);
        double warm = median(c->warm, c->n), mem = median(c->mem, c->n);
        double rc = b_cold / cold, rw = b_warm / warm, ra = alloc / b_alloc;
        /* memcpy moved the same bytes: the ratio of bandwidths is a ratio of times. */
        double rm = mem / cold;
        char label[80];
        printf("%-18s %-14s %5d %10.1f %9.1f %9.1f %9.1f %9.1f %9.2f %8.2f %8.2f %8.2f "
               "%8.2f  %s\n", patterns[pattern].name, method_label(k, c, label, sizeof label),
               o->ranks,
               c->moved / 1048576.0, alloc * 1e3, lo * 1e3, cold * 1e3, hi * 1e3, warm * 1e3,
               rc, rw, rm, ra, c->memory);
        if (csv)
            fprintf(csv, "%s,%s,%d,%lld,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f,%.4f,%s,%s,%.6f,%.6f,%s\n",
                    patterns[pattern].name, cold_name(cold_methods[k]), o->ranks, c->moved,
                    alloc, cold, warm, rc, rw, rm, ra, c->memory, state_name(state), lo, hi,
                    c->executors);
    }
    double all[5 * 64];
    int n = 0;
    for (int k = 0; k < NCOLD; k++)
        for (int i = 0; i < cells[k].n && n < 5 * 64; i++)
            all[n++] = cells[k].mem[i];
    printf("%-18s %-14s %5s %10s %9s %9s %9.2f %9s   (memcpy of the same bytes, warm: the "
           "physical bound)\n", patterns[pattern].name, "memcpy", "-", "-", "-", "-",
           median(all, n) * 1e3, "-");
}

static cold_cell_t *new_cells(int reps)
{
    cold_cell_t *cells = calloc(2 * NPATTERNS * NCOLD, sizeof *cells);
    for (int i = 0; i < 2 * NPATTERNS * NCOLD; i++) {
        cold_cell_t *c = &cells[i];
        c->alloc = calloc(4 * (size_t)reps, sizeof(double));
        c->cold = c->alloc + reps;
        c->warm = c->alloc + 2 * reps;
        c->mem = c->alloc + 3 * reps;
    }
    return cells;
}

/* The method order of step `step`: a permutation drawn from the step, so that no method
 * always runs right after the same one (a run inherits the memory state its predecessor
 * left: pages it freed may have gone back to the hypervisor, and a rotation by one keeps
 * every method behind the same neighbour). */
static void method_order(int step, int *order)
{
    unsigned x = 2654435761u * (unsigned)(step + 1);
    for (int i = 0; i < NCOLD; i++)
        order[i] = i;
    for (int i = NCOLD - 1; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 16) % (unsigned)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* One fresh run of `method` on `pattern`, its line added to its cell. */
static int cold_measure(const options_t *o, const char *file, int pattern, int method,
                        int rep, cold_cell_t *cell)
{
    char bufs[4][64], *args[24];
    child_args(o, file, pattern, method, bufs, args);
    int rc = bench_launch(o->ranks, args);
    if (rc != 0 || collect(file, cell) != 0) {
        fprintf(stderr, "mal_bench_redist --cold: %s %s run %d failed (exit %d)\n",
                patterns[pattern].name, cold_name(method), rep + 1, rc);
        return 1;
    }
    return 0;
}

/* Every repetition of every pattern and method in one memory state. */
static int cold_state(const options_t *o, const char *file, int state, cold_cell_t *cells,
                      fragmenter_t *seen)
{
    fragmenter_t frag = {0};
    if (state == MEMORY_FRAGMENTED && !fragmenter_start(&frag, o->fragment_keep_mib))
        return 1;
    int failed = 0, step = 0, order[NCOLD];
    for (int rep = 0; rep < o->cold_reps && !failed; rep++)
        for (int p = 0; p < NPATTERNS && !failed; p++) {
            if (p == PATTERN_SAME || (o->pattern >= 0 && o->pattern != p))
                continue;
            method_order(step++, order);
            for (int i = 0; i < NCOLD && !failed; i++) {
                int k = order[i];
                if (!wanted(o, k))
                    continue;
                if (state == MEMORY_FRAGMENTED && !fragmenter_refresh(&frag)) {
                    fprintf(stderr, "mal_bench_redist --cold: the fragmenting helper failed\n");
                    failed = 1;
                    break;
                }
                failed = cold_measure(o, file, p, cold_methods[k], rep,
                                      &cells[p * NCOLD + k]);
            }
        }
    *seen = frag;
    fragmenter_stop(&frag);
    return failed;
}

static void print_cold_header(const options_t *o, int state, const fragmenter_t *frag)
{
    if (state == MEMORY_FRAGMENTED)
        printf("# fragmented: before each run a helper held %lld MiB in every other 4 KiB "
               "page of the free memory beyond %lld MiB (MemFree %lld MiB after the last "
               "refresh)\n", frag->held_mib, o->fragment_keep_mib, frag->free_mib);
    printf("# mal_bench_redist --cold: %d ranks, %s, %s memory, fresh processes per run, "
           "median of %d runs (warm: median of %d rebalances per run); x_ columns: baseline "
           "%s time / this method's; alloc_x: this alloc / baseline's; memcpy_x: memcpy time "
           "/ cold time\n", o->ranks, o->sparse ? o->sparse : "dense doubles",
           state_name(state), o->cold_reps, o->reps, COLD_BASELINE_NAME);
    printf("%-18s %-14s %5s %10s %9s %9s %9s %9s %9s %8s %8s %8s %8s  %s\n", "pattern",
           "method", "ranks", "moved_MiB", "alloc_ms", "cold_min", "cold_ms", "cold_max",
           "warm_ms", "x_cold", "x_warm", "memcpy_x", "alloc_x", "memory");
}

int cold_driver(const options_t *o)
{
    if (bench_under_launcher()) {
        fprintf(stderr, "mal_bench_redist --cold: run it directly, not under mpiexec: it "
                        "starts a fresh MPI job per measurement ($MAL_LAUNCHER, e.g. "
                        "MAL_LAUNCHER=tools/malrun)\n");
        return CLI_EXIT_USAGE;
    }
    /* Opened first: a file that cannot be written fails the run before it measures. */
    FILE *csv = o->csv ? cli_open_output(o->cli, o->csv, "w", o->csv_out) : NULL;
    if (o->csv && csv == NULL)
        return CLI_EXIT_FAILURE;
    char file[] = "/tmp/mal_bench_cold.XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0) {
        perror("mal_bench_redist: mkstemp");
        return 1;
    }
    close(fd);
    cold_cell_t *cells = new_cells(o->cold_reps);
    int failed = 0;
    const int states[2] = {MEMORY_FRESH, MEMORY_FRAGMENTED};
    fragmenter_t frag = {0};
    for (int s = 0; s < 2 && !failed; s++)
        if (o->memory_states & states[s])
            failed = cold_state(o, file, states[s], &cells[s * NPATTERNS * NCOLD], &frag);
    unlink(file);
    if (csv)
        fprintf(csv, "pattern,method,ranks,moved_bytes,alloc_s,cold_s,warm_s,"
                     "cold_ratio_alltoallv,warm_ratio_alltoallv,ratio_memcpy,alloc_ratio,"
                     "memory,memory_state,cold_min_s,cold_max_s,executor\n");
    long long bad = 0;
    for (int s = 0; s < 2 && !failed; s++) {
        if (!(o->memory_states & states[s]))
            continue;
        print_cold_header(o, states[s], &frag);
        for (int p = 0; p < NPATTERNS; p++)
            if (p != PATTERN_SAME && (o->pattern < 0 || o->pattern == p)) {
                cold_cell_t *c = &cells[(s * NPATTERNS + p) * NCOLD];
                print_cold_pattern(o, states[s], p, c, csv);
                for (int k = 0; k < NCOLD; k++)
                    bad += c[k].bad;
            }
    }
    if (bad)
        printf("VERIFICATION FAILED: %lld elements wrong\n", bad);
    if (csv && cli_close_output(o->cli, o->csv, csv) != 0)
        failed = 1;
    for (int i = 0; i < 2 * NPATTERNS * NCOLD; i++)
        free(cells[i].alloc);
    free(cells);
    return failed || bad ? 1 : 0;
}
