/* The iteration loop: mal_step and the plan, carried values, the reconfiguration report. */
#include "engine.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t mal_iteration(void)
{
    return engine.initialized ? engine.iteration : 0;
}

bool mal_is_initial_process(void)
{
    return !engine.initialized || engine.procs.initial;
}

mal_status_t mal_last_reconfig(mal_reconfig_stats_t *stats)
{
    engine_enter("mal_last_reconfig");
    if (!engine.initialized)
        return engine_fail(MAL_ERR_NOT_INITIALIZED, "mal_last_reconfig called before mal_init");
    if (stats == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_last_reconfig: stats is NULL");
    *stats = engine.stats.reconfig;
    return MAL_OK;
}

static engine_value_t *find_value(const char *name)
{
    for (engine_value_t *v = engine.reg.values; v != NULL; v = v->next)
        if (strcmp(v->name, name) == 0)
            return v;
    return NULL;
}

#define ENGINE_MAX_VALUE (1u << 20)

mal_status_t mal_register_value(const char *name, void *value, size_t bytes)
{
    mal_status_t st = engine_require_init("mal_register_value");
    if (st)
        return st;
    if (name == NULL || value == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_register_value: %s is NULL",
                           name == NULL ? "name" : "value");
    size_t len = strnlen(name, ENGINE_NAME_MAX);
    if (len == 0 || len >= ENGINE_NAME_MAX)
        return engine_fail(MAL_ERR_ARG, "mal_register_value: name must have 1..%d characters",
                           ENGINE_NAME_MAX - 1);
    if (bytes == 0 || bytes > ENGINE_MAX_VALUE)
        return engine_fail(MAL_ERR_ARG, "mal_register_value(\"%s\"): %zu bytes, must be in "
                           "1..%u", name, bytes, ENGINE_MAX_VALUE);
    engine_value_t *v = find_value(name);
    if (v != NULL && v->carried != NULL && v->bytes != bytes)
        return engine_fail(MAL_ERR_MISMATCH, "mal_register_value(\"%s\"): %zu bytes, but %zu "
                           "were carried", name, bytes, v->bytes);
    if (v == NULL) {
        if ((v = calloc(1, sizeof *v)) == NULL)
            return engine_fail(MAL_ERR_NOMEM, "no memory to register \"%s\"", name);
        strcpy(v->name, name);
        v->next = engine.reg.values;
        engine.reg.values = v;
    }
    if (v->carried != NULL) { /* a joining process: the value arrived with the join */
        memcpy(value, v->carried, bytes);
        free(v->carried);
        v->carried = NULL;
    }
    v->ptr = value;
    v->bytes = bytes;
    return MAL_OK;
}

void engine_free_values(void)
{
    while (engine.reg.values != NULL) {
        engine_value_t *v = engine.reg.values;
        engine.reg.values = v->next;
        free(v->carried);
        free(v);
    }
}

const char *engine_action_name(mal_action_t a)
{
    switch (a) {
    case MAL_ACTION_EXPAND: return "expand";
    case MAL_ACTION_SHRINK: return "shrink";
    case MAL_ACTION_REBALANCE: return "rebalance";
    case MAL_ACTION_NONE: break;
    }
    return "none";
}

static mal_status_t run_action(const schedule_action_t *act)
{
    switch (act->kind) {
    case SCHEDULE_EXPAND: {
        mal_spawn_mode_t mode = act->spawn == SCHEDULE_SPAWN_BATCHED    ? MAL_SPAWN_BATCHED
                                : act->spawn == SCHEDULE_SPAWN_PER_CALL ? MAL_SPAWN_PER_CALL
                                                                        : MAL_SPAWN_DEFAULT;
        return mal_expand(act->count, mode, NULL);
    }
    case SCHEDULE_SHRINK:
        return mal_shrink(act->count, act->ranks, NULL);
    case SCHEDULE_REBALANCE:
        return engine_reported_rebalance(&engine, act->weights, act->count, act->iteration,
                                         NULL);
    }
    return engine_fail(MAL_ERR_ARG, "plan entry of unknown kind %d", (int)act->kind);
}

/* The plan's action for the iteration that just ended, if any. */
static mal_status_t planned_action(void)
{
    const schedule_t *plan = &engine.pol.schedule;
    while (engine.pol.next_action < plan->count &&
           plan->actions[engine.pol.next_action].iteration < engine.iteration)
        engine.pol.next_action++;
    if (engine.pol.next_action >= plan->count ||
        plan->actions[engine.pol.next_action].iteration != engine.iteration)
        return MAL_CONTINUE;
    return run_action(&plan->actions[engine.pol.next_action++]);
}

mal_status_t mal_step(void)
{
    if (engine.initialized && engine.procs.removed)
        return MAL_REMOVED;
    mal_status_t st = engine_require_init("mal_step");
    if (st)
        return st;
    engine_enclose(true); /* the calls a plan or the policy makes are this one */
    engine_monitor_end_iteration(engine.mon, &engine.reg, engine.rank);
    engine.iteration++;
    /* Between sampling intervals and plan entries a step communicates nothing; a plan
     * overrides the policy. A failed gather (agreed) acts on nothing this step. */
    st = engine_monitor_step(engine.mon, engine.comm, engine.iteration);
    if (!st)
        st = engine.pol.schedule.count > 0 ? planned_action()
             : engine_monitor_closed(engine.mon) ? engine_policy_step(&engine) : MAL_CONTINUE;
    if (st != MAL_REMOVED)
        engine_monitor_begin_iteration(engine.mon);
    engine_enclose(false);
    return st;
}
