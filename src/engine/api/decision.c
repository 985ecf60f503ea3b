/* mal_last_decision (include/mal.h): thin, over the decider's state (decide/decide.c). */
#include "api.h"
#include "core.h"

mal_status_t mal_last_decision(mal_decision_t *d)
{
    mal_status_t st = engine_require_init("mal_last_decision");
    if (st)
        return st;
    if (d == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_decision: d is NULL");
    *d = engine_context()->pol.decision;
    return MAL_OK;
}
