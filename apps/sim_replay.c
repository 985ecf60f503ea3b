/* mal-sim replay FILE: the decisions of bench/regret.sh replayed with the costs its runs
 * measured, against every decision point the run had.
 *
 * A real run can try the alternatives only at the iteration where the policy first
 * decided; with the measured costs, each alternative can be placed at any decision
 * point K (10, 20, ...) of the run at no cost:
 *     T(alt, K) = P(K) - P(0) + C(alt) + (N - K) A(alt),   T(nothing) = P(N)
 * where P(K) is the time of mal_init and the first K iterations of the run that did
 * nothing (P(0): mal_init's alone, 0 when not written), C(alt) the alternative's own
 * mal_init (a plan that spawns pays Open MPI's platform probe there) and what the
 * iteration of its reconfiguration took beyond the iterations before it, A(alt) its mean
 * iteration after. The replayed policy is its first decision
 * at its K; its later decisions are not replayed (the loaded-core policy rebalances
 * again). Regret = T(policy) / the least T over every alternative and decision point - 1;
 * the decomposition error compares T(alt, K) at the measured K with the measured total.
 *
 * The file (written by bench/regret.sh, every figure averaged over its repetitions):
 *     prefix,SCENARIO,K,SECONDS          P(K) for K = 0 (optional), 10, 20, ..., N (N: the
 *                                        run's length)
 *     alt,SCENARIO,ALT,K,C,A,TOTAL       an alternative measured at K
 *     policy,SCENARIO,ALT,K,TOTAL[,N]    the policy's first decision, as the alternative
 *                                        it equals ("none": it kept the set), taken in N
 *                                        repetitions (1 when absent); of several, the
 *                                        replay follows the one taken most often
 * An alternative may appear once per iteration it was measured at; the policy's is
 * priced with the one measured at its K where there is one.
 * Lines starting with '#' and blank lines are ignored. */
#include "sim_replay.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCENARIOS 16
#define MAX_POINTS 256
#define MAX_ALTS 32
#define NAME_MAX_LEN 32

typedef struct {
    char name[NAME_MAX_LEN];
    int k;
    double cost, after, total;
} replay_alt_t;

typedef struct {
    char name[NAME_MAX_LEN];
    int npoints;
    int point[MAX_POINTS];        /* K, ascending as written; the last is N          */
    double prefix[MAX_POINTS];
    int nalts;
    replay_alt_t alt[MAX_ALTS];
    bool has_policy;
    int policy_count;             /* repetitions that took it                         */
    replay_alt_t policy;          /* name: the alternative it equals; total measured */
} replay_scenario_t;

typedef struct {
    int n;
    replay_scenario_t s[MAX_SCENARIOS];
} replay_t;

static replay_scenario_t *scenario_of(replay_t *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->s[i].name, name) == 0)
            return &r->s[i];
    if (r->n == MAX_SCENARIOS)
        return NULL;
    replay_scenario_t *s = &r->s[r->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

/* One line into r; false when it is not one of the three forms. */
static bool parse_line(char *line, replay_t *r)
{
    char kind[16], name[NAME_MAX_LEN], alt[NAME_MAX_LEN];
    int k;
    double a, b, c;
    replay_scenario_t *s;
    if (sscanf(line, "prefix,%31[^,],%d,%lf", name, &k, &a) == 3) {
        if ((s = scenario_of(r, name)) == NULL || s->npoints == MAX_POINTS || k < 0)
            return false;
        s->point[s->npoints] = k;
        s->prefix[s->npoints++] = a;
        return true;
    }
    if (sscanf(line, "%15[^,],%31[^,],%31[^,],%d,%lf,%lf,%lf", kind, name, alt, &k, &a, &b,
               &c) == 7 && strcmp(kind, "alt") == 0) {
        if ((s = scenario_of(r, name)) == NULL || s->nalts == MAX_ALTS)
            return false;
        s->alt[s->nalts] = (replay_alt_t){.k = k, .cost = a, .after = b, .total = c};
        snprintf(s->alt[s->nalts++].name, NAME_MAX_LEN, "%s", alt);
        return true;
    }
    int count = 1;
    int fields = sscanf(line, "policy,%31[^,],%31[^,],%d,%lf,%d", name, alt, &k, &a, &count);
    if (fields == 4 || (fields == 5 && count >= 1)) {
        if ((s = scenario_of(r, name)) == NULL)
            return false;
        if (!s->has_policy || count > s->policy_count) {
            s->has_policy = true;
            s->policy_count = count;
            s->policy = (replay_alt_t){.k = k, .total = a};
            snprintf(s->policy.name, NAME_MAX_LEN, "%s", alt);
        }
        return true;
    }
    return false;
}

static int read_replay(const char *path, replay_t *r)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "mal-sim replay: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[512];
    int no = 0, rc = 0;
    r->n = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        no++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (!parse_line(line, r)) {
            fprintf(stderr, "mal-sim replay: %s:%d: not a prefix, alt or policy line "
                    "(or too many of them): '%s'\n", path, no, line);
            rc = 1;
        }
    }
    fclose(f);
    return rc;
}

/* P(K): the prefix written for K; NAN when K was not written. */
static double prefix_at(const replay_scenario_t *s, int k)
{
    for (int i = 0; i < s->npoints; i++)
        if (s->point[i] == k)
            return s->prefix[i];
    return NAN;
}

static int run_length(const replay_scenario_t *s)
{
    return s->npoints > 0 ? s->point[s->npoints - 1] : 0;
}

/* T(alt, K); T(nothing) for an alternative named "none". */
static double outcome(const replay_scenario_t *s, const replay_alt_t *a, int k)
{
    int n = run_length(s);
    if (strcmp(a->name, "none") == 0)
        return prefix_at(s, n);
    double init = prefix_at(s, 0);
    return prefix_at(s, k) - (isfinite(init) ? init : 0) + a->cost + (n - k) * a->after;
}

/* The alternative `name` as measured at iteration k, else at any. */
static const replay_alt_t *alt_named(const replay_scenario_t *s, const char *name, int k)
{
    const replay_alt_t *any = NULL;
    for (int i = 0; i < s->nalts; i++) {
        if (strcmp(s->alt[i].name, name) != 0)
            continue;
        if (s->alt[i].k == k)
            return &s->alt[i];
        if (any == NULL)
            any = &s->alt[i];
    }
    return any;
}

/* The least T over every alternative at every decision point before the end (nothing
 * included). */
static double best_outcome(const replay_scenario_t *s, const char **what, int *at)
{
    double best = prefix_at(s, run_length(s));
    *what = "none";
    *at = 0;
    for (int i = 0; i < s->nalts; i++)
        for (int p = 0; p + 1 < s->npoints; p++) {
            if (s->point[p] == 0) /* mal_init's time, not a decision point */
                continue;
            double t = outcome(s, &s->alt[i], s->point[p]);
            if (strcmp(s->alt[i].name, "none") != 0 && t < best) {
                best = t;
                *what = s->alt[i].name;
                *at = s->point[p];
            }
        }
    return best;
}

/* One scenario's line; its regret in *regret (NAN when it cannot be replayed). */
static void replay_scenario(const replay_scenario_t *s, double *regret)
{
    *regret = NAN;
    const replay_alt_t *chosen =
        s->has_policy ? alt_named(s, s->policy.name, s->policy.k) : NULL;
    static const replay_alt_t none = {.name = "none"};
    if (s->has_policy && strcmp(s->policy.name, "none") == 0)
        chosen = &none;
    if (chosen == NULL || !isfinite(prefix_at(s, run_length(s)))) {
        printf("mal-sim replay: %s: not replayed (no policy line, no alternative it equals, "
               "or no run that did nothing)\n", s->name);
        return;
    }
    double policy = outcome(s, chosen, s->policy.k), worst_fit = 0;
    for (int i = 0; i < s->nalts; i++) {
        double t = outcome(s, &s->alt[i], s->alt[i].k);
        if (s->alt[i].total > 0 && isfinite(t))
            worst_fit = fmax(worst_fit, fabs(t / s->alt[i].total - 1));
    }
    const char *what;
    int at;
    double best = best_outcome(s, &what, &at);
    *regret = 100 * (policy / best - 1);
    printf("mal-sim replay: %s: the policy: %s at %d, %.3f s (measured %.3f s); best: %s",
           s->name, s->policy.name, s->policy.k, policy, s->policy.total, what);
    if (at > 0)
        printf(" at %d", at);
    printf(", %.3f s; regret %.1f%%; decomposition error at most %.1f%%\n", best, *regret,
           100 * worst_fit);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sim_replay(const char *path)
{
    replay_t *r = calloc(1, sizeof *r);
    if (r == NULL || read_replay(path, r) != 0) {
        free(r);
        return 1;
    }
    double regrets[MAX_SCENARIOS];
    int n = 0;
    for (int i = 0; i < r->n; i++) {
        double g;
        replay_scenario(&r->s[i], &g);
        if (isfinite(g))
            regrets[n++] = g;
    }
    free(r);
    if (n == 0) {
        fprintf(stderr, "mal-sim replay: %s: no scenario could be replayed\n", path);
        return 1;
    }
    qsort(regrets, (size_t)n, sizeof *regrets, cmp_double);
    double median = n % 2 ? regrets[n / 2] : (regrets[n / 2 - 1] + regrets[n / 2]) / 2;
    printf("mal-sim replay: regret against every decision point: median=%.1f%% worst=%.1f%% "
           "(%d scenarios)\n", median, regrets[n - 1], n);
    return 0;
}
