/* Reconfiguration plan parser (pure; see schedule.h for the grammar). */
#include "schedule.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strtoll's range is exactly the iteration's. */
_Static_assert(LLONG_MAX == INT64_MAX, "long long must be 64 bits");

/* Longest entry text quoted in a message, so the reason after it is never cut off. */
#define QUOTE_MAX 60
/* Longest weight text: a weight is copied out before strtod so that the parse can never
 * run into the next entry (in a locale whose decimal point is ',' it would). */
#define WEIGHT_TEXT_MAX 128

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* One entry being read: [p, end) is what is left of it, without its outer spaces. */
typedef struct {
    const char *p;
    const char *end;
    char why[256]; /* the reason of a refusal */
} cursor_t;

PRINTF_LIKE(2, 3) static mal_status_t refuse(cursor_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return MAL_ERR_ARG;
}

static bool at(const cursor_t *c, char ch)
{
    return c->p < c->end && *c->p == ch;
}

static bool accept(cursor_t *c, char ch)
{
    if (!at(c, ch))
        return false;
    c->p++;
    return true;
}

static void skip_spaces(cursor_t *c)
{
    while (accept(c, ' '))
        ;
}

/* ASCII digits only: strtoll would also take spaces, tabs and a sign, all refused here. */
static bool at_digit(const cursor_t *c)
{
    return c->p < c->end && *c->p >= '0' && *c->p <= '9';
}

typedef enum { NUMBER_OK, NUMBER_MISSING, NUMBER_TOO_LARGE } number_status_t;

/* A run of decimal digits. It cannot run past the entry: ',' and NUL are not digits. */
static number_status_t read_decimal(cursor_t *c, long long *value)
{
    if (!at_digit(c))
        return NUMBER_MISSING;
    char *stop;
    errno = 0;
    *value = strtoll(c->p, &stop, 10);
    c->p = stop;
    return errno == ERANGE ? NUMBER_TOO_LARGE : NUMBER_OK;
}

static mal_status_t parse_iteration(cursor_t *c, int64_t *iteration)
{
    long long v;
    number_status_t s = read_decimal(c, &v);
    if (s == NUMBER_MISSING)
        return refuse(c, "iteration is not a positive integer");
    if (s == NUMBER_TOO_LARGE)
        return refuse(c, "iteration does not fit in 64 bits");
    if (v < 1)
        return refuse(c, "iteration must be at least 1");
    *iteration = v;
    return MAL_OK;
}

/* The N of "+N" and "-N". */
static mal_status_t parse_count(cursor_t *c, const char *what, int *count)
{
    long long v;
    number_status_t s = read_decimal(c, &v);
    if (s == NUMBER_MISSING)
        return refuse(c, "%s is not a positive integer", what);
    if (s == NUMBER_TOO_LARGE || v > SCHEDULE_MAX_COUNT)
        return refuse(c, "%s exceeds %d", what, SCHEDULE_MAX_COUNT);
    if (v < 1)
        return refuse(c, "%s must be at least 1", what);
    *count = (int)v;
    return MAL_OK;
}

static mal_status_t parse_rank(cursor_t *c, int *rank)
{
    long long v;
    number_status_t s = read_decimal(c, &v);
    if (s == NUMBER_MISSING)
        return refuse(c, "rank is not a non-negative integer");
    if (s == NUMBER_TOO_LARGE || v > INT_MAX)
        return refuse(c, "rank exceeds %d", INT_MAX);
    *rank = (int)v;
    return MAL_OK;
}

/* Characters of the weight at the cursor: up to the next separator or the entry's end. */
static size_t weight_length(const cursor_t *c)
{
    const char *q = c->p;
    while (q < c->end && *q != ':' && *q != ' ')
        q++;
    return (size_t)(q - c->p);
}

static mal_status_t check_weight(cursor_t *c, const char *text, double w, int strtod_errno)
{
    if (isnan(w))
        return refuse(c, "weight \"%s\" is NaN", text);
    if (strtod_errno == ERANGE)
        return refuse(c, "weight \"%s\" is out of range", text);
    if (isinf(w))
        return refuse(c, "weight \"%s\" is infinite", text);
    if (signbit(w))
        return refuse(c, "weight \"%s\" is negative", text);
    return MAL_OK;
}

static mal_status_t parse_weight(cursor_t *c, double *weight)
{
    char text[WEIGHT_TEXT_MAX];
    size_t len = weight_length(c);
    if (len == 0)
        return refuse(c, "weight is missing");
    if (len >= sizeof text)
        return refuse(c, "weight is longer than %d characters", WEIGHT_TEXT_MAX - 1);
    memcpy(text, c->p, len);
    text[len] = '\0';
    char *stop;
    errno = 0;
    double w = strtod(text, &stop);
    int strtod_errno = errno;
    /* A leading tab or newline would be skipped by strtod; only spaces are allowed. */
    if (stop != text + len || (unsigned char)text[0] <= ' ')
        return refuse(c, "weight \"%s\" is not a number", text);
    c->p += len;
    *weight = w;
    return check_weight(c, text, w, strtod_errno);
}

/* An upper bound on the items of a ':'-separated list: one more than the ':' left. */
static size_t list_capacity(const cursor_t *c)
{
    size_t n = 1;
    for (const char *q = c->p; q < c->end; q++)
        n += *q == ':';
    return n;
}

/* Moves past the ':' (and its spaces) before the next item; false at the list's end. */
static bool next_item(cursor_t *c)
{
    const char *before = c->p;
    skip_spaces(c);
    if (accept(c, ':')) {
        skip_spaces(c);
        return true;
    }
    c->p = before;
    return false;
}

static bool rank_listed(const int *ranks, int count, int rank)
{
    for (int i = 0; i < count; i++)
        if (ranks[i] == rank)
            return true;
    return false;
}

/* "-@R:R:...", after the "-@". */
static mal_status_t parse_rank_list(cursor_t *c, schedule_action_t *a)
{
    a->ranks = malloc(list_capacity(c) * sizeof *a->ranks);
    if (!a->ranks)
        return MAL_ERR_NOMEM;
    do {
        if (a->count == SCHEDULE_MAX_COUNT)
            return refuse(c, "more than %d ranks", SCHEDULE_MAX_COUNT);
        int rank = 0;
        mal_status_t rc = parse_rank(c, &rank);
        if (rc)
            return rc;
        if (rank_listed(a->ranks, a->count, rank))
            return refuse(c, "rank %d is listed twice", rank);
        a->ranks[a->count++] = rank;
    } while (next_item(c));
    return MAL_OK;
}

static bool any_positive(const double *weights, int count)
{
    for (int i = 0; i < count; i++)
        if (weights[i] > 0.0)
            return true;
    return false;
}

/* "w=W:W:...", after the "w". */
static mal_status_t parse_weights(cursor_t *c, schedule_action_t *a)
{
    a->kind = SCHEDULE_REBALANCE;
    skip_spaces(c);
    if (!accept(c, '='))
        return refuse(c, "expected '=' after 'w'");
    skip_spaces(c);
    a->weights = malloc(list_capacity(c) * sizeof *a->weights);
    if (!a->weights)
        return MAL_ERR_NOMEM;
    do {
        if (a->count == SCHEDULE_MAX_COUNT)
            return refuse(c, "more than %d weights", SCHEDULE_MAX_COUNT);
        double weight = 0.0;
        mal_status_t rc = parse_weight(c, &weight);
        if (rc)
            return rc;
        a->weights[a->count++] = weight;
    } while (next_item(c));
    if (!any_positive(a->weights, a->count))
        return refuse(c, "all weights are zero");
    return MAL_OK;
}

/* "+N", "+Nb" or "+Np", after the "+". */
static mal_status_t parse_expand(cursor_t *c, schedule_action_t *a)
{
    a->kind = SCHEDULE_EXPAND;
    mal_status_t rc = parse_count(c, "process count", &a->count);
    if (rc)
        return rc;
    if (accept(c, 'b'))
        a->spawn = SCHEDULE_SPAWN_BATCHED;
    else if (accept(c, 'p'))
        a->spawn = SCHEDULE_SPAWN_PER_CALL;
    return MAL_OK;
}

/* "-N" or "-@R:R:...", then "!" to release for good, after the "-". */
static mal_status_t parse_shrink(cursor_t *c, schedule_action_t *a)
{
    a->kind = SCHEDULE_SHRINK;
    mal_status_t rc = accept(c, '@') ? parse_rank_list(c, a)
                                     : parse_count(c, "rank count", &a->count);
    if (!rc)
        a->release = accept(c, '!');
    return rc;
}

static mal_status_t parse_action(cursor_t *c, schedule_action_t *a)
{
    if (c->p == c->end)
        return refuse(c, "missing action after ':'");
    if (accept(c, '+'))
        return parse_expand(c, a);
    if (accept(c, '-'))
        return parse_shrink(c, a);
    if (accept(c, 'w'))
        return parse_weights(c, a);
    return refuse(c, "unknown action (expected +N, -N, -@R:R:... or w=W:W:...)");
}

static mal_status_t expect_end(cursor_t *c)
{
    skip_spaces(c);
    if (c->p == c->end)
        return MAL_OK;
    return refuse(c, "unexpected \"%.*s\" after the action", (int)(c->end - c->p), c->p);
}

/* One "ITER:ACTION" entry into *a (zeroed by the caller; partly filled on failure). */
static mal_status_t parse_entry(cursor_t *c, schedule_action_t *a)
{
    if (c->p == c->end)
        return refuse(c, "empty entry");
    mal_status_t rc = parse_iteration(c, &a->iteration);
    if (rc)
        return rc;
    skip_spaces(c);
    if (!accept(c, ':'))
        return refuse(c, "expected ':' after the iteration");
    skip_spaces(c);
    rc = parse_action(c, a);
    return rc ? rc : expect_end(c);
}

static void action_free(schedule_action_t *a)
{
    free(a->ranks);
    free(a->weights);
    *a = (schedule_action_t){0};
}

PRINTF_LIKE(3, 4) static void write_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The entry's text between `start` and `stop`, without the spaces around it. */
static cursor_t entry_cursor(const char *start, const char *stop)
{
    while (start < stop && *start == ' ')
        start++;
    while (stop > start && stop[-1] == ' ')
        stop--;
    return (cursor_t){.p = start, .end = stop};
}

/* Parses the entry [start, stop) as entry number s->count + 1 and appends it to s. */
static mal_status_t append_entry(schedule_t *s, const char *start, const char *stop,
                                 char *err, size_t errlen)
{
    cursor_t c = entry_cursor(start, stop);
    const char *text = c.p;
    int text_len = (int)(c.end - c.p);
    schedule_action_t a = {0};
    mal_status_t rc = parse_entry(&c, &a);
    const schedule_action_t *prev = s->count ? &s->actions[s->count - 1] : NULL;
    if (rc == MAL_OK && prev && a.iteration <= prev->iteration)
        rc = refuse(&c, "iteration %lld does not follow the previous entry's %lld",
                    (long long)a.iteration, (long long)prev->iteration);
    if (rc == MAL_OK) {
        s->actions[s->count++] = a;
        return MAL_OK;
    }
    action_free(&a);
    if (rc == MAL_ERR_NOMEM)
        write_error(err, errlen, "out of memory");
    else
        write_error(err, errlen, "entry %zu (\"%.*s%s\"): %s", s->count + 1,
                    text_len > QUOTE_MAX ? QUOTE_MAX : text_len, text,
                    text_len > QUOTE_MAX ? "..." : "", c.why);
    return rc;
}

static bool is_blank(const char *text)
{
    return !text || text[strspn(text, " ")] == '\0';
}

static size_t count_char(const char *text, char ch)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == ch;
    return n;
}

mal_status_t schedule_parse(const char *text, schedule_t *out, char *err, size_t errlen)
{
    if (!out) {
        write_error(err, errlen, "no schedule to fill (out is NULL)");
        return MAL_ERR_ARG;
    }
    *out = (schedule_t){0};
    if (is_blank(text))
        return MAL_OK;
    schedule_t s = {calloc(count_char(text, ',') + 1, sizeof *s.actions), 0};
    if (!s.actions) {
        write_error(err, errlen, "out of memory");
        return MAL_ERR_NOMEM;
    }
    for (const char *entry = text;;) {
        const char *comma = strchr(entry, ',');
        const char *stop = comma ? comma : entry + strlen(entry);
        mal_status_t rc = append_entry(&s, entry, stop, err, errlen);
        if (rc) {
            schedule_free(&s);
            return rc;
        }
        if (!comma)
            break;
        entry = comma + 1;
    }
    *out = s;
    return MAL_OK;
}

void schedule_free(schedule_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++)
        action_free(&s->actions[i]);
    free(s->actions);
    *s = (schedule_t){0};
}

/* The process counts an entry can meet: every change before it may succeed or fail (a
 * spawn can fail, an expansion can be refused), so a count is one of a set. Sorted,
 * distinct; `overflow` once more than COUNTS_MAX are possible (the check then stops). */
#define COUNTS_MAX 64
typedef struct {
    int n;
    int value[COUNTS_MAX];
    bool overflow;
} counts_t;

static void counts_add(counts_t *c, int v)
{
    int i = 0;
    while (i < c->n && c->value[i] < v)
        i++;
    if (i < c->n && c->value[i] == v)
        return;
    if (c->n == COUNTS_MAX) {
        c->overflow = true;
        return;
    }
    memmove(&c->value[i + 1], &c->value[i], (size_t)(c->n - i) * sizeof *c->value);
    c->value[i] = v;
    c->n++;
}

static bool counts_has(const counts_t *c, int v)
{
    for (int i = 0; i < c->n; i++)
        if (c->value[i] == v)
            return true;
    return false;
}

/* After entry `a`: each count as it was (the change failed) and as it changed. */
static void counts_step(counts_t *c, const schedule_action_t *a)
{
    if (a->kind == SCHEDULE_REBALANCE)
        return;
    counts_t before = *c;
    for (int i = 0; i < before.n; i++) {
        int64_t v = before.value[i] + (a->kind == SCHEDULE_EXPAND ? a->count : -a->count);
        if (v >= 1 && v <= SCHEDULE_MAX_PROCS)
            counts_add(c, (int)v);
    }
}

/* "2 processes run", "2 or 4 processes run", "1, 2 or 3 processes run". */
static void counts_text(const counts_t *c, char *out, size_t len)
{
    size_t used = 0;
    for (int i = 0; i < c->n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%d",
                                 i == 0 ? "" : i == c->n - 1 ? " or " : ", ", c->value[i]);
    bool one = c->n == 1 && c->value[0] == 1;
    if (used < len)
        snprintf(out + used, len - used, " process%s run%s", one ? "" : "es", one ? "s" : "");
}

/* How the count came to be, for a message: "2 at the start, +2 at iteration 10, -1 at
 * iteration 20" (the first few changes). */
static void count_history(const schedule_t *s, size_t upto, int procs, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "%d at the start", procs);
    for (size_t i = 0, shown = 0; i < upto && used < len; i++) {
        const schedule_action_t *a = &s->actions[i];
        if (a->kind == SCHEDULE_REBALANCE)
            continue;
        if (++shown > 4) {
            snprintf(out + used, len - used, ", ...");
            return;
        }
        used += (size_t)snprintf(out + used, len - used, ", %c%d at iteration %lld",
                                 a->kind == SCHEDULE_EXPAND ? '+' : '-', a->count,
                                 (long long)a->iteration);
    }
}

/* Why entry `a` can act on none of the counts `c`, or NULL when it can on one. */
static const char *entry_problem(const schedule_action_t *a, const counts_t *c, char *why,
                                 size_t len)
{
    int most = c->value[c->n - 1];
    if (a->kind == SCHEDULE_REBALANCE && !counts_has(c, a->count)) {
        snprintf(why, len, "\"w=\" with %d weight%s", a->count, a->count == 1 ? "" : "s");
        return why;
    }
    if (a->kind == SCHEDULE_SHRINK && a->count >= most) {
        snprintf(why, len, "releases %d process%s, which leaves none", a->count,
                 a->count == 1 ? "" : "es");
        return why;
    }
    for (int i = 0; a->kind == SCHEDULE_SHRINK && a->ranks != NULL && i < a->count; i++)
        if (a->ranks[i] >= most) {
            snprintf(why, len, "releases rank %d", a->ranks[i]);
            return why;
        }
    return NULL;
}

mal_status_t schedule_check(const schedule_t *s, int procs, char *err, size_t errlen)
{
    counts_t c = {0};
    counts_add(&c, procs);
    for (size_t i = 0; s != NULL && i < s->count && !c.overflow; i++) {
        const schedule_action_t *a = &s->actions[i];
        char why[96], counts[160], history[200];
        if (entry_problem(a, &c, why, sizeof why) != NULL) {
            counts_text(&c, counts, sizeof counts);
            count_history(s, i, procs, history, sizeof history);
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "entry %zu (iteration %lld, %s): %s then (%s%s)", i + 1,
                         (long long)a->iteration, why, counts, history,
                         c.n > 1 ? "; each change may fail" : "");
            return MAL_ERR_ARG;
        }
        counts_step(&c, a);
    }
    return MAL_OK;
}

size_t schedule_next(const schedule_t *s, int64_t it)
{
    if (!s)
        return 0;
    size_t lo = 0, hi = s->count; /* the answer is in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->actions[mid].iteration < it)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
