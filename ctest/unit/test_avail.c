/* Unit tests of src/policy's resource view: the availability file (avail.h) and the
 * processor-class selection (select.h). argv[1] is the directory of the test files
 * (ctest/unit/avail). Hand-worked expectations use Flex-MPI's cluster classes; the
 * solver is also checked against brute-force enumeration of small instances. */
#include "avail.h"
#include "select.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unittest.h"

static const char *data_dir;

static int contains(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

/* ---- availability files ---------------------------------------------------------------- */

static char *data_path(const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    return path;
}

static int table_is_empty(const avail_t *a)
{
    return !a->classes && !a->hosts && a->nclasses == 0 && a->nhosts == 0;
}

static void check_host(const avail_t *a, int h, const char *name, int cores, int cls)
{
    if (h >= a->nhosts) {
        CHECK(0, "host %d missing (%d hosts)", h, a->nhosts);
        return;
    }
    const avail_host_t *host = &a->hosts[h];
    CHECK(strcmp(host->name, name) == 0, "host %d is '%s', want '%s'", h, host->name, name);
    CHECK(host->cores == cores, "host %s has %d cores, want %d", name, host->cores, cores);
    CHECK(host->cls == cls, "host %s has class %d, want %d", name, host->cls, cls);
}

static void check_class(const avail_t *a, int c, const char *name, double gflops,
                        double price)
{
    if (c >= a->nclasses) {
        CHECK(0, "class %d missing (%d classes)", c, a->nclasses);
        return;
    }
    const avail_class_t *cls = &a->classes[c];
    CHECK(strcmp(cls->name, name) == 0, "class %d is '%s', want '%s'", c, cls->name, name);
    CHECK(cls->gflops == gflops, "class %s gflops %g, want %g", name, cls->gflops, gflops);
    CHECK(cls->price == price, "class %s price %g, want %g", name, cls->price, price);
}

static void test_good_file(void)
{
    avail_t a;
    char err[512] = "untouched";
    mal_status_t rc = avail_read(data_path("good.avail"), &a, err, sizeof err);
    CHECK(rc == MAL_OK, "good.avail: rc %d (%s)", rc, err);
    CHECK(err[0] == '\0', "no message on success, got '%s'", err);
    if (rc)
        return;
    CHECK(a.nclasses == 2 && a.nhosts == 5, "%d classes, %d hosts", a.nclasses, a.nhosts);
    check_class(&a, 0, "C1", 1.90, 0.095);
    check_class(&a, 1, "C8", 4.62, 0.462);
    check_host(&a, 0, "node01", 4, 0);
    check_host(&a, 1, "node02", 4, 0);
    check_host(&a, 2, "big01", 24, 1);
    check_host(&a, 3, "node03", 2, 0);
    check_host(&a, 4, "big02", 12, 1);
    CHECK(avail_class_cores(&a, 0) == 10, "C1 cores %d", avail_class_cores(&a, 0));
    CHECK(avail_class_cores(&a, 1) == 36, "C8 cores %d", avail_class_cores(&a, 1));
    CHECK(avail_class_cores(&a, 2) == 0 && avail_class_cores(&a, -1) == 0,
          "a class out of range has no cores");
    CHECK(avail_find_host(&a, "big01") == 2, "big01 at %d", avail_find_host(&a, "big01"));
    CHECK(avail_find_host(&a, "node03") == 3, "node03 at %d", avail_find_host(&a, "node03"));
    CHECK(avail_find_host(&a, "node0") == -1, "a prefix is not a host");
    CHECK(avail_find_host(&a, "nowhere") == -1, "unknown host");
    CHECK(avail_find_host(&a, NULL) == -1 && avail_find_host(NULL, "big01") == -1,
          "NULL arguments");
    avail_free(&a);
    CHECK(table_is_empty(&a), "free leaves {0}");
    avail_free(&a);
    CHECK(table_is_empty(&a), "second free leaves {0}");
    avail_free(NULL);
}

/* A broken file gives exactly this message, with the path in front. */
static void check_broken_file(const char *file, const char *message)
{
    char want[4096 + 256];
    snprintf(want, sizeof want, "%s%s", data_path(file), message);
    avail_t a = {(avail_class_t *)&a, 7, (avail_host_t *)&a, 7};
    char err[512] = "";
    mal_status_t rc = avail_read(data_path(file), &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG, "%s: rc %d", file, rc);
    CHECK(strcmp(err, want) == 0, "%s:\n  got  '%s'\n  want '%s'", file, err, want);
    CHECK(table_is_empty(&a), "%s: the table is left {0}", file);
}

static void test_broken_files(void)
{
    check_broken_file("fields.avail",
                      ":3: expected 5 fields (host cores class gflops price), found 4");
    check_broken_file("cores.avail", ":4: cores 'x' is not an integer in 1..1000000");
    check_broken_file("gflops.avail", ":2: gflops '0' must be a finite number > 0");
    check_broken_file("price.avail", ":5: price '-1' must be a finite number >= 0");
    check_broken_file("duplicate.avail", ":7: host 'node01' already listed on line 3");
    check_broken_file("class.avail",
                      ":9: class 'C1' has gflops 1.9 and price 0.095 on line 2, "
                      "here 2 and 0.095");
    check_broken_file("nohost.avail", ": no host listed");
    check_broken_file("missing.avail", ": cannot open: No such file or directory");
    /* A directory opens but cannot be read. */
    check_broken_file("", ": cannot read: Is a directory");
}

/* Parses `text` (of `size` bytes: it may hold a NUL) as the stream "mem". */
static mal_status_t parse_bytes(const char *text, size_t size, avail_t *a, char *err,
                                size_t errlen)
{
    FILE *in = fmemopen((void *)text, size, "r");
    if (!in) {
        CHECK(0, "fmemopen failed");
        return MAL_ERR_NOMEM;
    }
    mal_status_t rc = avail_parse(in, "mem", a, err, errlen);
    fclose(in);
    return rc;
}

static mal_status_t parse_text(const char *text, avail_t *a, char *err, size_t errlen)
{
    return parse_bytes(text, strlen(text), a, err, errlen);
}

/* `text` is refused with a message that contains `part`. */
static void check_refused(const char *text, const char *part)
{
    avail_t a;
    char err[512] = "";
    mal_status_t rc = parse_text(text, &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG, "'%s': rc %d", text, rc);
    CHECK(contains(err, part), "'%s':\n  got  '%s'\n  want '...%s...'", text, err, part);
    CHECK(table_is_empty(&a), "'%s': the table is left {0}", text);
    avail_free(&a);
}

/* `text` is accepted; returns the table (free it). */
static avail_t accepted(const char *text)
{
    avail_t a;
    char err[512] = "";
    mal_status_t rc = parse_text(text, &a, err, sizeof err);
    CHECK(rc == MAL_OK, "'%.60s' refused: %s", text, err);
    return a;
}

static void test_fields(void)
{
    check_refused("a 1 C 1 1 extra\n", "mem:1: expected 5 fields (host cores class gflops "
                                       "price), found 6");
    check_refused("a\n", "mem:1: expected 5 fields (host cores class gflops price), found 1");
    check_refused("a 1 C 1 # 1\n", "found 4");
    check_refused("a 1 C\v1 1\n", "found 4"); /* only spaces and tabs separate */
    avail_t a = accepted("a 1 C 1 1\r\nb 2 C 1 1\r\n");
    CHECK(a.nhosts == 2 && a.hosts[1].cores == 2, "CRLF lines read as LF lines");
    avail_free(&a);
    a = accepted("last 3 C 1 1"); /* no newline at the end */
    CHECK(a.nhosts == 1 && a.hosts[0].cores == 3, "the last line needs no newline");
    avail_free(&a);
}

static void test_cores(void)
{
    const char *bad[] = {"x", "0", "-1", "1000001", "4.5", "4x", "0x10", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[128], part[128];
        snprintf(text, sizeof text, "a %s C 1 1\n", bad[i]);
        snprintf(part, sizeof part, "mem:1: cores '%s' is not an integer in 1..1000000",
                 bad[i]);
        check_refused(text, part);
    }
    avail_t a = accepted("a 1000000 C 1 1\nb 1 C 1 1\nc +7 C 1 1\nd 007 C 1 1\n");
    CHECK(a.nhosts == 4 && a.hosts[0].cores == 1000000 && a.hosts[1].cores == 1 &&
              a.hosts[2].cores == 7 && a.hosts[3].cores == 7,
          "cores at the limits, with a sign, with leading zeros");
    avail_free(&a);
}

static void test_numbers(void)
{
    const char *bad_gflops[] = {"0", "-1", "-0", "nan", "inf", "1e999", "abc", "1.9x", "1,9"};
    for (size_t i = 0; i < sizeof bad_gflops / sizeof *bad_gflops; i++) {
        char text[128], part[128];
        snprintf(text, sizeof text, "a 1 C %s 1\n", bad_gflops[i]);
        snprintf(part, sizeof part, "mem:1: gflops '%s' must be a finite number > 0",
                 bad_gflops[i]);
        check_refused(text, part);
    }
    const char *bad_prices[] = {"-1", "-1e-3", "nan", "-inf", "1e400", "x", "0.1.2"};
    for (size_t i = 0; i < sizeof bad_prices / sizeof *bad_prices; i++) {
        char text[128], part[128];
        snprintf(text, sizeof text, "a 1 C 1 %s\n", bad_prices[i]);
        snprintf(part, sizeof part, "mem:1: price '%s' must be a finite number >= 0",
                 bad_prices[i]);
        check_refused(text, part);
    }
    avail_t a = accepted("a 1 C 1e-3 0\nb 1 D 0x1p2 -0\nc 1 E 2.5E1 1e-400\n");
    check_class(&a, 0, "C", 1e-3, 0.0);
    check_class(&a, 1, "D", 4.0, 0.0);
    CHECK(a.nclasses == 3 && !signbit(a.classes[1].price), "a price of -0 reads as 0");
    check_class(&a, 2, "E", 25.0, 0.0);
    avail_free(&a);
}

static void test_names(void)
{
    char host[300], text[400];
    memset(host, 'h', 255);
    host[255] = '\0';
    snprintf(text, sizeof text, "%s 1 C 1 1\n", host);
    avail_t a = accepted(text);
    CHECK(a.nhosts == 1 && strlen(a.hosts[0].name) == 255, "a 255-character host name");
    avail_free(&a);
    snprintf(text, sizeof text, "ok 1 C 1 1\n%sh 1 C 1 1\n", host);
    check_refused(text, "mem:2: host name longer than 255 characters");

    char cls[40];
    memset(cls, 'c', 31);
    cls[31] = '\0';
    snprintf(text, sizeof text, "a 1 %s 1 1\n", cls);
    a = accepted(text);
    CHECK(a.nclasses == 1 && strlen(a.classes[0].name) == 31, "a 31-character class name");
    avail_free(&a);
    snprintf(text, sizeof text, "a 1 %sc 1 1\n", cls);
    check_refused(text, "mem:1: class name longer than 31 characters");

    check_refused("a 1 C 1 1\nb 1 C 1 1\n\nb 2 D 1 1\n",
                  "mem:4: host 'b' already listed on line 2");
    check_refused("a#b 1 C 1 1\n", "found 1"); /* '#' starts a comment anywhere */
}

static void test_classes(void)
{
    /* Numbered in order of first appearance, not by name. */
    avail_t a = accepted("x 1 C8 4.62 0.462\ny 1 C1 1.90 0.095\nz 1 C8 4.620 0.4620\n");
    CHECK(a.nclasses == 2, "%d classes", a.nclasses);
    check_class(&a, 0, "C8", 4.62, 0.462);
    check_class(&a, 1, "C1", 1.90, 0.095);
    check_host(&a, 2, "z", 1, 0);
    avail_free(&a);
    check_refused("a 1 C 1.9 0.095\nb 1 C 1.9 0.1\n",
                  "mem:2: class 'C' has gflops 1.9 and price 0.095 on line 1, here 1.9 and 0.1");
    /* Values that differ in their last digits are shown different. */
    check_refused("a 1 C 1 0.1\nb 1 C 1 0.1000000000000001\n",
                  "price 0.1 on line 1, here 1 and 0.1000000000000001");
}

static void test_long_lines(void)
{
    size_t n = 1 << 20;
    char *text = malloc(n + 64);
    if (!text) {
        CHECK(0, "out of memory");
        return;
    }
    /* A megabyte of blanks before a host, then a megabyte-long number. */
    memset(text, ' ', n);
    strcpy(text + n, "a 1 C 1 1\n");
    avail_t a = accepted(text);
    CHECK(a.nhosts == 1, "a long line of blanks");
    avail_free(&a);
    memcpy(text, "a 1 C ", 6);
    memset(text + 6, '1', n);
    strcpy(text + 6 + n, "x 1\n");
    char err[512] = "";
    mal_status_t rc = parse_text(text, &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG && contains(err, "mem:1: gflops '1111111111") &&
              contains(err, "...' must be a finite number > 0"),
          "a long field is quoted cut: rc %d, '%s'", rc, err);
    free(text);
}

static void test_stream_errors(void)
{
    static const char nul[] = "a 1 C 1 1\nb 1 C\0 1 1\n";
    avail_t a;
    char err[512] = "";
    mal_status_t rc = parse_bytes(nul, sizeof nul - 1, &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG && strcmp(err, "mem:2: line contains a NUL byte") == 0,
          "NUL: %d '%s'", rc, err);
    check_refused("", "mem: no host listed");
    check_refused("# nothing\n\n", "mem: no host listed");
    /* The message is cut to the buffer, always terminated; no buffer is fine. */
    char small[8];
    memset(small, 'z', sizeof small);
    rc = parse_text("a 0 C 1 1\n", &a, small, sizeof small);
    CHECK(rc == MAL_ERR_ARG && strcmp(small, "mem:1: ") == 0, "cut message '%s'", small);
    rc = parse_text("a 0 C 1 1\n", &a, NULL, 0);
    CHECK(rc == MAL_ERR_ARG, "refused without a message buffer");
    rc = parse_text("a 1 C 1 1\n", &a, NULL, 0);
    CHECK(rc == MAL_OK, "accepted without a message buffer");
    avail_free(&a);
    a = (avail_t){(avail_class_t *)&a, 1, NULL, 1};
    rc = avail_parse(NULL, "none", &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG && table_is_empty(&a), "NULL stream");
}

/* The file's numbers are read with '.', whatever locale the application chose. */
static void test_locale(void)
{
    const char *comma_locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t i = 0; i < sizeof comma_locales / sizeof *comma_locales; i++) {
        if (!setlocale(LC_NUMERIC, comma_locales[i]))
            continue;
        avail_t a = accepted("a 1 C 1.90 0.095\n");
        check_class(&a, 0, "C", 1.90, 0.095);
        avail_free(&a);
        check_refused("a 1 C 1.9 0.1\nb 1 C 2.5 0.1\n", "gflops 1.9 and price 0.1");
        setlocale(LC_NUMERIC, "C");
        return;
    }
}

static void test_single(void)
{
    avail_t a;
    char err[256] = "";
    mal_status_t rc = avail_single("here", 8, NULL, 2.5, 0.0, &a, err, sizeof err);
    CHECK(rc == MAL_OK, "single: rc %d (%s)", rc, err);
    if (rc == MAL_OK) {
        CHECK(a.nhosts == 1 && a.nclasses == 1, "one host, one class");
        check_class(&a, 0, "local", 2.5, 0.0);
        check_host(&a, 0, "here", 8, 0);
        CHECK(avail_class_cores(&a, 0) == 8, "8 cores");
        CHECK(avail_find_host(&a, "here") == 0, "the host is found");
    }
    avail_free(&a);
    rc = avail_single("n1", 4, "C8", 4.62, 0.462, &a, err, sizeof err);
    CHECK(rc == MAL_OK && a.nclasses == 1, "single with a class: rc %d (%s)", rc, err);
    if (rc == MAL_OK)
        check_class(&a, 0, "C8", 4.62, 0.462);
    avail_free(&a);

    struct {
        const char *host;
        int cores;
        const char *cls;
        double gflops, price;
        const char *why;
    } bad[] = {
        {NULL, 1, NULL, 1, 0, "host name is empty"},
        {"", 1, NULL, 1, 0, "host name is empty"},
        {"h", 0, NULL, 1, 0, "cores 0 is not an integer in 1..1000000"},
        {"h", 1000001, NULL, 1, 0, "cores 1000001"},
        {"h", 1, "", 1, 0, "class name is empty"},
        {"h", 1, "0123456789012345678901234567890123", 1, 0, "class name longer than 31"},
        {"h", 1, NULL, 0, 0, "gflops 0 must be a finite number > 0"},
        {"h", 1, NULL, NAN, 0, "gflops nan must be"},
        {"h", 1, NULL, INFINITY, 0, "gflops inf must be"},
        {"h", 1, NULL, 1, -1, "price -1 must be a finite number >= 0"},
        {"h", 1, NULL, 1, NAN, "price nan must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        a = (avail_t){(avail_class_t *)&a, 3, NULL, 3};
        err[0] = '\0';
        rc = avail_single(bad[i].host, bad[i].cores, bad[i].cls, bad[i].gflops, bad[i].price,
                          &a, err, sizeof err);
        CHECK(rc == MAL_ERR_ARG && contains(err, bad[i].why) && table_is_empty(&a),
              "single %zu: rc %d, '%s', want '%s'", i, rc, err, bad[i].why);
    }
    char host[300];
    memset(host, 'h', 256);
    host[256] = '\0';
    rc = avail_single(host, 1, NULL, 1, 0, &a, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG && contains(err, "host name longer than 255"), "long host: %s", err);
}

/* ---- selection: Flex-MPI's cluster ------------------------------------------------------- */

enum { FLEX_N = 4 };
/* Whether the latest selection found a set (select_*'s output parameter). */
static bool found;

static const double flex_power[FLEX_N] = {1.90, 2.25, 2.90, 4.62};
static const double flex_price[FLEX_N] = {0.095, 0.115, 0.204, 0.462};
static const int flex_avail[FLEX_N] = {78, 22, 10, 22};

static double dot(int n, const double *v, const int *counts)
{
    double total = 0.0;
    for (int c = 0; c < n; c++)
        total += counts[c] * v[c];
    return total;
}

static int same_counts(int n, const int *got, const int *want)
{
    for (int c = 0; c < n; c++)
        if (got[c] != want[c])
            return 0;
    return 1;
}

/* select_add on Flex-MPI's cluster finds exactly `want`. */
static void check_flex_add(int s, double need, select_goal_t goal, const int *want)
{
    int counts[FLEX_N] = {-7, -7, -7, -7};
    mal_status_t rc = select_add(FLEX_N, flex_power, flex_price, flex_avail, s, need, goal,
                                    counts, &found);
    CHECK(rc == MAL_OK && found && same_counts(FLEX_N, counts, want),
          "add s=%d need=%g goal %d: rc %d, counts %d %d %d %d, want %d %d %d %d", s, need,
          goal, rc, counts[0], counts[1], counts[2], counts[3], want[0], want[1], want[2],
          want[3]);
}

static void check_untouched(const int *counts, int n, const char *what)
{
    for (int c = 0; c < n; c++)
        CHECK(counts[c] == -7, "%s: counts[%d] = %d, touched", what, c, counts[c]);
}

static void check_flex_infeasible(int s, double need, select_goal_t goal)
{
    int counts[FLEX_N] = {-7, -7, -7, -7};
    mal_status_t rc = select_add(FLEX_N, flex_power, flex_price, flex_avail, s, need, goal,
                                    counts, &found);
    CHECK(rc == MAL_OK && !found, "add s=%d need=%g goal %d: rc %d, want infeasible", s,
          need, goal, rc);
    check_untouched(counts, FLEX_N, "infeasible add");
}

static void test_flex_add(void)
{
    /* Three processes reaching 13: only three C8 (13.86); two C8 and a C3 make 12.14. */
    check_flex_add(3, 13.0, SELECT_EFFICIENCY, (int[]){0, 0, 0, 3});
    check_flex_add(3, 12.0, SELECT_EFFICIENCY, (int[]){0, 0, 1, 2});
    /* Three reaching 6.5: 2 C1 + C3 = 6.7 ($0.394) is the least power, 3 C2 = 6.75
     * ($0.345) the cheapest; 1.9 + 2 x 2.25 = 6.4 falls short. */
    check_flex_add(3, 6.5, SELECT_EFFICIENCY, (int[]){2, 0, 1, 0});
    check_flex_add(3, 6.5, SELECT_COST, (int[]){0, 3, 0, 0});
    /* Four reaching 13: 2 C1 + 2 C8 = 13.04 ($1.114); 3 C3 + C8 = 13.32 ($1.074). */
    check_flex_add(4, 13.0, SELECT_EFFICIENCY, (int[]){2, 0, 0, 2});
    check_flex_add(4, 13.0, SELECT_COST, (int[]){0, 0, 3, 1});
    /* Four reaching 10: 2 C2 + 2 C3 = 10.3 is both the least power and the cheapest. */
    check_flex_add(4, 10.0, SELECT_COST, (int[]){0, 2, 2, 0});
    /* No need: the s least powerful, which are also the cheapest. */
    check_flex_add(3, 0.0, SELECT_EFFICIENCY, (int[]){3, 0, 0, 0});
    check_flex_add(3, -INFINITY, SELECT_COST, (int[]){3, 0, 0, 0});
    /* A need met exactly, to the last bit, by three C8 and by nothing else. */
    check_flex_add(3, 3 * 4.62, SELECT_EFFICIENCY, (int[]){0, 0, 0, 3});
    /* Everything. */
    check_flex_add(132, 0.0, SELECT_EFFICIENCY, (int[]){78, 22, 10, 22});
    check_flex_add(0, 0.0, SELECT_COST, (int[]){0, 0, 0, 0});

    check_flex_infeasible(3, 13.87, SELECT_EFFICIENCY);
    check_flex_infeasible(3, 13.87, SELECT_COST);
    check_flex_infeasible(133, 0.0, SELECT_EFFICIENCY);
    check_flex_infeasible(0, 1e-300, SELECT_EFFICIENCY);
    check_flex_infeasible(1, INFINITY, SELECT_EFFICIENCY);
}

static void test_max_min_power(void)
{
    double p = select_max_power(FLEX_N, flex_power, flex_avail, 3);
    CHECK(fabs(p - 13.86) < 1e-12, "max power of 3: %.17g", p);
    p = select_max_power(FLEX_N, flex_power, flex_avail, 25); /* 22 C8 + 3 C3 */
    CHECK(fabs(p - (22 * 4.62 + 3 * 2.90)) < 1e-12, "max power of 25: %.17g", p);
    CHECK(select_max_power(FLEX_N, flex_power, flex_avail, 0) == 0.0, "max power of 0");
    CHECK(select_max_power(FLEX_N, flex_power, flex_avail, 133) == -1.0, "133 > 132");
    p = select_min_power(FLEX_N, flex_power, flex_avail, 80); /* 78 C1 + 2 C2 */
    CHECK(fabs(p - (78 * 1.90 + 2 * 2.25)) < 1e-12, "min power of 80: %.17g", p);
    CHECK(select_min_power(FLEX_N, flex_power, (int[]){0, 0, 1, 1}, 2) == 2.90 + 4.62,
          "min power of all that is removable");
    CHECK(select_min_power(FLEX_N, flex_power, (int[]){0, 0, 1, 1}, 3) == -1.0,
          "min power of more than is removable");
    CHECK(select_max_power(0, flex_power, flex_avail, 1) == -1.0, "n = 0");
    CHECK(select_max_power(FLEX_N, flex_power, flex_avail, -1) == -1.0, "s < 0");
    CHECK(select_min_power(FLEX_N, flex_power, (int[]){1, -1, 1, 1}, 1) == -1.0,
          "negative removable");
    CHECK(select_max_power(2, (double[]){1.0, NAN}, (int[]){1, 1}, 1) == -1.0, "NaN power");
}

static void test_flex_remove(void)
{
    /* Remove two of 2 C1, 1 C2, 1 C3, 2 C8 losing at most 7: C8 + C2 = 6.87 ($0.577);
     * C8 + C3 = 7.52 is too much. */
    const int removable[FLEX_N] = {2, 1, 1, 2};
    int counts[FLEX_N];
    mal_status_t rc;
    for (int goal = SELECT_EFFICIENCY; goal <= SELECT_COST; goal++) {
        rc = select_remove(FLEX_N, flex_power, flex_price, removable, 2, 7.0, goal,
                           counts, &found);
        CHECK(rc == MAL_OK && found && same_counts(FLEX_N, counts, (int[]){0, 1, 0, 1}),
              "remove 2 under 7, goal %d: rc %d, counts %d %d %d %d", goal, rc, counts[0],
              counts[1], counts[2], counts[3]);
    }
    /* Two classes where price and power disagree: 2 x (power 2, $1) = 4 ($2), or
     * (2, $1) + (3, $0.5) = 5 ($1.5), (3) + (3) = 6 is over the spare of 5. */
    const double power[2] = {2.0, 3.0}, price[2] = {1.0, 0.5};
    const int two[2] = {2, 2};
    rc = select_remove(2, power, price, two, 2, 5.0, SELECT_EFFICIENCY, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 1 && counts[1] == 1, "efficiency removes 5");
    rc = select_remove(2, power, price, two, 2, 5.0, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 2 && counts[1] == 0, "cost removes $2");
    rc = select_remove(2, power, price, two, 2, INFINITY, SELECT_EFFICIENCY, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 0 && counts[1] == 2, "no limit: the largest");

    /* r == 0: nothing, whatever the spare, unless it is negative. */
    int zero[FLEX_N] = {-7, -7, -7, -7};
    rc = select_remove(FLEX_N, flex_power, flex_price, removable, 0, 5.0, SELECT_COST,
                       zero, &found);
    CHECK(rc == MAL_OK && found && same_counts(FLEX_N, zero, (int[]){0, 0, 0, 0}), "r = 0");
    int untouched[FLEX_N] = {-7, -7, -7, -7};
    rc = select_remove(FLEX_N, flex_power, flex_price, removable, 0, -1.0, SELECT_COST,
                       untouched, &found);
    CHECK(rc == MAL_OK && !found, "r = 0 with a negative spare: rc %d", rc);
    rc = select_remove(FLEX_N, flex_power, flex_price, removable, 1, -1e-9,
                       SELECT_EFFICIENCY, untouched, &found);
    CHECK(rc == MAL_OK && !found, "negative spare: rc %d", rc);
    rc = select_remove(FLEX_N, flex_power, flex_price, removable, 2, 1.9 + 1.9 - 1e-9,
                       SELECT_EFFICIENCY, untouched, &found);
    CHECK(rc == MAL_OK && !found, "the two least powerful exceed the spare: rc %d", rc);
    rc = select_remove(FLEX_N, flex_power, flex_price, removable, 7, 1e9, SELECT_EFFICIENCY,
                       untouched, &found);
    CHECK(rc == MAL_OK && !found, "more than removable: rc %d", rc);
    check_untouched(untouched, FLEX_N, "infeasible removal");
}

/* Equal prices: the cost goal falls back on power, exactly, however large the prices. */
static void test_ties(void)
{
    const double power[3] = {1.0, 2.0, 3.0};
    const double big[3] = {1e12, 1e12, 1e12};
    const int avail[3] = {5, 5, 5};
    int counts[3];
    mal_status_t rc = select_add(3, power, big, avail, 2, 0.0, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 2, "add tie: the least power, got %d %d %d",
          counts[0], counts[1], counts[2]);
    rc = select_add(3, power, big, avail, 2, 4.5, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && dot(3, power, counts) == 5.0,
          "add tie with a need: %d %d %d", counts[0], counts[1], counts[2]);
    rc = select_remove(3, power, big, avail, 2, 100.0, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[2] == 2, "remove tie: the most power, got %d %d %d",
          counts[0], counts[1], counts[2]);
    rc = select_remove(3, power, big, avail, 2, 4.5, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && dot(3, power, counts) == 4.0, "remove tie under 4.5");
    /* Prices 1e-6 apart, relatively: not a tie, the cheaper wins despite its power. */
    const double close[2] = {1e6, 1e6 + 1.0};
    rc = select_add(2, (double[]){2.0, 1.0}, close, (int[]){2, 2}, 2, 0.0, SELECT_COST,
                    counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 2, "nearly equal prices: %d %d", counts[0],
          counts[1]);
}

/* GLPK takes a bound as met within a tolerance (and, by default, a column within 1e-5
 * of an integer as that integer): a limit a hair beyond a set's power must not let that
 * set through, nor hide the next best. */
static void test_hairline_limits(void)
{
    const double power[2] = {1.0, 3.0}, price[2] = {1.0, 1.0};
    const int avail[2] = {10, 10};
    const double hairs[] = {1e-15, 1e-12, 1e-9, 1e-7, 2e-6, 1e-5};
    for (size_t i = 0; i < sizeof hairs / sizeof *hairs; i++) {
        for (int goal = SELECT_EFFICIENCY; goal <= SELECT_COST; goal++) {
            int counts[2] = {-7, -7};
            /* Two processes: powers 2, 4 or 6. Just over 2 needs 1 + 3. */
            mal_status_t rc =
                select_add(2, power, price, avail, 2, 2.0 + hairs[i], goal, counts, &found);
            CHECK(rc == MAL_OK && found && counts[0] == 1 && counts[1] == 1,
                  "add over 2 + %g, goal %d: rc %d, counts %d %d", hairs[i], goal, rc,
                  counts[0], counts[1]);
            /* Just under 4 removes 1 + 1. */
            rc = select_remove(2, power, price, avail, 2, 4.0 - hairs[i], goal,
                               counts, &found);
            CHECK(rc == MAL_OK && found && counts[0] == 2 && counts[1] == 0,
                  "remove under 4 - %g, goal %d: rc %d, counts %d %d", hairs[i], goal, rc,
                  counts[0], counts[1]);
        }
    }
    /* The only set that meets the need is a hair above another: 1 + 1e-12 over 1. */
    const double close[2] = {1.0, 1.0 + 1e-12};
    int counts[2];
    mal_status_t rc = select_add(2, close, price, (int[]){1, 1}, 1, 1.0 + 5e-13,
                                    SELECT_EFFICIENCY, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 0 && counts[1] == 1, "a hair above: %d %d",
          counts[0], counts[1]);
    rc = select_remove(2, close, price, (int[]){1, 1}, 1, 1.0 + 5e-13, SELECT_EFFICIENCY,
                       counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 1 && counts[1] == 0, "a hair below: %d %d",
          counts[0], counts[1]);
}

static void test_bad_arguments(void)
{
    int counts[FLEX_N];
    const double *pw = flex_power, *pr = flex_price;
    const int *av = flex_avail;
    const double nan_power[FLEX_N] = {1.9, NAN, 2.9, 4.62};
    const double negative[FLEX_N] = {1.9, -2.25, 2.9, 4.62};
    const double infinite[FLEX_N] = {1.9, INFINITY, 2.9, 4.62};
    const int negative_avail[FLEX_N] = {1, -1, 1, 1};
    const select_goal_t cost = SELECT_COST, eff = SELECT_EFFICIENCY;
    CHECK(select_add(0, pw, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG, "n = 0");
    CHECK(select_add(-1, pw, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG, "n < 0");
    CHECK(select_add(FLEX_N, pw, pr, av, -1, 0, eff, counts, &found) == MAL_ERR_ARG, "s < 0");
    CHECK(select_add(FLEX_N, nan_power, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "NaN");
    CHECK(select_add(FLEX_N, negative, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "< 0");
    CHECK(select_add(FLEX_N, infinite, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "inf");
    CHECK(select_add(FLEX_N, pw, negative, av, 1, 0, cost, counts, &found) == MAL_ERR_ARG,
          "negative price");
    CHECK(select_add(FLEX_N, pw, nan_power, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "NaN price, even when unused");
    CHECK(select_add(FLEX_N, pw, pr, negative_avail, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "negative avail");
    CHECK(select_add(FLEX_N, pw, pr, av, 1, NAN, eff, counts, &found) == MAL_ERR_ARG,
          "NaN need");
    CHECK(select_add(FLEX_N, pw, pr, av, 1, 0, (select_goal_t)7, counts, &found)
              == MAL_ERR_ARG,
          "unknown goal");
    CHECK(select_add(FLEX_N, NULL, pr, av, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "no power");
    CHECK(select_add(FLEX_N, pw, NULL, av, 1, 0, cost, counts, &found) == MAL_ERR_ARG,
          "no price for the cost goal");
    CHECK(select_add(FLEX_N, pw, pr, NULL, 1, 0, eff, counts, &found) == MAL_ERR_ARG,
          "no avail");
    CHECK(select_add(FLEX_N, pw, pr, av, 1, 0, eff, NULL, &found) == MAL_ERR_ARG, "no counts");
    CHECK(select_add(FLEX_N, pw, NULL, av, 1, 0, eff, counts, &found) == MAL_OK && found,
          "efficiency reads no price");
    CHECK(select_remove(0, pw, pr, av, 1, 1, eff, counts, &found) == MAL_ERR_ARG,
          "remove n = 0");
    CHECK(select_remove(FLEX_N, pw, pr, av, -1, 1, eff, counts, &found) == MAL_ERR_ARG,
          "r < 0");
    CHECK(select_remove(FLEX_N, pw, pr, av, 1, NAN, eff, counts, &found) == MAL_ERR_ARG,
          "NaN spare");
    CHECK(select_remove(FLEX_N, pw, negative, av, 1, 1, cost, counts, &found) == MAL_ERR_ARG,
          "remove, negative price");
    CHECK(select_remove(FLEX_N, pw, pr, negative_avail, 1, 1, cost, counts, &found)
              == MAL_ERR_ARG,
          "negative removable");
    CHECK(select_add(FLEX_N, pw, pr, av, 1, 0, eff, counts, NULL) == MAL_ERR_ARG,
          "no answer to fill");
    CHECK(select_add_range(FLEX_N, pw, pr, av, 3, 2, 0, cost, counts, &found) == MAL_ERR_ARG,
          "add range with fewest > most");
    CHECK(select_remove_range(FLEX_N, pw, pr, av, 3, 2, 1, cost, counts, &found) ==
              MAL_ERR_ARG, "remove range with fewest > most");
}

/* Classes of zero power (a zero weight), empty requests and needs no set can meet: an
 * answer (found or not), never an error. */
static void test_zero_power_and_empty(void)
{
    const double power[2] = {0.0, 2.0}, price[2] = {1.0, 1.0};
    const int avail[2] = {3, 1};
    int counts[2] = {-7, -7};
    mal_status_t rc = select_add(2, power, price, avail, 2, 2.0, SELECT_EFFICIENCY, counts,
                                 &found);
    CHECK(rc == MAL_OK && found && counts[0] == 1 && counts[1] == 1,
          "a zero-power class fills the count: rc %d, %d %d", rc, counts[0], counts[1]);
    int untouched[2] = {-7, -7};
    rc = select_add(2, power, price, avail, 2, 2.5, SELECT_COST, untouched, &found);
    CHECK(rc == MAL_OK && !found, "zero power adds nothing: rc %d", rc);
    check_untouched(untouched, 2, "zero power");
    rc = select_add(2, power, price, avail, 0, 0.0, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 0 && counts[1] == 0, "s = 0, no need");
    rc = select_add(2, power, price, avail, 0, 1.0, SELECT_COST, untouched, &found);
    CHECK(rc == MAL_OK && !found, "s = 0 cannot meet a need: rc %d", rc);
    rc = select_remove(2, power, price, avail, 3, 0.0, SELECT_EFFICIENCY, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 3 && counts[1] == 0,
          "zero-power processes are removed for free: %d %d", counts[0], counts[1]);
    const int none[2] = {0, 0};
    rc = select_add_range(2, power, price, none, 0, 2, 0.0, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 0 && counts[1] == 0, "nothing available");
}

/* ---- selection against brute force ------------------------------------------------------- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int rng_below(int n)
{
    return (int)(rng() % (uint64_t)n);
}

static double rng_unit(void)
{
    return (double)(rng() >> 11) / 9007199254740992.0;
}

enum { MAX_N = 4, MAX_AVAIL = 5 };

typedef struct {
    int n;
    double power[MAX_N], price[MAX_N];
    int bound[MAX_N];
    int total;
    double limit;
    int adding;
    select_goal_t goal;
} instance_t;

/* Half the instances on a grid (quarters for powers, hundredths of prices), where exact
 * ties and sets that meet the limit exactly are common; half at random. */
static void random_values(instance_t *in)
{
    int grid = rng_below(2);
    in->n = 1 + rng_below(MAX_N);
    for (int c = 0; c < in->n; c++) {
        in->bound[c] = rng_below(MAX_AVAIL + 1);
        in->power[c] = grid ? 0.25 * rng_below(21) : 0.1 + 5.0 * rng_unit();
        in->price[c] = grid ? 0.01 * rng_below(6) : rng_unit();
    }
}

static int sum_of(int n, const int *v)
{
    int total = 0;
    for (int c = 0; c < n; c++)
        total += v[c];
    return total;
}

/* A random count vector within the bounds: its power is a limit met exactly. */
static double random_set_power(const instance_t *in)
{
    int v[MAX_N];
    for (int c = 0; c < in->n; c++)
        v[c] = rng_below(in->bound[c] + 1);
    return dot(in->n, in->power, v);
}

/* A limit a hair away from a set's power, within the solver's tolerances. */
static double near_set_power(const instance_t *in)
{
    static const double hair[] = {0.0, 1e-15, 1e-12, 1e-9, 1e-8, 1e-7, 1e-6};
    double p = random_set_power(in);
    double away = hair[rng_below(sizeof hair / sizeof *hair)] * fmax(1.0, p);
    if (away == 0.0)
        return nextafter(p, rng_below(2) ? INFINITY : -INFINITY);
    return rng_below(2) ? p + away : p - away;
}

static void random_instance(instance_t *in)
{
    random_values(in);
    in->adding = rng_below(2);
    in->goal = rng_below(2) ? SELECT_COST : SELECT_EFFICIENCY;
    in->total = rng_below(sum_of(in->n, in->bound) + 2);
    switch (rng_below(4)) {
    case 0:
        in->limit = random_set_power(in);
        break;
    case 1:
        in->limit = near_set_power(in);
        break;
    case 2:
        in->limit = -1.0 + 25.0 * rng_unit();
        break;
    default:
        in->limit = 5.0 * in->total * rng_unit();
    }
}

/* What the objectives rank, as the header orders them: primary (price for the cost goal,
 * power otherwise), then power. Positive when `a` is better. */
static int better(const instance_t *in, double price_a, double power_a, double price_b,
                  double power_b)
{
    int sign = in->adding ? 1 : -1; /* adding minimises, removing maximises */
    if (in->goal == SELECT_COST) {
        double tie = 1e-9 * fmax(1.0, fmax(price_a, price_b));
        if (fabs(price_a - price_b) > tie)
            return sign * (price_a < price_b ? 1 : -1);
    }
    if (power_a == power_b)
        return 0;
    return sign * (power_a < power_b ? 1 : -1);
}

static int meets_limit(const instance_t *in, double power)
{
    return in->adding ? power >= in->limit : power <= in->limit;
}

typedef struct {
    int found;
    double price, power;
} best_t;

/* Enumerates every count vector within the bounds (odometer order). */
static best_t brute_force(const instance_t *in)
{
    best_t best = {0, 0, 0};
    int v[MAX_N] = {0};
    for (;;) {
        if (sum_of(in->n, v) == in->total) {
            double power = dot(in->n, in->power, v), price = dot(in->n, in->price, v);
            if (meets_limit(in, power) &&
                (!best.found || better(in, price, power, best.price, best.power) > 0))
                best = (best_t){1, price, power};
        }
        int c = 0;
        while (c < in->n && v[c] == in->bound[c])
            v[c++] = 0;
        if (c == in->n)
            return best;
        v[c]++;
    }
}

static void describe(const instance_t *in, char *text, size_t size)
{
    int len = snprintf(text, size, "%s %s total %d limit %.17g:", in->adding ? "add" : "remove",
                       in->goal == SELECT_COST ? "cost" : "efficiency", in->total, in->limit);
    for (int c = 0; c < in->n && len > 0 && (size_t)len < size; c++)
        len += snprintf(text + len, size - (size_t)len, " [%.17g $%.17g x%d]", in->power[c],
                        in->price[c], in->bound[c]);
}

static void check_against_brute_force(const instance_t *in)
{
    int counts[MAX_N];
    mal_status_t rc =
        in->adding ? select_add(in->n, in->power, in->price, in->bound, in->total, in->limit,
                                in->goal, counts, &found)
                   : select_remove(in->n, in->power, in->price, in->bound, in->total,
                                   in->limit, in->goal, counts, &found);
    best_t best = brute_force(in);
    char text[512];
    describe(in, text, sizeof text);
    if (!best.found) {
        CHECK(rc == MAL_OK && !found, "%s: rc %d, want infeasible", text, rc);
        return;
    }
    CHECK(rc == MAL_OK && found, "%s: rc %d, want found", text, rc);
    if (!(rc == MAL_OK && found))
        return;
    int within = 1;
    for (int c = 0; c < in->n; c++)
        within &= counts[c] >= 0 && counts[c] <= in->bound[c];
    double power = dot(in->n, in->power, counts), price = dot(in->n, in->price, counts);
    CHECK(within && sum_of(in->n, counts) == in->total && meets_limit(in, power),
          "%s: an invalid set", text);
    CHECK(better(in, best.price, best.power, price, power) <= 0,
          "%s: got $%.17g power %.17g, brute force $%.17g power %.17g", text, price, power,
          best.price, best.power);
}

static void test_brute_force(void)
{
    for (int i = 0; i < 2000; i++) {
        instance_t in;
        random_instance(&in);
        check_against_brute_force(&in);
    }
}

/* select_max_power decides what select_add can reach, to the last bit. */
static void test_max_power_agrees(void)
{
    for (int i = 0; i < 300; i++) {
        instance_t in;
        random_values(&in);
        int s = rng_below(sum_of(in.n, in.bound) + 1);
        double max = select_max_power(in.n, in.power, in.bound, s);
        double min = select_min_power(in.n, in.power, in.bound, s);
        int counts[MAX_N];
        CHECK(select_add(in.n, in.power, in.price, in.bound, s, max, SELECT_EFFICIENCY,
                         counts, &found) == MAL_OK && found,
              "the max power of %d is reachable", s);
        CHECK(dot(in.n, in.power, counts) == max, "only the max power set reaches it");
        CHECK(select_remove(in.n, in.power, in.price, in.bound, s, min, SELECT_EFFICIENCY,
                            counts, &found) == MAL_OK && found,
              "the min power of %d is removable", s);
        double above = nextafter(max, INFINITY), below = nextafter(min, -INFINITY);
        CHECK(select_add(in.n, in.power, in.price, in.bound, s, above, SELECT_COST, counts,
                         &found) == MAL_OK && !found,
              "just above the max power of %d", s);
        CHECK(select_remove(in.n, in.power, in.price, in.bound, s, below, SELECT_COST,
                            counts, &found) == MAL_OK && !found,
              "just below the min power of %d", s);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (the directory of the test files)\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    test_good_file();
    test_broken_files();
    test_fields();
    test_cores();
    test_numbers();
    test_names();
    test_classes();
    test_long_lines();
    test_stream_errors();
    test_locale();
    test_single();
    test_flex_add();
    test_max_min_power();
    test_flex_remove();
    test_ties();
    test_hairline_limits();
    test_bad_arguments();
    test_zero_power_and_empty();
    test_brute_force();
    test_max_power_agrees();
    if (failures) {
        printf("test_avail: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("test_avail: PASS\n");
    return 0;
}
