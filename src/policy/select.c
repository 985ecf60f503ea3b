/* Processor-class selection (pure; see select.h): one small integer program per call,
 * solved by GLPK's branch and bound, one integer column per class.
 *
 * Feasibility is decided before the solver runs, by the greedy extreme set: no s-set
 * has more power than the s most powerful processes, none less than the r least
 * powerful. The solver then only optimises, and its answer is checked against the
 * bounds in this file's own arithmetic, since GLPK accepts constraints within a
 * relative tolerance (about 1e-7). */
#include "select.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* Rows of the program (GLPK counts from 1). */
enum { ROW_COUNT = 1, ROW_POWER, ROW_PRICE };

/* Prices that differ by less than this fraction are a tie, decided by power: sums of
 * the same prices in another order differ in their last bits, and the solver's own
 * tolerance is coarser still. */
#define PRICE_TIE 1e-9

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

/* ---- arguments ------------------------------------------------------------------------- */

/* GLPK aborts the program on coefficients it cannot scale (it does on 1e-300 and on
 * 1e307); powers and prices are kept well inside what it handles, where no sum of
 * INT_MAX processes per class can overflow either. */
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

/* Every power and price of a set is computed here, in class order, so that the greedy
 * bound and the check of the solver's answer agree to the last bit. */
static double weighted_sum(int n, const double *value, const int *counts)
{
    double total = 0.0;
    for (int c = 0; c < n; c++)
        total += counts[c] * value[c];
    return total;
}

/* The price is read only for the cost goal. */
static bool selection_valid(const selection_t *sel, const int *counts)
{
    if (sel->n < 1 || sel->total < 0 || sel->fewest < 0 || isnan(sel->limit) || !counts || !sel->power ||
        !sel->bound || !values_valid(sel->n, sel->power) || !counts_valid(sel->n, sel->bound))
        return false;
    if (sel->goal == SELECT_EFFICIENCY)
        return !sel->price || values_valid(sel->n, sel->price);
    return sel->goal == SELECT_COST && sel->price && values_valid(sel->n, sel->price);
}

/* ---- greedy extremes ------------------------------------------------------------------- */

typedef struct {
    double power;
    int cls;
} ranked_t;

static int by_power_descending(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->power != y->power)
        return x->power < y->power ? 1 : -1;
    return (x->cls > y->cls) - (x->cls < y->cls);
}

/* The `total` most (or least) powerful processes as counts per class; false when out of
 * memory. The caller has checked that total <= sum bound. */
static bool greedy_counts(int n, const double *power, const int *bound, int total,
                          bool most_powerful, int *counts)
{
    ranked_t *rank = malloc((size_t)n * sizeof *rank);
    if (!rank)
        return false;
    for (int c = 0; c < n; c++)
        rank[c] = (ranked_t){power[c], c};
    qsort(rank, (size_t)n, sizeof *rank, by_power_descending);
    int left = total;
    for (int k = 0; k < n; k++) {
        int c = rank[most_powerful ? k : n - 1 - k].cls;
        counts[c] = bound[c] < left ? bound[c] : left;
        left -= counts[c];
    }
    free(rank);
    return true;
}

/* The power of the greedy extreme set; -1 when there are not `total` processes, or on
 * bad arguments, or when out of memory. */
static double extreme_power(int n, const double *power, const int *bound, int total,
                            bool most_powerful)
{
    if (n < 1 || !power || !bound || total < 0 || !values_valid(n, power) ||
        !counts_valid(n, bound) || total > sum_counts(n, bound))
        return -1.0;
    int *counts = malloc((size_t)n * sizeof *counts);
    if (!counts || !greedy_counts(n, power, bound, total, most_powerful, counts)) {
        free(counts);
        return -1.0;
    }
    double p = weighted_sum(n, power, counts);
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

/* ---- the integer program ----------------------------------------------------------------- */

/* The program of one selection. For the cost goal's second solve, a row keeps the price
 * at the first solve's optimum. */
typedef struct {
    const selection_t *sel;
    glp_prob *lp;
    int price_row;          /* 0: none                                                  */
    double price_limit;     /* the most (adding) or least (removing) price allowed      */
} program_t;

static bool power_within(const selection_t *sel, double power)
{
    return sel->adding ? power >= sel->limit : power <= sel->limit;
}

/* Whether a set meets every bound of the program, in exact terms. */
static bool admissible(const program_t *prog, const int *counts)
{
    const selection_t *sel = prog->sel;
    if (!power_within(sel, weighted_sum(sel->n, sel->power, counts)))
        return false;
    if (!prog->price_row)
        return true;
    double price = weighted_sum(sel->n, sel->price, counts);
    return sel->adding ? price <= prog->price_limit : price >= prog->price_limit;
}

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
    if (!greedy_counts(sel->n, sel->power, sel->bound, k < have ? k : have, sel->adding,
                       extreme))
        return MAL_ERR_NOMEM;
    *feasible = power_within(sel, weighted_sum(sel->n, sel->power, extreme));
    return MAL_OK;
}

/* Row `row` of the matrix: coef[c] for every class (1 when coef is NULL). ind and val
 * have n + 1 entries: GLPK reads them from index 1. */
static void set_row(glp_prob *lp, int row, int n, const double *coef, int *ind, double *val)
{
    for (int c = 0; c < n; c++) {
        ind[c + 1] = c + 1;
        val[c + 1] = coef ? coef[c] : 1.0;
    }
    glp_set_mat_row(lp, row, n, ind, val);
}

static void set_columns(glp_prob *lp, const selection_t *sel)
{
    glp_add_cols(lp, sel->n);
    for (int c = 0; c < sel->n; c++) {
        glp_set_col_kind(lp, c + 1, GLP_IV);
        /* GLPK refuses a double bound whose ends are equal. */
        if (sel->bound[c] == 0)
            glp_set_col_bnds(lp, c + 1, GLP_FX, 0.0, 0.0);
        else
            glp_set_col_bnds(lp, c + 1, GLP_DB, 0.0, sel->bound[c]);
    }
}

/* The power row, `margin` inside the limit. It binds only for a finite limit on the side
 * that can be crossed: a need <= 0 or an infinite spare is always met. */
static void bound_power(glp_prob *lp, const selection_t *sel, double margin)
{
    if (sel->adding && sel->limit > 0.0)
        glp_set_row_bnds(lp, ROW_POWER, GLP_LO, sel->limit + margin, 0.0);
    else if (!sel->adding && isfinite(sel->limit))
        glp_set_row_bnds(lp, ROW_POWER, GLP_UP, 0.0, sel->limit - margin);
    else
        glp_set_row_bnds(lp, ROW_POWER, GLP_FR, 0.0, 0.0);
}

/* The columns and rows of every solve (the price row only for the cost goal); false
 * when out of memory. */
static bool build(program_t *prog)
{
    const selection_t *sel = prog->sel;
    int *ind = malloc((size_t)(sel->n + 1) * sizeof *ind);
    double *val = malloc((size_t)(sel->n + 1) * sizeof *val);
    prog->lp = ind && val ? glp_create_prob() : NULL;
    if (prog->lp) {
        glp_prob *lp = prog->lp;
        glp_set_obj_dir(lp, sel->adding ? GLP_MIN : GLP_MAX);
        set_columns(lp, sel);
        glp_add_rows(lp, sel->goal == SELECT_COST ? ROW_PRICE : ROW_POWER);
        set_row(lp, ROW_COUNT, sel->n, NULL, ind, val);
        if (sel->fewest == sel->total)
            glp_set_row_bnds(lp, ROW_COUNT, GLP_FX, sel->total, sel->total);
        else
            glp_set_row_bnds(lp, ROW_COUNT, GLP_DB, sel->fewest, sel->total);
        set_row(lp, ROW_POWER, sel->n, sel->power, ind, val);
        bound_power(lp, sel, 0.0);
        if (sel->goal == SELECT_COST) {
            set_row(lp, ROW_PRICE, sel->n, sel->price, ind, val);
            glp_set_row_bnds(lp, ROW_PRICE, GLP_FR, 0.0, 0.0);
        }
    }
    free(ind);
    free(val);
    return prog->lp != NULL;
}

/* The solver's answer as counts; false when it is not integral, within the bounds and
 * of an allowed total. */
static bool read_counts(const program_t *prog, int *counts)
{
    const selection_t *sel = prog->sel;
    long long total = 0;
    for (int c = 0; c < sel->n; c++) {
        double x = glp_mip_col_val(prog->lp, c + 1);
        long long k = llround(x);
        if (!(fabs(x - (double)k) < 0.5) || k < 0 || k > sel->bound[c])
            return false;
        counts[c] = (int)k;
        total += k;
    }
    return total >= sel->fewest && total <= sel->total;
}

/* Whether every solve of the latest selection proved its optimum (see select.h). */
static bool proven = true;

bool select_last_proven(void)
{
    return proven;
}

/* Branch and bound stops after this many nodes: a count, not a clock, so that the answer
 * does not depend on how loaded the machine is. */
static void node_limit(glp_tree *tree, void *info)
{
    (void)info;
    int active, current, total;
    glp_ios_tree_size(tree, &active, &current, &total);
    if (total > SELECT_NODE_LIMIT)
        glp_ios_terminate(tree);
}

/* One branch-and-bound run, silent: true with the set in counts. Past the node limit the
 * best set found so far is taken (not proven optimal); with none found, or when the
 * solver fails, false: the caller falls back to the greedy extreme set, which meets
 * every bound (and the answer is not proven). GLPK's MIP presolver asserts (and aborts
 * the process) on counts near 1e8, so the LP relaxation is solved first and branch and
 * bound starts from its basis instead. */
static bool solve(const program_t *prog, int *counts)
{
    glp_smcp lp_parm;
    glp_init_smcp(&lp_parm);
    lp_parm.msg_lev = GLP_MSG_OFF;
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_OFF;
    parm.msg_lev = GLP_MSG_OFF;
    /* Near-ties between class mixes make branch and bound explode with many classes and
     * large counts (minutes for 8 classes and 105 processes); a decision must not. */
    parm.cb_func = node_limit;
    /* The defaults (1e-5, 1e-7) would round a column of 0.000001 to 0, and take a set
     * within 1e-7 of the best for the best; the programs are small enough to afford
     * branching until the values are integral and the optimum is the optimum. */
    parm.tol_int = 1e-9;
    parm.tol_obj = 1e-12;
    int was = glp_term_out(GLP_OFF);
    /* Powers of 1e8 and counts of 1 in one row: unscaled, the simplex can call a
     * feasible relaxation infeasible. */
    glp_scale_prob(prog->lp, GLP_SF_AUTO);
    int rc = glp_simplex(prog->lp, &lp_parm);
    /* The greedy extreme set already proved a feasible set exists: a relaxation said to
     * be infeasible is the simplex's numerics, and the caller's fallback stands in. */
    if (rc == 0 && glp_get_status(prog->lp) == GLP_NOFEAS) {
        proven = false;
        rc = GLP_ENOPFS;
    }
    else if (rc == 0 && glp_get_status(prog->lp) == GLP_OPT)
        rc = glp_intopt(prog->lp, &parm);
    else if (rc == 0)
        rc = GLP_EFAIL;
    glp_term_out(was);
    if (rc == GLP_ENOPFS)
        return false;
    if (rc == GLP_ESTOP) {
        proven = false;
        return glp_mip_status(prog->lp) == GLP_FEAS && read_counts(prog, counts);
    }
    int status = rc == 0 ? glp_mip_status(prog->lp) : GLP_UNDEF;
    if (status == GLP_NOFEAS)
        return false;
    /* A failed solve or a malformed answer: the fallback stands in, unproven. */
    bool found = status == GLP_OPT && read_counts(prog, counts);
    if (!found)
        proven = false;
    return found;
}

static void copy_counts(int n, const int *from, int *to)
{
    for (int c = 0; c < n; c++)
        to[c] = from[c];
}

/* GLPK accepts a bound within its tolerances, so a set may come back that misses the
 * limit by a hair. The power bound is then moved inside the limit, by a margin that
 * starts below any real difference of powers and grows until the answer is exact. */
#define MARGIN_FIRST 1e-9
#define MARGIN_GROWTH 100.0
#define MARGIN_TRIES 4

/* The best set for objective `coef`. `fallback` is a set known to meet every bound: it
 * stands in when the solver finds nothing that does, which can happen only when every
 * feasible set lies within the last margin of the limit (or when the solver fails). */
static void optimise(program_t *prog, const double *coef, const int *fallback, int *counts)
{
    const selection_t *sel = prog->sel;
    for (int c = 0; c < sel->n; c++)
        glp_set_obj_coef(prog->lp, c + 1, coef[c]);
    bool found = solve(prog, counts);
    double margin = MARGIN_FIRST * (1.0 + fabs(sel->limit));
    for (int tries = 0; found && !admissible(prog, counts) && tries < MARGIN_TRIES;
         tries++) {
        bound_power(prog->lp, sel, margin);
        found = solve(prog, counts);
        margin *= MARGIN_GROWTH;
    }
    bound_power(prog->lp, sel, 0.0);
    if (!found || !admissible(prog, counts))
        copy_counts(sel->n, fallback, counts);
}

/* Cost first, then power among the sets within PRICE_TIE of the best price: two solves,
 * since one weighted objective cannot keep the order exact for every magnitude. */
static mal_status_t optimise_cost(program_t *prog, const int *extreme, int *counts)
{
    const selection_t *sel = prog->sel;
    int *cheapest = malloc((size_t)sel->n * sizeof *cheapest);
    if (!cheapest)
        return MAL_ERR_NOMEM;
    optimise(prog, sel->price, extreme, cheapest);
    double best = weighted_sum(sel->n, sel->price, cheapest);
    double tie = PRICE_TIE * fmax(1.0, best);
    prog->price_row = ROW_PRICE;
    prog->price_limit = sel->adding ? best + tie : best - tie;
    if (sel->adding)
        glp_set_row_bnds(prog->lp, ROW_PRICE, GLP_UP, 0.0, prog->price_limit);
    else
        glp_set_row_bnds(prog->lp, ROW_PRICE, GLP_LO, prog->price_limit, 0.0);
    optimise(prog, sel->power, cheapest, counts);
    free(cheapest);
    return MAL_OK;
}

static mal_status_t run(const selection_t *sel, const int *extreme, int *counts)
{
    program_t prog = {.sel = sel};
    if (!build(&prog))
        return MAL_ERR_NOMEM;
    mal_status_t st = MAL_OK;
    if (sel->goal == SELECT_COST)
        st = optimise_cost(&prog, extreme, counts);
    else
        optimise(&prog, sel->power, extreme, counts);
    glp_delete_prob(prog.lp);
    return st;
}

/* Scratch arrays, so that counts stay untouched unless a set is found. */
static mal_status_t select_counts(const selection_t *sel, int *counts, bool *found)
{
    proven = true;
    if (!selection_valid(sel, counts) || !found)
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
