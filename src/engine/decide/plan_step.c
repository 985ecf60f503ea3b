/* The plan's turn at mal_step, and which of plan or policy decides: a plan overrides the
 * policy; the policy acts at the end of a sampling interval (decide.c). */
#include "core.h"
#include "decide.h"
#include "monitor.h"
#include "procs.h"
#include "reconf.h"

static mal_status_t run_action(engine_state_t *e, const schedule_action_t *act)
{
    switch (act->kind) {
    case SCHEDULE_EXPAND: {
        mal_spawn_mode_t mode = act->spawn == SCHEDULE_SPAWN_BATCHED    ? MAL_SPAWN_BATCHED
                                : act->spawn == SCHEDULE_SPAWN_PER_CALL ? MAL_SPAWN_PER_CALL
                                                                        : MAL_SPAWN_DEFAULT;
        return engine_expand_planned(e, act->count, mode, NULL);
    }
    case SCHEDULE_SHRINK:
        return engine_shrink(e, act->count, act->ranks, NULL, act->release);
    case SCHEDULE_REBALANCE:
        return engine_reported_rebalance(e, act->weights, act->count, act->iteration, NULL);
    }
    return engine_fail(MAL_ERR_ARG, "plan entry of unknown kind %d", (int)act->kind);
}

/* The plan's action for the iteration that just ended, if any. An entry that fell due
 * while an asynchronous expansion ran (the plan waits for it) runs late, one per step,
 * said on rank 0: next_action is the same on every rank, joiners included. */
static mal_status_t planned_action(engine_state_t *e)
{
    const schedule_t *plan = &e->pol.schedule;
    if (e->pol.next_action >= plan->count ||
        plan->actions[e->pol.next_action].iteration > e->iteration)
        return MAL_CONTINUE;
    const schedule_action_t *act = &plan->actions[e->pol.next_action++];
    if (act->iteration < e->iteration && e->rank == 0 && e->procs.settings.summary)
        engine_notice("libmal: plan entry %zu (iteration %lld) runs late, at iteration %lld: "
                      "an asynchronous expansion was under way\n", e->pol.next_action,
               (long long)act->iteration, (long long)e->iteration);
    return run_action(e, act);
}

mal_status_t engine_decide_step(engine_state_t *e)
{
    if (e->pol.schedule.count > 0)
        return planned_action(e);
    return engine_monitor_closed(e->mon) ? engine_policy_step(e) : MAL_CONTINUE;
}
