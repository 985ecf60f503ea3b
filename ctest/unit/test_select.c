/* Unit tests of src/policy's processor-class selection (select.h), run with every solver
 * the build has: libmal's exact search always, GLPK too with MAL_WITH_GLPK=ON, and then
 * the two compared on many random instances. Hand-worked expectations use Flex-MPI's
 * cluster classes; every solver is also checked against brute-force enumeration of small
 * instances (exact counts and ranges), and the search is checked to prove its optimum
 * at the scale of mal-sim's synthetic cluster. */
#include "select.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "unittest.h"

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
    return unit_rng(&rng_state);
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
    int fewest, total;  /* fewest < total: a range (select_*_range)                    */
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
    in->fewest = rng_below(3) == 0 ? rng_below(in->total + 1) : in->total;
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
    int counts[MAX_N];
    int optima;         /* how many sets are as good as the best                   */
} best_t;

/* Enumerates every count vector within the bounds (odometer order). */
/* The next count vector within the bounds (odometer order); false after the last. */
static bool next_vector(const instance_t *in, int *v)
{
    int c = 0;
    while (c < in->n && v[c] == in->bound[c])
        v[c++] = 0;
    if (c == in->n)
        return false;
    v[c]++;
    return true;
}

/* A set of an allowed size that meets the limit: its price and power. */
static bool admissible(const instance_t *in, const int *v, double *price, double *power)
{
    int size = sum_of(in->n, v);
    *power = dot(in->n, in->power, v);
    *price = dot(in->n, in->price, v);
    return size >= in->fewest && size <= in->total && meets_limit(in, *power);
}

/* Enumerates every count vector within the bounds, twice: the best, then how many are
 * as good. */
static best_t brute_force(const instance_t *in)
{
    best_t best = {0};
    int v[MAX_N] = {0};
    double price, power;
    do {
        if (admissible(in, v, &price, &power) &&
            (!best.found || better(in, price, power, best.price, best.power) > 0)) {
            best = (best_t){1, price, power, {0}, 0};
            for (int c = 0; c < in->n; c++)
                best.counts[c] = v[c];
        }
    } while (next_vector(in, v));
    do {
        if (best.found && admissible(in, v, &price, &power))
            best.optima += better(in, price, power, best.price, best.power) == 0;
    } while (next_vector(in, v));
    return best;
}

static mal_status_t solve_instance(const instance_t *in, int *counts)
{
    if (in->fewest < in->total)
        return in->adding
                   ? select_add_range(in->n, in->power, in->price, in->bound, in->fewest,
                                      in->total, in->limit, in->goal, counts, &found)
                   : select_remove_range(in->n, in->power, in->price, in->bound, in->fewest,
                                         in->total, in->limit, in->goal, counts, &found);
    return in->adding ? select_add(in->n, in->power, in->price, in->bound, in->total,
                                   in->limit, in->goal, counts, &found)
                      : select_remove(in->n, in->power, in->price, in->bound, in->total,
                                      in->limit, in->goal, counts, &found);
}

static void describe(const instance_t *in, char *text, size_t size)
{
    int len = snprintf(text, size, "%s %s %d..%d limit %.17g:", in->adding ? "add" : "remove",
                       in->goal == SELECT_COST ? "cost" : "efficiency", in->fewest, in->total,
                       in->limit);
    for (int c = 0; c < in->n && len > 0 && (size_t)len < size; c++)
        len += snprintf(text + len, size - (size_t)len, " [%.17g $%.17g x%d]", in->power[c],
                        in->price[c], in->bound[c]);
}

/* Small instances are proven, whichever the solver. */
static void check_against_brute_force(const instance_t *in)
{
    int counts[MAX_N];
    mal_status_t rc = solve_instance(in, counts);
    bool proven = select_last_proven();
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
    double power, price;
    CHECK(within && admissible(in, counts, &price, &power), "%s: an invalid set", text);
    CHECK(better(in, best.price, best.power, price, power) <= 0,
          "%s: got $%.17g power %.17g, brute force $%.17g power %.17g", text, price, power,
          best.price, best.power);
    CHECK(proven, "%s: not proven", text);
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

/* ---- the search's own guarantees ------------------------------------------------------- */

/* Sets equal in every objective: the greedy extreme set wins (select.h). */
static void test_search_ties(void)
{
    const double power[3] = {2.0, 2.0, 1.0}, price[3] = {1.0, 1.0, 1.0};
    const int avail[3] = {3, 3, 3};
    int counts[3];
    /* Any two of the classes of power 2 reach 4: the extreme set takes class 0 first. */
    mal_status_t rc = select_add(3, power, price, avail, 2, 3.5, SELECT_EFFICIENCY, counts,
                                 &found);
    CHECK(rc == MAL_OK && found && counts[0] == 2 && counts[1] == 0 && counts[2] == 0,
          "tie between equal classes: %d %d %d", counts[0], counts[1], counts[2]);
    rc = select_add(3, power, price, avail, 4, 7.5, SELECT_COST, counts, &found);
    CHECK(rc == MAL_OK && found && counts[0] == 3 && counts[1] == 1 && counts[2] == 0,
          "cost tie between equal classes: %d %d %d", counts[0], counts[1], counts[2]);
}

/* More classes than the search keeps bounds for: the greedy extreme set (the most
 * powerful first), not proven, instead of the memory the bounds would need. */
static void test_search_class_cap(void)
{
    enum { N = SELECT_SEARCH_MAX_CLASSES + 1 };
    double power[N], price[N];
    int avail[N], counts[N];
    for (int c = 0; c < N; c++) {
        power[c] = 1.0 + (double)c; /* the last class is the most powerful */
        price[c] = 1.0;
        avail[c] = 2;
    }
    mal_status_t rc = select_add(N, power, price, avail, 3, 1.0, SELECT_EFFICIENCY, counts,
                                 &found);
    CHECK(rc == MAL_OK && found && counts[N - 1] == 2 && counts[N - 2] == 1 &&
              counts[0] == 0 && !select_last_proven(),
          "%d classes: the greedy extreme set, not proven (rc %d, proven %d)", N, rc,
          select_last_proven());
}

/* mal-sim's synthetic cluster (apps/mal_sim.c, scenario 2): 8 classes from 1 to 5 GFLOPS
 * per core, the powerful ones dear, 1,248 free cores each, as at 10,000 ranks. */
enum { SYN_N = 8, SYN_FREE = 1248 };

static void synthetic_classes(double *power, double *price, int *avail)
{
    for (int c = 0; c < SYN_N; c++) {
        power[c] = 1.0 + 4.0 * c / (SYN_N - 1);
        price[c] = power[c] / (20.0 - 10.0 * c / (SYN_N - 1));
        avail[c] = SYN_FREE;
    }
}

/* One selection at that scale: found, proven within the node limit, a set that meets
 * the bounds. */
static void check_at_scale(const instance_t *in, const double *power, const double *price,
                           const int *avail)
{
    int counts[SYN_N];
    mal_status_t rc = in->adding ? select_add_range(SYN_N, power, price, avail, in->fewest,
                                                    in->total, in->limit, in->goal, counts,
                                                    &found)
                                 : select_remove_range(SYN_N, power, price, avail,
                                                       in->fewest, in->total, in->limit,
                                                       in->goal, counts, &found);
    double p = dot(SYN_N, power, counts);
    CHECK(rc == MAL_OK && found && select_last_proven() && meets_limit(in, p) &&
              sum_of(SYN_N, counts) >= in->fewest && sum_of(SYN_N, counts) <= in->total,
          "%s %s %d..%d limit %g: rc %d found %d proven %d power %g",
          in->adding ? "add" : "remove", in->goal == SELECT_COST ? "cost" : "efficiency",
          in->fewest, in->total, in->limit, rc, found, select_last_proven(), p);
}

/* The selections the policy makes there, exact sizes and ranges up to the whole
 * cluster: the search proves every one. For cost, needs anywhere between the least and
 * the most a size gives; for efficiency, needs within one process of the most (adding,
 * the policy asks for the fewest processes that reach a need) or spares within one of
 * the least (removing). Efficiency with a need in the middle is a subset-sum near-tie
 * that neither solver proves within its limit. */
static void test_search_at_scale(void)
{
    double power[SYN_N], price[SYN_N];
    int avail[SYN_N];
    synthetic_classes(power, price, avail);
    for (int i = 0; i < 40; i++) {
        instance_t in = {.adding = i % 2, .goal = i / 2 % 2 ? SELECT_COST : SELECT_EFFICIENCY};
        in.total = 1 + rng_below(SYN_N * SYN_FREE);
        in.fewest = i / 4 % 2 ? rng_below(in.total + 1) : in.total;
        double least = select_min_power(SYN_N, power, avail, in.adding ? in.total : in.fewest);
        double most = select_max_power(SYN_N, power, avail, in.adding ? in.total : in.fewest);
        double one = power[SYN_N - 1] * rng_unit();
        if (in.goal == SELECT_COST)
            in.limit = least + (most - least) * rng_unit();
        else
            in.limit = in.adding ? fmax(least, most - one) : fmin(most, least + one);
        check_at_scale(&in, power, price, avail);
    }
}

#ifdef MAL_HAVE_GLPK
/* ---- the search against GLPK ----------------------------------------------------------- */

/* Both solvers on one instance: when both prove their optimum, the objective is the
 * same (power for efficiency; price within the tie and then power for cost), and so are
 * the counts when the optimum is unique. */
static void compare_solvers(const instance_t *in, bool unique)
{
    int by_search[MAX_N], by_glpk[MAX_N];
    select_use_solver(SELECT_SOLVER_SEARCH);
    mal_status_t rs = solve_instance(in, by_search);
    bool found_search = found, proven = select_last_proven();
    select_use_solver(SELECT_SOLVER_GLPK);
    mal_status_t rg = solve_instance(in, by_glpk);
    proven = proven && select_last_proven();
    char text[512];
    describe(in, text, sizeof text);
    CHECK(rs == MAL_OK && rg == MAL_OK && found_search == found, "%s: rc %d %d, found %d %d",
          text, rs, rg, found_search, found);
    if (!(found && found_search && proven))
        return;
    double ps = dot(in->n, in->power, by_search), pg = dot(in->n, in->power, by_glpk);
    double cs = dot(in->n, in->price, by_search), cg = dot(in->n, in->price, by_glpk);
    CHECK(better(in, cs, ps, cg, pg) == 0 && ps == pg,
          "%s: search $%.17g power %.17g, GLPK $%.17g power %.17g", text, cs, ps, cg, pg);
    for (int c = 0; unique && c < in->n; c++)
        CHECK(by_search[c] == by_glpk[c], "%s: class %d: search %d, GLPK %d", text, c,
              by_search[c], by_glpk[c]);
}

static void test_against_glpk(void)
{
    for (int i = 0; i < 3000; i++) {
        instance_t in;
        random_instance(&in);
        best_t best = brute_force(&in);
        compare_solvers(&in, best.optima == 1);
    }
}
#endif

/* Every test of one solver. */
static void test_solver(void)
{
    test_flex_add();
    test_max_min_power();
    test_flex_remove();
    test_ties();
    test_hairline_limits();
    test_bad_arguments();
    test_zero_power_and_empty();
    test_brute_force();
    test_max_power_agrees();
}

int main(void)
{
    CHECK(select_use_solver(SELECT_SOLVER_SEARCH), "the search is always built");
    test_solver();
    test_search_ties();
    test_search_class_cap();
    test_search_at_scale();
#ifdef MAL_HAVE_GLPK
    CHECK(select_use_solver(SELECT_SOLVER_GLPK), "GLPK is built");
    test_solver();
    test_against_glpk();
    printf("test_select: compared with GLPK\n");
#else
    CHECK(!select_use_solver(SELECT_SOLVER_GLPK), "GLPK is not built");
#endif
    if (failures) {
        printf("test_select: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("test_select: PASS\n");
    return 0;
}
