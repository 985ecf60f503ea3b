/* The monitor's public calls (include/mal.h, include/mal_pmpi.h): thin, over the
 * monitor of this process's mal_init (engine_state_t.mon, monitor/monitor.c). */
#include "api.h"
#include "core.h"
#include "monitor.h"

#include <math.h>

bool mal_monitor_counting(void)
{
    return engine_monitor_counting(engine_context()->sink.mon);
}

/* The hook of the PMPI wrapper library (src/pmpi): also called before mal_init and after
 * mal_finalize, when there is no monitor and it records nothing. */
void mal_monitor_record_comm(mal_comm_op_t op, double bytes, double seconds, bool call)
{
    engine_monitor_record(engine_context()->sink.mon, op, bytes, seconds, call);
}

mal_status_t mal_set_work(double units)
{
    mal_status_t st = engine_require_init("mal_set_work");
    if (st)
        return st;
    if (!(units >= 0) || !isfinite(units))
        return engine_fail(MAL_ERR_ARG, "mal_set_work: units is %g, must be finite and >= 0",
                           units);
    engine_monitor_add_work(engine_context()->sink.mon, units);
    return MAL_OK;
}

mal_status_t mal_monitor_read(mal_monitor_t *m)
{
    mal_status_t st = engine_require_init("mal_monitor_read");
    if (st)
        return st;
    if (m == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_monitor_read: m is NULL");
    *m = engine_monitor_totals(engine_context()->sink.mon);
    return MAL_OK;
}

const char *mal_monitor_counter(void)
{
    return engine_monitor_counter(engine_context()->sink.mon);
}

mal_status_t mal_last_prediction(mal_prediction_t *p)
{
    mal_status_t st = engine_require_init("mal_last_prediction");
    if (st)
        return st;
    if (p == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_prediction: p is NULL");
    *p = engine_monitor_prediction(engine_context()->sink.mon);
    return MAL_OK;
}
