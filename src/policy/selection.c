/* The arithmetic every class-selection solver shares (select_solve.h): sums in class
 * order, the exact checks of a set, and the greedy extreme sets. */
#include "select_solve.h"

#include <math.h>
#include <stdlib.h>

double selection_sum(int n, const double *value, const int *counts)
{
    double total = 0.0;
    for (int c = 0; c < n; c++)
        total += counts[c] * value[c];
    return total;
}

bool selection_power_within(const selection_t *sel, const int *counts)
{
    double power = selection_sum(sel->n, sel->power, counts);
    return sel->adding ? power >= sel->limit : power <= sel->limit;
}

double selection_price_limit(const selection_t *sel, double best_price)
{
    double tie = PRICE_TIE * fmax(1.0, best_price);
    return sel->adding ? best_price + tie : best_price - tie;
}

bool selection_price_within(const selection_t *sel, const int *counts, double price_limit)
{
    double price = selection_sum(sel->n, sel->price, counts);
    return sel->adding ? price <= price_limit : price >= price_limit;
}

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

bool selection_greedy(int n, const double *power, const int *bound, int total,
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
