/* The report (MAL_REPORT, mal_config_t.report): one JSON object per line, every one
 * {"schema":REPORT_SCHEMA,"kind":"...",...}. The kinds and their fields are documented in
 * docs/report.md, which the test report.schema checks real reports against; a field
 * added here must be added there. Records are written from the public structures of
 * include/mal.h only, so this module depends on nothing else of the engine. Each record
 * is appended with one write(2) on a file opened O_APPEND: processes that write at the
 * same time (released ones reporting their park) do not interleave lines. */
#ifndef MAL_REPORT_H
#define MAL_REPORT_H

#include "mal.h"

#include <stdbool.h>

#define REPORT_SCHEMA 1

/* How a reconfiguration's bytes moved: summed over the ranks, by cross-memory attach and
 * through MPI; the executor's name, and whether MAL_REDIST_AUTO took it. */
typedef struct {
    int64_t bytes_by_memory, bytes_by_mpi;
    const char *method;
    bool automatic;
} report_moved_t;

/* What a reconfiguration asked for: the ranks it releases (old numbering, NULL for none)
 * and the new set's weights (NULL for an even split). Written as the plan writes them
 * ("0:3", "1:2:1"); lists longer than REPORT_LIST_MAX are left out. */
#define REPORT_LIST_MAX 256
typedef struct {
    const int *released;
    int nreleased;
    const double *weights;
    int nweights;
} report_change_t;

/* Where a reconfiguration's time went, phase by phase (seconds, the largest over the
 * ranks; docs/report.md, the phase_*_s fields): agree (the arguments agreed and the new processes
 * placed), spawn (processes spawned or woken from the pool), merge (the new communicator:
 * merged with the new processes, or split from the leavers), join (the first agreement
 * with every process of the move: newcomers arrive and set up), plan, setup (buffers and
 * windows over the new set), transfer (the data moved and its success agreed), commit
 * (the new layout installed and the old buffers freed). */
typedef struct {
    double agree, spawn, merge, join, plan, setup, transfer, commit;
} report_phases_t;
#define REPORT_PHASES ((int)(sizeof(report_phases_t) / sizeof(double)))
/* engine_report reduces the phases as an array of doubles. */
_Static_assert(sizeof(report_phases_t) == 8 * sizeof(double), "report_phases_t: 8 doubles");

/* A reconfiguration (expand, shrink or rebalance), carried out or abandoned: `moved` how
 * its bytes moved, `change` what it asked for (NULL: unknown), `phases` where its time
 * went (NULL: not measured), `error` the failure (NULL when it succeeded), `policy` the
 * decision it carries out (NULL for a plan's or the application's). */
int report_reconfig(const char *path, const mal_reconfig_stats_t *s, const report_moved_t *moved,
                    const report_change_t *change, const report_phases_t *phases,
                    const char *error, const mal_decision_t *policy);

/* A decision of the policy, kept or not. */
int report_decision(const char *path, const mal_decision_t *d);

/* What the in-run correction made of a prediction (predict/learn.h): the model's own
 * total (uncorrected) and the corrected total's interval. */
typedef struct {
    double model_total, low, high;
} report_bounds_t;

/* A prediction checked against the interval it predicted; `b` NULL: no bounds. */
int report_prediction(const char *path, const mal_prediction_t *p, const report_bounds_t *b);

/* A released process that waited: for its job to finalize ("finalize"), or in the pool
 * until an expansion took it ("wake") or it was released for good ("release"). */
typedef struct {
    bool initial;
    const char *left_by;
    double wall_seconds, cpu_seconds;
    long long rss_bytes;        /* resident memory while parked                      */
} report_parked_t;
int report_parked(const char *path, const report_parked_t *p);

/* Nodes of the job's Slurm allocation that a shrink emptied (MAL_RELEASE_NODES):
 * "returned" to Slurm, "kept" (not tried: `reason` says why) or "failed" (scontrol's
 * exit and output in `reason`). `remaining`: the job's nodes afterwards. */
typedef struct {
    long long iteration;
    const char *job, *nodes, *outcome, *remaining, *reason; /* reason NULL: none */
    long long slots_after;
    double seconds;             /* scontrol's run, 0 when not run                    */
} report_nodes_t;
int report_nodes(const char *path, const report_nodes_t *n);

/* Each returns 0 when the record was appended, -1 when the file could not be written
 * (errno says why). */

#endif
