/* Allocations: Slurm's node and count lists, Open MPI's hostfile, and the placement of
 * new processes on the free slots (allocation.h). */
#include "allocation.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static mal_status_t fail(char *err, size_t errlen, mal_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static mal_status_t fail(char *err, size_t errlen, mal_status_t st, const char *fmt, ...)
{
    if (errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

void alloc_free(alloc_t *a)
{
    free(a->hosts);
    *a = (alloc_t){0};
}

/* Append a host of `len` characters; false when out of memory. */
static bool add_host(alloc_t *a, const char *name, size_t len, int slots)
{
    if ((a->nhosts & (a->nhosts - 1)) == 0) { /* 0, 1, 2, 4, ...: grow by doubling */
        size_t cap = a->nhosts == 0 ? 4 : 2 * (size_t)a->nhosts;
        alloc_host_t *bigger = realloc(a->hosts, cap * sizeof *bigger);
        if (bigger == NULL)
            return false;
        a->hosts = bigger;
    }
    alloc_host_t *h = &a->hosts[a->nhosts++];
    memcpy(h->name, name, len);
    h->name[len] = '\0';
    h->slots = slots;
    a->slots += slots;
    return true;
}

/* A decimal number of at most 9 digits at *p, advanced past it; -1 when none. */
static long read_number(const char **p, size_t *digits)
{
    const char *s = *p;
    long v = 0;
    size_t n = 0;
    while (isdigit((unsigned char)s[n]) && n < 9)
        v = 10 * v + (s[n++] - '0');
    if (n == 0 || isdigit((unsigned char)s[n]))
        return -1;
    *p = s + n;
    if (digits != NULL)
        *digits = n;
    return v;
}

/* ---- node lists ------------------------------------------------------------------------ */

typedef struct {
    const char *list;       /* the whole list, for messages                          */
    alloc_t *out;
    char *err;
    size_t errlen;
} expansion_t;

static mal_status_t expand_item(expansion_t *x, const char *item, size_t len);

/* One bracket's ranges ("01-03,7") applied to prefix/suffix; each name is expanded again
 * for the brackets its suffix may still hold. */
static mal_status_t expand_ranges(expansion_t *x, const char *prefix, size_t plen,
                                  const char *ranges, size_t rlen, const char *suffix,
                                  size_t slen)
{
    char name[ALLOC_HOST_MAX * 2];
    const char *p = ranges, *end = ranges + rlen;
    for (;;) {
        size_t width = 0;
        long lo = read_number(&p, &width), hi = lo;
        if (lo >= 0 && p < end && *p == '-') {
            p++;
            hi = read_number(&p, NULL);
        }
        if (lo < 0 || hi < 0 || (p < end && *p != ','))
            return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': bad range '%.*s' "
                        "(expected N or N-M, comma-separated)", x->list, (int)rlen, ranges);
        if (hi < lo)
            return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': range %ld-%ld "
                        "decreases", x->list, lo, hi);
        if (hi - lo >= ALLOC_MAX_HOSTS)
            return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': range %ld-%ld is "
                        "more than %d nodes", x->list, lo, hi, ALLOC_MAX_HOSTS);
        for (long v = lo; v <= hi; v++) {
            int n = snprintf(name, sizeof name, "%.*s%0*ld%.*s", (int)plen, prefix,
                             (int)width, v, (int)slen, suffix);
            if (n < 0 || (size_t)n >= sizeof name)
                return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': a name longer "
                            "than %d characters", x->list, ALLOC_HOST_MAX - 1);
            mal_status_t st = expand_item(x, name, (size_t)n);
            if (st)
                return st;
        }
        if (p == end)
            return MAL_OK;
        p++; /* the comma: a range must follow it, as a name must follow one outside */
    }
}

/* One name of the top-level list, brackets and all. */
static mal_status_t expand_item(expansion_t *x, const char *item, size_t len)
{
    if (len == 0)
        return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': empty name", x->list);
    const char *open = memchr(item, '[', len), *close = memchr(item, ']', len);
    if (open == NULL && close != NULL)
        return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': ']' without '['",
                    x->list);
    if (open == NULL) {
        if (len >= ALLOC_HOST_MAX)
            return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': a name longer than "
                        "%d characters", x->list, ALLOC_HOST_MAX - 1);
        if (x->out->nhosts >= ALLOC_MAX_HOSTS)
            return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': more than %d nodes",
                        x->list, ALLOC_MAX_HOSTS);
        return add_host(x->out, item, len, 0)
                   ? MAL_OK : fail(x->err, x->errlen, MAL_ERR_NOMEM, "out of memory");
    }
    close = memchr(open, ']', len - (size_t)(open - item));
    if (close == NULL)
        return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': '[' not closed",
                    x->list);
    const char *ranges = open + 1;
    if (memchr(ranges, '[', (size_t)(close - ranges)) != NULL || close == ranges)
        return fail(x->err, x->errlen, MAL_ERR_ARG, "node list '%s': bad bracket '%.*s'",
                    x->list, (int)(close - open + 1), open);
    return expand_ranges(x, item, (size_t)(open - item), ranges, (size_t)(close - ranges),
                         close + 1, len - (size_t)(close + 1 - item));
}

mal_status_t alloc_parse_nodelist(const char *list, alloc_t *out, char *err, size_t errlen)
{
    *out = (alloc_t){0};
    if (list == NULL || *list == '\0')
        return fail(err, errlen, MAL_ERR_ARG, "node list '%s': empty", list ? list : "");
    expansion_t x = {list, out, err, errlen};
    mal_status_t st = MAL_OK;
    const char *item = list;
    int depth = 0;
    for (const char *c = list; !st; c++) {
        if (*c == '[')
            depth++;
        else if (*c == ']')
            depth--;
        if (*c == '\0' || (*c == ',' && depth == 0)) {
            st = expand_item(&x, item, (size_t)(c - item));
            item = c + 1;
        }
        if (*c == '\0')
            break;
    }
    if (st)
        alloc_free(out);
    return st;
}

/* ---- node lists written back ---------------------------------------------------------- */

/* Where a name's trailing number starts (its length when it has none, or one of more
 * than 9 digits, which the parser would not read). */
static size_t number_start(const char *name)
{
    size_t len = strlen(name), p = len;
    while (p > 0 && isdigit((unsigned char)name[p - 1]))
        p--;
    return len - p >= 1 && len - p <= 9 ? p : len;
}

/* Whether `b` continues the run of `a` in one bracket: the same prefix, both numbered. */
static bool same_prefix(const char *a, const char *b)
{
    size_t pa = number_start(a), pb = number_start(b);
    return pa < strlen(a) && pb < strlen(b) && pa == pb && strncmp(a, b, pa) == 0;
}

/* Whether `next` is one more than `prev` written as the range's first number `lo` sets
 * the width (the parser prints every number of a range with the width of its first). */
static bool continues_range(const char *lo, const char *prev, const char *next)
{
    size_t p = number_start(lo);
    long v = strtol(prev + p, NULL, 10) + 1;
    char want[16];
    snprintf(want, sizeof want, "%0*ld", (int)strlen(lo + p), v);
    return strcmp(next + p, want) == 0;
}

/* The numbers of names[0..n-1] (one prefix) as "lo-hi,v,..." appended at `out`. */
static char *put_ranges(char *out, const char *const *names, int n)
{
    size_t p = number_start(names[0]);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && continues_range(names[i], names[j], names[j + 1]))
            j++;
        out += sprintf(out, "%s%s", i > 0 ? "," : "", names[i] + p);
        if (j > i)
            out += sprintf(out, "-%s", names[j] + p);
        i = j + 1;
    }
    return out;
}

char *alloc_format_nodelist(const alloc_t *a, const bool *pick)
{
    size_t len = 1;
    int n = 0;
    for (int h = 0; h < a->nhosts; h++)
        if (pick[h]) {
            len += strlen(a->hosts[h].name) + 3; /* a comma and a bracket's two */
            n++;
        }
    char *text = malloc(len), *out = text;
    const char **names = malloc((n > 0 ? (size_t)n : 1) * sizeof *names);
    if (text == NULL || names == NULL) {
        free(text);
        free(names);
        return NULL;
    }
    n = 0;
    for (int h = 0; h < a->nhosts; h++)
        if (pick[h])
            names[n++] = a->hosts[h].name;
    *out = '\0';
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && same_prefix(names[i], names[j]))
            j++;
        if (i > 0)
            *out++ = ',';
        if (j - i == 1) {
            out += sprintf(out, "%s", names[i]);
        } else {
            out += sprintf(out, "%.*s[", (int)number_start(names[i]), names[i]);
            out = put_ranges(out, names + i, j - i);
            out += sprintf(out, "]");
        }
        i = j;
    }
    free(names);
    return text;
}

int alloc_drop_hosts(alloc_t *a, const bool *drop)
{
    int kept = 0;
    a->slots = 0;
    for (int h = 0; h < a->nhosts; h++) {
        if (drop[h])
            continue;
        a->hosts[kept] = a->hosts[h];
        a->slots += a->hosts[kept++].slots;
    }
    int dropped = a->nhosts - kept;
    a->nhosts = kept;
    return dropped;
}

/* ---- count lists ----------------------------------------------------------------------- */

mal_status_t alloc_parse_counts(const char *spec, int *counts, int n, char *err,
                                size_t errlen)
{
    const char *text = spec != NULL ? spec : "", *p = text;
    long total = 0; /* items are bounded by the text's length: no overflow */
    for (;;) {
        long v = read_number(&p, NULL), repeat = 1;
        if (v >= 0 && strncmp(p, "(x", 2) == 0) {
            p += 2;
            repeat = read_number(&p, NULL);
            if (*p++ != ')')
                repeat = -1;
        }
        if (v < 0 || repeat < 0 || (*p != ',' && *p != '\0'))
            return fail(err, errlen, MAL_ERR_ARG, "count list '%s': expected N or N(xR), "
                        "comma-separated", text);
        if (v < 1 || v > ALLOC_MAX_SLOTS)
            return fail(err, errlen, MAL_ERR_ARG, "count list '%s': count %ld (must be in "
                        "1..%d)", text, v, ALLOC_MAX_SLOTS);
        if (repeat < 1)
            return fail(err, errlen, MAL_ERR_ARG, "count list '%s': repeat %ld", text, repeat);
        for (long r = 0; r < repeat && total + r < n; r++)
            counts[total + r] = (int)v;
        total += repeat;
        if (*p == '\0')
            break;
        p++;
    }
    if (total != n)
        return fail(err, errlen, MAL_ERR_ARG, "count list '%s': %ld count%s for %d node%s",
                    text, total, total == 1 ? "" : "s", n, n == 1 ? "" : "s");
    return MAL_OK;
}

mal_status_t alloc_from_slurm(const char *nodelist, const char *cpus_per_node,
                              int cpus_per_task, alloc_t *out, char *err, size_t errlen)
{
    mal_status_t st = alloc_parse_nodelist(nodelist, out, err, errlen);
    if (st)
        return st;
    int *cpus = malloc((size_t)out->nhosts * sizeof *cpus);
    st = cpus ? alloc_parse_counts(cpus_per_node, cpus, out->nhosts, err, errlen)
              : fail(err, errlen, MAL_ERR_NOMEM, "out of memory");
    int per_task = cpus_per_task > 0 ? cpus_per_task : 1;
    out->slots = 0;
    for (int h = 0; !st && h < out->nhosts; h++) {
        out->hosts[h].slots = cpus[h] >= per_task ? cpus[h] / per_task : 1;
        out->slots += out->hosts[h].slots;
    }
    free(cpus);
    if (st)
        alloc_free(out);
    return st;
}

int alloc_slurm_divisor(bool counts_are_tasks, const char *cpus_per_task)
{
    if (counts_are_tasks || cpus_per_task == NULL)
        return 1;
    const char *p = cpus_per_task;
    long v = read_number(&p, NULL);
    return v > 0 && *p == '\0' ? (int)v : 1;
}

/* ---- hostfiles ------------------------------------------------------------------------- */

typedef struct {
    const char *file;
    int line;
    char *err;
    size_t errlen;
} where_t;

/* "key=value" of a host line into *slots or *max_slots. */
static mal_status_t read_field(const where_t *w, const char *field, long *slots,
                               long *max_slots)
{
    static const char *const slot_keys[] = {"slots", "slot", "cpu", "count", NULL};
    static const char *const max_keys[] = {"max_slots", "max-slots", NULL};
    const char *eq = strchr(field, '=');
    size_t klen = eq != NULL ? (size_t)(eq - field) : 0;
    long *target = NULL;
    for (int i = 0; eq != NULL && slot_keys[i] != NULL && !target; i++)
        if (strlen(slot_keys[i]) == klen && strncmp(field, slot_keys[i], klen) == 0)
            target = slots;
    for (int i = 0; eq != NULL && max_keys[i] != NULL && !target; i++)
        if (strlen(max_keys[i]) == klen && strncmp(field, max_keys[i], klen) == 0)
            target = max_slots;
    if (target == NULL)
        return fail(w->err, w->errlen, MAL_ERR_ARG, "%s:%d: unknown field '%s' (slots=N, "
                    "max_slots=N)", w->file, w->line, field);
    const char *p = eq + 1;
    long v = read_number(&p, NULL);
    if (v < 1 || v > ALLOC_MAX_SLOTS || *p != '\0')
        return fail(w->err, w->errlen, MAL_ERR_ARG, "%s:%d: %.*s '%s' is not an integer in "
                    "1..%d", w->file, w->line, (int)klen, field, eq + 1, ALLOC_MAX_SLOTS);
    *target = v;
    return MAL_OK;
}

/* The index of the host named `name`, -1 when none. */
static int find_exact(const alloc_t *a, const char *name)
{
    for (int h = 0; h < a->nhosts; h++)
        if (strcmp(a->hosts[h].name, name) == 0)
            return h;
    return -1;
}

/* Add a host line's slots: a repeated host adds to its first entry, as Open MPI adds up
 * repeated lines (PBS-style files list a host once per slot). */
static mal_status_t count_host(const where_t *w, const char *host, long slots, alloc_t *out)
{
    int h = find_exact(out, host);
    if (h >= 0 && out->hosts[h].slots > ALLOC_MAX_SLOTS - slots)
        return fail(w->err, w->errlen, MAL_ERR_ARG, "%s:%d: host '%s' has more than %d "
                    "slots in all", w->file, w->line, host, ALLOC_MAX_SLOTS);
    if (h >= 0) {
        out->hosts[h].slots += (int)slots;
        out->slots += slots;
        return MAL_OK;
    }
    return add_host(out, host, strlen(host), (int)slots)
               ? MAL_OK : fail(w->err, w->errlen, MAL_ERR_NOMEM, "%s: out of memory", w->file);
}

/* One line, comments stripped: nothing, or a host and its fields. */
static mal_status_t read_host_line(const where_t *w, char *text, int default_slots,
                                   alloc_t *out)
{
    char *save = NULL, *host = strtok_r(text, " \t\r\n", &save);
    if (host == NULL)
        return MAL_OK;
    if (strlen(host) >= ALLOC_HOST_MAX)
        return fail(w->err, w->errlen, MAL_ERR_ARG, "%s:%d: host name longer than %d "
                    "characters", w->file, w->line, ALLOC_HOST_MAX - 1);
    long slots = 0, max_slots = 0;
    mal_status_t st = MAL_OK;
    for (char *f = strtok_r(NULL, " \t\r\n", &save); f != NULL && !st;
         f = strtok_r(NULL, " \t\r\n", &save))
        st = read_field(w, f, &slots, &max_slots);
    if (!st && slots > 0 && max_slots > 0 && slots > max_slots)
        st = fail(w->err, w->errlen, MAL_ERR_ARG, "%s:%d: slots %ld above max_slots %ld",
                  w->file, w->line, slots, max_slots);
    if (st)
        return st;
    slots = slots > 0 ? slots : max_slots > 0 ? max_slots : default_slots;
    return count_host(w, host, slots, out);
}

mal_status_t alloc_parse_hostfile(FILE *f, const char *name, int default_slots,
                                  alloc_t *out, char *err, size_t errlen)
{
    *out = (alloc_t){0};
    where_t w = {name, 0, err, errlen};
    char text[4096];
    mal_status_t st = MAL_OK;
    while (!st && fgets(text, sizeof text, f) != NULL) {
        w.line++;
        /* The rest of a longer line would be read as a host line of its own. */
        if (strchr(text, '\n') == NULL && !feof(f)) {
            st = fail(err, errlen, MAL_ERR_ARG, "%s:%d: line longer than %zu characters",
                      name, w.line, sizeof text - 2);
            break;
        }
        text[strcspn(text, "#")] = '\0';
        st = read_host_line(&w, text, default_slots < 1 ? 1 : default_slots, out);
    }
    if (!st && out->nhosts == 0)
        st = fail(err, errlen, MAL_ERR_ARG, "%s: no host listed", name);
    if (st)
        alloc_free(out);
    return st;
}

mal_status_t alloc_read_hostfile(const char *path, int default_slots, alloc_t *out,
                                 char *err, size_t errlen)
{
    *out = (alloc_t){0};
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fail(err, errlen, MAL_ERR_ARG, "%s: cannot open: %s", path, strerror(errno));
    mal_status_t st = alloc_parse_hostfile(f, path, default_slots, out, err, errlen);
    fclose(f);
    return st;
}

bool alloc_mapping_oversubscribes(const char *policy)
{
    static const char word[] = "oversubscribe";
    for (const char *t = policy; t != NULL && *t != '\0';) {
        size_t n = strcspn(t, ":,");
        if (n == sizeof word - 1 && strncasecmp(t, word, n) == 0)
            return true;
        t += n + (t[n] != '\0');
    }
    return false;
}

/* ---- placement ------------------------------------------------------------------------- */

/* Digits and dots only: an IPv4 address, whose first dot cuts no domain off. */
static bool is_address(const char *name)
{
    return name[strspn(name, "0123456789.")] == '\0';
}

/* Names the host the launcher runs on, whatever it is called elsewhere. */
static bool is_loopback(const char *name)
{
    return strcasecmp(name, "localhost") == 0 || strncmp(name, "127.", 4) == 0;
}

/* `n` and `name` up to their first dots ("n1" and "n1.cluster"), names only. */
static bool same_short_name(const char *n, const char *name)
{
    size_t len = strcspn(name, ".");
    return !is_address(n) && !is_address(name) && strcspn(n, ".") == len &&
           strncmp(n, name, len) == 0;
}

int alloc_find_host(const alloc_t *a, const char *name, const char *local)
{
    for (int h = 0; h < a->nhosts; h++)
        if (strcmp(a->hosts[h].name, name) == 0)
            return h;
    for (int h = 0; h < a->nhosts; h++)
        if (same_short_name(a->hosts[h].name, name))
            return h;
    bool here = is_loopback(name) || (local != NULL && strcmp(name, local) == 0);
    for (int h = 0; here && h < a->nhosts; h++)
        if (is_loopback(a->hosts[h].name))
            return h;
    return -1;
}

int alloc_place(const alloc_t *a, const int *running, int count, int *place)
{
    int placed = 0;
    for (int h = 0; h < a->nhosts && placed < count; h++)
        for (int free_slots = a->hosts[h].slots - running[h]; free_slots > 0 && placed < count;
             free_slots--)
            place[placed++] = h;
    return placed;
}
