/* Unit tests of src/policy's resource view: the availability file (avail.h). argv[1] is
 * the directory of the test files (ctest/unit/avail). The processor-class selection has
 * its own tests (test_select.c). */
#include "avail.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
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
    if (failures) {
        printf("test_avail: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("test_avail: PASS\n");
    return 0;
}
