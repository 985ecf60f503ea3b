/* The decide layer: at the end of an iteration, the plan's entry (plan_step.c) or the
 * policy's decision (decide.c) carried out. Its state is engine_decider_t; where the plan
 * stands (engine_group_t.plan_next) travels with the process set, which a joining
 * process is given. */
#ifndef MAL_DECIDE_H
#define MAL_DECIDE_H

#include "policy.h"
#include "procs.h"
#include "reconf.h"
#include "schedule.h"

/* What decides reconfigurations: the plan and the policy (decide.c). */
typedef struct {
    schedule_t schedule;
    double start_seconds;       /* MPI_Wtime at mal_init (rank 0 measures the run)   */
    policy_state_t policy_state;
    mal_decision_t decision;    /* the latest, on every rank                         */
    /* Rank 0's view of the availability file as it is now: the file is read again when
     * its modification time changes, so that hosts and cores that become free (or
     * busy) reach the policy during the run. */
    avail_t live;
    bool live_ok;               /* `live` holds a view read during the run            */
    int64_t live_mtime_ns;      /* the file's modification time when `live` was read  */
    bool live_warned;           /* a change that could not be read was reported       */
} engine_decider_t;

/* Release what the decider holds (its plan, the live availability view). */
void engine_decider_free(engine_decider_t *pol);

/* ---- the policy (decide.c) ---- */
/* At the end of a sampling interval: decide on rank 0, broadcast, carry it out (the
 * sink's reason names the decision meanwhile). Collective over the group. Returns
 * MAL_CONTINUE, MAL_RECONFIGURED, MAL_REMOVED or an error. */
mal_status_t engine_policy_step(const engine_parts_t *parts, engine_procs_t *procs,
                                engine_decider_t *pol);

/* ---- plan or policy (plan_step.c) ---- */
/* What mal_step does once the iteration is counted and the monitor has stepped: the
 * plan's entry for this iteration if there is a plan, else the policy's turn at the end
 * of a sampling interval. Collective over the group; the same returns as above. */
mal_status_t engine_decide_step(const engine_parts_t *parts, engine_procs_t *procs,
                                engine_decider_t *pol);

#endif /* MAL_DECIDE_H */
