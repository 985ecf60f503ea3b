/* Unit tests of src/policy/allocation.c: Slurm node and count lists, Open MPI hostfiles
 * and the placement of new processes on free slots. No MPI, no Slurm. */
#include "allocation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unittest.h"

/* The expanded names joined by ',' (or the error), for one comparison per case. */
static const char *names_of(const char *list)
{
    static char text[4096];
    alloc_t a;
    char err[1024] = "";
    if (alloc_parse_nodelist(list, &a, err, sizeof err) != MAL_OK) {
        snprintf(text, sizeof text, "error: %s", err);
        return text;
    }
    text[0] = '\0';
    for (int h = 0; h < a.nhosts; h++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", h ? "," : "",
                 a.hosts[h].name);
    alloc_free(&a);
    return text;
}

static void expect_names(const char *list, const char *want)
{
    const char *got = names_of(list);
    CHECK(strcmp(got, want) == 0, "'%s' -> '%s', want '%s'", list, got, want);
}

static void expect_list_error(const char *list, const char *part)
{
    const char *got = names_of(list);
    CHECK(strncmp(got, "error: ", 7) == 0 && strstr(got, part) != NULL,
          "'%s' -> '%s', want an error with '%s'", list, got, part);
}

static void test_nodelists(void)
{
    expect_names("node1", "node1");
    expect_names("a,b", "a,b");
    expect_names("node[01-03,7],other", "node01,node02,node03,node7,other");
    expect_names("n[8-10]", "n8,n9,n10");
    expect_names("n[08-10]", "n08,n09,n10");
    expect_names("n[098-101]", "n098,n099,n100,n101");
    expect_names("n[1-2]-ib", "n1-ib,n2-ib");
    expect_names("r[1-2]n[1-2]", "r1n1,r1n2,r2n1,r2n2");
    expect_names("x[3],y[5,1]", "x3,y5,y1");
    expect_names("vm.example.org", "vm.example.org");
    expect_list_error("", "empty");
    expect_list_error("a,,b", "empty name");
    expect_list_error("a,", "empty name");
    expect_list_error("n[3-1]", "range 3-1 decreases");
    expect_list_error("n[1", "'[' not closed");
    expect_list_error("n]1", "']' without '['");
    expect_list_error("n[]", "bad bracket");
    expect_list_error("n[a-b]", "bad range");
    expect_list_error("n[1-]", "bad range");
    expect_list_error("n[1-2-3]", "bad range");
    expect_list_error("n[1,]", "bad range");
    expect_list_error("n[,1]", "bad range");
    expect_list_error("n[1-99999999]", "more than 65536 nodes");
    char longname[300];
    memset(longname, 'h', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    expect_list_error(longname, "longer than 255");
}

static void test_counts(void)
{
    int c[8];
    char err[256];
    CHECK(alloc_parse_counts("4", c, 1, err, sizeof err) == MAL_OK && c[0] == 4, "4");
    CHECK(alloc_parse_counts("2(x3),1", c, 4, err, sizeof err) == MAL_OK && c[0] == 2 &&
          c[1] == 2 && c[2] == 2 && c[3] == 1, "2(x3),1: %s", err);
    CHECK(alloc_parse_counts("1,36(x2)", c, 3, err, sizeof err) == MAL_OK && c[0] == 1 &&
          c[1] == 36 && c[2] == 36, "1,36(x2): %s", err);
    CHECK(alloc_parse_counts("2(x3)", c, 4, err, sizeof err) == MAL_ERR_ARG &&
          strstr(err, "3 counts for 4 nodes"), "too few: %s", err);
    CHECK(alloc_parse_counts("2(x300000000)", c, 4, err, sizeof err) == MAL_ERR_ARG &&
          strstr(err, "300000000 counts for 4 nodes"), "too many: %s", err);
    CHECK(alloc_parse_counts("2(x0)", c, 1, err, sizeof err) == MAL_ERR_ARG &&
          strstr(err, "repeat 0"), "repeat 0: %s", err);
    CHECK(alloc_parse_counts("0", c, 1, err, sizeof err) == MAL_ERR_ARG &&
          strstr(err, "count 0"), "count 0: %s", err);
    const char *bad[] = {"", "x", "2(x3", "2(3)", "2,", ",2", "2 ", "-1", NULL};
    for (int i = 0; bad[i] != NULL; i++)
        CHECK(alloc_parse_counts(bad[i], c, 1, err, sizeof err) == MAL_ERR_ARG &&
              strstr(err, "expected N or N(xR)"), "'%s': %s", bad[i], err);
}

static void test_slurm(void)
{
    alloc_t a;
    char err[256] = "";
    CHECK(alloc_from_slurm("vm", "4", 1, &a, err, sizeof err) == MAL_OK && a.nhosts == 1 &&
          a.slots == 4 && a.hosts[0].slots == 4, "one node: %s", err);
    alloc_free(&a);
    CHECK(alloc_from_slurm("n[1-3],big", "2(x3),8", 2, &a, err, sizeof err) == MAL_OK &&
          a.nhosts == 4 && a.hosts[0].slots == 1 && a.hosts[3].slots == 4 && a.slots == 7,
          "cpus per task 2: %s", err);
    alloc_free(&a);
    CHECK(alloc_from_slurm("n1", "1", 4, &a, err, sizeof err) == MAL_OK && a.slots == 1,
          "fewer CPUs than a task takes one process: %s", err);
    alloc_free(&a);
    CHECK(alloc_from_slurm("n[1-2]", "4", 1, &a, err, sizeof err) == MAL_ERR_ARG &&
          strstr(err, "1 count for 2 nodes") && a.hosts == NULL && a.nhosts == 0,
          "counts differ from nodes: %s", err);
}

static void test_slurm_divisor(void)
{
    CHECK(alloc_slurm_divisor(false, "4") == 4, "CPU counts over 4 CPUs per task");
    CHECK(alloc_slurm_divisor(true, "4") == 1, "task counts are already per task");
    CHECK(alloc_slurm_divisor(false, NULL) == 1 && alloc_slurm_divisor(false, "0") == 1 &&
          alloc_slurm_divisor(false, "2x") == 1, "unset or not a positive integer");
}

static void test_mapping_policy(void)
{
    CHECK(alloc_mapping_oversubscribes("core:OVERSUBSCRIBE"), "core:OVERSUBSCRIBE");
    CHECK(alloc_mapping_oversubscribes("slot:pe=2,oversubscribe"), "pe=2,oversubscribe");
    CHECK(alloc_mapping_oversubscribes("Oversubscribe"), "alone, mixed case");
    CHECK(!alloc_mapping_oversubscribes("core:NOOVERSUBSCRIBE"), "NOOVERSUBSCRIBE");
    CHECK(!alloc_mapping_oversubscribes("core:oversubscribed") &&
          !alloc_mapping_oversubscribes("") && !alloc_mapping_oversubscribes(NULL),
          "not the whole token, empty, unset");
}

/* A hostfile from text, through a temporary stream. */
static mal_status_t hostfile(const char *text, int default_slots, alloc_t *a, char *err)
{
    FILE *f = tmpfile();
    if (f == NULL)
        return MAL_ERR_NOMEM;
    fputs(text, f);
    rewind(f);
    mal_status_t st = alloc_parse_hostfile(f, "hf", default_slots, a, err, 256);
    fclose(f);
    return st;
}

static void expect_hostfile_error(const char *text, const char *part)
{
    alloc_t a;
    char err[256] = "";
    CHECK(hostfile(text, 1, &a, err) == MAL_ERR_ARG && strstr(err, part) != NULL &&
          a.hosts == NULL, "'%s' -> '%s', want '%s'", text, err, part);
}

static void test_hostfiles(void)
{
    alloc_t a;
    char err[256] = "";
    CHECK(hostfile("# cluster\n\naa slots=2\nbb slots=4 max_slots=6  # comment\n"
                   "cc max_slots=3\ndd\n\tee cpu=5\n", 2, &a, err) == MAL_OK && a.nhosts == 5 &&
          a.hosts[0].slots == 2 && a.hosts[1].slots == 4 && a.hosts[2].slots == 3 &&
          a.hosts[3].slots == 2 && a.hosts[4].slots == 5 && a.slots == 16 &&
          strcmp(a.hosts[4].name, "ee") == 0, "hostfile: %s", err);
    alloc_free(&a);
    /* PBS-style: a host once per slot; repeated lines add up, in first-seen order. */
    CHECK(hostfile("aa\nbb\naa slots=2\naa\n", 1, &a, err) == MAL_OK && a.nhosts == 2 &&
          strcmp(a.hosts[0].name, "aa") == 0 && a.hosts[0].slots == 4 &&
          strcmp(a.hosts[1].name, "bb") == 0 && a.hosts[1].slots == 1 && a.slots == 5,
          "repeated host: %s", err);
    alloc_free(&a);
    expect_hostfile_error("aa slots=1000000\naa\n", "hf:2: host 'aa' has more than 1000000");
    expect_hostfile_error("aa slots=x\n", "hf:1: slots 'x' is not an integer in 1..1000000");
    expect_hostfile_error("aa slots=0\n", "hf:1: slots '0'");
    expect_hostfile_error("\naa foo=1\n", "hf:2: unknown field 'foo=1'");
    expect_hostfile_error("aa slots\n", "hf:1: unknown field 'slots'");
    expect_hostfile_error("aa slots=8 max_slots=4\n", "hf:1: slots 8 above max_slots 4");
    expect_hostfile_error("# nothing\n\n", "hf: no host listed");
    char line[5000];
    snprintf(line, sizeof line, "aa #%04900d\nbb\n", 0);
    expect_hostfile_error(line, "hf:1: line longer than 4094 characters");
    CHECK(alloc_read_hostfile("/nonexistent/hostfile", 1, &a, err, sizeof err) ==
          MAL_ERR_ARG && strstr(err, "/nonexistent/hostfile: cannot open"), "%s", err);
}

static void test_find_host(void)
{
    alloc_t a;
    char err[256] = "";
    if (hostfile("10.0.0.1\nn1.cluster\nn1.other\nlocalhost\n", 1, &a, err) != MAL_OK) {
        CHECK(0, "%s", err);
        return;
    }
    CHECK(alloc_find_host(&a, "10.0.0.1", NULL) == 0, "address, exact");
    CHECK(alloc_find_host(&a, "10.0.0.2", NULL) == -1 && alloc_find_host(&a, "10", NULL) == -1,
          "addresses are not cut at their first dot");
    CHECK(alloc_find_host(&a, "n1.other", NULL) == 2, "exact before the short name");
    CHECK(alloc_find_host(&a, "n1", NULL) == 1, "short name: the first");
    CHECK(alloc_find_host(&a, "vm", "vm") == 3 && alloc_find_host(&a, "127.0.1.1", NULL) == 3,
          "this host and loopback names are the localhost entry");
    CHECK(alloc_find_host(&a, "vm", "other") == -1 && alloc_find_host(&a, "vm", NULL) == -1,
          "another host is not localhost");
    alloc_free(&a);
}

static void test_placement(void)
{
    alloc_t a;
    char err[256] = "";
    if (alloc_from_slurm("n[1-3]", "2,4,1", 1, &a, err, sizeof err) != MAL_OK) {
        CHECK(0, "%s", err);
        return;
    }
    CHECK(alloc_find_host(&a, "n2", NULL) == 1 &&
          alloc_find_host(&a, "n2.cluster.org", NULL) == 1 &&
          alloc_find_host(&a, "n", NULL) == -1 && alloc_find_host(&a, "n22", NULL) == -1,
          "find");
    int running[3] = {2, 1, 0}, place[8];
    int n = alloc_place(&a, running, 4, place);
    CHECK(n == 4 && place[0] == 1 && place[1] == 1 && place[2] == 1 && place[3] == 2,
          "fills n2 then n3: %d [%d %d %d %d]", n, place[0], place[1], place[2], place[3]);
    n = alloc_place(&a, running, 8, place);
    CHECK(n == 4, "only the 4 free slots: %d", n);
    int over[3] = {3, 4, 1}; /* more running than slots (oversubscribed) */
    CHECK(alloc_place(&a, over, 1, place) == 0, "no free slot");
    alloc_free(&a);
}

/* The hosts of `list` picked by `mask` (bit h for host h) written back as a node list. */
static const char *format_of(const char *list, unsigned mask)
{
    static char text[4096];
    alloc_t a;
    char err[256] = "";
    if (alloc_parse_nodelist(list, &a, err, sizeof err) != MAL_OK) {
        snprintf(text, sizeof text, "error: %s", err);
        return text;
    }
    bool pick[32] = {false};
    for (int h = 0; h < a.nhosts && h < 32; h++)
        pick[h] = (mask >> h) & 1;
    char *out = alloc_format_nodelist(&a, pick);
    snprintf(text, sizeof text, "%s", out != NULL ? out : "(no memory)");
    free(out);
    alloc_free(&a);
    return text;
}

static void expect_format(const char *list, unsigned mask, const char *want)
{
    const char *got = format_of(list, mask);
    CHECK(strcmp(got, want) == 0, "'%s' picked %#x -> '%s', want '%s'", list, mask, got, want);
}

/* Names written back as Slurm writes node lists, and read back to the same names. */
static void test_format_nodelist(void)
{
    expect_format("slA,slB,slC", 0x5, "slA,slC");
    expect_format("slA,slB,slC", 0x0, "");
    expect_format("n[01-03,07],login2", 0x1f, "n[01-03,07],login2");
    expect_format("n[01-03,07],login2", 0x1d, "n[01,03,07],login2");
    expect_format("n[1-4]", 0xb, "n[1-2,4]");
    expect_format("n[8-11]", 0xf, "n[8-11]");
    expect_format("n01,n2,n3", 0x7, "n[01,2-3]");
    expect_format("n[098-101]", 0xf, "n[098-101]");
    expect_format("n7", 0x1, "n7");
    expect_format("n1,m2,n3", 0x7, "n1,m2,n3");
    expect_format("r1n[1-2],x", 0x7, "r1n[1-2],x");
    expect_format("n1-ib,n2-ib", 0x3, "n1-ib,n2-ib");
    expect_format("n[3,1,2]", 0x7, "n[3,1-2]");
    expect_format("n1234567890,n1234567891", 0x3, "n1234567890,n1234567891");
    expect_format("n[9-10]", 0x2, "n10");
    /* Random picks of a mixed list read back to the names picked, in order. */
    const char *list = "c[001-009],c010,c[11-13],d[5-6],io,c[099-101],7,8";
    alloc_t a;
    char err[256] = "";
    if (alloc_parse_nodelist(list, &a, err, sizeof err) != MAL_OK) {
        CHECK(0, "%s", err);
        return;
    }
    uint64_t rng = 0x5eed;
    for (int round = 0; round < 200; round++) {
        bool pick[64] = {false};
        char want[4096] = "";
        for (int h = 0; h < a.nhosts; h++) {
            pick[h] = unit_rng(&rng) % 3 != 0;
            if (pick[h])
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                         want[0] ? "," : "", a.hosts[h].name);
        }
        char *text = alloc_format_nodelist(&a, pick);
        const char *back = text == NULL ? "(no memory)" : text[0] ? names_of(text) : "";
        CHECK(strcmp(back, want) == 0, "round %d: '%s' reads back as '%s', want '%s'", round,
              text ? text : "", back, want);
        free(text);
    }
    alloc_free(&a);
}

static void test_drop_hosts(void)
{
    alloc_t a;
    char err[256] = "";
    if (alloc_from_slurm("n[1-4]", "2,4,1,3", 1, &a, err, sizeof err) != MAL_OK) {
        CHECK(0, "%s", err);
        return;
    }
    bool drop[4] = {false, true, false, true};
    CHECK(alloc_drop_hosts(&a, drop) == 2, "two dropped");
    CHECK(a.nhosts == 2 && a.slots == 3 && strcmp(a.hosts[0].name, "n1") == 0 &&
          strcmp(a.hosts[1].name, "n3") == 0 && a.hosts[1].slots == 1,
          "n1 (2) and n3 (1) kept: %d hosts, %lld slots", a.nhosts, (long long)a.slots);
    bool none[2] = {false, false};
    CHECK(alloc_drop_hosts(&a, none) == 0 && a.nhosts == 2 && a.slots == 3, "nothing dropped");
    alloc_free(&a);
}

int main(void)
{
    test_nodelists();
    test_counts();
    test_slurm();
    test_slurm_divisor();
    test_mapping_policy();
    test_hostfiles();
    test_find_host();
    test_placement();
    test_format_nodelist();
    test_drop_hosts();
    if (failures) {
        printf("test_allocation: FAIL (%d)\n", failures);
        return 1;
    }
    printf("test_allocation: PASS\n");
    return 0;
}
