/* mal_step: the iteration loop; what to do at its end is decide/'s (engine_decide_step). */
#include "api.h"
#include "core.h"
#include "decide.h"
#include "monitor.h"
#include "procs.h"
#include "reconf.h"

mal_status_t mal_step(void)
{
    engine_state_t *e = engine_context();
    if (e->initialized && e->procs.removed)
        return MAL_REMOVED;
    mal_status_t st = engine_require_init("mal_step");
    if (st)
        return st;
    engine_enclose(true); /* the calls a plan or the policy makes are this one */
    if (e->procs.async == NULL) /* the background thread owns world meanwhile */
        engine_pool_prepare(e);
    engine_monitor_end_iteration(e->mon, &e->reg, e->rank);
    e->iteration++;
    /* Between sampling intervals and plan entries a step communicates nothing; a plan
     * overrides the policy. A failed gather (agreed) acts on nothing this step. */
    st = engine_monitor_step(e->mon, e->comm, e->iteration);
    /* While an expansion runs in the background, the plan and the policy wait for it. */
    if (!st && e->procs.async != NULL)
        st = engine_async_poll(e);
    else if (!st)
        st = engine_decide_step(e);
    if (st != MAL_REMOVED)
        engine_monitor_begin_iteration(e->mon);
    engine_enclose(false);
    return st;
}
