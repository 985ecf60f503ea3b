/* The computational prediction model (pure; see predict.h for every formula). */
#include "predict.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ---- machine parameters ---------------------------------------------------------- */

/* Bytes per second of rma, alltoallv, p2p and rma-get (mal_redist_t order): the mean over
 * the four patterns of mal_bench_redist --cold (256 MiB, 2 ranks, medians of 3 fresh
 * runs; one host, and the two emulated hosts of ctest/multihost with tools/mal-env.sh's
 * UCX settings), docs/design.md "The automatic method". */
#define REDIST_HOST_WARM {22.0e9, 14.7e9, 15.7e9, 14.3e9}
#define REDIST_HOST_COLD {8.1e9, 5.6e9, 5.9e9, 8.8e9}
#define REDIST_NET_WARM {2.90e9, 2.17e9, 2.13e9, 2.79e9}
#define REDIST_NET_COLD {1.84e9, 1.78e9, 1.71e9, 2.35e9}

/* Measured by mal-calibrate on the 2-core development VM. */
static const predict_params_t default_params = {
    .alpha = 5.1e-7,
    .beta = 1.27e-10,
    .gamma = 1.33e-10,
    .get_bandwidth = 5.17e9,
    .cold_get_bandwidth = 5.17e9,
    .get_latency = 1.6e-7,
    .copy_bandwidth = 8.45e9,
    .epoch_seconds = 2.7e-6,
    .window_seconds = 1.7e-4,
    .window_byte_seconds = 6.4e-10,
    .fault_byte_seconds = 4.7e-10,
    .spawn_seconds = 0.044,
    .spawn_host_seconds = 0.027, /* 60% of a lone spawn: four full runs, 56-83% */
    .remove_seconds = 7.7e-5,
    .pool_wake_seconds = 1e-3,
    .async_slowdown = 1.5,
    .cores = 2,
    .redist_bw = {[PREDICT_LINK_HOST] = {[PREDICT_WARM] = REDIST_HOST_WARM,
                                         [PREDICT_COLD] = REDIST_HOST_COLD},
                  [PREDICT_LINK_NET] = {[PREDICT_WARM] = REDIST_NET_WARM,
                                        [PREDICT_COLD] = REDIST_NET_COLD}},
};

void predict_params_default(predict_params_t *p)
{
    *p = default_params;
}

static int fastest_of(const double *bw)
{
    int best = 0;
    for (int m = 1; m < PREDICT_EXECUTORS; m++)
        best = bw[m] > bw[best] ? m : best;
    return bw[best] > 0 ? best : -1;
}

int predict_fastest_executor(const predict_params_t *p, int link, int state)
{
    int best = fastest_of(p->redist_bw[link][state]);
    return best >= 0 ? best : fastest_of(default_params.redist_bw[link][state]);
}


/* What values a key accepts; a bandwidth of 0 would make every copy infinitely long, and
 * a slowdown below 1 would make the background speed the application up. */
typedef enum { FIELD_POSITIVE, FIELD_NONNEGATIVE, FIELD_FACTOR, FIELD_CORES } field_kind_t;

/* One key of the calibration file. This table alone drives reading, checking and
 * writing, so a new parameter is one more line here. */
typedef struct {
    const char *key;
    size_t offset;
    field_kind_t kind;
    const char *unit;
    bool optional;     /* files written before the key existed lack it: optional_value */
} field_t;

#define FIELD(name, kind, unit) {#name, offsetof(predict_params_t, name), kind, unit, false}
#define OPTIONAL_FIELD(name, kind, unit)                                                  \
    {#name, offsetof(predict_params_t, name), kind, unit, true}

static const field_t fields[] = {
    FIELD(alpha, FIELD_NONNEGATIVE, "seconds per message"),
    FIELD(beta, FIELD_NONNEGATIVE, "seconds per byte sent"),
    FIELD(gamma, FIELD_NONNEGATIVE, "seconds per byte reduced"),
    FIELD(get_bandwidth, FIELD_POSITIVE, "bytes per second, one-sided, all ranks at once"),
    FIELD(get_latency, FIELD_NONNEGATIVE, "seconds per get or put"),
    FIELD(copy_bandwidth, FIELD_POSITIVE, "bytes per second, local memcpy"),
    FIELD(epoch_seconds, FIELD_NONNEGATIVE, "seconds per redistribution"),
    FIELD(window_seconds, FIELD_NONNEGATIVE, "seconds per window created"),
    FIELD(window_byte_seconds, FIELD_NONNEGATIVE, "seconds per byte of window created"),
    FIELD(spawn_seconds, FIELD_NONNEGATIVE, "seconds per process spawned"),
    FIELD(remove_seconds, FIELD_NONNEGATIVE, "seconds per process released"),
    FIELD(cores, FIELD_CORES, "cores of the calibrated host"),
    OPTIONAL_FIELD(cold_get_bandwidth, FIELD_POSITIVE,
                   "bytes per second, one-sided, first transfer"),
    OPTIONAL_FIELD(pool_wake_seconds, FIELD_NONNEGATIVE,
                   "seconds per process taken from the pool"),
    OPTIONAL_FIELD(fault_byte_seconds, FIELD_NONNEGATIVE,
                   "seconds per byte a move faults in (memory a reconfiguration maps)"),
    OPTIONAL_FIELD(spawn_host_seconds, FIELD_NONNEGATIVE,
                   "seconds of a spawn call and its merge (one per host spawned on)"),
    OPTIONAL_FIELD(async_slowdown, FIELD_FACTOR,
                   "iteration time while an expansion runs in the background / without"),
#define REDIST_FIELD(link, state, m, key)                                                  \
    {key, offsetof(predict_params_t, redist_bw[link][state][m]), FIELD_NONNEGATIVE,         \
     "bytes per second of a rebalance, 0: not measured", true}
#define REDIST_FIELDS(link, state, prefix)                                                 \
    REDIST_FIELD(link, state, 0, prefix "rma"), REDIST_FIELD(link, state, 1, prefix "alltoallv"), \
    REDIST_FIELD(link, state, 2, prefix "p2p"), REDIST_FIELD(link, state, 3, prefix "rma-get")
    REDIST_FIELDS(PREDICT_LINK_HOST, PREDICT_WARM, "redist_host_warm_"),
    REDIST_FIELDS(PREDICT_LINK_HOST, PREDICT_COLD, "redist_host_cold_"),
    REDIST_FIELDS(PREDICT_LINK_NET, PREDICT_WARM, "redist_net_warm_"),
    REDIST_FIELDS(PREDICT_LINK_NET, PREDICT_COLD, "redist_net_cold_"),
#undef REDIST_FIELDS
#undef REDIST_FIELD
};

#define NFIELDS (sizeof fields / sizeof fields[0])

const char *predict_redist_key(int link, int state, int executor)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].offset == offsetof(predict_params_t, redist_bw[link][state][executor]))
            return fields[i].key;
    return "?";
}

/* Longest line of a calibration file, without its newline. */
#define MAX_LINE_CHARS 1023
/* Longest value quoted in a message, so the message is never cut before its end. */
#define QUOTE_MAX 60

static double *double_field(predict_params_t *p, const field_t *f)
{
    return (double *)((char *)p + f->offset);
}

static int *int_field(predict_params_t *p, const field_t *f)
{
    return (int *)((char *)p + f->offset);
}

static double read_double(const predict_params_t *p, const field_t *f)
{
    return *(const double *)((const char *)p + f->offset);
}

static int read_int(const predict_params_t *p, const field_t *f)
{
    return *(const int *)((const char *)p + f->offset);
}

static const field_t *find_field(const char *key)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(fields[i].key, key) == 0)
            return &fields[i];
    return NULL;
}

/* The state of one parse: values go to a private copy so *out survives any error. */
typedef struct {
    const char *name;
    char *err;
    size_t errlen;
    int line;
    int first_line[NFIELDS]; /* 0 while the key has not been seen */
    predict_params_t values;
} parse_state_t;

PRINTF_LIKE(3, 4)
static mal_status_t fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return MAL_ERR_ARG;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
    return s;
}

/* The whole text must be the number: "1.0x" is a typo, not 1.0. */
static bool parse_finite(const char *text, double *x)
{
    char *end;
    if (*text == '\0')
        return false;
    *x = strtod(text, &end);
    return *end == '\0' && isfinite(*x);
}

static mal_status_t store_value(parse_state_t *s, const field_t *f, const char *value)
{
    double x;
    if (!parse_finite(value, &x))
        return fail(s->err, s->errlen, "%s:%d: '%s' is not a number: '%.*s'", s->name,
                    s->line, f->key, QUOTE_MAX, value);
    switch (f->kind) {
    case FIELD_POSITIVE:
        if (!(x > 0))
            return fail(s->err, s->errlen, "%s:%d: '%s' must be > 0: '%.*s'", s->name,
                        s->line, f->key, QUOTE_MAX, value);
        break;
    case FIELD_NONNEGATIVE:
        if (!(x >= 0))
            return fail(s->err, s->errlen, "%s:%d: '%s' must be >= 0: '%.*s'", s->name,
                        s->line, f->key, QUOTE_MAX, value);
        break;
    case FIELD_FACTOR:
        if (!(x >= 1))
            return fail(s->err, s->errlen, "%s:%d: '%s' must be >= 1: '%.*s'", s->name,
                        s->line, f->key, QUOTE_MAX, value);
        break;
    case FIELD_CORES:
        if (!(x >= 1 && x <= INT_MAX && x == floor(x)))
            return fail(s->err, s->errlen, "%s:%d: '%s' must be an integer >= 1: '%.*s'",
                        s->name, s->line, f->key, QUOTE_MAX, value);
        *int_field(&s->values, f) = (int)x;
        return MAL_OK;
    }
    *double_field(&s->values, f) = x;
    return MAL_OK;
}

static mal_status_t parse_line(parse_state_t *s, char *text)
{
    text[strcspn(text, "#")] = '\0';
    char *key = trim(text);
    if (*key == '\0')
        return MAL_OK;
    char *eq = strchr(key, '=');
    if (!eq || eq == key)
        return fail(s->err, s->errlen, "%s:%d: expected 'key = value'", s->name, s->line);
    *eq = '\0';
    key = trim(key);
    const field_t *f = find_field(key);
    if (!f)
        return fail(s->err, s->errlen, "%s:%d: unknown key '%.*s'", s->name, s->line,
                    QUOTE_MAX, key);
    size_t index = (size_t)(f - fields);
    if (s->first_line[index])
        return fail(s->err, s->errlen, "%s:%d: '%s' appears twice (first on line %d)",
                    s->name, s->line, f->key, s->first_line[index]);
    s->first_line[index] = s->line;
    return store_value(s, f, trim(eq + 1));
}

typedef enum { LINE_READ, LINE_END, LINE_TOO_LONG } line_t;

/* LINE_READ: a line is in buf (newline removed). A line of exactly MAX_LINE_CHARS fills
 * the buffer, so the next character decides whether it was too long. */
static line_t read_line(FILE *in, char *buf, size_t size)
{
    if (!fgets(buf, (int)size, in))
        return LINE_END;
    size_t len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n') {
        buf[len - 1] = '\0';
        return LINE_READ;
    }
    int next = getc(in);
    return next == EOF || next == '\n' ? LINE_READ : LINE_TOO_LONG;
}

/* An optional key a file lacks: the cold bandwidth is the warm one and the spawn call's
 * share 0 (the model then prices every transfer alike and every process as spawned
 * alone, as before the keys existed); the pool, asynchronous and fault figures are the
 * documented defaults. */
static double optional_value(const predict_params_t *read, const field_t *f)
{
    if (f->offset == offsetof(predict_params_t, cold_get_bandwidth))
        return read->get_bandwidth;
    if (f->offset == offsetof(predict_params_t, spawn_host_seconds))
        return 0;
    return read_double(&default_params, f);
}

static mal_status_t check_complete(parse_state_t *s)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        if (s->first_line[i])
            continue;
        if (!fields[i].optional)
            return fail(s->err, s->errlen, "%s: missing key '%s'", s->name, fields[i].key);
        *double_field(&s->values, &fields[i]) = optional_value(&s->values, &fields[i]);
    }
    return MAL_OK;
}

mal_status_t predict_params_parse(FILE *in, const char *name, predict_params_t *out,
                                  char *err, size_t errlen)
{
    parse_state_t s = {.name = name, .err = err, .errlen = errlen};
    char buf[MAX_LINE_CHARS + 1];
    for (;;) {
        line_t got = read_line(in, buf, sizeof buf);
        if (got == LINE_END)
            break;
        s.line++;
        if (got == LINE_TOO_LONG)
            return fail(err, errlen, "%s:%d: line longer than %d characters", name, s.line,
                        MAX_LINE_CHARS);
        mal_status_t st = parse_line(&s, buf);
        if (st != MAL_OK)
            return st;
    }
    if (ferror(in))
        return fail(err, errlen, "%s: read error after line %d", name, s.line);
    mal_status_t st = check_complete(&s);
    if (st != MAL_OK)
        return st;
    *out = s.values;
    return MAL_OK;
}

mal_status_t predict_params_read(const char *path, predict_params_t *out, char *err,
                                 size_t errlen)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    mal_status_t st = predict_params_parse(in, path, out, err, errlen);
    fclose(in);
    return st;
}

/* Each line of `header` becomes one '#' line; a final newline adds no empty line. */
static void write_comment(FILE *out, const char *header)
{
    while (*header) {
        size_t len = strcspn(header, "\n");
        fprintf(out, "# %.*s\n", (int)len, header);
        header += len;
        if (*header == '\n')
            header++;
    }
}

static void write_field(FILE *out, const predict_params_t *p, const field_t *f)
{
    /* %.17g round-trips every double exactly. */
    if (f->kind == FIELD_CORES)
        fprintf(out, "%-19s = %d  # %s\n", f->key, read_int(p, f), f->unit);
    else
        fprintf(out, "%-19s = %.17g  # %s\n", f->key, read_double(p, f), f->unit);
}

mal_status_t predict_params_write(FILE *out, const predict_params_t *p, const char *header)
{
    if (header)
        write_comment(out, header);
    for (size_t i = 0; i < NFIELDS; i++)
        write_field(out, p, &fields[i]);
    /* Errors stick to the stream, so one check after a flush sees any of them. */
    return fflush(out) == 0 && !ferror(out) ? MAL_OK : MAL_ERR_ARG;
}

/* ---- communication ---------------------------------------------------------------- */

/* MPICH's default switch points between the algorithms of each collective. */
#define BCAST_SHORT_BYTES 12288.0
#define BCAST_MIN_PROCS 8
#define REDUCE_SHORT_BYTES 2048.0
#define ALLGATHER_SHORT_BYTES 81920.0

static const char *const op_names[PREDICT_OP_COUNT] = {
    "send", "barrier", "bcast", "reduce", "allreduce", "allgather", "gather", "scatter",
    "alltoall",
};

const char *predict_op_name(predict_op_t op)
{
    return (unsigned)op < PREDICT_OP_COUNT ? op_names[op] : "?";
}

/* Rounds of a binomial tree or of recursive doubling; integers, so exact powers of two
 * cannot round up through a floating log. */
static int ceil_log2(int p)
{
    int rounds = 0;
    for (long long reach = 1; reach < p; reach *= 2)
        rounds++;
    return rounds;
}

/* The cost terms every collective formula is built from. */
typedef struct {
    const predict_params_t *m;
    int p;
    int rounds;    /* L = ceil(log2 p)                             */
    double n;      /* bytes                                        */
    double spread; /* (p - 1) / p: the share of the data that moves */
} collective_t;

static double bcast_cost(const collective_t *c)
{
    const predict_params_t *m = c->m;
    if (c->n < BCAST_SHORT_BYTES || c->p < BCAST_MIN_PROCS)
        return c->rounds * (m->alpha + c->n * m->beta);
    return (c->rounds + c->p - 1) * m->alpha + 2 * c->spread * c->n * m->beta;
}

/* REDUCE and ALLREDUCE share their formulas. */
static double reduce_cost(const collective_t *c)
{
    const predict_params_t *m = c->m;
    if (c->n <= REDUCE_SHORT_BYTES)
        return c->rounds * (m->alpha + c->n * m->beta + c->n * m->gamma);
    return 2 * c->rounds * m->alpha + 2 * c->spread * c->n * m->beta +
           c->spread * c->n * m->gamma;
}

static double allgather_cost(const collective_t *c)
{
    double latency = c->n < ALLGATHER_SHORT_BYTES ? c->rounds : c->p - 1;
    return latency * c->m->alpha + c->spread * c->n * c->m->beta;
}

/* GATHER and SCATTER: a binomial tree. */
static double tree_cost(const collective_t *c)
{
    return c->rounds * c->m->alpha + c->spread * c->n * c->m->beta;
}

static double alltoall_cost(const collective_t *c)
{
    return (c->p - 1) * (c->m->alpha + c->n / c->p * c->m->beta);
}

static double collective_cost(predict_op_t op, const collective_t *c)
{
    switch (op) {
    case PREDICT_OP_BARRIER:
        return c->rounds * c->m->alpha;
    case PREDICT_OP_BCAST:
        return bcast_cost(c);
    case PREDICT_OP_REDUCE:
    case PREDICT_OP_ALLREDUCE:
        return reduce_cost(c);
    case PREDICT_OP_ALLGATHER:
        return allgather_cost(c);
    case PREDICT_OP_GATHER:
    case PREDICT_OP_SCATTER:
        return tree_cost(c);
    case PREDICT_OP_ALLTOALL:
        return alltoall_cost(c);
    default:
        return 0;
    }
}

double predict_op_cost(const predict_params_t *m, predict_op_t op, int p, double bytes)
{
    double n = bytes > 0 ? bytes : 0; /* also turns a NaN into 0 */
    if (op == PREDICT_OP_SEND)
        return m->alpha + n * m->beta;
    if (p <= 1)
        return 0;
    collective_t c = {m, p, ceil_log2(p), n, (double)(p - 1) / p};
    return collective_cost(op, &c);
}

double predict_comm_model(const predict_params_t *m, const predict_comm_profile_t *per_iter,
                          int p, double iterations)
{
    double per_iteration = 0;
    for (int op = 0; op < PREDICT_OP_COUNT; op++)
        per_iteration += per_iter->calls[op] *
                         predict_op_cost(m, (predict_op_t)op, p, per_iter->bytes[op]);
    return per_iteration * iterations;
}

double predict_lambda(double model_prev, double real_prev)
{
    return model_prev > 0 && real_prev > 0 ? real_prev / model_prev : 1.0;
}

/* ---- computation ------------------------------------------------------------------ */

double predict_extrapolate(const double *history, int n)
{
    if (n <= 0)
        return 0;
    /* Centred on the mean index, the least-squares slope needs no second pass. */
    double mean_x = (n - 1) / 2.0, sum_y = 0, sxy = 0, sxx = 0;
    for (int i = 0; i < n; i++)
        sum_y += history[i];
    double mean_y = sum_y / n;
    for (int i = 0; i < n; i++) {
        sxy += (i - mean_x) * (history[i] - mean_y);
        sxx += (i - mean_x) * (i - mean_x);
    }
    double slope = sxx > 0 ? sxy / sxx : 0; /* n == 1: no slope, the value itself */
    double next = mean_y + slope * (n - mean_x);
    return next > 0 ? next : 0;
}

double predict_shared_power(double core_power, int procs, int cores)
{
    if (cores < 1)
        cores = 1;
    if (procs <= cores)
        return core_power;
    return core_power * cores / procs;
}

double predict_comp(int n, const double *work, const double *power)
{
    double slowest = 0;
    for (int i = 0; i < n; i++) {
        if (!(work[i] > 0))
            continue;
        double t = power[i] > 0 ? work[i] / power[i] : INFINITY;
        if (t > slowest)
            slowest = t;
    }
    return slowest;
}

/* ---- process creation and removal ------------------------------------------------- */

double predict_spawn(const predict_params_t *m, int nprocs)
{
    return nprocs > 0 ? nprocs * m->spawn_seconds : 0;
}

double predict_remove(const predict_params_t *m, int nprocs)
{
    return nprocs > 0 ? nprocs * m->remove_seconds : 0;
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v; /* NaN goes to hi */
}

double predict_grow(const predict_params_t *m, int nprocs, int pooled, int hosts)
{
    if (nprocs <= 0)
        return 0;
    pooled = clamp_int(pooled, 0, nprocs);
    int spawned = nprocs - pooled;
    double woken = pooled * m->pool_wake_seconds;
    if (spawned == 0)
        return woken;
    double call = m->spawn_host_seconds < m->spawn_seconds ? m->spawn_host_seconds
                                                           : m->spawn_seconds;
    int calls = clamp_int(hosts, 1, spawned);
    return calls * call + spawned * (m->spawn_seconds - call) + woken;
}

/* ---- an expansion on the critical path -------------------------------------------- */

predict_expand_cost_t predict_expand(const predict_params_t *m, const predict_expand_t *x)
{
    int pooled = clamp_int(x->pooled, 0, x->procs > 0 ? x->procs : 0);
    bool spawns = x->procs > pooled;
    double grow = predict_grow(m, x->procs, pooled, x->hosts);
    double populate = spawns && x->populate > 0 ? x->populate : 0;
    double copies = x->move > m->epoch_seconds ? x->move - m->epoch_seconds : 0;
    if (!(spawns && x->async))
        return (predict_expand_cost_t){.switch_seconds = grow + populate + m->epoch_seconds +
                                                         copies,
                                       .process = grow,
                                       .redist = populate + m->epoch_seconds + copies};
    double read_mostly = clamp(x->read_mostly, 0, 1);
    double slowdown = m->async_slowdown > 1 ? m->async_slowdown : 1;
    double alone = grow + populate + copies * read_mostly; /* on cores of its own */
    /* The background and the old set's iterations share the cores, so both stretch by
     * the slowdown (measured: background wall / synchronous spawn 1.4-1.9 for slowdowns
     * of 1.2-2.4), and each second of the work alone costs the application s - 1. */
    double lost = slowdown - 1;
    double switch_seconds = m->epoch_seconds + copies * (1 - read_mostly);
    return (predict_expand_cost_t){.background = alone * slowdown,
                                   .switch_seconds = switch_seconds,
                                   .process = grow * lost,
                                   .redist = switch_seconds + (alone - grow) * lost};
}

/* ---- redistribution --------------------------------------------------------------- */

/* Rows of a segment its source copies; the destination copies the rest. */
static int64_t pushed_rows(predict_rma_mode_t mode, int64_t rows, int64_t dst_in,
                           int64_t src_out)
{
    switch (mode) {
    case PREDICT_RMA_PULL:
        return 0;
    case PREDICT_RMA_PUSH:
        return rows;
    default:
        return partition_push_rows(rows, dst_in, src_out);
    }
}

static void add_share(predict_load_t *rank, int64_t rows, int64_t row_bytes)
{
    if (rows <= 0)
        return;
    rank->remote_bytes += rows * row_bytes;
    rank->ops++;
}

/* Rows of a share copied between parts `a` and `b`: to the rank that copies them, and to
 * its net bytes when the two are on different hosts. */
static void add_copy(predict_load_t *rank, int64_t rows, int64_t row_bytes, const double *host,
                     int a, int b)
{
    add_share(rank, rows, row_bytes);
    if (host != NULL && host[a] != host[b] && rows > 0)
        rank->net_bytes += rows * row_bytes;
}

mal_status_t predict_plan_load(const int64_t *old_bounds, const int64_t *new_bounds,
                               int nparts, int64_t row_bytes, predict_rma_mode_t mode,
                               predict_load_t *load)
{
    return predict_plan_load_hosts(old_bounds, new_bounds, nparts, row_bytes, mode, NULL,
                                   load);
}

mal_status_t predict_plan_load_hosts(const int64_t *old_bounds, const int64_t *new_bounds,
                                     int nparts, int64_t row_bytes, predict_rma_mode_t mode,
                                     const double *host, predict_load_t *load)
{
    if (nparts < 1)
        return MAL_ERR_ARG;
    size_t count = (size_t)nparts;
    partition_segment_t *segs = malloc(count * sizeof *segs);
    int64_t *in = malloc(count * sizeof *in);
    int64_t *out = malloc(count * sizeof *out);
    mal_status_t st = segs && in && out ? MAL_OK : MAL_ERR_NOMEM;
    if (st == MAL_OK) {
        partition_flows(old_bounds, new_bounds, nparts, in, out);
        for (int d = 0; d < nparts; d++) {
            size_t n = partition_plan_recv(old_bounds, nparts, new_bounds, nparts, d, segs);
            for (size_t i = 0; i < n; i++) {
                int src = segs[i].peer;
                if (src == d)
                    continue;
                int64_t push = pushed_rows(mode, segs[i].rows, in[d], out[src]);
                add_copy(&load[d], segs[i].rows - push, row_bytes, host, d, src);
                add_copy(&load[src], push, row_bytes, host, d, src);
            }
        }
    }
    free(segs);
    free(in);
    free(out);
    return st;
}

double predict_net_bandwidth(const predict_params_t *m, int state)
{
    int e = predict_fastest_executor(m, PREDICT_LINK_NET, state);
    double bw = e >= 0 ? m->redist_bw[PREDICT_LINK_NET][state][e] : 0;
    if (bw > 0)
        return bw;
    e = fastest_of(default_params.redist_bw[PREDICT_LINK_NET][state]);
    return default_params.redist_bw[PREDICT_LINK_NET][state][e];
}

static double copy_seconds(const predict_params_t *m, const predict_load_t *rank)
{
    int64_t net_warm = rank->net_bytes - rank->net_cold_bytes;
    int64_t cold = rank->cold_bytes - rank->net_cold_bytes;
    int64_t warm = rank->remote_bytes - rank->cold_bytes - net_warm;
    double net = rank->net_bytes > 0
                     ? (double)net_warm / predict_net_bandwidth(m, PREDICT_WARM) +
                           (double)rank->net_cold_bytes / predict_net_bandwidth(m, PREDICT_COLD)
                     : 0.0;
    return (double)rank->ops * m->get_latency + (double)warm / m->get_bandwidth +
           (double)cold / m->cold_get_bandwidth + net +
           (double)rank->local_bytes / m->copy_bandwidth;
}

double predict_redist(const predict_params_t *m, int nparts, const predict_load_t *load,
                      int windows, int64_t window_bytes)
{
    int cores = m->cores < 1 ? 1 : m->cores;
    double longest = 0, total = 0;
    for (int r = 0; r < nparts; r++) {
        double t = copy_seconds(m, &load[r]);
        total += t;
        if (t > longest)
            longest = t;
    }
    /* No rank finishes before its own copies, and the cores are shared by all. */
    double shared = total / cores;
    double copy = longest > shared ? longest : shared;
    return m->epoch_seconds + windows * m->window_seconds +
           (double)window_bytes * m->window_byte_seconds + copy;
}

/* ---- one interval ----------------------------------------------------------------- */

double predict_total(const predict_interval_t *t)
{
    return t->comp + t->comm + t->process + t->redist;
}

double predict_rel_error(double predicted, double measured)
{
    if (measured == 0) {
        if (predicted == 0)
            return 0;
        return predicted > 0 ? INFINITY : -INFINITY;
    }
    return (predicted - measured) / measured;
}
