/* The model's in-run correction (learn.h). */
#include "learn.h"

#include <math.h>

void predict_learn_init(predict_learn_t *l)
{
    static const double prior[PREDICT_TERMS] = {
        PREDICT_LEARN_PRIOR_SPREAD_COMP, PREDICT_LEARN_PRIOR_SPREAD_COMM,
        PREDICT_LEARN_PRIOR_SPREAD_PROCESS, PREDICT_LEARN_PRIOR_SPREAD_REDIST};
    for (int t = 0; t < PREDICT_TERMS; t++) {
        l->m[t] = 0.0;
        l->p[t] = PREDICT_LEARN_PRIOR_WEIGHT;
        l->spread[t] = prior[t];
        l->observed[t] = 0;
    }
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void predict_learn_observe(predict_learn_t *l, int term, double modelled, double measured)
{
    if (term < 0 || term >= PREDICT_TERMS || !isfinite(modelled) || !isfinite(measured) ||
        modelled <= 0 || measured <= 0)
        return;
    double x = clamp(log(measured / modelled), -log(10.0), log(10.0));
    double e = x - l->m[term];
    /* The spread before the update: how far the correction so far was off. */
    double w = PREDICT_LEARN_SPREAD_WEIGHT;
    l->spread[term] = sqrt((1 - w) * l->spread[term] * l->spread[term] + w * e * e);
    double p = l->p[term] / PREDICT_LEARN_FORGET;
    double k = p / (p + 1.0);
    l->m[term] = clamp(l->m[term] + k * e, log(PREDICT_LEARN_MIN), log(PREDICT_LEARN_MAX));
    l->p[term] = (1.0 - k) * p;
    l->observed[term]++;
}

double predict_learn_factor(const predict_learn_t *l, int term)
{
    return term >= 0 && term < PREDICT_TERMS ? exp(l->m[term]) : 1.0;
}

double predict_spread_high(const double *spread, int term, double v)
{
    if (spread == NULL || term < 0 || term >= PREDICT_TERMS)
        return v;
    return v * exp(PREDICT_LEARN_Z * spread[term]);
}

double predict_learn_mean_spread(const predict_learn_t *l, int term)
{
    if (term < 0 || term >= PREDICT_TERMS)
        return 0;
    return l->spread[term] * sqrt(fmin(1.0, l->p[term]));
}

predict_learn_t predict_learn_merge(const predict_learn_t *steady, const predict_learn_t *once)
{
    predict_learn_t l = *steady;
    for (int t = PREDICT_TERM_PROCESS; t <= PREDICT_TERM_REDIST; t++) {
        l.m[t] = once->m[t];
        l.p[t] = once->p[t];
        l.spread[t] = once->spread[t];
        l.observed[t] = once->observed[t];
    }
    return l;
}

predict_interval_t predict_learn_apply(const predict_learn_t *l, const predict_interval_t *model)
{
    return (predict_interval_t){model->comp * predict_learn_factor(l, PREDICT_TERM_COMP),
                                model->comm * predict_learn_factor(l, PREDICT_TERM_COMM),
                                model->process * predict_learn_factor(l, PREDICT_TERM_PROCESS),
                                model->redist * predict_learn_factor(l, PREDICT_TERM_REDIST)};
}

void predict_learn_bounds(const predict_learn_t *l, const predict_interval_t *model,
                          double *lo, double *hi)
{
    predict_interval_t c = predict_learn_apply(l, model);
    double terms[PREDICT_TERMS] = {c.comp, c.comm, c.process, c.redist};
    double total = predict_total(&c), var = 0;
    /* The total's log spread: each term's, weighted by its share, as independent. */
    for (int t = 0; t < PREDICT_TERMS && total > 0; t++) {
        double share = terms[t] / total;
        var += share * share * l->spread[t] * l->spread[t];
    }
    double s = sqrt(var);
    *lo = total * exp(-PREDICT_LEARN_Z * s);
    *hi = total * exp(PREDICT_LEARN_Z * s);
}
