/* What the class selection's solvers share (select.c asks them; pure, no MPI): one
 * selection, its exact arithmetic and its greedy extreme sets. Private to src/policy. */
#ifndef MAL_SELECT_SOLVE_H
#define MAL_SELECT_SOLVE_H

#include "select.h"

#include <stdbool.h>

/* One selection: add (the power reaches a need) or remove (the power stays under a
 * spare). */
typedef struct {
    int n;
    const double *power;
    const double *price;
    const int *bound;   /* avail or removable, per class                            */
    int total;          /* s or r: the most processes                               */
    int fewest;         /* the fewest (= total for an exact count)                  */
    double limit;       /* need or spare                                            */
    bool adding;
    select_goal_t goal;
} selection_t;

/* Prices that differ by less than this fraction are a tie, decided by power: sums of
 * the same prices in another order differ in their last bits. */
#define PRICE_TIE 1e-9

/* Every power and price of a set is computed here, in class order, so that the greedy
 * bound, the solvers' answers and their checks agree to the last bit. */
double selection_sum(int n, const double *value, const int *counts);

/* Whether a set's power meets the selection's limit, exactly. */
bool selection_power_within(const selection_t *sel, const int *counts);

/* The price bound of the cost goal's second solve, from the first solve's best price:
 * the most (adding) or the least (removing) price still a tie with it. */
double selection_price_limit(const selection_t *sel, double best_price);

/* Whether a set keeps that price bound, exactly. */
bool selection_price_within(const selection_t *sel, const int *counts, double price_limit);

/* The `total` most (or least) powerful processes as counts per class; false when out of
 * memory. The caller has checked that total <= sum bound. */
bool selection_greedy(int n, const double *power, const int *bound, int total,
                      bool most_powerful, int *counts);

/* A solver: the best set of `sel` in counts, given `extreme`, a set that meets every
 * bound (the greedy extreme set), which stands in should the solver find nothing
 * better. *proven false when the answer is not the proven optimum. MAL_ERR_NOMEM when
 * out of memory. */
mal_status_t select_by_search(const selection_t *sel, const int *extreme, int *counts,
                              bool *proven);
#ifdef MAL_HAVE_GLPK
mal_status_t select_by_glpk(const selection_t *sel, const int *extreme, int *counts,
                            bool *proven);
#endif

#endif /* MAL_SELECT_SOLVE_H */
