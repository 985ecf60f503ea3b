/* Which processor classes to add or remove: Flex-MPI's mappingSimplex, solved exactly as
 * a small integer program (one integer variable per class) by libmal's own search, or
 * by GLPK in a build with MAL_WITH_GLPK=ON. Pure: no MPI. Private to libmal (never
 * installed).
 *
 * Powers are in any unit (the caller's work units per second), prices in $ per hour. */
#ifndef MAL_SELECT_H
#define MAL_SELECT_H

#include "mal_status.h"

#include <stdbool.h>

typedef enum {
    SELECT_EFFICIENCY = 0, /* fewest processes; among the candidate sets of the same size,
                              the one whose power is closest to what is needed            */
    SELECT_COST            /* cheapest in $ per hour                                       */
} select_goal_t;

/* Add exactly `s` processes, counts[c] in 0..avail[c] of class c, with total added power
 * sum counts[c] * power[c] >= need (need <= 0: any set of s). Objective:
 *   SELECT_EFFICIENCY: minimise the added power (closest to need from above);
 *   SELECT_COST: minimise sum counts[c] * price[c]; ties go to the smaller added power.
 * Returns MAL_OK with *found true and counts filled, or *found false (counts untouched)
 * when no s-set reaches need or s > sum avail: infeasibility is an answer, not an error.
 * MAL_ERR_ARG on bad arguments (n < 1, s < 0, a negative or non-finite power, price or
 * avail, found NULL), MAL_ERR_NOMEM when out of memory. Should the solver fail, the
 * greedy extreme set (which meets every bound) is the answer and select_last_proven()
 * says false.
 * Ties: objectives within 1e-12 of each other (relatively) are equal (GLPK's objective
 * tolerance is the same). Among equal sets libmal's search keeps the greedy extreme set
 * (the s most powerful; removing, the r least), else the first it meets (classes from
 * the most powerful, counts from the linear relaxation's outwards): the same answer for
 * the same input. GLPK returns any of them. */
mal_status_t select_add(int n, const double *power, const double *price, const int *avail,
                        int s, double need, select_goal_t goal, int *counts, bool *found);

/* Remove exactly `r` processes, counts[c] in 0..removable[c] of class c, such that the
 * removed power sum counts[c] * power[c] <= spare (the power the set can lose and still
 * meet its goal; spare < 0 is infeasible for r >= 1). Objective:
 *   SELECT_EFFICIENCY: maximise the removed power (what remains is closest to need);
 *   SELECT_COST: maximise the removed price sum counts[c] * price[c]; ties go to the
 *                larger removed power.
 * Returns as select_add. r == 0 gives all-zero counts (found when spare >= 0). */
mal_status_t select_remove(int n, const double *power, const double *price,
                           const int *removable, int r, double spare, select_goal_t goal,
                           int *counts, bool *found);

/* The same with the count free in [fewest, most] (0 <= fewest <= most): the cheapest set
 * of any size in the range, for the cost constraint, which would otherwise ask once per
 * size. MAL_ERR_ARG for fewest > most. */
mal_status_t select_add_range(int n, const double *power, const double *price,
                              const int *avail, int fewest, int most, double need,
                              select_goal_t goal, int *counts, bool *found);
mal_status_t select_remove_range(int n, const double *power, const double *price,
                                 const int *removable, int fewest, int most, double spare,
                                 select_goal_t goal, int *counts, bool *found);

/* Each GLPK solve stops after this many branch-and-bound nodes, and each of the search's
 * after SELECT_SEARCH_LIMIT nodes (a node there costs far less): with many classes and
 * large counts, near-ties between mixes can make either run for minutes, and a decision
 * must not. Within the limit the answer is the proven optimum (always so for Flex-MPI's
 * four classes); past it, the best set found so far, else the greedy extreme set (both
 * meet every bound). A node count, not a time, so answers do not depend on machine
 * load. */
#define SELECT_NODE_LIMIT 2000
#define SELECT_SEARCH_LIMIT 200000

/* The search keeps bounds for every depth, memory that grows with the cube of the class
 * count (2.2 MB at this limit, 8 GB at 1,000 classes): with more classes, or without the
 * memory, it answers the greedy extreme set, not proven. Classes are kinds of processor,
 * a handful on real clusters. */
#define SELECT_SEARCH_MAX_CLASSES 64

/* The solvers: libmal's exact search (select_search.c; always built) and GLPK's branch
 * and bound (built with MAL_WITH_GLPK=ON, and then the default). */
typedef enum { SELECT_SOLVER_SEARCH = 0, SELECT_SOLVER_GLPK } select_solver_t;

/* Use `which` for the calls that follow; false (and no change) when it is not built in.
 * For the tests that compare the two. Not thread-safe: one static setting. */
bool select_use_solver(select_solver_t which);

/* Whether the latest select_add / select_remove proved its optimum (false: it stopped at
 * the node limit, or the solver failed and the greedy set stood in). Not thread-safe:
 * one static flag. */
bool select_last_proven(void);

/* The largest power any s-set can add: the s most powerful available processes (greedy,
 * O(n log n)). -1 when s > sum avail. Used to skip sizes that cannot meet a need before
 * asking the solver. */
double select_max_power(int n, const double *power, const int *avail, int s);

/* The least power any r-set of removable processes has (the r least powerful); -1 when
 * r > sum removable. */
double select_min_power(int n, const double *power, const int *removable, int r);

#endif /* MAL_SELECT_H */
