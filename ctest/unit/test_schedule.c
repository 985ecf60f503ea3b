/* Unit tests of src/policy/schedule: the MAL_PLAN parser, with no MPI. */
#include "schedule.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unittest.h"

#define EXPAND(it, n, spawn) {(it), SCHEDULE_EXPAND, (n), (spawn), NULL, NULL, false}
#define SHRINK_LAST(it, n) \
    {(it), SCHEDULE_SHRINK, (n), SCHEDULE_SPAWN_DEFAULT, NULL, NULL, false}
#define SHRINK_RANKS(it, n, ...) \
    {(it), SCHEDULE_SHRINK, (n), SCHEDULE_SPAWN_DEFAULT, (int[]){__VA_ARGS__}, NULL, false}
#define REBALANCE(it, n, ...) \
    {(it), SCHEDULE_REBALANCE, (n), SCHEDULE_SPAWN_DEFAULT, NULL, (double[]){__VA_ARGS__}, \
     false}

typedef struct {
    const char *text;
    size_t count;
    const schedule_action_t *expected;
} valid_case_t;

static const valid_case_t valid_cases[] = {
    {"10:+2,20:-1,30:w=1:2:1", 3,
     (const schedule_action_t[]){EXPAND(10, 2, SCHEDULE_SPAWN_DEFAULT), SHRINK_LAST(20, 1),
                                 REBALANCE(30, 3, 1.0, 2.0, 1.0)}},
    {"5:+3b", 1, (const schedule_action_t[]){EXPAND(5, 3, SCHEDULE_SPAWN_BATCHED)}},
    {"6:+1p", 1, (const schedule_action_t[]){EXPAND(6, 1, SCHEDULE_SPAWN_PER_CALL)}},
    {"7:-@0:2", 1, (const schedule_action_t[]){SHRINK_RANKS(7, 2, 0, 2)}},
    {"3:-@5:1:3", 1, (const schedule_action_t[]){SHRINK_RANKS(3, 3, 5, 1, 3)}},
    {"1:-@2147483647", 1, (const schedule_action_t[]){SHRINK_RANKS(1, 1, 2147483647)}},
    {"", 0, NULL},
    {NULL, 0, NULL},
    {"   ", 0, NULL},
    {" 10 : +2 , 20 : w = 0.5 : 0 : 1e1 ,30:-@4 : 0 ", 3,
     (const schedule_action_t[]){EXPAND(10, 2, SCHEDULE_SPAWN_DEFAULT),
                                 REBALANCE(20, 3, 0.5, 0.0, 10.0), SHRINK_RANKS(30, 2, 4, 0)}},
    {"1:+4096,9223372036854775807:-4096", 2,
     (const schedule_action_t[]){EXPAND(1, 4096, SCHEDULE_SPAWN_DEFAULT),
                                 SHRINK_LAST(INT64_MAX, 4096)}},
    {"2:w=0:0:3,4:w=.25", 2,
     (const schedule_action_t[]){REBALANCE(2, 3, 0.0, 0.0, 3.0), REBALANCE(4, 1, 0.25)}},
    {"007:+2", 1, (const schedule_action_t[]){EXPAND(7, 2, SCHEDULE_SPAWN_DEFAULT)}},
};

static void check_action(const char *text, size_t i, const schedule_action_t *got,
                         const schedule_action_t *want)
{
    CHECK(got->iteration == want->iteration, "\"%s\" action %zu: iteration %" PRId64
          ", want %" PRId64, text, i, got->iteration, want->iteration);
    CHECK(got->kind == want->kind, "\"%s\" action %zu: kind %d, want %d", text, i,
          (int)got->kind, (int)want->kind);
    CHECK(got->count == want->count, "\"%s\" action %zu: count %d, want %d", text, i,
          got->count, want->count);
    CHECK(got->spawn == want->spawn, "\"%s\" action %zu: spawn %d, want %d", text, i,
          (int)got->spawn, (int)want->spawn);
    CHECK((got->ranks == NULL) == (want->ranks == NULL), "\"%s\" action %zu: ranks %s",
          text, i, got->ranks ? "present" : "NULL");
    CHECK((got->weights == NULL) == (want->weights == NULL),
          "\"%s\" action %zu: weights %s", text, i, got->weights ? "present" : "NULL");
    if (got->count != want->count)
        return;
    for (int k = 0; got->ranks && want->ranks && k < want->count; k++)
        CHECK(got->ranks[k] == want->ranks[k], "\"%s\" action %zu: rank[%d] = %d, want %d",
              text, i, k, got->ranks[k], want->ranks[k]);
    for (int k = 0; got->weights && want->weights && k < want->count; k++)
        CHECK(got->weights[k] == want->weights[k],
              "\"%s\" action %zu: weight[%d] = %g, want %g", text, i, k, got->weights[k],
              want->weights[k]);
}

static void test_valid_plans(void)
{
    for (size_t c = 0; c < sizeof valid_cases / sizeof *valid_cases; c++) {
        const valid_case_t *vc = &valid_cases[c];
        const char *shown = vc->text ? vc->text : "(NULL)";
        char err[256] = "untouched";
        schedule_t s;
        mal_status_t rc = schedule_parse(vc->text, &s, err, sizeof err);
        CHECK(rc == MAL_OK, "\"%s\": rc %d (%s)", shown, rc, err);
        if (rc != MAL_OK)
            continue;
        CHECK(s.count == vc->count, "\"%s\": %zu actions, want %zu", shown, s.count,
              vc->count);
        CHECK((s.actions == NULL) == (vc->count == 0), "\"%s\": actions %s with %zu actions",
              shown, s.actions ? "allocated" : "NULL", s.count);
        for (size_t i = 0; i < s.count && i < vc->count; i++)
            check_action(shown, i, &s.actions[i], &vc->expected[i]);
        schedule_free(&s);
    }
}

typedef struct {
    const char *text;
    size_t entry;       /* 1-based position of the offending entry */
    const char *quoted; /* its text as the message quotes it */
    const char *reason; /* a fragment of the reason */
} invalid_case_t;

static const invalid_case_t invalid_cases[] = {
    /* entry structure */
    {"10:+2,", 2, "", "empty entry"},
    {",", 1, "", "empty entry"},
    {",10:+2", 1, "", "empty entry"},
    {"10:+2,,20:-1", 2, "", "empty entry"},
    {"10:+2, ,20:-1", 2, "", "empty entry"},
    {"10+2", 1, "10+2", "expected ':'"},
    {"10", 1, "10", "expected ':'"},
    {"1x:+1", 1, "1x:+1", "expected ':'"},
    {"10:", 1, "10:", "missing action"},
    {"5:+1,10: ", 2, "10:", "missing action"},
    {"30:x5", 1, "30:x5", "unknown action"},
    {"30:*2", 1, "30:*2", "unknown action"},
    /* iterations */
    {":+2", 1, ":+2", "iteration is not a positive integer"},
    {"0:+2", 1, "0:+2", "at least 1"},
    {"-5:+2", 1, "-5:+2", "iteration is not a positive integer"},
    {"+5:+2", 1, "+5:+2", "iteration is not a positive integer"},
    {"\t10:+1", 1, "\t10:+1", "iteration is not a positive integer"},
    {"9223372036854775808:+1", 1, "9223372036854775808:+1", "64 bits"},
    {"5:+1,99999999999999999999:+1", 2, "99999999999999999999:+1", "64 bits"},
    {"10:+1,10:+2", 2, "10:+2", "does not follow"},
    {"10:+1,5:+2", 2, "5:+2", "does not follow"},
    {"10:+1,20:-1,15:w=1", 3, "15:w=1", "does not follow"},
    /* expand */
    {"10:+0", 1, "10:+0", "process count must be at least 1"},
    {"10:+4097", 1, "10:+4097", "process count exceeds 4096"},
    {"10:+99999999999999999999", 1, "10:+99999999999999999999", "process count exceeds"},
    {"10:+", 1, "10:+", "process count is not a positive integer"},
    {"10:+-1", 1, "10:+-1", "process count is not a positive integer"},
    {"10:+ 2", 1, "10:+ 2", "process count is not a positive integer"},
    {"10:+2x", 1, "10:+2x", "unexpected \"x\""},
    {"10:+2bp", 1, "10:+2bp", "unexpected \"p\""},
    {"10:+2 b", 1, "10:+2 b", "unexpected \"b\""},
    {"10:+2.5", 1, "10:+2.5", "unexpected \".5\""},
    /* shrink */
    {"10:+2,20:-x", 2, "20:-x", "rank count is not a positive integer"},
    {"20:-0", 1, "20:-0", "rank count must be at least 1"},
    {"20:-4097", 1, "20:-4097", "rank count exceeds 4096"},
    {"20:-@", 1, "20:-@", "rank is not a non-negative integer"},
    {"20:-@1:", 1, "20:-@1:", "rank is not a non-negative integer"},
    {"20:-@1::2", 1, "20:-@1::2", "rank is not a non-negative integer"},
    {"20:-@-1", 1, "20:-@-1", "rank is not a non-negative integer"},
    {"20:-@1:1", 1, "20:-@1:1", "rank 1 is listed twice"},
    {"20:-@3:0:7:0", 1, "20:-@3:0:7:0", "rank 0 is listed twice"},
    {"20:-@2147483648", 1, "20:-@2147483648", "rank exceeds"},
    {"20:-@1 2", 1, "20:-@1 2", "unexpected \"2\""},
    /* rebalance */
    {"30:w", 1, "30:w", "expected '='"},
    {"30:w1", 1, "30:w1", "expected '='"},
    {"30:w=", 1, "30:w=", "weight is missing"},
    {"30:w=1:", 1, "30:w=1:", "weight is missing"},
    {"30:w=1:-1", 1, "30:w=1:-1", "negative"},
    {"30:w=-0", 1, "30:w=-0", "negative"},
    {"30:w=nan", 1, "30:w=nan", "NaN"},
    {"30:w=1:NAN", 1, "30:w=1:NAN", "NaN"},
    {"30:w=inf", 1, "30:w=inf", "infinite"},
    {"30:w=1:infinity", 1, "30:w=1:infinity", "infinite"},
    {"30:w=1e999", 1, "30:w=1e999", "out of range"},
    {"30:w=0:0", 1, "30:w=0:0", "all weights are zero"},
    {"30:w=0", 1, "30:w=0", "all weights are zero"},
    {"30:w=1x", 1, "30:w=1x", "weight \"1x\" is not a number"},
    {"30:w=abc", 1, "30:w=abc", "is not a number"},
    {"30:w=\t1", 1, "30:w=\t1", "is not a number"},
    {"30:w=1:2 3", 1, "30:w=1:2 3", "unexpected \"3\""},
};

/* Runs one refused plan: -1, an empty *out, and a message naming the entry. */
static void expect_refused(const char *text, size_t entry, const char *quoted,
                           const char *reason)
{
    int sentinel;
    schedule_t s = {(schedule_action_t *)&sentinel, 42};
    char err[512] = "";
    mal_status_t rc = schedule_parse(text, &s, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG, "\"%s\": rc %d, want MAL_ERR_ARG", text, rc);
    CHECK(s.actions == NULL && s.count == 0, "\"%s\": out not emptied", text);
    char want[256];
    snprintf(want, sizeof want, "entry %zu (", entry);
    CHECK(strncmp(err, want, strlen(want)) == 0, "\"%s\": message \"%s\" does not start "
          "with \"%s\"", text, err, want);
    if (quoted) {
        snprintf(want, sizeof want, "(\"%s\"): ", quoted);
        CHECK(strstr(err, want) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", text, err,
              want);
    }
    CHECK(strstr(err, reason) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", text, err,
          reason);
    if (rc == MAL_OK)
        schedule_free(&s);
}

static void test_invalid_plans(void)
{
    for (size_t c = 0; c < sizeof invalid_cases / sizeof *invalid_cases; c++) {
        const invalid_case_t *ic = &invalid_cases[c];
        expect_refused(ic->text, ic->entry, ic->quoted, ic->reason);
    }
}

/* "ITER:PREFIX" followed by `n` distinct items "0:1:2:...". */
static char *long_list(const char *head, int n)
{
    size_t cap = strlen(head) + 12 * (size_t)n + 1;
    char *text = malloc(cap);
    if (!text)
        abort();
    size_t len = (size_t)snprintf(text, cap, "%s", head);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, i ? ":%d" : "%d", i);
    return text;
}

/* Lists of exactly the limit parse, one more item is refused, and so is a weight too
 * long to copy. */
static void test_list_limits(void)
{
    const char *heads[] = {"1:-@", "1:w="};
    for (int h = 0; h < 2; h++) {
        char *text = long_list(heads[h], SCHEDULE_MAX_COUNT);
        schedule_t s;
        char err[256] = "";
        mal_status_t rc = schedule_parse(text, &s, err, sizeof err);
        CHECK(rc == MAL_OK && s.count == 1 && s.actions[0].count == SCHEDULE_MAX_COUNT,
              "%s with %d items: rc %d (%s)", heads[h], SCHEDULE_MAX_COUNT, rc, err);
        if (rc == MAL_OK && h == 0)
            CHECK(s.actions[0].ranks[SCHEDULE_MAX_COUNT - 1] == SCHEDULE_MAX_COUNT - 1,
                  "last rank %d", s.actions[0].ranks[SCHEDULE_MAX_COUNT - 1]);
        if (rc == MAL_OK && h == 1)
            CHECK(s.actions[0].weights[SCHEDULE_MAX_COUNT - 1] == SCHEDULE_MAX_COUNT - 1,
                  "last weight %g", s.actions[0].weights[SCHEDULE_MAX_COUNT - 1]);
        schedule_free(&s);
        free(text);

        text = long_list(heads[h], SCHEDULE_MAX_COUNT + 1);
        expect_refused(text, 1, NULL, h == 0 ? "more than 4096 ranks" : "more than 4096 weights");
        free(text);
    }
    char weight[200] = "1:w=0.";
    memset(weight + 6, '0', 150);
    memcpy(weight + 156, "1", 2);
    expect_refused(weight, 1, NULL, "weight is longer than 127 characters");
}

/* A long entry is quoted shortened, so the reason after it still fits. */
static void test_long_entry_quote(void)
{
    char *list = long_list("5:+1,6:-@", 300);
    size_t len = strlen(list);
    char *text = malloc(len + 3);
    if (!text)
        abort();
    memcpy(text, list, len);
    memcpy(text + len, ":7", 3); /* rank 7 again: refused, at the very end */
    char err[256] = "";
    schedule_t s;
    mal_status_t rc = schedule_parse(text, &s, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG, "long entry: rc %d", rc);
    CHECK(strncmp(err, "entry 2 (\"6:-@0:1:2:3", 21) == 0, "long entry message \"%s\"", err);
    CHECK(strstr(err, "...\"): rank 7 is listed twice") != NULL, "long entry message \"%s\"",
          err);
    free(text);
    free(list);
}

/* The message is cut to errlen, always NUL-terminated, and nothing is written past it. */
static void test_error_buffer(void)
{
    char buf[16];
    memset(buf, 'X', sizeof buf);
    schedule_t s;
    mal_status_t rc = schedule_parse("10:+0", &s, buf, 8);
    CHECK(rc == MAL_ERR_ARG, "rc %d", rc);
    CHECK(memcmp(buf, "entry 1", 7) == 0 && buf[7] == '\0', "truncated \"%.8s\"", buf);
    for (size_t i = 8; i < sizeof buf; i++)
        CHECK(buf[i] == 'X', "byte %zu written past errlen", i);
    rc = schedule_parse("10:+0", &s, NULL, 0);
    CHECK(rc == MAL_ERR_ARG && s.actions == NULL && s.count == 0, "err NULL: rc %d", rc);
    memset(buf, 'X', sizeof buf);
    rc = schedule_parse("10:+0", &s, buf, 0);
    CHECK(rc == MAL_ERR_ARG && buf[0] == 'X', "errlen 0: rc %d, wrote %c", rc, buf[0]);
    rc = schedule_parse("10:+1", NULL, buf, sizeof buf);
    CHECK(rc == MAL_ERR_ARG, "out NULL: rc %d", rc);
}

static void test_next(void)
{
    schedule_t s;
    char err[256] = "";
    mal_status_t rc = schedule_parse("10:+2,20:-1,30:w=1", &s, err, sizeof err);
    CHECK(rc == MAL_OK && s.count == 3, "rc %d (%s)", rc, err);
    if (rc != MAL_OK)
        return;
    const struct {
        int64_t it;
        size_t want;
    } cases[] = {{INT64_MIN, 0}, {0, 0},  {1, 0},  {10, 0},  {11, 1},
                 {19, 1},        {20, 1}, {21, 2}, {30, 2},  {31, 3}, {INT64_MAX, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t got = schedule_next(&s, cases[i].it);
        CHECK(got == cases[i].want, "next(%" PRId64 ") = %zu, want %zu", cases[i].it, got,
              cases[i].want);
    }
    schedule_free(&s);
    schedule_t empty = {0};
    CHECK(schedule_next(&empty, 5) == 0, "next on an empty plan");
    rc = schedule_parse("7:+1", &s, err, sizeof err);
    CHECK(rc == MAL_OK && schedule_next(&s, 7) == 0 && schedule_next(&s, 8) == 1,
          "one action: rc %d", rc);
    schedule_free(&s);
}

static void test_free(void)
{
    schedule_t s;
    char err[256] = "";
    mal_status_t rc = schedule_parse("10:+2,20:-@1:3,30:w=1:2", &s, err, sizeof err);
    CHECK(rc == MAL_OK && s.count == 3, "rc %d (%s)", rc, err);
    schedule_free(&s);
    CHECK(s.actions == NULL && s.count == 0, "free leaves {NULL, 0}");
    schedule_free(&s);
    CHECK(s.actions == NULL && s.count == 0, "second free leaves {NULL, 0}");
    schedule_t zeroed = {0};
    schedule_free(&zeroed);
    CHECK(zeroed.actions == NULL && zeroed.count == 0, "free of a zeroed schedule");
    schedule_free(NULL);
}

/* "-N!" and "-@R:R!": released for good, even with a pool; "!" elsewhere is refused. */
static void test_release_for_good(void)
{
    schedule_t s;
    char err[256] = "";
    mal_status_t rc = schedule_parse("3:-1!,5:-@0:2!,7:-1", &s, err, sizeof err);
    CHECK(rc == MAL_OK && s.count == 3, "rc %d (%s)", rc, err);
    if (rc == MAL_OK) {
        CHECK(s.actions[0].release && s.actions[0].count == 1, "-1!");
        CHECK(s.actions[1].release && s.actions[1].count == 2 && s.actions[1].ranks[1] == 2,
              "-@0:2!");
        CHECK(!s.actions[2].release, "-1 parks as the pool says");
        schedule_free(&s);
    }
    rc = schedule_parse("3:+1!", &s, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG && strstr(err, "after the action") != NULL, "+1!: rc %d (%s)", rc,
          err);
    rc = schedule_parse("3:-1!!", &s, err, sizeof err);
    CHECK(rc == MAL_ERR_ARG, "-1!!: rc %d", rc);
}

/* `text` parses and checks against `procs`; `expect` (NULL: accepted) is found in the
 * refusal. */
static void check_plan(const char *text, int procs, const char *expect)
{
    schedule_t s;
    char err[320] = "";
    mal_status_t rc = schedule_parse(text, &s, err, sizeof err);
    CHECK(rc == MAL_OK, "%s: parse rc %d (%s)", text, rc, err);
    if (rc != MAL_OK)
        return;
    rc = schedule_check(&s, procs, err, sizeof err);
    if (expect == NULL)
        CHECK(rc == MAL_OK, "%s from %d: refused (%s)", text, procs, err);
    else
        CHECK(rc == MAL_ERR_ARG && strstr(err, expect) != NULL,
              "%s from %d: rc %d, message '%s', expected '%s'", text, procs, rc, err, expect);
    schedule_free(&s);
}

static void test_check(void)
{
    /* The counts each entry can meet follow the entries before it. */
    check_plan("", 1, NULL);
    check_plan("10:+2,20:w=1:2:3:4,30:-@0:3,40:w=1:1", 2, NULL);
    check_plan("10:+2,20:w=1:2:3", 2,
               "entry 2 (iteration 20, \"w=\" with 3 weights): 2 or 4 processes run then "
               "(2 at the start, +2 at iteration 10; each change may fail)");
    check_plan("5:w=1", 1, NULL);
    check_plan("5:w=1:1", 1, "entry 1 (iteration 5, \"w=\" with 2 weights): 1 process "
                             "runs then (1 at the start)");
    /* A change that fails leaves the count as it was: the weights of either count pass. */
    check_plan("1:+1,2:w=1:1,3:w=1:1:1", 2, NULL);
    check_plan("1:+1,2:+1,3:w=1:1:1,4:-1,5:+1", 2, NULL);
    check_plan("1:+1,2:-1,3:w=1:1:1:1", 2, "2 or 3 processes run then");
    check_plan("1:+1,2:+2,3:-1,4:w=1:1:1:1:1:1:1", 2,
               "1, 2, 3, 4 or 5 processes run then");
    /* Releasing every process, or a rank that is not there even at the largest count. */
    check_plan("5:-2", 2, "entry 1 (iteration 5, releases 2 processes, which leaves none)");
    check_plan("5:-1,6:-1", 2, NULL);
    check_plan("5:-1!,6:-2", 2, "entry 2 (iteration 6, releases 2 processes, which leaves "
                                "none): 1 or 2 processes run then");
    check_plan("5:-@0:1", 2, "which leaves none");
    check_plan("5:-@3", 3, "entry 1 (iteration 5, releases rank 3): 3 processes run then");
    check_plan("5:+1,6:-@3", 3, NULL);
    check_plan("5:+1,6:-@0!,7:w=1:0:2", 3, NULL);
    /* Changes beyond the fourth are elided from the history. */
    check_plan("1:+1,2:+1,3:+1,4:+1,5:+1,6:w=1:1:1:1:1:1:1:1:1", 1,
               "(1 at the start, +1 at iteration 1, +1 at iteration 2, "
               "+1 at iteration 3, +1 at iteration 4, ...; each change may fail)");
    /* A NULL message buffer is allowed. */
    schedule_t s;
    CHECK(schedule_parse("5:-1", &s, NULL, 0) == MAL_OK, "parse");
    CHECK(schedule_check(&s, 1, NULL, 0) == MAL_ERR_ARG, "check without a buffer");
    schedule_free(&s);
}

int main(void)
{
    test_check();
    test_valid_plans();
    test_invalid_plans();
    test_list_limits();
    test_long_entry_quote();
    test_error_buffer();
    test_next();
    test_free();
    test_release_for_good();
    if (failures) {
        printf("unit.schedule: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("unit.schedule: PASS\n");
    return 0;
}
