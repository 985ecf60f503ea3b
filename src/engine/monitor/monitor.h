/* The monitor layer (monitor/monitor.c): measurement of iterations and communication,
 * the model's predictions and the samples the policy decides on. */
#ifndef MAL_MONITOR_H
#define MAL_MONITOR_H

#include "core.h"
#include "mal_pmpi.h"
#include "policy.h"
#include "predict.h"
#include "registry.h"

#include <stdbool.h>
#include <stdint.h>

/* One mal_init's monitor (monitor.c), opaque outside it. */
typedef struct monitor monitor_t;

/* ---- monitoring and prediction (monitor.c) ---- */

/* The model's parameters: the file's, or the defaults for a NULL path. */
mal_status_t engine_monitor_params(const char *path, predict_params_t *out);
/* Start measuring (mal_init, a join) with the settings `s` (copied): a new monitor, NULL
 * without memory (it then counts nothing: every call below accepts NULL). `initial`:
 * this process started with the application; `iteration`: mal_step calls so far;
 * `announce`: say what it counts (rank 0 of mal_init, when summaries are on). */
monitor_t *engine_monitor_init(const engine_settings_t *s, bool initial, int64_t iteration,
                               bool announce);
/* Free the monitor and set *mon to NULL. */
void engine_monitor_finalize(monitor_t **mon);
/* The application's MPI calls reach the monitor through mal_monitor_record_comm
 * (include/mal_pmpi.h), from the optional wrapper library src/pmpi. libmal's own calls
 * are not the application's communication: inside libmal, call the PMPI_ names of the
 * functions src/pmpi/pmpi.c defines (test_monitor checks the counts are exact). */
bool engine_monitor_counting(const monitor_t *mon);
void engine_monitor_record(monitor_t *mon, mal_comm_op_t op, double bytes, double seconds,
                           bool call);
/* mal_set_work: units of work of the iteration in progress (checked by the caller). */
void engine_monitor_add_work(monitor_t *mon, double units);
/* What mal_monitor_read, mal_monitor_counter and mal_last_prediction answer. */
mal_monitor_t engine_monitor_totals(const monitor_t *mon);
const char *engine_monitor_counter(const monitor_t *mon);
/* The model's parameters as the in-run correction sees them (predict/learn.h): process
 * costs times the process factor, redistribution costs times (bandwidths over) the
 * redistribution factor. The policy decides with them. */
void engine_monitor_correct_params(const monitor_t *mon, predict_params_t *p);
mal_prediction_t engine_monitor_prediction(const monitor_t *mon);
/* mal_step: close the iteration that ends (its work defaults to the rows rank `rank`
 * holds of `reg`'s largest block structure), then (after the step's own work) open the
 * next; engine_monitor_step gathers the interval over `comm` when it is complete at
 * `iteration` (collective). Its failure (no memory for the gather on some rank) is
 * agreed over `comm`: every rank gets an error, the interval's samples are dropped. */
void engine_monitor_end_iteration(monitor_t *mon, const engine_registry_t *reg, int rank);
mal_status_t engine_monitor_step(monitor_t *mon, MPI_Comm comm, int64_t iteration);
void engine_monitor_begin_iteration(monitor_t *mon);
/* Where an expansion's new processes start, for the model: new process k on entry
 * first + k of the comma-separated list `hosts` (cyclically); hosts NULL: on rank 0's
 * host. */
typedef struct {
    const char *hosts;
    int64_t first;
} engine_host_list_t;
/* The processes a reconfiguration changes, for the model: `count` come or go; an
 * expansion takes up to `parked` of them from the pool (woken, not spawned: the
 * processes layer's count, the same on every rank; 0 otherwise) and spawns the others
 * in `spawn_calls` calls (procs/resize.c: one per run of them placed on one host, one
 * per process in per-call mode). */
typedef struct {
    int count;
    int parked;
    int spawn_calls;
} engine_change_t;
/* Before a reconfiguration that every rank of `comm` (mal_comm()) is making at
 * `iteration` (collective): predict the interval after it. old_of_new[k] is the current
 * rank of new rank k, -1 for a new process (NULL: ranks keep their numbers, the ones
 * beyond are new); weights (NULL: even) are the new set's; `change` says which processes
 * come or go; the new ones start on `new_hosts`. */
void engine_monitor_predict(monitor_t *mon, MPI_Comm comm, int64_t iteration,
                            mal_action_t action, engine_change_t change,
                            const int *old_of_new, int procs_after, const double *weights,
                            engine_host_list_t new_hosts);
/* While it is planned: the transfer plan of one structure, other copies, new windows. */
void engine_monitor_plan(monitor_t *mon, const int64_t *old_bounds,
                         const int64_t *new_bounds, int nparts, int64_t row_bytes,
                         predict_rma_mode_t mode, bool cold);
void engine_monitor_copy(monitor_t *mon, int part, int64_t bytes, int64_t ops, bool remote);
/* A buffer created for the move: bytes[r] of new memory rank r maps (0 where it keeps
 * or borrows memory), nparts ranks (those beyond the current set are new processes). */
void engine_monitor_window(monitor_t *mon, const int64_t *bytes, int nparts);
/* After it (engine_report): what it cost, having moved data by `method`; the next
 * interval starts (at s->iteration). */
void engine_monitor_reconfigured(monitor_t *mon, const mal_reconfig_stats_t *s,
                                 mal_redist_t method);
/* The number every rank's host is known by in the gathered samples. */
double engine_host_hash(const char *name);
/* The interval just gathered, for the policy (rank 0 of `size` ranks, at `iteration`):
 * per-rank steady means, the work expected next, the communication profile and lambda.
 * procs[r].host receives nothing; hosts[r] the rank's host hash. False when some rank
 * had no steady iteration. Fills in->procs = procs, in->nprocs, iteration, interval,
 * interval_seconds, work, comm, lambda. procs and hosts need `size` entries. */
bool engine_monitor_sample(const monitor_t *mon, int64_t iteration, int size,
                           policy_input_t *in, policy_proc_t *procs, double *hosts);
/* Whether engine_monitor_step closed an interval in this mal_step. */
bool engine_monitor_closed(const monitor_t *mon);

#endif /* MAL_MONITOR_H */
