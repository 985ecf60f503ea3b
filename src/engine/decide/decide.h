/* The decide layer: at the end of an iteration, the plan's entry (plan_step.c) or the
 * policy's decision (decide.c) carried out. */
#ifndef MAL_DECIDE_H
#define MAL_DECIDE_H

#include "reconf.h"

/* ---- the policy (decide.c) ---- */
/* At the end of a sampling interval: decide on rank 0, broadcast, carry it out.
 * Collective over e->comm. Returns MAL_CONTINUE, MAL_RECONFIGURED, MAL_REMOVED or an
 * error. */
mal_status_t engine_policy_step(engine_state_t *e);

/* ---- plan or policy (plan_step.c) ---- */
/* What mal_step does once the iteration is counted and the monitor has stepped: the
 * plan's entry for this iteration if there is a plan, else the policy's turn at the end
 * of a sampling interval. Collective over e->comm; the same returns as above. */
mal_status_t engine_decide_step(engine_state_t *e);

#endif /* MAL_DECIDE_H */
