/* Processor-class selection by GLPK's branch and bound (select_solve.h), one integer
 * column per class; built only with MAL_WITH_GLPK=ON (GLPK is GPL-3.0-or-later, so a
 * libmal built with it is too; README, "License").
 *
 * select.c has decided feasibility before: the solver only optimises, and its answer is
 * checked against the bounds in selection.c's own arithmetic, since GLPK accepts
 * constraints within a relative tolerance (about 1e-7). */
#include "select_solve.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* Rows of the program (GLPK counts from 1). */
enum { ROW_COUNT = 1, ROW_POWER, ROW_PRICE };

/* The program of one selection. For the cost goal's second solve, a row keeps the price
 * at the first solve's optimum. */
typedef struct {
    const selection_t *sel;
    glp_prob *lp;
    int price_row;          /* 0: none                                                  */
    double price_limit;     /* the most (adding) or least (removing) price allowed      */
    bool proven;            /* every solve proved its optimum                           */
} program_t;

/* Whether a set meets every bound of the program, in exact terms. */
static bool admissible(const program_t *prog, const int *counts)
{
    if (!selection_power_within(prog->sel, counts))
        return false;
    return !prog->price_row || selection_price_within(prog->sel, counts, prog->price_limit);
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
static bool solve(program_t *prog, int *counts)
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
        prog->proven = false;
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
        prog->proven = false;
        return glp_mip_status(prog->lp) == GLP_FEAS && read_counts(prog, counts);
    }
    int status = rc == 0 ? glp_mip_status(prog->lp) : GLP_UNDEF;
    if (status == GLP_NOFEAS)
        return false;
    /* A failed solve or a malformed answer: the fallback stands in, unproven. */
    bool found = status == GLP_OPT && read_counts(prog, counts);
    if (!found)
        prog->proven = false;
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
    prog->price_row = ROW_PRICE;
    prog->price_limit =
        selection_price_limit(sel, selection_sum(sel->n, sel->price, cheapest));
    if (sel->adding)
        glp_set_row_bnds(prog->lp, ROW_PRICE, GLP_UP, 0.0, prog->price_limit);
    else
        glp_set_row_bnds(prog->lp, ROW_PRICE, GLP_LO, prog->price_limit, 0.0);
    optimise(prog, sel->power, cheapest, counts);
    free(cheapest);
    return MAL_OK;
}

mal_status_t select_by_glpk(const selection_t *sel, const int *extreme, int *counts,
                            bool *proven)
{
    program_t prog = {.sel = sel, .proven = true};
    if (!build(&prog))
        return MAL_ERR_NOMEM;
    mal_status_t st = MAL_OK;
    if (sel->goal == SELECT_COST)
        st = optimise_cost(&prog, extreme, counts);
    else
        optimise(&prog, sel->power, extreme, counts);
    glp_delete_prob(prog.lp);
    *proven = prog.proven;
    return st;
}
