/* mal_bench_redist: redistribution bandwidth of one rebalance, one-sided (rma) against
 * MPI_Alltoallv and point-to-point on the same transfer plan, in the same run, with the
 * machine's memcpy bandwidth measured alongside as the physical bound.
 *
 * Every repetition: set the "from" layout (untimed), write a closed-form value into
 * every row, time mal_rebalance to the "to" layout (max over ranks), verify every row.
 * With --sparse the data are a CSR matrix (a Matrix Market file read with CHOLMOD, or a
 * generated one) split by nonzeros, and every row's length, columns and values are
 * verified; moved bytes are the row pointer, column indices and values that changed
 * owner.
 * Reported time is the median over repetitions; the first repetition is shown apart
 * because it is the one that may have to grow a window (its window creation and first
 * epoch are inside its time).
 *
 * shmem (a libmal built with OpenSHMEM; run under oshrun) needs its data on the
 * symmetric heap, the rma methods theirs in MPI windows: the data are allocated again,
 * untimed, under shmem before its rows, and in windows before the others (alltoallv
 * and p2p move window data). Every method sees the same plan and the same values. */
#include "bench_launch.h"
#include "cli.h"
#include "mal.h"
#include "matrix_input.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redist_bench.h"


static int rank, nranks;

/* In table order; the memcpy bound takes one sample per repetition of each. */
static const mal_redist_t bench_methods[] = {MAL_REDIST_RMA, MAL_REDIST_RMA_GET,
                                             MAL_REDIST_ALLTOALLV, MAL_REDIST_P2P,
                                             MAL_REDIST_AUTO, MAL_REDIST_SHMEM};
#define NMETHODS ((int)(sizeof bench_methods / sizeof bench_methods[0]))

/* Whether --method all (the default) includes shmem: libmal has it and the symmetric
 * heap holds the data (see heap_holds). */
static bool shmem_in_all;

/* SMA_SYMMETRIC_SIZE in bytes (a number with an optional K, M, G or T), Open MPI's
 * 256 MiB when unset; 0 when unreadable. */
static double symmetric_heap_bytes(void)
{
    const char *env = getenv("SMA_SYMMETRIC_SIZE");
    if (env == NULL || *env == '\0')
        return 256.0 * 1048576.0;
    char *end = NULL;
    double v = strtod(env, &end);
    const char *units = "KMGT";
    const char *u = *end != '\0' ? strchr(units, *end & ~0x20) : NULL;
    for (long i = u != NULL ? u - units + 1 : 0; i > 0; i--)
        v *= 1024.0;
    return end != env && (*end == '\0' || u != NULL) ? v : 0.0;
}

/* The all-to-one pattern gathers the dense data on one PE with its headroom, and a
 * move needs both buffers: about 2.25x --size per PE (docs/guide/library.md,
 * "The OpenSHMEM transport"). Plain mpiexec leaves the heap at 256 MiB, below the default 256 MiB
 * run's need: the default table then leaves shmem out instead of aborting. Matrices
 * (--sparse) are sized only once read: they are assumed to fit. */
static bool heap_holds(const options_t *o)
{
    return o->sparse != NULL || symmetric_heap_bytes() >= 2.25 * (double)o->size;
}

static void fill(data_t *d, int rep)
{
    if (d->csr)
        fill_sparse(d->csr, rep);
    else
        fill_dense(d->dense, rep);
}

static long long count_bad(const data_t *d, int rep)
{
    return d->csr ? count_bad_sparse(d, rep) : count_bad_dense(d->dense, rep);
}

/* One repetition: returns the timed rebalance's duration (max over ranks). */
static double one_rep(data_t *a, const double *from, const double *to, int rep,
                      result_t *res)
{
    if (check(mal_rebalance(from), "setting the initial layout"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    fill(a, rep);
    MPI_Barrier(mal_comm());
    double t0 = MPI_Wtime();
    if (check(mal_rebalance(to), "timed rebalance"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    double t = max_over_ranks(MPI_Wtime() - t0);
    mal_rebalance_stats_t st;
    mal_last_rebalance(&st);
    long long counts[3] = {st.bytes_received, st.windows_created, count_bad(a, rep)};
    MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_LONG_LONG, MPI_SUM, mal_comm());
    res->moved = counts[0];
    res->windows += (int)counts[1];
    res->bad += counts[2];
    return t;
}

static void setup_data(data_t *d, const options_t *o, mal_redist_t m);

static result_t run_method(data_t *a, const pattern_t *p, mal_redist_t m, const options_t *o,
                           bound_t *bound)
{
    int reps = o->reps;
    double *from = malloc((size_t)nranks * sizeof *from);
    double *to = malloc((size_t)nranks * sizeof *to);
    double *times = malloc((size_t)reps * sizeof *times);
    weights_of(p->from, from, nranks);
    weights_of(p->to, to, nranks);
    setup_data(a, o, m);
    result_t res = {0};
    for (int rep = 0; rep < reps; rep++) {
        times[rep] = one_rep(a, from, to, rep, &res);
        sample_memcpy(bound, res.moved);
    }
    res.first = times[0];
    res.median = median(times, reps);
    free(from);
    free(to);
    free(times);
    return res;
}

static void print_row(FILE *csv, const char *pattern, const char *method, long long moved,
                      double t, double first, int windows, double a2av_bw, double mem_bw)
{
    double bw = t > 0 ? (double)moved / t : 0.0;
    double ra = a2av_bw > 0 ? bw / a2av_bw : NAN, rm = mem_bw > 0 ? bw / mem_bw : NAN;
    if (first >= 0)
        printf("%-18s %-10s %5d %10.1f %10.3f %10.3f %8d %9.2f %9.2f %9.2f\n", pattern,
               method, nranks, moved / 1048576.0, t * 1e3, first * 1e3, windows, bw / 1e9,
               ra, rm);
    else
        printf("%-18s %-10s %5d %10.1f %10.3f %10s %8s %9.2f %9s %9.2f\n", pattern, method,
               nranks, moved / 1048576.0, t * 1e3, "-", "-", bw / 1e9, "-", rm);
    if (csv)
        fprintf(csv, "%s,%s,%d,%lld,%.9f,%.6e,%.4f,%.4f\n", pattern, method, nranks, moved,
                t, bw, ra, rm);
}

static int run_pattern(data_t *a, const pattern_t *p, const options_t *o,
                       bound_t *bound, FILE *csv)
{
    const mal_redist_t *methods = bench_methods;
    enum { NM = NMETHODS, A2AV = 2 };
    result_t res[NM];
    int have[NM] = {0};
    long long moved = 0, bad = 0;
    for (int k = 0; k < NM; k++)
        if (o->method == (int)methods[k] ||
            (o->method == 0 && mal_redist_supported(methods[k]) &&
             (methods[k] != MAL_REDIST_SHMEM || shmem_in_all))) {
            res[k] = run_method(a, p, methods[k], o, bound);
            have[k] = 1;
            moved = res[k].moved;
            bad += res[k].bad;
        }
    double mem_t = median(bound->samples, bound->n);
    bound->n = 0;
    double mem_bw = mem_t > 0 && moved > 0 ? (double)moved / mem_t : 0.0;
    double a2av_bw = have[A2AV] && res[A2AV].median > 0 ? (double)moved / res[A2AV].median
                                                         : 0.0;
    if (rank == 0) {
        for (int k = 0; k < NM; k++)
            if (have[k])
                print_row(csv, p->name, mal_redist_name(methods[k]), moved, res[k].median,
                          res[k].first, res[k].windows, a2av_bw, mem_bw);
        print_row(csv, p->name, "memcpy", moved, mem_t, -1.0, 0, a2av_bw, mem_bw);
        if (bad)
            printf("%-18s VERIFICATION FAILED: %lld elements wrong\n", p->name, bad);
    }
    return bad != 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mal_bench_redist [--size BYTES | --sparse SPEC] [--pattern NAME|all] "
            "[--method rma|rma-get|alltoallv|p2p|shmem|all]\n"
            "                        [--reps R] [--row-len N] [--headroom H] [--csv FILE]\n"
            "  --size     total bytes of doubles redistributed (default 268435456)\n"
            "  --sparse   a CSR matrix instead: a Matrix Market file, poisson:N (2-D, N^2 rows),\n"
            "             poisson3d:N or powerlaw:N (N rows); split by nonzeros\n"
            "  --pattern  uniform-to-skewed, skewed-to-uniform, one-to-all, all-to-one,\n"
            "             same, or all (default all)\n"
            "  --method   rma, rma-get, alltoallv, p2p, auto or shmem; default all (every\n"
            "             method in the same run; shmem when libmal has OpenSHMEM: launch\n"
            "             with oshrun, e.g. MPIEXEC=oshrun tools/malrun); auto's rows name\n"
            "             the executor it took\n"
            "  --reps     repetitions per method, median reported (default 7)\n"
            "  --row-len  doubles per row (default 1)\n"
            "  --headroom mal_config_t.headroom (default: the library's)\n"
            "  --csv      also write pattern,method,ranks,moved_bytes,median_s,bandwidth_Bps,"
            "ratio_alltoallv,ratio_memcpy\n"
            "  --cold     one-shot cost in fresh processes instead (run directly, not under\n"
            "             mpiexec: it launches $MAL_LAUNCHER -n RANKS itself per measurement);\n"
            "             methods rma, rma-get, alltoallv, p2p, auto and " COLD_BASELINE_NAME " (plain MPI:\n"
            "             malloc + touch, MPI_Alltoallv into fresh buffers); CSV columns\n"
            "             pattern,method,ranks,moved_bytes,alloc_s,cold_s,warm_s,\n"
            "             cold_ratio_alltoallv,warm_ratio_alltoallv,ratio_memcpy,alloc_ratio,memory\n"
            "  --cold-reps fresh runs per pattern and method, median reported (default 3)\n"
            "  --ranks    processes of each cold run (default 2)\n"
            "  --memory-state fresh|fragmented|both\n"
            "             cold runs on the memory as the previous run left it (fresh), and/or\n"
            "             with a helper holding every other 4 KiB page of the free memory\n"
            "             beyond --fragment-keep MiB (default 1024), refreshed before each run\n"
            "             (fragmented); default fresh\n"
            "  --csv -    writes the CSV on stdout, and the table to stderr\n"
            CLI_STANDARD_USAGE
            "Exit status: 0, 1 when a run or a verification fails, 2 for a usage error.\n");
}

static int parse_pattern(const char *s)
{
    if (strcmp(s, "all") == 0)
        return -1;
    for (int i = 0; i < NPATTERNS; i++)
        if (strcmp(s, patterns[i].name) == 0)
            return i;
    return -2;
}

static int parse_method(const char *s)
{
    if (strcmp(s, "all") == 0)
        return 0;
    if (strcmp(s, COLD_BASELINE_NAME) == 0)
        return COLD_BASELINE;
    for (int m = MAL_REDIST_RMA; m <= MAL_REDIST_AUTO; m++)
        if (strcmp(s, mal_redist_name((mal_redist_t)m)) == 0)
            return m;
    return -1;
}

static int parse_memory_states(const char *s)
{
    return strcmp(s, "fresh") == 0        ? MEMORY_FRESH
           : strcmp(s, "fragmented") == 0 ? MEMORY_FRAGMENTED
           : strcmp(s, "both") == 0       ? MEMORY_FRESH | MEMORY_FRAGMENTED
                                          : 0;
}

static const cli_t redist_cli = {"mal_bench_redist", mal_version, usage};

/* The options that take a value, each checked on its own. */
static void set_option(options_t *o, int c, const char *val)
{
    const cli_t *cli = &redist_cli;
    switch (c) {
    case 's':
        o->size = cli_integer(cli, "--size", val, 8, LLONG_MAX);
        break;
    case 'p':
        if ((o->pattern = parse_pattern(val)) < -1)
            cli_usage_error(cli, "--pattern '%s' is no pattern", val);
        break;
    case 'm':
        if ((o->method = parse_method(val)) < 0)
            cli_usage_error(cli, "--method '%s' is no method", val);
        break;
    case 'r':
        o->reps = (int)cli_integer(cli, "--reps", val, 1, 100000);
        break;
    case 'l':
        o->row_len = cli_integer(cli, "--row-len", val, 1, LLONG_MAX / 8);
        break;
    case 'H':
        o->headroom = cli_number(cli, "--headroom", val, 0, 1e6);
        break;
    case 'R':
        o->cold_reps = (int)cli_integer(cli, "--cold-reps", val, 1, 100000);
        break;
    case 'M':
        if ((o->memory_states = parse_memory_states(val)) == 0)
            cli_usage_error(cli, "--memory-state '%s' is not fresh, fragmented or both", val);
        break;
    case 'K':
        o->fragment_keep_mib = cli_integer(cli, "--fragment-keep", val, 0, LLONG_MAX >> 20);
        break;
    case 'n':
        o->ranks = (int)cli_integer(cli, "--ranks", val, 1, 4096);
        break;
    default:
        *(c == 'C' ? &o->csv : c == 'S' ? &o->sparse : &o->cold_run) = val;
    }
}

/* Parsed before MPI starts (a cold run's options too). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.size = 256LL << 20, .pattern = -1, .method = 0, .reps = 7,
                     .row_len = 1, .headroom = -1.0, .csv = NULL, .cold_reps = 3,
                     .ranks = 2, .memory_states = MEMORY_FRESH, .fragment_keep_mib = 1024,
                     .cli = &redist_cli};
    static const struct option longopts[] = {
        {"size", required_argument, NULL, 's'},     {"pattern", required_argument, NULL, 'p'},
        {"method", required_argument, NULL, 'm'},   {"reps", required_argument, NULL, 'r'},
        {"row-len", required_argument, NULL, 'l'},  {"headroom", required_argument, NULL, 'H'},
        {"csv", required_argument, NULL, 'C'},      {"sparse", required_argument, NULL, 'S'},
        {"ranks", required_argument, NULL, 'n'},    {"cold", no_argument, NULL, 'c'},
        {"cold-reps", required_argument, NULL, 'R'},
        {"cold-run", required_argument, NULL, 'X'},
        {"memory-state", required_argument, NULL, 'M'},
        {"fragment-keep", required_argument, NULL, 'K'},
        CLI_STANDARD_OPTIONS,                       {0}};
    for (int c; (c = cli_next(&redist_cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'c')
            o->cold = true;
        else
            set_option(o, c, optarg);
    }
    /* The baseline exists only in the cold table; shmem only in the warm one. */
    if (o->method == COLD_BASELINE && !o->cold && !o->cold_run)
        cli_usage_error(&redist_cli, "--method " COLD_BASELINE_NAME " needs --cold");
    if (o->method == MAL_REDIST_SHMEM && (o->cold || o->cold_run))
        cli_usage_error(&redist_cli, "--method shmem is not measured with --cold");
    if (o->size < o->row_len * (long long)sizeof(double))
        cli_usage_error(&redist_cli, "--size %lld is less than one row of --row-len %lld "
                        "doubles", o->size, o->row_len);
    if (cli_is_stdout(o->csv))
        o->csv_out = cli_take_stdout(&redist_cli);
}

static void setup_dense(data_t *d, const options_t *o)
{
    char *what = d->what;
    size_t len = sizeof d->what;
    long long rows = o->size / (o->row_len * (long long)sizeof(double));
    if (check(mal_alloc_window("bench", MPI_DOUBLE, rows, o->row_len, MAL_BLOCK, &d->dense),
              "mal_alloc_window"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    snprintf(what, len, "%.1f MiB of doubles (%lld rows x %lld)", o->size / 1048576.0, rows,
             o->row_len);
}

/* Every rank opens the matrix and gives its even block of rows. */
void setup_sparse(data_t *d, const char *spec)
{
    char *what = d->what;
    size_t len = sizeof d->what;
    char err[512];
    int64_t *rowptr;
    int32_t *colind;
    double *vals;
    if (mi_open(spec, &d->src, err, sizeof err) != 0) {
        if (rank == 0)
            fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    if (check(mal_alloc_csr("bench", mi_rows(d->src), mi_cols(d->src), MPI_DOUBLE, &d->csr),
              "mal_alloc_csr"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    int64_t first = mal_csr_first_row(d->csr), count = mal_csr_local_rows(d->csr);
    if (mi_block(d->src, first, count, &rowptr, &colind, &vals, err, sizeof err) != 0) {
        fprintf(stderr, "mal_bench_redist: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    if (check(mal_csr_set_rows(d->csr, count, rowptr[count], rowptr, colind, vals),
              "mal_csr_set_rows"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    free(rowptr);
    free(colind);
    free(vals);
    d->row_cols = malloc(((size_t)mi_max_row_nnz(d->src) + 1) * sizeof *d->row_cols);
    double bytes = (double)mi_rows(d->src) * 8.0 + (double)mi_nnz(d->src) * 12.0;
    snprintf(what, len, "CSR %s, %.1f MiB (8 bytes per row, 12 per nonzero)",
             mi_describe(d->src), bytes / 1048576.0);
}

static void free_data(data_t *d)
{
    if (d->csr)
        mal_free_csr(d->csr);
    else if (d->dense)
        mal_free_array(d->dense);
    mi_close(d->src);
    free(d->row_cols);
    d->dense = NULL;
    d->csr = NULL;
    d->src = NULL;
    d->row_cols = NULL;
}

/* Select method m, with the data in the memory it reaches (allocated again, untimed,
 * when the kind changes). */
static void setup_data(data_t *d, const options_t *o, mal_redist_t m)
{
    bool symmetric = m == MAL_REDIST_SHMEM;
    if ((d->dense != NULL || d->csr != NULL) && d->symmetric != symmetric)
        free_data(d);
    if (d->dense == NULL && d->csr == NULL) {
        /* Memory follows the method in effect when the data are allocated. */
        if (check(mal_set_redist(symmetric ? MAL_REDIST_SHMEM : MAL_REDIST_RMA),
                  "mal_set_redist"))
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        if (o->sparse)
            setup_sparse(d, o->sparse);
        else
            setup_dense(d, o);
        d->symmetric = symmetric;
    }
    if (check(mal_set_redist(m), "mal_set_redist"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
}

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);
    if (o.cold && !o.cold_run)
        return cold_driver(&o);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (o.cold_run)
        return cold_run(&o);
    mal_config_t cfg;
    mal_config_init(&cfg);
    if (o.headroom >= 0)
        cfg.headroom = o.headroom;
    /* shmem is chosen at mal_init (it starts SHMEM); the others follow with
     * mal_set_redist. */
    shmem_in_all = mal_redist_supported(MAL_REDIST_SHMEM) && heap_holds(&o);
    if (rank == 0 && o.method == 0 && mal_redist_supported(MAL_REDIST_SHMEM) && !shmem_in_all)
        printf("# shmem left out: the symmetric heap (SMA_SYMMETRIC_SIZE, 256 MiB when "
               "unset) is below the 2.25 x --size this table needs per PE; tools/malrun "
               "sets 8G\n");
    bool shmem = o.method == MAL_REDIST_SHMEM || (o.method == 0 && shmem_in_all);
    cfg.redist = shmem ? MAL_REDIST_SHMEM : MAL_REDIST_RMA;
    if (check(mal_init(MPI_COMM_WORLD, &cfg), "mal_init"))
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    MPI_Comm_size(mal_comm(), &nranks);
    data_t data = {0};
    setup_data(&data, &o, o.method ? (mal_redist_t)o.method : MAL_REDIST_RMA);
    FILE *csv = NULL;
    if (rank == 0 && o.csv != NULL) {
        if ((csv = cli_open_output(&redist_cli, o.csv, "w", o.csv_out)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
        fprintf(csv, "pattern,method,ranks,moved_bytes,median_s,bandwidth_Bps,"
                     "ratio_alltoallv,ratio_memcpy\n");
    }
    if (rank == 0) {
        printf("# mal_bench_redist: %d ranks, %s, %d reps, median of max-over-ranks times\n",
               nranks, data.what, o.reps);
        printf("%-18s %-10s %5s %10s %10s %10s %8s %9s %9s %9s\n", "pattern", "method",
               "ranks", "moved_MiB", "median_ms", "first_ms", "windows", "GB/s",
               "x_a2av", "x_memcpy");
    }
    bound_t bound = {.samples = malloc(NMETHODS * (size_t)o.reps * sizeof *bound.samples)};
    int failed = 0;
    for (int i = 0; i < NPATTERNS; i++)
        if (o.pattern < 0 || o.pattern == i)
            failed |= run_pattern(&data, &patterns[i], &o, &bound, csv);
    free(bound.src);
    free(bound.dst);
    free(bound.samples);
    if (csv && cli_close_output(&redist_cli, o.csv, csv) != 0)
        failed = 1;
    free_data(&data);
    mal_finalize();
    MPI_Finalize();
    return failed ? 1 : 0;
}
