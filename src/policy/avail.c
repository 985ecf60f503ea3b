/* Availability file parser (pure; see avail.h for the format). Refuses a file at its
 * first bad line, with a message naming the file and the line. */
#include "avail.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


#define FIELDS 5
#define CORES_MAX 1000000
/* '\r' too, so that a file written on Windows reads the same. */
#define SEPARATORS " \t\r\n"
/* Longest field text quoted in a message: a number field may be any length, and the
 * reason after it must not be cut off. */
#define QUOTE_MAX 40
/* Room for any double printed with %.17g. */
#define NUMBER_TEXT 32

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* A file being read. Line numbers are kept beside the table only for the messages of
 * duplicate hosts and redefined classes. */
typedef struct {
    const char *name;
    long line;
    avail_t table;
    int host_capacity;
    int class_capacity;
    long *host_line;
    long *class_line;
    char *err;
    size_t errlen;
} parser_t;

/* ---- messages ------------------------------------------------------------------------ */

/* "NAME:LINE: why", or "NAME: why" when line is 0 (the file as a whole). */
static void vreport(char *err, size_t errlen, const char *name, long line, const char *fmt,
                    va_list ap)
{
    if (!err || errlen == 0)
        return;
    int head = 0;
    if (name)
        head = line > 0 ? snprintf(err, errlen, "%s:%ld: ", name, line)
                        : snprintf(err, errlen, "%s: ", name);
    if (head < 0)
        head = 0;
    if ((size_t)head < errlen)
        vsnprintf(err + head, errlen - (size_t)head, fmt, ap);
}

PRINTF_LIKE(4, 5)
static mal_status_t report(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(err, errlen, name, 0, fmt, ap);
    va_end(ap);
    return MAL_ERR_ARG;
}

/* A refusal of the line being read. */
PRINTF_LIKE(2, 3) static mal_status_t refuse(parser_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(p->err, p->errlen, p->name, p->line, fmt, ap);
    va_end(ap);
    return MAL_ERR_ARG;
}

static mal_status_t out_of_memory(char *err, size_t errlen, const char *name)
{
    report(err, errlen, name, "out of memory");
    return MAL_ERR_NOMEM;
}

/* The field as quoted in a message: cut after QUOTE_MAX characters. */
static const char *excerpt(const char *field, char shown[QUOTE_MAX + 4])
{
    snprintf(shown, QUOTE_MAX + 4, "%.*s%s", QUOTE_MAX, field,
             strlen(field) > QUOTE_MAX ? "..." : "");
    return shown;
}

/* The shortest text that reads back as v, so that "1.9" is shown as written, and two
 * values that differ only in their last digits are shown different. */
static const char *number_text(double v, char text[NUMBER_TEXT])
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, NUMBER_TEXT, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    return text;
}

/* ---- the "C" locale for numbers ------------------------------------------------------- */

/* strtod and printf follow LC_NUMERIC; the file's numbers always use '.', whatever
 * locale the application chose. The thread's locale is switched, not the process's. */
typedef struct {
    locale_t c_numbers;
    locale_t previous;
} numeric_scope_t;

static bool enter_c_numbers(numeric_scope_t *scope)
{
    scope->c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!scope->c_numbers)
        return false;
    scope->previous = uselocale(scope->c_numbers);
    return true;
}

static void leave_c_numbers(numeric_scope_t *scope)
{
    uselocale(scope->previous);
    freelocale(scope->c_numbers);
}

/* ---- fields ---------------------------------------------------------------------------- */

/* Cuts the line into fields in place; returns how many there are, keeping the first
 * FIELDS of them. */
static size_t split_fields(char *line, char *field[FIELDS])
{
    char *comment = strchr(line, '#');
    if (comment)
        *comment = '\0';
    size_t count = 0;
    char *p = line;
    for (;;) {
        p += strspn(p, SEPARATORS);
        if (*p == '\0')
            return count;
        if (count < FIELDS)
            field[count] = p;
        count++;
        p += strcspn(p, SEPARATORS);
        if (*p != '\0')
            *p++ = '\0';
    }
}

static bool parse_cores(const char *text, int *cores)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < 1 || v > CORES_MAX)
        return false;
    *cores = (int)v;
    return true;
}

/* A finite number, the whole field. An underflow to zero or a subnormal is kept: the
 * range checks that follow decide. */
static bool parse_finite(const char *text, double *value)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v))
        return false;
    *value = v + 0.0; /* -0 reads as 0 */
    return true;
}

static bool gflops_valid(double gflops)
{
    return isfinite(gflops) && gflops > 0.0;
}

static bool price_valid(double price)
{
    return isfinite(price) && price >= 0.0;
}

/* ---- the table ------------------------------------------------------------------------- */

/* The next capacity of a growing array, 0 when it would not fit in an int. */
static int grown(int capacity)
{
    if (capacity < 8)
        return 8;
    return capacity > INT_MAX / 2 ? 0 : 2 * capacity;
}

static mal_status_t make_room_for_host(parser_t *p)
{
    if (p->table.nhosts < p->host_capacity)
        return MAL_OK;
    int capacity = grown(p->host_capacity);
    if (capacity == 0)
        return MAL_ERR_NOMEM;
    avail_host_t *hosts = realloc(p->table.hosts, (size_t)capacity * sizeof *hosts);
    if (!hosts)
        return MAL_ERR_NOMEM;
    p->table.hosts = hosts;
    long *lines = realloc(p->host_line, (size_t)capacity * sizeof *lines);
    if (!lines)
        return MAL_ERR_NOMEM;
    p->host_line = lines;
    p->host_capacity = capacity;
    return MAL_OK;
}

static mal_status_t make_room_for_class(parser_t *p)
{
    if (p->table.nclasses < p->class_capacity)
        return MAL_OK;
    int capacity = grown(p->class_capacity);
    if (capacity == 0)
        return MAL_ERR_NOMEM;
    avail_class_t *classes = realloc(p->table.classes, (size_t)capacity * sizeof *classes);
    if (!classes)
        return MAL_ERR_NOMEM;
    p->table.classes = classes;
    long *lines = realloc(p->class_line, (size_t)capacity * sizeof *lines);
    if (!lines)
        return MAL_ERR_NOMEM;
    p->class_line = lines;
    p->class_capacity = capacity;
    return MAL_OK;
}

static int find_class(const avail_t *a, const char *name)
{
    for (int c = 0; c < a->nclasses; c++)
        if (strcmp(a->classes[c].name, name) == 0)
            return c;
    return -1;
}

/* A class met again must repeat its first host's numbers. */
static mal_status_t check_class(parser_t *p, int c, const avail_class_t *here)
{
    const avail_class_t *first = &p->table.classes[c];
    if (first->gflops == here->gflops && first->price == here->price)
        return MAL_OK;
    char g0[NUMBER_TEXT], p0[NUMBER_TEXT], g1[NUMBER_TEXT], p1[NUMBER_TEXT];
    return refuse(p, "class '%s' has gflops %s and price %s on line %ld, here %s and %s",
                  first->name, number_text(first->gflops, g0), number_text(first->price, p0),
                  p->class_line[c], number_text(here->gflops, g1),
                  number_text(here->price, p1));
}

/* The index of the line's class, declared here when it is new. */
static mal_status_t enter_class(parser_t *p, const avail_class_t *here, int *cls)
{
    *cls = find_class(&p->table, here->name);
    if (*cls >= 0)
        return check_class(p, *cls, here);
    mal_status_t rc = make_room_for_class(p);
    if (rc)
        return rc;
    *cls = p->table.nclasses++;
    p->table.classes[*cls] = *here;
    p->class_line[*cls] = p->line;
    return MAL_OK;
}

/* ---- lines ----------------------------------------------------------------------------- */

/* Hosts are looked up one by one: availability files list tens to thousands of hosts,
 * where a linear scan costs less than the file's reading. */
static mal_status_t read_host(parser_t *p, const char *text, avail_host_t *host)
{
    if (strlen(text) >= sizeof host->name)
        return refuse(p, "host name longer than %d characters", AVAIL_HOST_MAX - 1);
    int earlier = avail_find_host(&p->table, text);
    if (earlier >= 0)
        return refuse(p, "host '%s' already listed on line %ld", text, p->host_line[earlier]);
    strcpy(host->name, text);
    return MAL_OK;
}

static mal_status_t read_class(parser_t *p, char *const field[FIELDS], avail_class_t *cls)
{
    char shown[QUOTE_MAX + 4];
    if (strlen(field[2]) >= sizeof cls->name)
        return refuse(p, "class name longer than %d characters", AVAIL_CLASS_MAX - 1);
    strcpy(cls->name, field[2]);
    if (!parse_finite(field[3], &cls->gflops) || !gflops_valid(cls->gflops))
        return refuse(p, "gflops '%s' must be a finite number > 0", excerpt(field[3], shown));
    if (!parse_finite(field[4], &cls->price) || !price_valid(cls->price))
        return refuse(p, "price '%s' must be a finite number >= 0", excerpt(field[4], shown));
    return MAL_OK;
}

static mal_status_t parse_line(parser_t *p, char *line)
{
    char *field[FIELDS];
    size_t count = split_fields(line, field);
    if (count == 0)
        return MAL_OK;
    if (count != FIELDS)
        return refuse(p, "expected 5 fields (host cores class gflops price), found %zu",
                      count);
    avail_host_t host;
    avail_class_t cls;
    char shown[QUOTE_MAX + 4];
    mal_status_t rc = read_host(p, field[0], &host);
    if (rc)
        return rc;
    if (!parse_cores(field[1], &host.cores))
        return refuse(p, "cores '%s' is not an integer in 1..%d", excerpt(field[1], shown),
                      CORES_MAX);
    rc = read_class(p, field, &cls);
    if (!rc)
        rc = enter_class(p, &cls, &host.cls);
    if (!rc)
        rc = make_room_for_host(p);
    if (rc)
        return rc;
    p->host_line[p->table.nhosts] = p->line;
    p->table.hosts[p->table.nhosts++] = host;
    return MAL_OK;
}

/* Why getline stopped: the end of the file, or a failure. */
static mal_status_t check_end(parser_t *p, FILE *in, int getline_errno)
{
    if (getline_errno == ENOMEM)
        return out_of_memory(p->err, p->errlen, p->name);
    if (ferror(in) || !feof(in))
        return report(p->err, p->errlen, p->name, "cannot read: %s",
                      strerror(getline_errno ? getline_errno : EIO));
    if (p->table.nhosts == 0)
        return report(p->err, p->errlen, p->name, "no host listed");
    return MAL_OK;
}

static mal_status_t parse_lines(parser_t *p, FILE *in)
{
    char *line = NULL;
    size_t capacity = 0;
    mal_status_t rc = MAL_OK;
    for (;;) {
        errno = 0;
        ssize_t length = getline(&line, &capacity, in);
        if (length < 0) {
            rc = check_end(p, in, errno);
            break;
        }
        p->line++;
        /* A NUL would silently end the line early, hiding the fields after it. */
        rc = memchr(line, '\0', (size_t)length) ? refuse(p, "line contains a NUL byte")
                                                 : parse_line(p, line);
        if (rc)
            break;
    }
    free(line);
    return rc;
}

mal_status_t avail_parse(FILE *in, const char *name, avail_t *out, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!name)
        name = "(stream)";
    if (out)
        *out = (avail_t){0};
    if (!out || !in)
        return report(err, errlen, name, "no stream or no table to fill");
    parser_t p = {.name = name, .err = err, .errlen = errlen};
    numeric_scope_t scope;
    if (!enter_c_numbers(&scope))
        return out_of_memory(err, errlen, name);
    mal_status_t rc = parse_lines(&p, in);
    if (rc == MAL_ERR_NOMEM)
        out_of_memory(err, errlen, name);
    leave_c_numbers(&scope);
    free(p.host_line);
    free(p.class_line);
    if (rc)
        avail_free(&p.table);
    else
        *out = p.table;
    return rc;
}

mal_status_t avail_read(const char *path, avail_t *out, char *err, size_t errlen)
{
    if (out)
        *out = (avail_t){0};
    if (!path)
        return report(err, errlen, NULL, "no availability file named");
    FILE *in = fopen(path, "r");
    if (!in)
        return report(err, errlen, path, "cannot open: %s", strerror(errno));
    mal_status_t rc = avail_parse(in, path, out, err, errlen);
    fclose(in);
    return rc;
}

/* ---- one host -------------------------------------------------------------------------- */

PRINTF_LIKE(3, 4)
static mal_status_t refuse_single(char *err, size_t errlen, const char *fmt, ...)
{
    numeric_scope_t scope;
    bool c_numbers = enter_c_numbers(&scope);
    va_list ap;
    va_start(ap, fmt);
    vreport(err, errlen, NULL, 0, fmt, ap);
    va_end(ap);
    if (c_numbers)
        leave_c_numbers(&scope);
    return MAL_ERR_ARG;
}

static mal_status_t check_single(const char *host, int cores, const char *cls, double gflops,
                        double price, char *err, size_t errlen)
{
    if (!host || host[0] == '\0')
        return refuse_single(err, errlen, "host name is empty");
    if (strlen(host) >= AVAIL_HOST_MAX)
        return refuse_single(err, errlen, "host name longer than %d characters",
                             AVAIL_HOST_MAX - 1);
    if (cores < 1 || cores > CORES_MAX)
        return refuse_single(err, errlen, "cores %d is not an integer in 1..%d", cores,
                             CORES_MAX);
    if (cls[0] == '\0')
        return refuse_single(err, errlen, "class name is empty");
    if (strlen(cls) >= AVAIL_CLASS_MAX)
        return refuse_single(err, errlen, "class name longer than %d characters",
                             AVAIL_CLASS_MAX - 1);
    if (!gflops_valid(gflops))
        return refuse_single(err, errlen, "gflops %g must be a finite number > 0", gflops);
    if (!price_valid(price))
        return refuse_single(err, errlen, "price %g must be a finite number >= 0", price);
    return MAL_OK;
}

mal_status_t avail_single(const char *host, int cores, const char *cls, double gflops,
                          double price, avail_t *out, char *err, size_t errlen)
{
    if (err && errlen > 0)
        err[0] = '\0';
    if (!out)
        return refuse_single(err, errlen, "no table to fill");
    *out = (avail_t){0};
    if (!cls)
        cls = "local";
    mal_status_t rc = check_single(host, cores, cls, gflops, price, err, errlen);
    if (rc)
        return rc;
    avail_t a = {.classes = calloc(1, sizeof *a.classes), .nclasses = 1,
                 .hosts = calloc(1, sizeof *a.hosts), .nhosts = 1};
    if (!a.classes || !a.hosts) {
        avail_free(&a);
        return out_of_memory(err, errlen, NULL);
    }
    strcpy(a.classes[0].name, cls);
    a.classes[0].gflops = gflops;
    a.classes[0].price = price + 0.0; /* -0 as 0, as in a file */
    strcpy(a.hosts[0].name, host);
    a.hosts[0].cores = cores;
    a.hosts[0].cls = 0;
    *out = a;
    return MAL_OK;
}

/* ---- queries --------------------------------------------------------------------------- */

int avail_find_host(const avail_t *a, const char *name)
{
    if (!a || !name)
        return -1;
    for (int h = 0; h < a->nhosts; h++)
        if (strcmp(a->hosts[h].name, name) == 0)
            return h;
    return -1;
}

/* Saturates at INT_MAX: 1000000 cores on each of 2148 hosts already exceed it. */
int avail_class_cores(const avail_t *a, int cls)
{
    if (!a || cls < 0 || cls >= a->nclasses)
        return 0;
    long long total = 0;
    for (int h = 0; h < a->nhosts; h++)
        if (a->hosts[h].cls == cls)
            total += a->hosts[h].cores;
    return total > INT_MAX ? INT_MAX : (int)total;
}

void avail_free(avail_t *a)
{
    if (!a)
        return;
    free(a->classes);
    free(a->hosts);
    *a = (avail_t){0};
}
