/* Unit tests of the model's in-run correction (src/predict/learn.h): expectations
 * worked out by hand from the recursive least squares in learn.h's comment. */
#include "learn.h"

#include <math.h>
#include <stdio.h>

#include "unittest.h"

static int near(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

/* The prior: no correction; the interval from the prior spreads alone. */
static void test_prior(void)
{
    predict_learn_t l;
    predict_learn_init(&l);
    for (int t = 0; t < PREDICT_TERMS; t++)
        CHECK(predict_learn_factor(&l, t) == 1.0, "term %d: factor %g", t,
              predict_learn_factor(&l, t));
    predict_interval_t m = {1, 1, 1, 1};
    double lo, hi;
    predict_learn_bounds(&l, &m, &lo, &hi);
    /* shares 1/4 each: var = (1/16) (0.1^2 + 0.7^2 + 0.25^2 + 0.6^2) */
    double s = sqrt((0.01 + 0.49 + 0.0625 + 0.36) / 16);
    CHECK(near(lo, 4 * exp(-1.28 * s), 1e-12) && near(hi, 4 * exp(1.28 * s), 1e-12),
          "bounds %g %g", lo, hi);
    CHECK(near(predict_spread_high(l.spread, PREDICT_TERM_REDIST, 2.0), 2 * exp(1.28 * 0.6),
               1e-12), "high end %g", predict_spread_high(l.spread, PREDICT_TERM_REDIST, 2.0));
    CHECK(predict_spread_high(NULL, PREDICT_TERM_COMP, 3.0) == 3.0, "no spreads: the value");
    CHECK(predict_learn_mean_spread(&l, PREDICT_TERM_COMM) == 0.7, "prior mean spread %g",
          predict_learn_mean_spread(&l, PREDICT_TERM_COMM));
}

/* Two observations of twice the model: m = 5/9 ln 2, then 45/61 ln 2. */
static void test_two_steps(void)
{
    predict_learn_t l;
    predict_learn_init(&l);
    predict_learn_observe(&l, PREDICT_TERM_COMP, 1.0, 2.0);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_COMP), pow(2, 5.0 / 9), 1e-12),
          "first: %g", predict_learn_factor(&l, PREDICT_TERM_COMP));
    CHECK(near(l.spread[PREDICT_TERM_COMP], sqrt(0.7 * 0.01 + 0.3 * log(2) * log(2)), 1e-12),
          "spread %g", l.spread[PREDICT_TERM_COMP]);
    predict_learn_observe(&l, PREDICT_TERM_COMP, 3.0, 6.0);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_COMP), pow(2, 45.0 / 61), 1e-12),
          "second: %g", predict_learn_factor(&l, PREDICT_TERM_COMP));
    CHECK(l.observed[PREDICT_TERM_COMP] == 2, "observed %d", l.observed[PREDICT_TERM_COMP]);
    /* P: 1 -> 1.25 / 2.25 = 5/9 -> (25/36) / (61/36) = 25/61 */
    CHECK(near(predict_learn_mean_spread(&l, PREDICT_TERM_COMP),
               l.spread[PREDICT_TERM_COMP] * sqrt(25.0 / 61), 1e-12), "mean spread %g",
          predict_learn_mean_spread(&l, PREDICT_TERM_COMP));
    /* The other terms are untouched. */
    CHECK(predict_learn_factor(&l, PREDICT_TERM_REDIST) == 1.0, "redist moved");
}

/* The per-kind merge: steady terms from one state, one-time terms from the other. */
static void test_merge(void)
{
    predict_learn_t all, kind;
    predict_learn_init(&all);
    predict_learn_init(&kind);
    predict_learn_observe(&all, PREDICT_TERM_COMP, 1.0, 2.0);
    predict_learn_observe(&all, PREDICT_TERM_REDIST, 1.0, 4.0);
    predict_learn_observe(&kind, PREDICT_TERM_REDIST, 1.0, 0.5);
    predict_learn_observe(&kind, PREDICT_TERM_COMM, 1.0, 8.0);
    predict_learn_t m = predict_learn_merge(&all, &kind);
    CHECK(predict_learn_factor(&m, PREDICT_TERM_COMP) ==
              predict_learn_factor(&all, PREDICT_TERM_COMP) &&
          predict_learn_factor(&m, PREDICT_TERM_COMM) == 1.0, "steady terms from the first");
    CHECK(predict_learn_factor(&m, PREDICT_TERM_REDIST) ==
              predict_learn_factor(&kind, PREDICT_TERM_REDIST) &&
          m.spread[PREDICT_TERM_REDIST] == kind.spread[PREDICT_TERM_REDIST] &&
          m.observed[PREDICT_TERM_PROCESS] == 0, "one-time terms from the second");
}

/* Observations that cannot be used are ignored. */
static void test_ignored(void)
{
    predict_learn_t l;
    predict_learn_init(&l);
    predict_learn_observe(&l, PREDICT_TERM_COMM, 0.0, 1.0);
    predict_learn_observe(&l, PREDICT_TERM_COMM, 1.0, -1.0);
    predict_learn_observe(&l, PREDICT_TERM_COMM, NAN, 1.0);
    predict_learn_observe(&l, PREDICT_TERM_COMM, 1.0, INFINITY);
    predict_learn_observe(&l, PREDICT_TERMS, 1.0, 2.0);
    CHECK(l.observed[PREDICT_TERM_COMM] == 0 && predict_learn_factor(&l, PREDICT_TERM_COMM) == 1,
          "an unusable observation was taken");
}

/* One wild sample moves a factor at most 10x (5/9 of the way); many keep it in bounds. */
static void test_bounded(void)
{
    predict_learn_t l;
    predict_learn_init(&l);
    predict_learn_observe(&l, PREDICT_TERM_PROCESS, 1.0, 1e6);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_PROCESS), pow(10, 5.0 / 9), 1e-12),
          "wild: %g", predict_learn_factor(&l, PREDICT_TERM_PROCESS));
    for (int i = 0; i < 100; i++)
        predict_learn_observe(&l, PREDICT_TERM_PROCESS, 1.0, 1e6);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_PROCESS), 10.0, 1e-9), "upper: %g",
          predict_learn_factor(&l, PREDICT_TERM_PROCESS));
    for (int i = 0; i < 200; i++)
        predict_learn_observe(&l, PREDICT_TERM_PROCESS, 1.0, 1e-6);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_PROCESS), 0.1, 1e-9), "lower: %g",
          predict_learn_factor(&l, PREDICT_TERM_PROCESS));
}

/* A model 40% low with +-10% noise: the error of the corrected prediction falls after
 * the first observation, and the interval holds most of the outcomes. */
static void test_learns(void)
{
    predict_learn_t l;
    predict_learn_init(&l);
    double first = 0, later = 0;
    int inside = 0, n = 40;
    for (int i = 0; i < n; i++) {
        double model = 1.0 + 0.1 * (i % 5), measured = 1.4 * model * (i % 2 ? 1.1 : 0.9);
        predict_interval_t m = {0, 0, 0, model};
        predict_interval_t c = predict_learn_apply(&l, &m);
        double err = fabs(c.redist - measured) / measured, lo, hi;
        predict_learn_bounds(&l, &m, &lo, &hi);
        inside += measured >= lo && measured <= hi;
        if (i == 0)
            first = err;
        else if (i >= 5)
            later = fmax(later, err);
        predict_learn_observe(&l, PREDICT_TERM_REDIST, model, measured);
    }
    CHECK(first > 0.2 && later < 0.15, "first error %.3f, worst later %.3f", first, later);
    CHECK(inside >= n * 3 / 4, "%d of %d inside the interval", inside, n);
    CHECK(near(predict_learn_factor(&l, PREDICT_TERM_REDIST), 1.4, 0.05), "factor %g",
          predict_learn_factor(&l, PREDICT_TERM_REDIST));
}

int main(void)
{
    test_prior();
    test_two_steps();
    test_merge();
    test_ignored();
    test_bounded();
    test_learns();
    if (failures) {
        printf("test_learn: %d checks failed\n", failures);
        return 1;
    }
    printf("test_learn: PASS\n");
    return 0;
}
