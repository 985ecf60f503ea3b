/* Processor-class selection (pure; see select.h): argument checks, feasibility, and one
 * solver per call: libmal's exact search (select_search.c), or GLPK's branch and bound
 * (select_glpk.c) in a build with MAL_WITH_GLPK=ON.
 *
 * Feasibility is decided before a solver runs, by the greedy extreme set: no s-set has
 * more power than the s most powerful processes, none less than the r least powerful.
 * The solver then only optimises, starting from that set. */
#include "select.h"
#include "select_solve.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* ---- arguments ------------------------------------------------------------------------- */

/* Powers and prices are kept well inside what a double sums without overflow for
 * INT_MAX processes per class (and what GLPK can scale: it aborts on 1e-300 and 1e307). */
#define VALUE_MIN 1e-100
#define VALUE_MAX 1e100

static bool values_valid(int n, const double *v)
{
    for (int c = 0; c < n; c++)
        if (!(v[c] == 0.0 || (v[c] >= VALUE_MIN && v[c] <= VALUE_MAX)))
            return false;
    return true;
}

static bool counts_valid(int n, const int *v)
{
    for (int c = 0; c < n; c++)
        if (v[c] < 0)
            return false;
    return true;
}

static long long sum_counts(int n, const int *v)
{
    long long total = 0;
    for (int c = 0; c < n; c++)
        total += v[c];
    return total;
}

/* The price is read only for the cost goal. */
static bool arguments_valid(const selection_t *sel, const int *counts)
{
    if (sel->n < 1 || sel->total < 0 || sel->fewest < 0 || isnan(sel->limit) || !counts ||
        !sel->power || !sel->bound || !values_valid(sel->n, sel->power) ||
        !counts_valid(sel->n, sel->bound))
        return false;
    if (sel->goal == SELECT_EFFICIENCY)
        return !sel->price || values_valid(sel->n, sel->price);
    return sel->goal == SELECT_COST && sel->price && values_valid(sel->n, sel->price);
}

/* ---- greedy extremes ------------------------------------------------------------------- */

/* The power of the greedy extreme set; -1 when there are not `total` processes, or on
 * bad arguments, or when out of memory. */
static double extreme_power(int n, const double *power, const int *bound, int total,
                            bool most_powerful)
{
    if (n < 1 || !power || !bound || total < 0 || !values_valid(n, power) ||
        !counts_valid(n, bound) || total > sum_counts(n, bound))
        return -1.0;
    int *counts = malloc((size_t)n * sizeof *counts);
    if (!counts || !selection_greedy(n, power, bound, total, most_powerful, counts)) {
        free(counts);
        return -1.0;
    }
    double p = selection_sum(n, power, counts);
    free(counts);
    return p;
}

double select_max_power(int n, const double *power, const int *avail, int s)
{
    return extreme_power(n, power, avail, s, true);
}

double select_min_power(int n, const double *power, const int *removable, int r)
{
    return extreme_power(n, power, removable, r, false);
}

/* ---- solving ---------------------------------------------------------------------------- */

/* Whether any set meets the limit (*feasible), and if so the greedy extreme set, which
 * is one. MAL_ERR_NOMEM when out of memory. */
static mal_status_t feasibility(const selection_t *sel, int *extreme, bool *feasible)
{
    *feasible = false;
    if (sel->fewest > sum_counts(sel->n, sel->bound))
        return MAL_OK;
    /* With a range of counts the extreme set is the most power added (the most
     * processes) or the least removed (the fewest). */
    int k = sel->adding ? sel->total : sel->fewest;
    int have = sum_counts(sel->n, sel->bound);
    if (!selection_greedy(sel->n, sel->power, sel->bound, k < have ? k : have, sel->adding,
                          extreme))
        return MAL_ERR_NOMEM;
    *feasible = selection_power_within(sel, extreme);
    return MAL_OK;
}

/* The solver the calls use: GLPK when built with it (the user chose it), else libmal's
 * own search. */
#ifdef MAL_HAVE_GLPK
static select_solver_t solver = SELECT_SOLVER_GLPK;
#else
static select_solver_t solver = SELECT_SOLVER_SEARCH;
#endif

bool select_use_solver(select_solver_t which)
{
#ifdef MAL_HAVE_GLPK
    bool built = which == SELECT_SOLVER_SEARCH || which == SELECT_SOLVER_GLPK;
#else
    bool built = which == SELECT_SOLVER_SEARCH;
#endif
    if (built)
        solver = which;
    return built;
}

/* Whether the latest selection proved its optimum (see select.h). */
static bool proven = true;

bool select_last_proven(void)
{
    return proven;
}

static mal_status_t run(const selection_t *sel, const int *extreme, int *counts)
{
#ifdef MAL_HAVE_GLPK
    if (solver == SELECT_SOLVER_GLPK)
        return select_by_glpk(sel, extreme, counts, &proven);
#endif
    return select_by_search(sel, extreme, counts, &proven);
}

static void copy_counts(int n, const int *from, int *to)
{
    for (int c = 0; c < n; c++)
        to[c] = from[c];
}

/* Scratch arrays, so that counts stay untouched unless a set is found. */
static mal_status_t select_counts(const selection_t *sel, int *counts, bool *found)
{
    proven = true;
    if (!arguments_valid(sel, counts) || !found)
        return MAL_ERR_ARG;
    *found = false;
    int *extreme = malloc((size_t)sel->n * sizeof *extreme);
    int *best = malloc((size_t)sel->n * sizeof *best);
    bool feasible = false;
    mal_status_t st = extreme && best ? feasibility(sel, extreme, &feasible) : MAL_ERR_NOMEM;
    if (st == MAL_OK && feasible && sel->total > 0)
        st = run(sel, extreme, best);
    else if (st == MAL_OK && feasible)
        copy_counts(sel->n, extreme, best); /* all zero */
    if (st == MAL_OK && feasible) {
        copy_counts(sel->n, best, counts);
        *found = true;
    }
    free(extreme);
    free(best);
    return st;
}

mal_status_t select_add(int n, const double *power, const double *price, const int *avail,
                        int s, double need, select_goal_t goal, int *counts, bool *found)
{
    selection_t sel = {n, power, price, avail, s, s, need, true, goal};
    return select_counts(&sel, counts, found);
}

mal_status_t select_add_range(int n, const double *power, const double *price,
                              const int *avail, int fewest, int most, double need,
                              select_goal_t goal, int *counts, bool *found)
{
    if (fewest > most)
        return MAL_ERR_ARG;
    selection_t sel = {n, power, price, avail, most, fewest, need, true, goal};
    return select_counts(&sel, counts, found);
}

mal_status_t select_remove(int n, const double *power, const double *price,
                           const int *removable, int r, double spare, select_goal_t goal,
                           int *counts, bool *found)
{
    selection_t sel = {n, power, price, removable, r, r, spare, false, goal};
    return select_counts(&sel, counts, found);
}

mal_status_t select_remove_range(int n, const double *power, const double *price,
                                 const int *removable, int fewest, int most, double spare,
                                 select_goal_t goal, int *counts, bool *found)
{
    if (fewest > most)
        return MAL_ERR_ARG;
    selection_t sel = {n, power, price, removable, most, fewest, spare, false, goal};
    return select_counts(&sel, counts, found);
}
