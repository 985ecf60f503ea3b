/* The decide layer (decide/decide.c): the policy carried out at mal_step. */
#ifndef MAL_DECIDE_H
#define MAL_DECIDE_H

#include "reconf.h"

/* ---- the policy (decide.c) ---- */
/* At the end of a sampling interval: decide on rank 0, broadcast, carry it out.
 * Collective over e->comm. Returns MAL_CONTINUE, MAL_RECONFIGURED, MAL_REMOVED or an
 * error. */
mal_status_t engine_policy_step(engine_state_t *e);

#endif /* MAL_DECIDE_H */
