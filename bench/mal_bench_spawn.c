/* mal_bench_spawn: cost of adding processes (mal_expand) and of releasing them again
 * (mal_shrink), for several process counts and both spawn modes.
 *
 * The run is one fixed sequence of operations: for each count k, each mode and each
 * repetition, expand by k then release the last k ranks (the ones just spawned). Spawned
 * processes run main() from the start, so the position in the sequence travels with
 * them as a carried value ("bench_step"): a joiner resumes at the release that ends
 * its life. Times are mal_last_reconfig()'s (max over the ranks that took part), read
 * on rank 0, which is initial and never released; medians over repetitions. */
#include "cli.h"
#include "mal.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNTS 32
#define MAX_MODES 2

typedef struct {
    int counts[MAX_COUNTS];
    int ncounts;
    mal_spawn_mode_t modes[MAX_MODES];
    int nmodes;
    int reps;
    const char *csv;
    FILE *csv_out; /* the data's stdout when csv is "-" */
} options_t;

static void usage(FILE *out);
static const cli_t cli = {"mal_bench_spawn", mal_version, usage};

typedef enum { OP_EXPAND, OP_RELEASE } op_kind_t;

typedef struct {
    op_kind_t kind;
    int count_idx, mode_idx, rep;
} op_t;

/* One cell per (count, mode, repetition); NAN until measured. */
typedef struct {
    double *expand, *spawn, *release;
} samples_t;

static int64_t sequence_length(const options_t *o)
{
    return 2 * (int64_t)o->ncounts * o->nmodes * o->reps;
}

/* Operation s: counts outermost, then modes, then repetitions; each repetition is an
 * expansion followed by the release of what it added. */
static op_t op_at(const options_t *o, int64_t s)
{
    op_t op = {.kind = s % 2 ? OP_RELEASE : OP_EXPAND};
    int64_t pair = s / 2;
    op.rep = (int)(pair % o->reps);
    pair /= o->reps;
    op.mode_idx = (int)(pair % o->nmodes);
    op.count_idx = (int)(pair / o->nmodes);
    return op;
}

static size_t cell(const options_t *o, int count_idx, int mode_idx, int rep)
{
    return ((size_t)count_idx * (size_t)o->nmodes + (size_t)mode_idx) * (size_t)o->reps +
           (size_t)rep;
}

static const char *mode_name(mal_spawn_mode_t m)
{
    return m == MAL_SPAWN_BATCHED ? "batched" : "per-call";
}

static mal_status_t perform(const options_t *o, op_t op)
{
    int k = o->counts[op.count_idx];
    if (op.kind == OP_EXPAND)
        return mal_expand(k, o->modes[op.mode_idx], NULL);
    return mal_shrink(k, NULL, NULL);
}

static void record(const options_t *o, op_t op, samples_t *s)
{
    mal_reconfig_stats_t st;
    if (mal_last_reconfig(&st) != MAL_OK)
        return;
    size_t c = cell(o, op.count_idx, op.mode_idx, op.rep);
    if (op.kind == OP_EXPAND) {
        s->expand[c] = st.total_seconds;
        s->spawn[c] = st.spawn_seconds;
    } else {
        s->release[c] = st.total_seconds;
    }
}

/* Runs the sequence from *step on. Returns 0 when it ended (or this process was
 * released), 1 after a failed operation: every rank of mal_comm() got the failure, so
 * all stop together and can still finalize collectively. */
static int run_sequence(const options_t *o, int64_t *step, bool keeper, samples_t *s)
{
    while (*step < sequence_length(o)) {
        op_t op = op_at(o, *step);
        (*step)++; /* before the call: the carried value then names the next operation */
        mal_status_t st = perform(o, op);
        if (st == MAL_REMOVED)
            return 0;
        if (st < 0) {
            if (keeper)
                fprintf(stderr, "mal_bench_spawn: %s of %d (%s), repetition %d: %s\n",
                        op.kind == OP_EXPAND ? "expansion" : "release",
                        o->counts[op.count_idx], mode_name(o->modes[op.mode_idx]), op.rep,
                        mal_error_message());
            return 1;
        }
        if (keeper)
            record(o, op, s);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the measured (non-NAN) values; *n gets how many there were. */
static double median_measured(const double *v, int len, int *n)
{
    double *sorted = malloc((size_t)len * sizeof *sorted);
    *n = 0;
    for (int i = 0; sorted != NULL && i < len; i++)
        if (!isnan(v[i]))
            sorted[(*n)++] = v[i];
    double m = NAN;
    if (*n > 0) {
        qsort(sorted, (size_t)*n, sizeof *sorted, cmp_double);
        m = *n % 2 ? sorted[*n / 2] : 0.5 * (sorted[*n / 2 - 1] + sorted[*n / 2]);
    }
    free(sorted);
    return m;
}

static void print_cell(const options_t *o, const samples_t *s, int ci, int mi, FILE *csv)
{
    size_t c = cell(o, ci, mi, 0);
    int n_expand, n_spawn, n_release;
    double expand = median_measured(s->expand + c, o->reps, &n_expand);
    double spawn = median_measured(s->spawn + c, o->reps, &n_spawn);
    double release = median_measured(s->release + c, o->reps, &n_release);
    int k = o->counts[ci];
    double per_process = expand / k;
    int reps = n_expand < n_release ? n_expand : n_release;
    const char *mode = mode_name(o->modes[mi]);
    printf("%5d %-9s %15.4f %14.4f %13.4f %16.4f %5d\n", k, mode, expand, spawn,
           per_process, release, reps);
    if (csv)
        fprintf(csv, "%d,%s,%.6f,%.6f,%.6f,%.6f,%d\n", k, mode, expand, spawn, per_process,
                release, reps);
}

/* Returns whether the CSV, if any, was written. */
static bool print_results(const options_t *o, const samples_t *s, int initial_ranks,
                          FILE *csv)
{
    if (csv)
        fprintf(csv, "count,mode,expand_median_s,spawn_median_s,per_process_s,"
                     "release_median_s,reps\n");
    printf("# mal_bench_spawn: %d initial ranks, %d reps, median of mal_last_reconfig "
           "times (max over ranks)\n",
           initial_ranks, o->reps);
    printf("%5s %-9s %15s %14s %13s %16s %5s\n", "count", "mode", "expand_median_s",
           "spawn_median_s", "per_process_s", "release_median_s", "reps");
    for (int ci = 0; ci < o->ncounts; ci++)
        for (int mi = 0; mi < o->nmodes; mi++)
            print_cell(o, s, ci, mi, csv);
    return csv == NULL || cli_close_output(&cli, o->csv, csv) == 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mal_bench_spawn [--counts K,K,...] [--modes per-call,batched] [--reps R]"
            " [--csv FILE]\n"
            "  --counts  processes added then released per repetition (default 1,2,4)\n"
            "  --modes   spawn modes, comma-separated (default per-call,batched)\n"
            "  --reps    repetitions per count and mode, median reported (default 5)\n"
            "  --csv     also write count,mode,expand_median_s,spawn_median_s,"
            "per_process_s,release_median_s,reps\n"
            "            (-: on stdout, and the table to stderr)\n"
            CLI_STANDARD_USAGE
            "Exit status: 0, 1 when an expansion, a release or the CSV fails, 2 for a "
            "usage error.\n");
}

static void parse_counts(const char *s, options_t *o)
{
    o->ncounts = 0;
    for (const char *p = s; *p != '\0';) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > 1024 || o->ncounts == MAX_COUNTS ||
            (*end != ',' && *end != '\0'))
            cli_usage_error(&cli, "--counts '%s' is not a list of at most %d counts in "
                            "1..1024", s, MAX_COUNTS);
        o->counts[o->ncounts++] = (int)k;
        p = *end == ',' ? end + 1 : end;
    }
    if (o->ncounts == 0)
        cli_usage_error(&cli, "--counts is empty");
}

static void parse_modes(const char *s, options_t *o)
{
    static const char *const names[] = {"per-call", "batched"};
    static const mal_spawn_mode_t modes[] = {MAL_SPAWN_PER_CALL, MAL_SPAWN_BATCHED};
    char copy[64];
    if (strlen(s) >= sizeof copy)
        cli_usage_error(&cli, "--modes '%s' is too long", s);
    strcpy(copy, s);
    o->nmodes = 0;
    for (char *tok = strtok(copy, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (o->nmodes == MAX_MODES)
            cli_usage_error(&cli, "--modes '%s' has more than %d modes", s, MAX_MODES);
        o->modes[o->nmodes++] = modes[cli_choice(&cli, "--modes", tok, names, 2, false)];
    }
    if (o->nmodes == 0)
        cli_usage_error(&cli, "--modes is empty");
}

/* Every process parses, before MPI starts (a spawned one gets the same arguments). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.counts = {1, 2, 4}, .ncounts = 3,
                     .modes = {MAL_SPAWN_PER_CALL, MAL_SPAWN_BATCHED}, .nmodes = 2,
                     .reps = 5, .csv = NULL};
    static const struct option longopts[] = {
        {"counts", required_argument, NULL, 'k'}, {"modes", required_argument, NULL, 'm'},
        {"reps", required_argument, NULL, 'r'},   {"csv", required_argument, NULL, 'C'},
        CLI_STANDARD_OPTIONS,                     {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'k')
            parse_counts(optarg, o);
        else if (c == 'm')
            parse_modes(optarg, o);
        else if (c == 'r')
            o->reps = (int)cli_integer(&cli, "--reps", optarg, 1, 10000);
        else
            o->csv = optarg;
    }
    if (cli_is_stdout(o->csv))
        o->csv_out = cli_take_stdout(&cli);
}

static samples_t samples_new(const options_t *o)
{
    size_t cells = (size_t)o->ncounts * (size_t)o->nmodes * (size_t)o->reps;
    samples_t s = {malloc(cells * sizeof(double)), malloc(cells * sizeof(double)),
                   malloc(cells * sizeof(double))};
    if (s.expand == NULL || s.spawn == NULL || s.release == NULL) {
        fprintf(stderr, "mal_bench_spawn: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    for (size_t c = 0; c < cells; c++)
        s.expand[c] = s.spawn[c] = s.release[c] = NAN;
    return s;
}

static void samples_free(samples_t *s)
{
    free(s->expand);
    free(s->spawn);
    free(s->release);
}

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);
    MPI_Init(&argc, &argv);
    if (mal_init(MPI_COMM_WORLD, NULL) != MAL_OK) { /* a spawned process joins here */
        fprintf(stderr, "mal_bench_spawn: mal_init: %s\n", mal_error_message());
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    int64_t step = 0; /* on a joiner, overwritten with the carried position */
    if (mal_register_value("bench_step", &step, sizeof step) != MAL_OK) {
        fprintf(stderr, "mal_bench_spawn: mal_register_value: %s\n", mal_error_message());
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    int rank, initial_ranks;
    MPI_Comm_rank(mal_comm(), &rank);
    MPI_Comm_size(mal_comm(), &initial_ranks);
    bool keeper = mal_is_initial_process() && rank == 0; /* only the last ranks are released */
    FILE *csv = NULL; /* opened before measuring: a file that cannot be written fails now */
    if (keeper && o.csv && (csv = cli_open_output(&cli, o.csv, "w", o.csv_out)) == NULL)
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    samples_t s = samples_new(&o);
    int failed = run_sequence(&o, &step, keeper, &s);
    if (keeper && !print_results(&o, &s, initial_ranks, csv))
        failed = CLI_EXIT_FAILURE;
    samples_free(&s);
    mal_finalize();
    MPI_Finalize();
    return failed;
}
