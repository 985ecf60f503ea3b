/* The model's correction within a run: each observed reconfiguration and interval
 * corrects its term of eq. 2 for the rest of the run, so the second and later
 * predictions of a run are better than the first. Pure: numbers in, numbers out.
 *
 * Method, per term (computation, communication, process change, redistribution): the
 * model's output is multiplied by a factor f = exp(m), where m estimates the mean of
 * x = ln(measured / modelled) by recursive least squares on a constant with forgetting
 * factor PREDICT_LEARN_FORGET (the regressor is 1):
 *     P <- P / forget;  K = P / (P + 1);  m <- m + K (x - m);  P <- (1 - K) P
 * starting from the calibration as the prior (m = 0, P = PREDICT_LEARN_PRIOR_WEIGHT: the
 * calibration counts as that many observations' worth of evidence). x is clamped to
 * [-ln 10, ln 10] (one wild sample moves a factor at most 10x) and f stays in
 * [PREDICT_LEARN_MIN, PREDICT_LEARN_MAX]. The spread s of x around m (an exponentially
 * weighted mean of (x - m)^2 taken before each update, from the term's prior spread)
 * gives the interval [f exp(-z s), f exp(z s)] times the model's output, z =
 * PREDICT_LEARN_Z (about 80% of a normal's mass).
 *
 * The prior spreads are the uncorrected model's errors on this machine
 * (bench/validate_model.sh with MAL_LEARN=0, docs/design.md "The model corrected in the
 * run"): median |error| 6.5% for the computation, 65% for the communication, 18% for the
 * process change, 39-54% for the redistribution. For a log-normal error the median of
 * |x| is 0.674 s, which gives s = 0.1, 0.7, 0.25 and 0.6. */
#ifndef MAL_PREDICT_LEARN_H
#define MAL_PREDICT_LEARN_H

#include "predict.h"

enum { PREDICT_TERM_COMP, PREDICT_TERM_COMM, PREDICT_TERM_PROCESS, PREDICT_TERM_REDIST,
       PREDICT_TERMS };

#define PREDICT_LEARN_FORGET 0.8
#define PREDICT_LEARN_PRIOR_WEIGHT 1.0
#define PREDICT_LEARN_PRIOR_SPREAD_COMP 0.1
#define PREDICT_LEARN_PRIOR_SPREAD_COMM 0.7
#define PREDICT_LEARN_PRIOR_SPREAD_PROCESS 0.25
#define PREDICT_LEARN_PRIOR_SPREAD_REDIST 0.6
#define PREDICT_LEARN_SPREAD_WEIGHT 0.3
#define PREDICT_LEARN_Z 1.28
#define PREDICT_LEARN_MIN 0.1
#define PREDICT_LEARN_MAX 10.0

typedef struct {
    double m[PREDICT_TERMS];      /* mean log correction                                  */
    double p[PREDICT_TERMS];      /* its RLS variance scale                               */
    double spread[PREDICT_TERMS]; /* root mean square of the log error around m          */
    int observed[PREDICT_TERMS];  /* observations taken                                  */
} predict_learn_t;

/* The prior: no correction, the documented spreads. */
void predict_learn_init(predict_learn_t *l);
/* One observation of `term`: what the uncorrected model said and what was measured.
 * Ignored unless both are finite and > 0. */
void predict_learn_observe(predict_learn_t *l, int term, double modelled, double measured);
/* The factor of `term` (1 before any observation). */
double predict_learn_factor(const predict_learn_t *l, int term);
/* The corrected interval: each term of `model` times its factor. */
predict_interval_t predict_learn_apply(const predict_learn_t *l, const predict_interval_t *model);
/* The log spread of the corrected model's mean for `term`: what remains uncertain about
 * a term that repeats every interval once single intervals' noise averages out, the
 * spread times sqrt(P) (RLS's variance of m, in units of the noise's: 1 for the prior,
 * 1 - forget = 0.2 after many observations). */
double predict_learn_mean_spread(const predict_learn_t *l, int term);
/* The high end of a term's interval for a corrected value v, from the terms' spreads
 * (spread[PREDICT_TERMS], as predict_learn_t.spread; may be NULL: v itself):
 * v exp(z spread[term]). */
double predict_spread_high(const double *spread, int term, double v);
/* The correction of one prediction when the one-time terms are learnt per kind of
 * reconfiguration: the steady terms (computation, communication) of `steady`, the
 * one-time terms (process, redistribution) of `once`. */
predict_learn_t predict_learn_merge(const predict_learn_t *steady, const predict_learn_t *once);
/* Bounds of the corrected total of `model`, each term's spread taken as independent
 * (the terms' log spreads combined by their weights in the total). */
void predict_learn_bounds(const predict_learn_t *l, const predict_interval_t *model,
                          double *lo, double *hi);

#endif /* MAL_PREDICT_LEARN_H */
