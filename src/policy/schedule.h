/* The operator's deterministic reconfiguration plan (MAL_PLAN, mal_config_t.plan):
 * text in, a list of actions out, no MPI. Private to libmal (never installed).
 *
 * Grammar (the user-facing description is in include/mal.h):
 *   plan    := entry (',' entry)*            NULL, "" or only spaces: no actions
 *   entry   := ITER ':' action               ITER >= 1, fits int64, strictly increasing
 *   action  := '+' N [ 'b' | 'p' ]           expand by N (default/batched/per-call spawn)
 *            | '-' N                         release the last N ranks
 *            | '-@' R (':' R)*               release these ranks (distinct, each >= 0)
 *            | 'w' '=' W (':' W)*            rebalance to these weights
 * N is in [1, SCHEDULE_MAX_COUNT]; lists hold at most SCHEDULE_MAX_COUNT items; weights
 * are finite, non-negative and not all zero. Spaces (only ' ') may surround an entry and
 * the ':' and '=' separators; an action's sign, number and suffix are written together
 * ("+2b", not "+ 2 b"), so that a typo is refused rather than guessed at. */
#ifndef MAL_SCHEDULE_H
#define MAL_SCHEDULE_H

#include "mal_status.h"

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* Largest process count of one action and longest rank or weight list: far beyond any
 * plan an operator writes by hand, small enough that a typo cannot ask for a huge spawn
 * or allocation. */
#define SCHEDULE_MAX_COUNT 4096

typedef enum { SCHEDULE_EXPAND = 1, SCHEDULE_SHRINK, SCHEDULE_REBALANCE } schedule_kind_t;

/* How an expansion spawns; the same values as mal_spawn_mode_t in mal.h. */
typedef enum {
    SCHEDULE_SPAWN_DEFAULT = 0, /* "+N": the configured spawn mode */
    SCHEDULE_SPAWN_PER_CALL = 1, /* "+Np": one spawn call per process */
    SCHEDULE_SPAWN_BATCHED = 2   /* "+Nb": one spawn call for all N */
} schedule_spawn_t;

typedef struct {
    int64_t iteration;      /* acts when this many iterations have completed */
    schedule_kind_t kind;
    int count;              /* expand: processes to add; shrink: processes to release;
                             * rebalance: number of weights */
    schedule_spawn_t spawn; /* expand only; SCHEDULE_SPAWN_DEFAULT otherwise */
    int *ranks;             /* shrink with -@: `count` ranks in the order given;
                             * NULL for -N (the last N) and other kinds */
    double *weights;        /* rebalance: `count` weights; NULL otherwise */
    bool release;           /* shrink with a final '!': the processes leave for good,
                             * even when released processes park in a pool */
} schedule_action_t;

/* Actions sorted by strictly increasing iteration. */
typedef struct {
    schedule_action_t *actions;
    size_t count;
} schedule_t;

/* Parse a plan. *out is overwritten (not freed) in every case.
 * Returns MAL_OK on success: *out holds the actions, the caller frees it with
 * schedule_free. Returns MAL_ERR_ARG on a malformed plan: *out is {NULL, 0} and err
 * receives a message naming the offending entry by its 1-based position and its text
 * (shortened when long), e.g.
 *   entry 2 ("20:-x"): rank count is not a positive integer
 * Returns MAL_ERR_NOMEM when out of memory: *out is {NULL, 0}, err says so.
 * err may be NULL; otherwise errlen bytes are available and, when errlen > 0, the
 * message is always NUL-terminated (truncated if needed). Weights are read with strtod,
 * so they follow the current LC_NUMERIC locale ("C" unless the program changed it). */
mal_status_t schedule_parse(const char *text, schedule_t *out, char *err, size_t errlen);

/* Check a parsed plan against the process count it starts from (`procs`, >= 1). Each
 * entry can meet one of a set of counts: every change before it may succeed or fail (a
 * spawn can fail, an expansion can be refused, and the application goes on). An entry
 * that can act on none of them is refused: a weight list whose length is none of the
 * counts, a shrink that releases every process even of the largest, a rank beyond the
 * largest. Returns MAL_OK, or MAL_ERR_ARG with err naming the entry by its 1-based
 * position and iteration, e.g.
 *   entry 2 (iteration 20, "w=" with 3 weights): 2 or 4 processes run then (2 at the
 *   start, +2 at iteration 10; each change may fail)
 * err may be NULL; as for schedule_parse otherwise. No MPI: the caller passes the count.
 * Counts beyond SCHEDULE_MAX_PROCS are not reached (such an expansion fails). */
#define SCHEDULE_MAX_PROCS (1 << 20)
mal_status_t schedule_check(const schedule_t *s, int procs, char *err, size_t errlen);

/* Release what schedule_parse allocated. Safe on NULL and on an empty or zeroed
 * schedule, and again on a freed one: it always leaves *s as {NULL, 0}. */
void schedule_free(schedule_t *s);

/* Index of the first action with iteration >= it, or s->count if none: how a process
 * that joins at iteration `it` finds its place in the plan. O(log count). */
size_t schedule_next(const schedule_t *s, int64_t it);

#endif
