/* Processor-class selection by libmal's own exact search (select_solve.h): a depth-first
 * branch and bound over the count of each class, classes from the most powerful.
 *
 * The search sees every selection the same way: minimise an objective row subject to
 * `row >= need` (the power), and in the cost goal's second solve `cap >= cap_need` (the
 * price tie), with exactly `total` processes. Removal negates powers and prices (a
 * negated sum is exactly the negated sum in floating point); a range of counts becomes
 * an exact count with a slack item of no power and no price, which takes the processes
 * left unused.
 *
 * A node (the counts of the first items fixed) is cut when the processes left cannot
 * meet a row, or when the linear relaxation of the rest cannot beat the best set found:
 * that bound is the Lagrangian one, the least sum of (objective - lambda row) over the
 * processes left (a greedy fill) plus lambda need, at the best lambda. For the item
 * branched on, the counts worth trying form an interval (the bounds are convex or
 * concave in the count), tried from the relaxation's optimum outwards, so that good
 * sets come early and each direction stops at the first child the row or the bound
 * cuts. With two items left the objective is linear in the count, and the best end of
 * the feasible interval is the answer. Every set is checked exactly (selection.c)
 * before it counts; the greedy extreme set is the first best. */
#include "select_solve.h"

#include <math.h>
#include <stdlib.h>

/* Objectives within this fraction of the best found are no improvement (GLPK's own
 * objective tolerance is 1e-12 too). */
#define OBJECTIVE_TIE 1e-12
/* A bound on the rounding of a sum of a few products, relative to its terms' sizes:
 * bounds are moved by this much so that no set is cut by a rounding. */
#define ROUNDING 1e-14

/* One class as the search sees it. */
typedef struct {
    double obj;       /* minimised                                                     */
    double row;       /* power (adding) or -power (removing)                           */
    double cap;       /* -price (adding) or price (removing)                           */
    long long bound;
    int cls;          /* the class, -1 for the slack                                   */
} item_t;

/* One right-hand side: row >= need, with `slack` of rounding allowed. */
typedef struct {
    bool binds;
    double need, slack;
} side_t;

typedef struct {
    const selection_t *sel;
    int m;                  /* items, in search order                                  */
    item_t *item;
    long long *tail;        /* tail[k]: the processes items k.. can take              */
    long long *x;           /* the counts being tried, in search order                 */
    side_t row, cap;
    const double *value;    /* the objective, per class: power or price                */
    bool cap_on;            /* the cost goal's second solve                            */
    double price_limit;
    double mag_obj, mag_row, mag_cap; /* the largest sizes of their sums               */
    int *counts;            /* a set in class order                                    */
    int *best;
    double best_obj;        /* minimised                                               */
    double *scratch;        /* two rows per depth (a node's own, and its objective's   */
                            /* curve, kept while its children run): weights...         */
    long long *scratch_b;   /* ...and bounds of the items left                         */
    double *lambdas;        /* per kind and depth: where the greedy fill can change    */
    int *nlambdas;
    int *order;             /* scratch: items in greedy order                          */
    size_t per_depth;       /* room for one depth's lambdas                            */
    long long nodes;
    bool stopped;
} search_t;

/* f(t) = slope t + the least sum of (rem - t) processes of the items after the one
 * branched on, whose weights are w (ascending) with bounds b. Convex in t. */
typedef struct {
    double slope;
    int len;
    double *w;
    long long *b;
    long long rem;
} curve_t;

/* ---- sums over the items left ------------------------------------------------------------ */

/* The least sum of q processes of items with weights w (ascending) and bounds b. */
static double least_sum(const double *w, const long long *b, int len, long long q)
{
    double total = 0.0;
    for (int j = 0; j < len && q > 0; j++) {
        long long take = b[j] < q ? b[j] : q;
        total += (double)take * w[j];
        q -= take;
    }
    return total;
}

/* What is summed: the objective, or the price (-cap) of the second cost solve, both
 * minimised under the row (Lagrangian weights value - lambda row); or a row alone, whose
 * largest sum is minus the least sum of -row. */
enum { WEIGHT_OBJ, WEIGHT_PRICE, WEIGHT_ROW, WEIGHT_CAP };

static double value_of(const item_t *it, int kind)
{
    return kind == WEIGHT_OBJ ? it->obj : -it->cap;
}

static double weight(const item_t *it, int kind, double lambda)
{
    if (kind == WEIGHT_ROW)
        return -it->row;
    if (kind == WEIGHT_CAP)
        return -it->cap;
    return lambda == 0.0 ? value_of(it, kind) : value_of(it, kind) - lambda * it->row;
}

/* The weights of kind at lambda of items from.. in ascending order into w, with their
 * bounds into b (an insertion sort: the items are few); their number. */
static int sort_items(const search_t *s, int from, int kind, double lambda, double *w,
                      long long *b)
{
    int len = 0;
    for (int k = from; k < s->m; k++, len++) {
        double v = weight(&s->item[k], kind, lambda);
        int j = len;
        for (; j > 0 && w[j - 1] > v; j--) {
            w[j] = w[j - 1];
            b[j] = b[j - 1];
        }
        w[j] = v;
        b[j] = s->item[k].bound;
    }
    return len;
}

/* ---- the node bounds ------------------------------------------------------------------- */

/* The scratch row of depth k: its own (0) or its objective curve's (1). */
static double *row_w(const search_t *s, int k, int which)
{
    return s->scratch + (size_t)(2 * k + which) * (size_t)s->m;
}

static long long *row_b(const search_t *s, int k, int which)
{
    return s->scratch_b + (size_t)(2 * k + which) * (size_t)s->m;
}

/* The processes fixed so far: their number left to place and their sums. */
typedef struct {
    int k;              /* items 0..k-1 fixed                                          */
    long long rem;
    double obj, row, cap;
} node_t;

/* Whether the items from k, with rem processes, can still reach `side` (the row sums
 * `have` so far); kind names the row. */
static bool side_reachable(search_t *s, const node_t *nd, int kind, const side_t *side,
                           double have)
{
    if (!side->binds)
        return true;
    double *w = row_w(s, nd->k, 0);
    long long *b = row_b(s, nd->k, 0);
    int len = sort_items(s, nd->k, kind, 0.0, w, b);
    return have - least_sum(w, b, len, nd->rem) >= side->need - side->slack;
}

/* The sum fixed so far of what kind (WEIGHT_OBJ or WEIGHT_PRICE) sums, and the size of
 * the rounding the bounds allow for at lambda. */
static double fixed_sum(const node_t *nd, int kind)
{
    return kind == WEIGHT_OBJ ? nd->obj : -nd->cap;
}

static double rounding(const search_t *s, int kind, double lambda)
{
    double mag = kind == WEIGHT_OBJ ? s->mag_obj : s->mag_cap;
    if (lambda == 0.0)
        return ROUNDING * mag;
    return ROUNDING * (mag + lambda * (2.0 * s->mag_row + fabs(s->row.need)));
}

/* The Lagrangian bound at lambda: a lower bound of the sum of kind of every set below
 * the node that meets the row, made safe against rounding. */
static double dual_at(search_t *s, const node_t *nd, int kind, double lambda)
{
    double *w = row_w(s, nd->k, 0);
    long long *b = row_b(s, nd->k, 0);
    int len = sort_items(s, nd->k, kind, lambda, w, b);
    double value = fixed_sum(nd, kind) + least_sum(w, b, len, nd->rem);
    if (lambda != 0.0)
        value += lambda * (s->row.need - nd->row);
    return value - rounding(s, kind, lambda);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The lambdas of kind for the items from `from` on. */
static double *lambdas_of(const search_t *s, int kind, int from, int **len)
{
    size_t slot = (size_t)(kind == WEIGHT_OBJ ? 0 : 1) * (size_t)s->m + (size_t)from;
    *len = &s->nlambdas[slot];
    return s->lambdas + slot * s->per_depth;
}

/* For every depth, the lambdas where the greedy fill of the items left can change (two
 * items crossing), ascending, with 0 first: the items left at a depth are always the
 * same, so this is done once per solve. */
static void prepare_lambdas(search_t *s, int kind)
{
    for (int from = 0; from < s->m; from++) {
        int *len;
        double *l = lambdas_of(s, kind, from, &len);
        *len = 0;
        l[(*len)++] = 0.0;
        for (int i = from; i < s->m && s->row.binds; i++)
            for (int j = i + 1; j < s->m; j++) {
                const item_t *a = &s->item[i], *b = &s->item[j];
                double v = a->row != b->row
                               ? (value_of(a, kind) - value_of(b, kind)) / (a->row - b->row)
                               : 0.0;
                if (v > 0.0 && isfinite(v))
                    l[(*len)++] = v;
            }
        qsort(l + 1, (size_t)*len - 1, sizeof *l, by_value);
    }
}

/* The best lambda: the dual is concave in lambda, so a binary search over the sorted
 * candidates finds its top. */
static double best_lambda(search_t *s, const node_t *nd, int kind)
{
    int *len;
    const double *l = lambdas_of(s, kind, nd->k, &len);
    int lo = 0, hi = *len - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (dual_at(s, nd, kind, l[mid]) < dual_at(s, nd, kind, l[mid + 1]))
            lo = mid + 1;
        else
            hi = mid;
    }
    return l[lo];
}

/* What the objective must stay under to improve on the best set found, or the price
 * to keep the tie of the second cost solve. */
static double target(const search_t *s, int kind)
{
    if (kind == WEIGHT_PRICE)
        return -s->cap.need + s->cap.slack;
    return s->best_obj - OBJECTIVE_TIE * fabs(s->best_obj);
}

/* ---- the interval of counts worth trying ---------------------------------------------- */

static double curve_at(const curve_t *f, long long t)
{
    return f->slope * (double)t + least_sum(f->w, f->b, f->len, f->rem - t);
}

/* The t in [lo, hi] where f is least: f is piecewise linear, so one of its kinks (where
 * rem - t crosses the bound of an item) or an end. */
static long long curve_argmin(const curve_t *f, long long lo, long long hi)
{
    long long best = lo, kink = f->rem;
    double least = curve_at(f, lo);
    for (int j = 0; j <= f->len; j++) {
        long long t = kink < lo ? lo : kink > hi ? hi : kink;
        double v = curve_at(f, t);
        if (v < least) {
            least = v;
            best = t;
        }
        if (j < f->len)
            kink -= f->b[j];
    }
    if (curve_at(f, hi) < least)
        best = hi;
    return best;
}

/* The first t from `from` towards `to` (step +1 or -1 by their order) where f <= limit,
 * knowing that f is monotone on the way and f(to) <= limit. */
static long long curve_reach(const curve_t *f, long long from, long long to, double limit)
{
    while (from != to) {
        long long mid = from + (to - from) / 2;
        if (curve_at(f, mid) <= limit)
            to = mid;
        else
            from = mid + (to > from ? 1 : -1);
    }
    return to;
}

/* Narrows [*lo, *hi] to where f <= limit (convex f: an interval); false when empty. */
static bool curve_within(const curve_t *f, double limit, long long *lo, long long *hi)
{
    long long a = curve_argmin(f, *lo, *hi);
    if (!(curve_at(f, a) <= limit))
        return false;
    *lo = curve_reach(f, *lo, a, limit);
    *hi = curve_reach(f, *hi, a, limit);
    return true;
}

/* The curve of a row, the objective or the price (kind) at lambda, for item nd->k, on
 * the node's scratch row (the objective's: on the one kept while its children run). */
static void make_curve(search_t *s, const node_t *nd, int kind, double lambda, curve_t *f)
{
    const item_t *it = &s->item[nd->k];
    int which = kind == WEIGHT_OBJ;
    f->w = row_w(s, nd->k, which);
    f->b = row_b(s, nd->k, which);
    f->len = sort_items(s, nd->k + 1, kind, lambda, f->w, f->b);
    f->rem = nd->rem;
    f->slope = weight(it, kind, lambda);
}

/* Narrows [*lo, *hi] to the counts of item nd->k that can still reach `side`. */
static bool side_interval(search_t *s, const node_t *nd, int kind, const side_t *side,
                          double have, long long *lo, long long *hi)
{
    if (!side->binds)
        return true;
    curve_t f;
    make_curve(s, nd, kind, 0.0, &f);
    return curve_within(&f, have - side->need + side->slack, lo, hi);
}

/* The bound of kind's sum along the counts of item nd->k, at lambda, must stay under
 * this (the part of the bound that does not depend on the count moved over). */
static double curve_limit(const search_t *s, const node_t *nd, int kind, double lambda)
{
    double limit = target(s, kind) - fixed_sum(nd, kind) + rounding(s, kind, lambda);
    return lambda == 0.0 ? limit : limit - lambda * (s->row.need - nd->row);
}

/* Narrows [*lo, *hi] to the counts of item nd->k that keep the price tie. */
static bool price_interval(search_t *s, const node_t *nd, double lambda, long long *lo,
                           long long *hi)
{
    if (!s->cap.binds)
        return true;
    curve_t f;
    make_curve(s, nd, WEIGHT_PRICE, lambda, &f);
    return curve_within(&f, curve_limit(s, nd, WEIGHT_PRICE, lambda), lo, hi);
}

/* ---- leaves ---------------------------------------------------------------------------- */

/* A full set (every item's count in x): kept when it meets every bound exactly and is
 * better than the best; whether it met them. */
static bool leaf(search_t *s)
{
    const selection_t *sel = s->sel;
    s->nodes++;
    for (int c = 0; c < sel->n; c++)
        s->counts[c] = 0;
    for (int k = 0; k < s->m; k++)
        if (s->item[k].cls >= 0)
            s->counts[s->item[k].cls] = (int)s->x[k];
    if (!selection_power_within(sel, s->counts) ||
        (s->cap_on && !selection_price_within(sel, s->counts, s->price_limit)))
        return false;
    double v = selection_sum(sel->n, s->value, s->counts);
    if (!sel->adding)
        v = -v;
    if (v < s->best_obj) {
        s->best_obj = v;
        for (int c = 0; c < sel->n; c++)
            s->best[c] = s->counts[c];
    }
    return true;
}

/* The last two items share what is left: the objective is linear in the count of the
 * first, so the best set is the first that meets the bounds from the better end. */
static void last_pair(search_t *s, const node_t *nd, long long lo, long long hi)
{
    int k = nd->k;
    bool upwards = s->item[k].obj >= s->item[k + 1].obj;
    long long step = upwards ? 1 : -1;
    for (long long t = upwards ? lo : hi; t >= lo && t <= hi && !s->stopped; t += step) {
        s->x[k] = t;
        s->x[k + 1] = nd->rem - t;
        if (leaf(s))
            return;
        s->stopped = s->nodes > SELECT_SEARCH_LIMIT;
    }
}

/* ---- the search ------------------------------------------------------------------------ */

static bool explore(search_t *s, const node_t *nd);

/* Explores item nd->k at count t; true when that child was cut by the row or by the
 * objective's bound. */
static bool child(search_t *s, const node_t *nd, long long t)
{
    const item_t *it = &s->item[nd->k];
    s->x[nd->k] = t;
    node_t next = {nd->k + 1, nd->rem - t, nd->obj + (double)t * it->obj,
                   nd->row + (double)t * it->row, nd->cap + (double)t * it->cap};
    return explore(s, &next);
}

/* Whether item o comes before item it in the greedy fill at lambda: a smaller weight,
 * or a weight equal up to rounding (lambda is where two weights cross, computed) and the
 * larger row (more_row) or the smaller. */
static bool fills_before(const item_t *o, const item_t *it, double lambda, bool more_row)
{
    double v = weight(o, WEIGHT_OBJ, lambda), w = weight(it, WEIGHT_OBJ, lambda);
    double size = fabs(o->obj) + fabs(it->obj) + lambda * (fabs(o->row) + fabs(it->row));
    if (fabs(v - w) > OBJECTIVE_TIE * size)
        return v < w;
    return more_row ? o->row >= it->row : o->row <= it->row;
}

/* The greedy fill of the node's rem processes at lambda, ties going to the larger row
 * (more_row) or the smaller: item nd->k's count, and the row's sum in *row_sum. */
static long long tied_fill(search_t *s, const node_t *nd, double lambda, bool more_row,
                           double *row_sum)
{
    int len = 0;
    for (int k = nd->k; k < s->m; k++, len++) {
        const item_t *it = &s->item[k];
        int j = len;
        for (; j > 0 && !fills_before(&s->item[s->order[j - 1]], it, lambda, more_row); j--)
            s->order[j] = s->order[j - 1];
        s->order[j] = k;
    }
    long long left = nd->rem, mine = 0;
    *row_sum = 0.0;
    for (int j = 0; j < len && left > 0; j++) {
        const item_t *it = &s->item[s->order[j]];
        long long take = it->bound < left ? it->bound : left;
        *row_sum += (double)take * it->row;
        mine = s->order[j] == nd->k ? take : mine;
        left -= take;
    }
    return mine;
}

/* Item nd->k's count in the linear relaxation's optimum: at the best lambda the optimum
 * mixes the greedy fills on either side of it (ties to less row, or to more) so that the
 * row is met exactly. The relaxation's value, as a function of that count, is convex
 * with its least there: the branching starts there. */
static double relaxed_count(search_t *s, const node_t *nd, double lambda)
{
    double below, above;
    long long less = tied_fill(s, nd, lambda, false, &below);
    if (!s->row.binds)
        return (double)less;
    long long more = tied_fill(s, nd, lambda, true, &above);
    double need = s->row.need - nd->row;
    if (below >= need || !(above > below))
        return (double)less;
    if (above <= need)
        return (double)more;
    double theta = (need - below) / (above - below);
    return (double)less + theta * (double)(more - less);
}

/* The best lambdas of the node: for the objective, and for the price of the second
 * cost solve. */
typedef struct {
    double obj, price;
} lambdas_t;

/* The counts of item nd->k worth trying, [*lo, *hi], and where to start (*at, the
 * relaxation's optimum in it); false when none is. The objective's curve, at the node's
 * best lambda, is left in *f. */
static bool branch_interval(search_t *s, const node_t *nd, const lambdas_t *l, curve_t *f,
                            long long *lo, long long *hi, double *at)
{
    long long rest = s->tail[nd->k + 1];
    *lo = nd->rem - rest > 0 ? nd->rem - rest : 0;
    *hi = s->item[nd->k].bound < nd->rem ? s->item[nd->k].bound : nd->rem;
    if (*lo > *hi || !side_interval(s, nd, WEIGHT_ROW, &s->row, nd->row, lo, hi) ||
        !side_interval(s, nd, WEIGHT_CAP, &s->cap, nd->cap, lo, hi) ||
        !price_interval(s, nd, l->price, lo, hi))
        return false;
    make_curve(s, nd, WEIGHT_OBJ, l->obj, f);
    if (!curve_within(f, curve_limit(s, nd, WEIGHT_OBJ, l->obj), lo, hi))
        return false;
    *at = fmin(fmax(relaxed_count(s, nd, l->obj), (double)*lo), (double)*hi);
    return true;
}

/* Whether count t is still worth trying, one way from the relaxation's optimum: the
 * curve (at the node's lambda) is convex with its least there, and so is the
 * relaxation's value, which a child cut by the row or by the bound has shown to be too
 * large: beyond it, only larger. */
static bool worth(search_t *s, const node_t *nd, double lambda, const curve_t *f,
                  long long t, long long lo, long long hi)
{
    return t >= lo && t <= hi && curve_at(f, t) <= curve_limit(s, nd, WEIGHT_OBJ, lambda);
}

/* Counts from `at` outwards, alternating, each direction until cut. */
static void branch(search_t *s, const node_t *nd, double lambda, const curve_t *f,
                   long long lo, long long hi, double at)
{
    long long up = (long long)ceil(at), down = (long long)floor(at);
    if (down == up)
        down--;
    bool go_up = true, go_down = true;
    while ((go_up || go_down) && !s->stopped) {
        go_up = go_up && worth(s, nd, lambda, f, up, lo, hi) && !child(s, nd, up++);
        go_down = go_down && worth(s, nd, lambda, f, down, lo, hi) && !child(s, nd, down--);
    }
}

/* One node; true when it was cut by the row or by the objective's bound (the cuts that
 * tell its parent to go no further that way; the price tie's does not, since the
 * parent's start ignores it). */
static bool explore(search_t *s, const node_t *nd)
{
    if (s->stopped || (s->stopped = ++s->nodes > SELECT_SEARCH_LIMIT))
        return false;
    if (nd->k == s->m - 1) {
        s->x[nd->k] = nd->rem;
        if (nd->rem <= s->item[nd->k].bound)
            leaf(s);
        return false;
    }
    if (nd->rem > s->tail[nd->k] || !side_reachable(s, nd, WEIGHT_ROW, &s->row, nd->row))
        return true;
    lambdas_t l = {best_lambda(s, nd, WEIGHT_OBJ), 0.0};
    if (dual_at(s, nd, WEIGHT_OBJ, l.obj) >= target(s, WEIGHT_OBJ))
        return true;
    if (s->cap.binds) {
        l.price = best_lambda(s, nd, WEIGHT_PRICE);
        if (!side_reachable(s, nd, WEIGHT_CAP, &s->cap, nd->cap) ||
            dual_at(s, nd, WEIGHT_PRICE, l.price) > target(s, WEIGHT_PRICE))
            return false;
    }
    curve_t f;
    long long lo, hi;
    double at;
    if (!branch_interval(s, nd, &l, &f, &lo, &hi, &at))
        return false;
    if (nd->k == s->m - 2)
        last_pair(s, nd, lo, hi);
    else
        branch(s, nd, l.obj, &f, lo, hi, at);
    return false;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static int by_power(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    if (fabs(x->row) != fabs(y->row))
        return fabs(x->row) < fabs(y->row) ? 1 : -1;
    return (x->cls > y->cls) - (x->cls < y->cls);
}

/* The items: the classes with processes to take, the most powerful first (for removal,
 * whose rows are negated, the least powerful first), then the slack of a range. */
static void make_items(search_t *s)
{
    const selection_t *sel = s->sel;
    double sign = sel->adding ? 1.0 : -1.0;
    s->m = 0;
    for (int c = 0; c < sel->n; c++)
        if (sel->bound[c] > 0)
            s->item[s->m++] = (item_t){.row = sign * sel->power[c],
                                       .cap = sel->price ? -sign * sel->price[c] : 0.0,
                                       .bound = sel->bound[c], .cls = c};
    qsort(s->item, (size_t)s->m, sizeof *s->item, by_power);
    if (sel->total > sel->fewest)
        s->item[s->m++] = (item_t){.bound = (long long)sel->total - sel->fewest, .cls = -1};
    s->tail[s->m] = 0;
    s->mag_row = 0.0;
    for (int k = s->m - 1; k >= 0; k--) {
        s->tail[k] = s->tail[k + 1] + s->item[k].bound;
        s->mag_row += fabs(s->item[k].row) * (double)s->item[k].bound;
    }
}

/* The power row binds for a finite limit on the side that can be crossed. */
static void make_sides(search_t *s)
{
    const selection_t *sel = s->sel;
    s->row.binds = isfinite(sel->limit) && (!sel->adding || sel->limit > 0.0);
    s->row.need = sel->adding ? sel->limit : -sel->limit;
    s->row.slack = ROUNDING * (s->mag_row + fabs(s->row.need));
    s->cap = (side_t){.binds = false};
}

static void free_search(search_t *s)
{
    free(s->item);
    free(s->tail);
    free(s->x);
    free(s->counts);
    free(s->best);
    free(s->scratch);
    free(s->scratch_b);
    free(s->lambdas);
    free(s->nlambdas);
    free(s->order);
}

/* Items are at most n + 1; depths at most n + 1, two scratch rows each. */
static bool alloc_search(search_t *s, const selection_t *sel)
{
    size_t m = (size_t)sel->n + 1, rows = 2 * m + 2;
    *s = (search_t){.sel = sel};
    s->item = malloc(m * sizeof *s->item);
    s->tail = malloc((m + 1) * sizeof *s->tail);
    s->x = malloc(m * sizeof *s->x);
    s->counts = malloc((size_t)sel->n * sizeof *s->counts);
    s->best = malloc((size_t)sel->n * sizeof *s->best);
    s->scratch = malloc(rows * m * sizeof *s->scratch);
    s->scratch_b = malloc(rows * m * sizeof *s->scratch_b);
    s->per_depth = m * m / 2 + 2;
    s->lambdas = malloc(2 * m * s->per_depth * sizeof *s->lambdas);
    s->nlambdas = malloc(2 * m * sizeof *s->nlambdas);
    s->order = malloc(m * sizeof *s->order);
    bool ok = s->item && s->tail && s->x && s->counts && s->best && s->scratch &&
              s->scratch_b && s->lambdas && s->nlambdas && s->order;
    if (!ok)
        free_search(s);
    return ok;
}

/* Minimise `value` (power or price per class; maximise it when removing). */
static void set_objective(search_t *s, const double *value)
{
    double sign = s->sel->adding ? 1.0 : -1.0;
    s->value = value;
    s->mag_obj = 0.0;
    for (int k = 0; k < s->m; k++) {
        item_t *it = &s->item[k];
        it->obj = it->cls >= 0 ? sign * value[it->cls] : 0.0;
        s->mag_obj += fabs(it->obj) * (double)it->bound;
    }
    prepare_lambdas(s, WEIGHT_OBJ);
}

/* One search from `start` (a set that meets every bound): the best set in s->best;
 * false when it stopped at the node limit. */
static bool search_from(search_t *s, const int *start)
{
    const selection_t *sel = s->sel;
    for (int c = 0; c < sel->n; c++)
        s->best[c] = start[c];
    double v = selection_sum(sel->n, s->value, start);
    s->best_obj = sel->adding ? v : -v;
    s->nodes = 0;
    s->stopped = false;
    if (s->m > 0)
        explore(s, &(node_t){.k = 0, .rem = sel->total});
    return !s->stopped;
}

/* The cost goal's second solve: the least power (adding) or the most (removing) among
 * the sets whose price ties with the best, which is `cheapest`'s. */
static bool search_price_tie(search_t *s, const int *cheapest)
{
    const selection_t *sel = s->sel;
    s->cap_on = true;
    double best_price = selection_sum(sel->n, sel->price, cheapest);
    s->price_limit = selection_price_limit(sel, best_price);
    s->mag_cap = 0.0;
    for (int k = 0; k < s->m; k++)
        s->mag_cap += fabs(s->item[k].cap) * (double)s->item[k].bound;
    double need = sel->adding ? -s->price_limit : s->price_limit;
    s->cap = (side_t){true, need, ROUNDING * (s->mag_cap + fabs(need))};
    prepare_lambdas(s, WEIGHT_PRICE);
    set_objective(s, sel->power);
    return search_from(s, cheapest);
}

mal_status_t select_by_search(const selection_t *sel, const int *extreme, int *counts,
                              bool *proven)
{
    search_t s;
    if (sel->n > SELECT_SEARCH_MAX_CLASSES || !alloc_search(&s, sel)) {
        for (int c = 0; c < sel->n; c++)
            counts[c] = extreme[c]; /* meets every bound; select.h says it stands in */
        *proven = false;
        return MAL_OK;
    }
    make_items(&s);
    make_sides(&s);
    set_objective(&s, sel->goal == SELECT_COST ? sel->price : sel->power);
    *proven = search_from(&s, extreme);
    if (sel->goal == SELECT_COST) {
        for (int c = 0; c < sel->n; c++)
            counts[c] = s.best[c];
        *proven = search_price_tie(&s, counts) && *proven;
    }
    for (int c = 0; c < sel->n; c++)
        counts[c] = s.best[c];
    free_search(&s);
    return MAL_OK;
}
