/* mal_soak: many random reconfigurations in one run, every row checked after each, and
 * the process's resources watched for leaks.
 *
 * Usage: mal_soak --cycles N --size BYTES [--seed S | --seeds A-B] [--sparse SPEC]
 *                 [--kinds esr] [--faults PERCENT] [--watchdog SECONDS] [--max-rss-kb K]
 *                 [--flat] [--verbose]
 *
 * Each cycle is drawn from the seed and the cycle number alone (so a process spawned in
 * the middle draws the same actions as the others; --seeds A-B runs N cycles of each
 * seed one after another in one job, each starting from the set the last one left):
 * expand by 1 or 2 (one spawn per process or batched), shrink by any ranks (initial
 * ones and rank 0 included), or rebalance (--kinds narrows the choice), with random
 * weights (zeros included) or the even split. The process count stays within --procs
 * (1-4 unless told; expansions then add up to a quarter of the largest count). One
 * process, the anchor (initial rank S mod the initial size, S the first seed), is never
 * released, so that one process lives through every cycle and measures the growth per
 * cycle over the longest span; every other rank, initial rank 0 too, can go.
 *
 * --script runs a fixed list of actions instead, one per cycle (soak_script.h: the
 * scale scenario of ctest/multihost, shrinks that empty named hosts); rank 0 then prints
 * where the processes run after each cycle.
 *
 * Data: "dense" (--size bytes of uint64 rows, 16 per row), "odd" (1009 rows of 3
 * int32), and with --sparse a CSR matrix (a Matrix Market file or a generator, as
 * support/matrix_input.h names them) with an aligned vector "x". Every element is a
 * function of its structure, global row (and column or entry) and the version, which is
 * the cycle number: before each reconfiguration every process writes the next version,
 * after it every process (joiners included) checks every element it holds bit-exactly,
 * the CSR pattern against the source, and that the parts cover every row once and follow
 * the weights (to within one row, one row's nonzeros for the matrix). Every rank's
 * result is reduced each cycle.
 *
 * A reconfiguration that fails with an error is abandoned by libmal: the soak checks
 * the old process set and data are still there, counts it and goes on. --faults makes
 * some fail on purpose (one rank's direct transfers fail, libmal's MAL_FAULT_DIRECT), so
 * the abandoning paths are soaked too. A cycle that makes no progress for --watchdog
 * seconds (default 300; a hung spawn, docs/design.md) ends the run with FAIL instead of
 * hanging.
 *
 * Leak figures (soak_probe.h): after the first min(50, N/10) cycles each process takes a
 * base sample (a process that joined later, as many cycles after its join), and at the
 * end every process alive compares with it. rss is the growth per cycle of VmRSS of the
 * process with the longest measured span, i.e. one that lived from the start (the
 * anchor always does; among equals the largest growth); fds, windows, communicators,
 * infos, datatypes and groups are the largest change (by magnitude) over the processes
 * alive at the end. --max-rss-kb and --flat turn the figures into verdicts.
 *
 * Output: rank 0 prints exactly one line,
 *   mal_soak: PASS N cycles, rss +X kB/cycle, fds +F, windows +W, comms +C, ...
 * or "mal_soak: FAIL <why>", and the run exits nonzero. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "mal.h"
#include "matrix_input.h"
#include "soak_probe.h"
#include "soak_script.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROCS SOAK_MAX_PROCS
/* Descriptors a process holds per connected peer (UCX's transports): the count at the
 * end follows how many peers a process has then, not the cycles run (measured: -4..+8
 * over 50 and 1000 cycles, any growth per cycle would be hundreds), so --flat allows
 * this many per peer a process can have. */
#define FDS_PER_PEER 4
#define DENSE_ROW_LEN 16
#define ODD_ROWS 1009
#define ODD_ROW_LEN 3

typedef struct {
    long long cycles, size; /* cycles of the whole run: per_seed for every seed */
    long long per_seed;
    unsigned long long seed, last_seed; /* the seeds run one after another */
    const char *sparse;
    const char *kinds; /* actions drawn: 'e' expand, 's' shrink, 'r' rebalance */
    int watchdog;
    double max_rss_kb; /* < 0: no limit */
    int faults;        /* percent of cycles with an injected transfer fault */
    int min_procs, max_procs; /* the process count drawn actions keep within */
    soak_script_t *script;    /* the actions, instead of drawn ones; NULL: drawn */
    bool flat, verbose;
} options_t;

/* Carried to joiners (mal_register_value): the tallies, and the weights of the layout in
 * force (the even split is written as ones). */
typedef struct {
    long long expands, shrinks, rebalances, abandoned, faults;
    int nweights;
    double weights[MAX_PROCS];
} carried_t;

typedef struct {
    mal_array_t *dense, *odd, *x; /* x follows A's rows; NULL without --sparse */
    mal_csr_t *A;
    mi_source_t *src;
    int32_t *cols; /* one row of the source's columns */
} soak_data_t;

typedef soak_action_t action_t;

/* Why a cycle failed; the largest code over the ranks is reported. */
typedef enum {
    SOAK_OK = 0,
    SOAK_STEP,    /* mal_step did not continue */
    SOAK_STATUS,  /* a reconfiguration returned an unexpected status */
    SOAK_PROCS,   /* the process set is not what the reconfiguration asked for */
    SOAK_LAYOUT,  /* parts do not cover every row once or do not follow the weights */
    SOAK_DATA,    /* an element holds a wrong value */
    SOAK_SETUP,   /* the structures could not be set up (see stderr) */
    SOAK_SCRIPT,  /* the script's step cannot be carried out (see stderr) */
    SOAK_MPI      /* an MPI call of the soak itself failed */
} soak_code_t;

static const char *code_text(int code)
{
    static const char *text[] = {
        "ok",
        "mal_step did not return MAL_CONTINUE",
        "a reconfiguration returned an unexpected status",
        "the process set is not what the reconfiguration asked for",
        "the parts do not cover every row once or do not follow the weights",
        "an element holds a wrong value",
        "setting up the structures failed (see stderr)",
        "the script's step cannot be carried out (see stderr)",
        "an MPI call of the soak failed"};
    return code >= 0 && code <= SOAK_MPI ? text[code] : "unknown";
}

/* ---------------------------------------------------------------- watchdog */

static char alarm_line[256];
static volatile sig_atomic_t alarm_len;
static int watchdog_seconds = 300;

static void on_alarm(int sig)
{
    (void)sig;
    if (alarm_len > 0) {
        ssize_t w = write(STDOUT_FILENO, alarm_line, (size_t)alarm_len);
        (void)w;
    }
    _exit(3);
}

/* Re-arm the watchdog for the next phase; the current rank 0 (`speaker`) says where a
 * run that stops making progress was. */
static void watch(long long cycle, const char *phase, bool speaker)
{
    alarm_len = 0;
    if (speaker) {
        int n = snprintf(alarm_line, sizeof alarm_line,
                         "mal_soak: FAIL cycle %lld: no progress in %d s in %s%s\n", cycle,
                         watchdog_seconds, phase,
                         strcmp(phase, "mal_expand") == 0
                             ? " (a hung spawn: docs/design.md, the spawn hang)" : "");
        alarm_len = n > 0 && n < (int)sizeof alarm_line ? n : 0;
    }
    alarm((unsigned)watchdog_seconds);
}

/* ---------------------------------------------------------------- mal_comm() */

static int comm_rank(void)
{
    int r = -1;
    MPI_Comm_rank(mal_comm(), &r);
    return r;
}

static int comm_size(void)
{
    int n = 0;
    MPI_Comm_size(mal_comm(), &n);
    return n;
}

/* ---------------------------------------------------------------- values */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static uint64_t element(uint64_t salt, int64_t row, int64_t col, long long version)
{
    return mix64(mix64(salt ^ (uint64_t)row * 0x100000001b3ULL ^ (uint64_t)col << 48) ^
                 (uint64_t)version);
}

static uint64_t dense_value(int64_t row, int64_t col, long long version)
{
    return element(1, row, col, version);
}

static int32_t odd_value(int64_t row, int64_t col, long long version)
{
    return (int32_t)element(2, row, col, version);
}

/* An integer below 2^52: exact in a double, never a NaN. */
static double sparse_value(int64_t row, int64_t k, long long version)
{
    return (double)(element(3, row, k, version) >> 12);
}

static double x_value(int64_t row, long long version)
{
    return (double)(element(4, row, 0, version) >> 12);
}

/* ---------------------------------------------------------------- data */

static void write_dense(const soak_data_t *d, long long version)
{
    uint64_t *v = mal_local_data(d->dense);
    int64_t first = mal_first_row(d->dense), rows = mal_local_rows(d->dense);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < DENSE_ROW_LEN; c++)
            v[r * DENSE_ROW_LEN + c] = dense_value(first + r, c, version);
    int32_t *o = mal_local_data(d->odd);
    first = mal_first_row(d->odd);
    rows = mal_local_rows(d->odd);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < ODD_ROW_LEN; c++)
            o[r * ODD_ROW_LEN + c] = odd_value(first + r, c, version);
}

static void write_sparse(const soak_data_t *d, long long version)
{
    const int64_t *rp = mal_csr_rowptr(d->A);
    double *v = mal_csr_values(d->A), *x = mal_local_data(d->x);
    int64_t first = mal_csr_first_row(d->A), rows = mal_csr_local_rows(d->A);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t k = rp[r]; k < rp[r + 1]; k++)
            v[k] = sparse_value(first + r, k - rp[r], version);
        x[r] = x_value(first + r, version);
    }
}

static void write_version(const soak_data_t *d, long long version)
{
    write_dense(d, version);
    if (d->x != NULL)
        write_sparse(d, version);
}

static long long bad_dense(const soak_data_t *d, long long version)
{
    const uint64_t *v = mal_local_data(d->dense);
    int64_t first = mal_first_row(d->dense), rows = mal_local_rows(d->dense);
    long long bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < DENSE_ROW_LEN; c++)
            bad += v[r * DENSE_ROW_LEN + c] != dense_value(first + r, c, version);
    const int32_t *o = mal_local_data(d->odd);
    first = mal_first_row(d->odd);
    rows = mal_local_rows(d->odd);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < ODD_ROW_LEN; c++)
            bad += o[r * ODD_ROW_LEN + c] != odd_value(first + r, c, version);
    return bad;
}

/* Each local row: its length and columns as the source has them, its values and x. */
static long long bad_sparse(const soak_data_t *d, long long version)
{
    const int64_t *rp = mal_csr_rowptr(d->A);
    const mal_colind_t *c = mal_csr_colind(d->A);
    const double *v = mal_csr_values(d->A), *x = mal_local_data(d->x);
    int64_t first = mal_csr_first_row(d->A), rows = mal_csr_local_rows(d->A);
    long long bad = rp[0] != 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t len = mi_row(d->src, first + r, d->cols, NULL);
        bad += x[r] != x_value(first + r, version);
        if (len != rp[r + 1] - rp[r]) {
            bad++;
            continue;
        }
        for (int64_t k = 0; k < len; k++)
            bad += c[rp[r] + k] != d->cols[k] ||
                   v[rp[r] + k] != sparse_value(first + r, k, version);
    }
    return bad;
}

static int check_values(const soak_data_t *d, long long version)
{
    long long bad = bad_dense(d, version) + (d->x != NULL ? bad_sparse(d, version) : 0);
    if (bad == 0)
        return SOAK_OK;
    int rank;
    MPI_Comm_rank(mal_comm(), &rank);
    fprintf(stderr, "mal_soak[%d]: version %lld: %lld wrong elements\n", rank, version, bad);
    return SOAK_DATA;
}

/* ---------------------------------------------------------------- layout */

/* One rank's part of every structure, as gathered: first rows and counts. */
enum {
    DENSE_FIRST, DENSE_ROWS, ODD_FIRST, ODD_ROWS_HELD, A_FIRST, A_ROWS, A_NNZ, X_FIRST,
    X_ROWS, PART_WORDS
};
typedef struct {
    int64_t v[PART_WORDS];
} part_t;

static part_t my_part(const soak_data_t *d)
{
    part_t p = {{mal_first_row(d->dense), mal_local_rows(d->dense), mal_first_row(d->odd),
                 mal_local_rows(d->odd)}};
    if (d->x != NULL) {
        p.v[A_FIRST] = mal_csr_first_row(d->A);
        p.v[A_ROWS] = mal_csr_local_rows(d->A);
        p.v[A_NNZ] = mal_csr_local_nnz(d->A);
        p.v[X_FIRST] = mal_first_row(d->x);
        p.v[X_ROWS] = mal_local_rows(d->x);
    }
    return p;
}

/* Parts (first row in word `first`, rows in word `rows`) that follow each other from
 * row 0 and cover `total` rows. */
static bool covers(const part_t *parts, int n, int first, int rows, int64_t total)
{
    int64_t next = 0;
    for (int r = 0; r < n; r++) {
        if (parts[r].v[first] != next)
            return false;
        next += parts[r].v[rows];
    }
    return next == total;
}

/* Every rank's amount (word `held`) within `slack` of its share of `total` by the
 * weights in force, and none where the weight is zero. */
static bool follows_weights(const part_t *parts, int n, int held, double total, double slack,
                            const carried_t *c)
{
    double weight_sum = 0;
    for (int r = 0; r < n; r++)
        weight_sum += c->weights[r];
    for (int r = 0; r < n; r++) {
        double k = (double)parts[r].v[held], ideal = total * c->weights[r] / weight_sum;
        if (fabs(k - ideal) > slack || (c->weights[r] == 0 && k != 0))
            return false;
    }
    return true;
}

/* The matrix covers its rows and nonzeros, x has its rows, and the nonzeros follow the
 * weights to within one row's. */
static bool matrix_follows(const part_t *parts, int n, const soak_data_t *d,
                           const carried_t *c)
{
    int64_t nnz = 0;
    for (int r = 0; r < n; r++) {
        if (parts[r].v[X_FIRST] != parts[r].v[A_FIRST] ||
            parts[r].v[X_ROWS] != parts[r].v[A_ROWS])
            return false;
        nnz += parts[r].v[A_NNZ];
    }
    return nnz == mi_nnz(d->src) && covers(parts, n, A_FIRST, A_ROWS, mi_rows(d->src)) &&
           follows_weights(parts, n, A_NNZ, (double)mi_nnz(d->src),
                           (double)mi_max_row_nnz(d->src) + 1.0, c);
}

/* Collective: every rank gathers every part and checks them all. */
static int check_layout(const soak_data_t *d, const carried_t *c)
{
    int n;
    MPI_Comm_size(mal_comm(), &n);
    part_t mine = my_part(d), parts[MAX_PROCS];
    if (n > MAX_PROCS || c->nweights != n)
        return SOAK_PROCS;
    if (MPI_Allgather(&mine, PART_WORDS, MPI_INT64_T, parts, PART_WORDS, MPI_INT64_T,
                      mal_comm()) != MPI_SUCCESS)
        return SOAK_MPI;
    int64_t dense_rows = mal_global_rows(d->dense);
    bool ok = covers(parts, n, DENSE_FIRST, DENSE_ROWS, dense_rows) &&
              follows_weights(parts, n, DENSE_ROWS, (double)dense_rows, 1.0, c) &&
              covers(parts, n, ODD_FIRST, ODD_ROWS_HELD, ODD_ROWS) &&
              follows_weights(parts, n, ODD_ROWS_HELD, ODD_ROWS, 1.0, c) &&
              (d->x == NULL || matrix_follows(parts, n, d, c));
    return ok ? SOAK_OK : SOAK_LAYOUT;
}

/* ---------------------------------------------------------------- setup */

static bool report_status(mal_status_t st, const char *call)
{
    if (st >= 0)
        return true;
    fprintf(stderr, "mal_soak: %s: %s (%s)\n", call, mal_strerror(st), mal_error_message());
    return false;
}

/* The first row of rank r's block when `size` ranks split the source's nonzeros evenly
 * to within one row's (the layout every reconfiguration keeps, checked from cycle 0). */
static int64_t nnz_bound(const mi_source_t *src, int r, int size)
{
    int64_t target = mi_nnz(src) * r / size, rows = mi_rows(src), row = 0, sum = 0;
    while (row < rows && sum + mi_row_nnz(src, row) <= target)
        sum += mi_row_nnz(src, row++);
    return r == size ? rows : row;
}

/* The initial processes give the matrix its rows, split by nonzeros; joiners received
 * them. */
static bool fill_matrix(soak_data_t *d)
{
    char err[512];
    int rank = comm_rank(), size = comm_size();
    int64_t *rowptr, first = nnz_bound(d->src, rank, size),
                     count = nnz_bound(d->src, rank + 1, size) - first;
    int32_t *colind;
    double *vals;
    if (mi_block(d->src, first, count, &rowptr, &colind, &vals, err, sizeof err) != 0) {
        fprintf(stderr, "mal_soak: %s\n", err);
        return false;
    }
    bool ok = report_status(mal_csr_set_rows(d->A, count, rowptr[count], rowptr, colind, vals),
                            "mal_csr_set_rows");
    free(rowptr);
    free(colind);
    free(vals);
    return ok;
}

static bool setup_sparse(soak_data_t *d, const char *spec)
{
    char err[512];
    if (mi_open(spec, &d->src, err, sizeof err) != 0) {
        fprintf(stderr, "mal_soak: --sparse %s: %s\n", spec, err);
        return false;
    }
    d->cols = malloc(((size_t)mi_max_row_nnz(d->src) + 1) * sizeof *d->cols);
    return d->cols != NULL &&
           report_status(mal_alloc_csr("A", mi_rows(d->src), mi_cols(d->src), MPI_DOUBLE,
                                       &d->A), "mal_alloc_csr") &&
           (!mal_is_initial_process() || fill_matrix(d)) &&
           report_status(mal_alloc_array_aligned("x", MPI_DOUBLE, 1, d->A, &d->x),
                         "mal_alloc_array_aligned");
}

/* Collective on the initial processes, local on a joiner (which receives everything). */
static bool setup_data(soak_data_t *d, const options_t *o)
{
    long long rows = o->size / (DENSE_ROW_LEN * (long long)sizeof(uint64_t));
    *d = (soak_data_t){0};
    return report_status(mal_alloc_window("dense", MPI_UINT64_T, rows, DENSE_ROW_LEN,
                                          MAL_BLOCK, &d->dense), "mal_alloc_window") &&
           report_status(mal_alloc_window("odd", MPI_INT32_T, ODD_ROWS, ODD_ROW_LEN, MAL_BLOCK,
                                          &d->odd), "mal_alloc_window") &&
           (o->sparse == NULL || setup_sparse(d, o->sparse));
}

static void free_data(soak_data_t *d)
{
    mi_close(d->src);
    free(d->cols);
}

/* ---------------------------------------------------------------- the draw */

static uint64_t next_draw(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return mix64(*state);
}

/* Weights 0, 0.5 .. 3.5, at least one positive. */
static void draw_weights(uint64_t *s, int n, double *w)
{
    bool any = false;
    for (int r = 0; r < n; r++) {
        w[r] = 0.5 * (double)(next_draw(s) % 8);
        any = any || w[r] > 0;
    }
    if (!any)
        w[next_draw(s) % (uint64_t)n] = 1.0;
}

/* By 1 up to a quarter of the largest count (at least 2), within it. */
static void draw_expand(uint64_t *s, int size, int max, action_t *a)
{
    int most = max / 4 > 2 ? max / 4 : 2;
    most = most < max - size ? most : max - size;
    a->kind = MAL_ACTION_EXPAND;
    a->count = most > 1 ? 1 + (int)(next_draw(s) % (uint64_t)most) : 1;
    a->mode = a->count >= 2 && next_draw(s) % 2 ? MAL_SPAWN_BATCHED : MAL_SPAWN_PER_CALL;
    a->nweights = next_draw(s) % 2 ? size + a->count : 0;
}

/* Any ranks but the anchor, in a random order, down to `min` at most. */
static void draw_shrink(uint64_t *s, int size, int min, int anchor, action_t *a)
{
    int candidates[MAX_PROCS], n = 0;
    for (int r = 0; r < size; r++)
        if (r != anchor)
            candidates[n++] = r;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_draw(s) % (uint64_t)(i + 1)), t = candidates[i];
        candidates[i] = candidates[j];
        candidates[j] = t;
    }
    a->kind = MAL_ACTION_SHRINK;
    a->count = 1 + (int)(next_draw(s) % (uint64_t)(size - min));
    if (a->count > n)
        a->count = n;
    memcpy(a->ranks, candidates, (size_t)a->count * sizeof *a->ranks);
    a->nweights = next_draw(s) % 2 ? size - a->count : 0;
}

/* The seed of `cycle` (1-based): --seeds A-B runs A's cycles, then B's. */
static unsigned long long seed_of(const options_t *o, long long cycle)
{
    return o->seed + (unsigned long long)((cycle - 1) / o->per_seed);
}

/* The action of `cycle`: a function of its seed, the cycle and the set alone, among the
 * kinds `kinds` allows ('e' expand, 's' shrink, 'r' rebalance) and the set permits (a
 * rebalance when none does). */
static action_t draw_action(const options_t *o, long long cycle, int size, int anchor)
{
    uint64_t s = mix64(seed_of(o, cycle) * 0x9e3779b97f4a7c15ULL + (uint64_t)cycle);
    action_t a = {.kind = MAL_ACTION_REBALANCE, .nweights = size, .fault_rank = -1};
    int min = o->min_procs, max = o->max_procs;
    unsigned expand = strchr(o->kinds, 'e') && size < max ? (size <= min ? 70u : 35u) : 0,
             shrink = strchr(o->kinds, 's') && size > min && anchor >= 0
                          ? (size >= max ? 60u : 35u) : 0,
             rebalance = strchr(o->kinds, 'r') ? 30u : 0;
    unsigned total = expand + shrink + rebalance;
    unsigned roll = total ? (unsigned)(next_draw(&s) % total) : 0;
    if (roll < expand)
        draw_expand(&s, size, max, &a);
    else if (roll < expand + shrink)
        draw_shrink(&s, size, min, anchor, &a);
    if (a.nweights > 0)
        draw_weights(&s, a.nweights, a.weights);
    if (next_draw(&s) % 100 < (uint64_t)o->faults)
        a.fault_rank = (int)(next_draw(&s) % (uint64_t)size);
    return a;
}

/* snprintf at buf + *used, never past len. */
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 ? len : *used + (size_t)n;
}

static const char *action_text(const action_t *a, char *buf, size_t len)
{
    size_t n = 0;
    append(buf, len, &n, "%s", a->kind == MAL_ACTION_EXPAND   ? "expand"
                               : a->kind == MAL_ACTION_SHRINK ? "shrink"
                                                              : "rebalance");
    if (a->kind == MAL_ACTION_EXPAND)
        append(buf, len, &n, " +%d%s", a->count, a->mode == MAL_SPAWN_BATCHED ? "b" : "p");
    for (int i = 0; a->kind == MAL_ACTION_SHRINK && i < a->count; i++)
        append(buf, len, &n, "%s%d", i ? ":" : " -@", a->ranks[i]);
    for (int r = 0; r < a->nweights; r++)
        append(buf, len, &n, "%s%g", r ? ":" : " w=", a->weights[r]);
    if (a->fault_rank >= 0)
        append(buf, len, &n, ", transfers of rank %d fail", a->fault_rank);
    return buf;
}

/* ---------------------------------------------------------------- one cycle */

typedef struct {
    const options_t *o;
    soak_data_t data;
    carried_t carried;
    bool anchor;
    long long joined_at, base_cycle;
    bool sampled;
    soak_probe_t base;
} run_t;

/* The largest failure code over the ranks, and the rank that has it. */
static int agree(int code, int *who)
{
    struct code_rank {
        int code, rank;
    } in = {code, comm_rank()}, out = in;
    if (MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, mal_comm()) != MPI_SUCCESS)
        out = (struct code_rank){SOAK_MPI, in.rank};
    *who = out.rank;
    return out.code;
}

static int anchor_rank(const run_t *run)
{
    int mine = run->anchor ? comm_rank() : -1, anchor = -1;
    if (MPI_Allreduce(&mine, &anchor, 1, MPI_INT, MPI_MAX, mal_comm()) != MPI_SUCCESS)
        return -1;
    return anchor;
}

static void even_weights(carried_t *c, int n)
{
    c->nweights = n;
    for (int r = 0; r < n; r++)
        c->weights[r] = 1.0;
}

/* The weights a successful `a` leaves in force over `n` processes. */
static void adopt_weights(carried_t *c, const action_t *a, int n)
{
    even_weights(c, n);
    if (a->nweights > 0)
        memcpy(c->weights, a->weights, (size_t)n * sizeof *c->weights);
}

static bool releases(const action_t *a, int rank)
{
    for (int i = 0; a->kind == MAL_ACTION_SHRINK && i < a->count; i++)
        if (a->ranks[i] == rank)
            return true;
    return false;
}

static mal_status_t perform_action(const action_t *a)
{
    const double *w = a->nweights > 0 ? a->weights : NULL;
    switch (a->kind) {
    case MAL_ACTION_EXPAND:
        return mal_expand(a->count, a->mode, w);
    case MAL_ACTION_SHRINK:
        return mal_shrink(a->count, a->ranks, w);
    default:
        return mal_rebalance(w);
    }
}

/* The action, with libmal's testing knob set on the rank whose transfers must fail (a
 * fault only acts on direct memory and where that rank moves bytes: the action may
 * still succeed). */
static mal_status_t perform(const action_t *a, int rank)
{
    if (a->fault_rank == rank)
        setenv("MAL_FAULT_DIRECT", "1", 1);
    mal_status_t st = perform_action(a);
    if (a->fault_rank == rank)
        unsetenv("MAL_FAULT_DIRECT");
    return st;
}

/* What a survivor checks after `a` returned `st`: the set and its own rank. */
static int check_outcome(run_t *run, const action_t *a, mal_status_t st, int rank0, int size0)
{
    carried_t *c = &run->carried;
    if (st < 0) {
        c->abandoned++;
        if (run->o->verbose || run->o->script != NULL)
            fprintf(stderr, "mal_soak[%d]: reconfiguration abandoned (%s): %s\n", rank0,
                    mal_strerror(st), mal_error_message());
        if (run->o->script != NULL) /* a script's steps must all be carried out */
            return SOAK_STATUS;
        return comm_size() == size0 && comm_rank() == rank0 ? SOAK_OK : SOAK_PROCS;
    }
    mal_status_t expected = a->kind == MAL_ACTION_REBALANCE ? MAL_OK : MAL_RECONFIGURED;
    if (st != expected)
        return SOAK_STATUS;
    int below = 0, size = size0 + (a->kind == MAL_ACTION_EXPAND ? a->count : 0);
    for (int r = 0; r < rank0; r++)
        below += releases(a, r);
    size -= a->kind == MAL_ACTION_SHRINK ? a->count : 0;
    c->expands += a->kind == MAL_ACTION_EXPAND;
    c->shrinks += a->kind == MAL_ACTION_SHRINK;
    c->rebalances += a->kind == MAL_ACTION_REBALANCE;
    adopt_weights(c, a, size);
    return comm_size() == size && comm_rank() == rank0 - below ? SOAK_OK : SOAK_PROCS;
}

/* Draw and carry out the reconfiguration of `cycle`. Returns the failure code (SOAK_OK),
 * and sets *removed on a released process. */
static int reconfigure(run_t *run, long long cycle, bool *removed)
{
    int rank0 = comm_rank(), size0 = comm_size(), anchor = anchor_rank(run);
    action_t a = {.fault_rank = -1};
    if (run->o->script == NULL)
        a = draw_action(run->o, cycle, size0, anchor);
    char text[1024];
    if (run->o->script != NULL &&
        soak_script_action(run->o->script, (int)(cycle - 1), anchor, &a, text,
                           sizeof text) != 0) {
        if (rank0 == 0)
            fprintf(stderr, "mal_soak: cycle %lld: --script: %s\n", cycle, text);
        return SOAK_SCRIPT;
    }
    if (run->o->verbose && rank0 == 0)
        printf("mal_soak: cycle %lld: %d procs, %s\n", cycle, size0,
               action_text(&a, text, sizeof text));
    carried_t before = run->carried;
    if (a.kind == MAL_ACTION_EXPAND) /* joiners receive the weights they arrive to */
        adopt_weights(&run->carried, &a, size0 + a.count);
    watch(cycle, a.kind == MAL_ACTION_EXPAND   ? "mal_expand"
                 : a.kind == MAL_ACTION_SHRINK ? "mal_shrink"
                                               : "mal_rebalance",
          rank0 == 0);
    run->carried.faults += a.fault_rank >= 0;
    mal_status_t st = perform(&a, rank0);
    if (st == MAL_REMOVED) {
        *removed = true;
        return releases(&a, rank0) ? SOAK_OK : SOAK_STATUS;
    }
    /* With MAL_POOL=1 a released process parks, and an expansion cycles later wakes it:
     * mal_shrink returns then, its structures and the carried value (the weights in
     * force) received as a joiner receives them; the cycle goes on from there. */
    if (releases(&a, rank0) && st == MAL_RECONFIGURED) {
        run->anchor = false;
        return SOAK_OK;
    }
    if (releases(&a, rank0) && st >= 0)
        return SOAK_STATUS;
    if (st < 0) {
        before.faults = run->carried.faults;
        run->carried = before;
    }
    return check_outcome(run, &a, st, rank0, size0);
}

static void sample(run_t *run, long long cycle)
{
    if (!run->sampled && cycle >= run->base_cycle) {
        soak_probe_read(&run->base);
        run->base_cycle = cycle;
        run->sampled = true;
    }
}

/* The checks of version `cycle`, reduced with a code left by the last reconfiguration. */
static int check_cycle(run_t *run, long long cycle, int pending, int *who)
{
    watch(cycle, "the checks", comm_rank() == 0);
    char hosts[1024];
    if (run->o->script != NULL && soak_hosts_text(hosts, sizeof hosts) == 0 &&
        comm_rank() == 0)
        printf("mal_soak: cycle %lld: %d procs: %s\n", cycle, comm_size(), hosts);
    int code = check_values(&run->data, cycle);
    int layout = check_layout(&run->data, &run->carried);
    code = code > layout ? code : layout;
    code = code > pending ? code : pending;
    return agree(code, who);
}

/* The cycles from where this process starts (0, or the cycle it joined at) to the last,
 * `pending` a failure of the setup. Returns the agreed code; *removed on a released
 * process; *failed_at the cycle. */
static int run_cycles(run_t *run, int pending, bool *removed, long long *failed_at,
                      int *who)
{
    for (long long cycle = mal_iteration();; cycle = mal_iteration()) {
        int code = check_cycle(run, cycle, pending, who);
        *failed_at = cycle;
        if (code != SOAK_OK || cycle >= run->o->cycles)
            return code;
        sample(run, cycle);
        write_version(&run->data, cycle + 1);
        watch(cycle + 1, "mal_step", comm_rank() == 0);
        if (mal_step() != MAL_CONTINUE) {
            pending = SOAK_STEP;
            continue;
        }
        pending = reconfigure(run, cycle + 1, removed);
        if (*removed)
            return pending;
    }
}

/* ---------------------------------------------------------------- verdict */

/* What one process alive at the end measured (doubles, for one gather). */
typedef struct {
    double span, rss, fds, windows, comms, infos, types, groups;
} figures_t;
#define FIGURE_WORDS ((int)(sizeof(figures_t) / sizeof(double)))

static figures_t my_figures(const run_t *run)
{
    soak_probe_t now;
    soak_probe_read(&now);
    if (!run->sampled)
        return (figures_t){0};
    const soak_probe_t *b = &run->base;
    return (figures_t){(double)(run->o->cycles - run->base_cycle),
                       (double)(now.rss_kb - b->rss_kb), (double)(now.fds - b->fds),
                       (double)(now.windows - b->windows), (double)(now.comms - b->comms),
                       (double)(now.infos - b->infos), (double)(now.types - b->types),
                       (double)(now.groups - b->groups)};
}

static double larger(double a, double b)
{
    return fabs(b) > fabs(a) ? b : a;
}

/* rss from the longest span (largest growth among equals), counts by magnitude. */
static figures_t combine(const figures_t *all, int n)
{
    figures_t f = {0};
    for (int r = 0; r < n; r++) {
        const figures_t *g = &all[r];
        if (g->span <= 0)
            continue;
        if (g->span > f.span || (g->span == f.span && g->rss / g->span > f.rss / f.span)) {
            f.span = g->span;
            f.rss = g->rss;
        }
        f.fds = larger(f.fds, g->fds);
        f.windows = larger(f.windows, g->windows);
        f.comms = larger(f.comms, g->comms);
        f.infos = larger(f.infos, g->infos);
        f.types = larger(f.types, g->types);
        f.groups = larger(f.groups, g->groups);
    }
    return f;
}

/* Rank 0's line into `line`; returns the verdict (0 PASS). */
static int verdict_line(const run_t *run, const figures_t *f, char *line, size_t len)
{
    const options_t *o = run->o;
    const carried_t *c = &run->carried;
    double per_cycle = f->span > 0 ? f->rss / f->span : 0.0;
    /* Across hosts each structure's spare buffer has a window or not, by the layouts
     * the process went through (measured on 4 hosts: -6 after 200 cycles, +6 after
     * 100, with 6 structures): one window per structure more is a state, not a leak. */
    int structures = 2 + (o->sparse != NULL ? 4 : 0); /* dense, odd; A's three, x */
    bool flat = f->fds <= FDS_PER_PEER * (o->max_procs - 1) && f->windows <= structures &&
                f->comms <= 0 && f->infos <= 0 && f->types <= 0 && f->groups <= 0;
    const char *why = o->max_rss_kb >= 0 && per_cycle > o->max_rss_kb ? "rss grows"
                      : o->flat && !flat                          ? "resources grow"
                                                                  : NULL;
    snprintf(line, len,
             "mal_soak: %s%s%s %lld cycles, rss %+.1f kB/cycle, fds %+.0f, windows %+.0f, "
             "comms %+.0f, infos %+.0f, types %+.0f, groups %+.0f, abandoned %lld (%lld "
             "expands, %lld shrinks, %lld rebalances, %lld faults injected, measured over "
             "%.0f cycles, seeds %llu-%llu)\n",
             why ? "FAIL " : "PASS", why ? why : "", why ? ":" : "", o->cycles, per_cycle,
             f->fds, f->windows, f->comms, f->infos, f->types, f->groups, c->abandoned,
             c->expands, c->shrinks, c->rebalances, c->faults, f->span, o->seed,
             o->last_seed);
    return why != NULL;
}

/* Collective over the processes alive at the end; returns the verdict (0 PASS) and
 * rank 0's line. */
static int verdict(const run_t *run, char *line, size_t len)
{
    figures_t mine = my_figures(run), all[MAX_PROCS];
    int verdict_code = 1;
    if (MPI_Gather(&mine, FIGURE_WORDS, MPI_DOUBLE, all, FIGURE_WORDS, MPI_DOUBLE, 0,
                   mal_comm()) != MPI_SUCCESS) {
        snprintf(line, len, "mal_soak: FAIL gathering the figures: %s\n", code_text(SOAK_MPI));
    } else if (comm_rank() == 0) {
        figures_t f = combine(all, comm_size());
        verdict_code = verdict_line(run, &f, line, len);
    }
    if (MPI_Bcast(&verdict_code, 1, MPI_INT, 0, mal_comm()) != MPI_SUCCESS)
        verdict_code = 1;
    return verdict_code;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mal_soak --cycles N --size BYTES [--seed S | --seeds A-B] [--sparse SPEC]\n"
            "                [--kinds esr] [--procs MIN-MAX] [--script ACTIONS]\n"
            "                [--faults PERCENT] [--watchdog SECONDS] [--max-rss-kb K] [--flat]\n"
            "                [--verbose]\n"
            "  --cycles     reconfigurations (>= 1)\n"
            "  --size       bytes of the dense structure over all ranks (>= 4096)\n"
            "  --seed       the random sequence (default 1)\n"
            "  --seeds A-B  the sequences of seeds A to B one after another in one job,\n"
            "               --cycles each (each starts from the set the last one left)\n"
            "  --sparse     also a CSR matrix: a Matrix Market file, poisson:N, ...\n"
            "  --kinds      the actions drawn, letters of e (expand), s (shrink) and\n"
            "               r (rebalance); default esr\n"
            "  --procs      the process counts drawn actions keep within (default 1-4, at\n"
            "               most 1-64); the initial count must lie in it\n"
            "  --script     these actions, one per cycle, instead of drawn ones (--cycles\n"
            "               defaults to their number): +N, +Nb (batched), r, rskew, -N,\n"
            "               -N@HOST:HOST (every process of the hosts first)\n"
            "  --faults     percent of cycles in which one rank's direct transfers fail\n"
            "               (libmal's MAL_FAULT_DIRECT): the action is abandoned or not\n"
            "  --watchdog   FAIL a cycle that makes no progress in this time (default 300)\n"
            "  --max-rss-kb FAIL when rss grows more per cycle\n"
            "  --flat       FAIL when communicators, infos, types or groups grew between\n"
            "               the base sample and the end, windows by more than one per\n"
            "               structure (a spare's), or fds by more than 4 per peer a\n"
            "               process can have\n"
            "  --verbose    rank 0 prints each cycle's action before it\n"
            CLI_STANDARD_USAGE
            "Exit status: 0 after PASS, 1 after FAIL, 2 for a usage error, 3 when the\n"
            "watchdog ended a process.\n");
}

static const cli_t cli = {"mal_soak", mal_version, usage};

/* --seeds A-B: the first and the last seed. */
static void parse_seeds(const char *val, options_t *o)
{
    char tail;
    if (sscanf(val, "%llu-%llu%c", &o->seed, &o->last_seed, &tail) != 2 ||
        o->last_seed < o->seed || o->last_seed - o->seed >= 1000000)
        cli_usage_error(&cli, "--seeds '%s' is not A-B with A <= B < A + 1000000", val);
}

/* --procs MIN-MAX. */
static void parse_procs(const char *val, options_t *o)
{
    char tail;
    if (sscanf(val, "%d-%d%c", &o->min_procs, &o->max_procs, &tail) != 2 ||
        o->min_procs < 1 || o->max_procs < o->min_procs || o->max_procs > MAX_PROCS)
        cli_usage_error(&cli, "--procs '%s' is not MIN-MAX with 1 <= MIN <= MAX <= %d", val,
                        MAX_PROCS);
}

static void parse_script(const char *val, options_t *o)
{
    char err[256];
    soak_script_free(o->script);
    o->script = soak_script_parse(val, err, sizeof err);
    if (o->script == NULL)
        cli_usage_error(&cli, "--script '%s': %s", val, err);
}

/* One option with a value. */
static void parse_valued(options_t *o, int c, const char *val)
{
    switch (c) {
    case 'c':
        o->cycles = cli_integer(&cli, "--cycles", val, 1, LLONG_MAX / 1000000);
        break;
    case 's':
        o->size = cli_integer(&cli, "--size", val, 4096, LLONG_MAX);
        break;
    case 'S':
        o->seed = o->last_seed = (unsigned long long)cli_integer(&cli, "--seed", val, 0,
                                                                 LLONG_MAX);
        break;
    case 'R':
        parse_seeds(val, o);
        break;
    case 'w':
        o->watchdog = (int)cli_integer(&cli, "--watchdog", val, 1, 86400);
        break;
    case 'm':
        o->max_rss_kb = cli_number(&cli, "--max-rss-kb", val, 0, 1e12);
        break;
    case 'f':
        o->faults = (int)cli_integer(&cli, "--faults", val, 0, 100);
        break;
    case 'P':
        parse_procs(val, o);
        break;
    case 'x':
        parse_script(val, o);
        break;
    default:
        *(c == 'p' ? &o->sparse : &o->kinds) = val;
    }
}

/* Every process parses, before MPI starts (a spawned one gets the same arguments). */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.seed = 1, .last_seed = 1, .kinds = "esr", .watchdog = 300,
                     .max_rss_kb = -1, .min_procs = 1, .max_procs = 4};
    static const struct option longopts[] = {
        {"cycles", required_argument, NULL, 'c'},  {"size", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},    {"seeds", required_argument, NULL, 'R'},
        {"sparse", required_argument, NULL, 'p'},  {"kinds", required_argument, NULL, 'k'},
        {"watchdog", required_argument, NULL, 'w'},
        {"max-rss-kb", required_argument, NULL, 'm'},
        {"faults", required_argument, NULL, 'f'},  {"flat", no_argument, NULL, 'F'},
        {"procs", required_argument, NULL, 'P'},   {"script", required_argument, NULL, 'x'},
        {"verbose", no_argument, NULL, 'v'},       CLI_STANDARD_OPTIONS,
        {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        if (c == 'F')
            o->flat = true;
        else if (c == 'v')
            o->verbose = true;
        else
            parse_valued(o, c, optarg);
    }
    if (o->script != NULL && o->cycles == 0)
        o->cycles = soak_script_length(o->script);
    if (o->script != NULL) /* the script sets the counts; --flat's bound takes the most */
        o->max_procs = MAX_PROCS;
    if (o->script != NULL && (o->cycles > soak_script_length(o->script) ||
                              o->last_seed != o->seed))
        cli_usage_error(&cli, "--script has %d actions: no more --cycles, one seed",
                        soak_script_length(o->script));
    if (o->cycles < 1 || o->size < 4096)
        cli_usage_error(&cli, "--cycles and --size are required");
    /* the whole run's cycles over the seeds */
    o->per_seed = o->cycles;
    o->cycles *= (long long)(o->last_seed - o->seed + 1);
}

/* mal_init, the structures (received by a joiner) and the carried value. Returns
 * SOAK_OK or SOAK_SETUP; false *initialized when mal_init failed. */
static int start(run_t *run, int world_rank, int world_size, bool *initialized)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    cfg.summary = false;
    cfg.log_errors = run->o->verbose; /* abandoned reconfigurations are expected */
    cfg.policy = "off";
    cfg.plan = "";
    *initialized = report_status(mal_init(MPI_COMM_WORLD, &cfg), "mal_init");
    if (!*initialized)
        return SOAK_SETUP;
    run->joined_at = mal_iteration();
    if (comm_size() > MAX_PROCS ||
        (run->o->script == NULL &&
         (comm_size() < run->o->min_procs || comm_size() > run->o->max_procs))) {
        fprintf(stderr, "mal_soak: %d processes, outside --procs %d-%d\n", comm_size(),
                run->o->min_procs, run->o->max_procs);
        return SOAK_SETUP;
    }
    run->anchor = mal_is_initial_process() && (unsigned long long)world_rank ==
                                          run->o->seed % (unsigned long long)world_size;
    long long warm = run->o->cycles / 10 < 50 ? run->o->cycles / 10 : 50;
    run->base_cycle = run->joined_at + warm;
    if (mal_is_initial_process())
        even_weights(&run->carried, comm_size());
    if (!setup_data(&run->data, run->o) ||
        !report_status(mal_register_value("soak", &run->carried, sizeof run->carried),
                       "mal_register_value"))
        return SOAK_SETUP;
    if (mal_is_initial_process())
        write_version(&run->data, 0);
    return SOAK_OK;
}

/* The cycles and the verdict of one process that started; returns its exit status and
 * (current rank 0) the line to print. The watchdog stays armed for mal_finalize except
 * on a released process. */
static int run_soak(run_t *run, int setup, char *line, size_t len)
{
    bool removed = false;
    long long at = run->joined_at;
    int who = 0, code = run_cycles(run, setup, &removed, &at, &who);
    if (removed) {
        alarm(0); /* a released initial process parks in mal_finalize until its job ends */
        return code != SOAK_OK;
    }
    watch(run->o->cycles, "mal_finalize", comm_rank() == 0);
    if (code != SOAK_OK) {
        if (comm_rank() == 0)
            snprintf(line, len, "mal_soak: FAIL cycle %lld: %s (rank %d)\n", at,
                     code_text(code), who);
        return 1;
    }
    return verdict(run, line, len);
}

/* The run of one process; returns its exit status. The line is printed after
 * mal_finalize, so a PASS means the run also finalized. */
static int soak(const options_t *o, int world_rank, int world_size)
{
    run_t run = {.o = o};
    char line[512] = "";
    bool initialized;
    int status = 1, setup = start(&run, world_rank, world_size, &initialized);
    if (!initialized) {
        if (world_rank == 0)
            snprintf(line, sizeof line, "mal_soak: FAIL mal_init: %s\n", mal_error_message());
    } else {
        status = run_soak(&run, setup, line, sizeof line);
        mal_finalize();
    }
    free_data(&run.data);
    soak_script_free(o->script);
    fputs(line, stdout);
    fflush(stdout);
    return status;
}

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);
    watchdog_seconds = o.watchdog;
    signal(SIGALRM, on_alarm);
    alarm((unsigned)watchdog_seconds); /* a spawned process stuck joining ends too */
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int world_rank, world_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int status = soak(&o, world_rank, world_size);
    alarm(0);
    MPI_Finalize();
    return status;
}
