/* mal_step: the iteration loop; what to do at its end is decide/'s (engine_decide_step). */
#include "api.h"
#include "core.h"
#include "decide.h"
#include "monitor.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"

mal_status_t mal_step(void)
{
    engine_state_t *e = engine_context();
    engine_parts_t parts = engine_parts_of(e);
    if (e->initialized && e->procs.removed)
        return MAL_REMOVED;
    mal_status_t st = engine_require_init("mal_step");
    if (st)
        return st;
    engine_enclose(true); /* the calls a plan or the policy makes are this one */
    if (e->procs.async == NULL) /* the background thread owns world meanwhile */
        engine_pool_prepare(&parts, &e->procs);
    engine_monitor_end_iteration(e->sink.mon, &e->reg, e->group.rank);
    e->group.iteration++;
    /* Between sampling intervals and plan entries a step communicates nothing; a plan
     * overrides the policy. A failed gather (agreed) acts on nothing this step. */
    st = engine_monitor_step(e->sink.mon, e->group.comm, e->group.iteration);
    /* While an expansion runs in the background, the plan and the policy wait for it. */
    if (!st && e->procs.async != NULL)
        st = engine_async_poll(&parts, &e->procs);
    else if (!st)
        st = engine_decide_step(&parts, &e->procs, &e->pol);
    if (st != MAL_REMOVED)
        engine_monitor_begin_iteration(e->sink.mon);
    engine_enclose(false);
    return st;
}
