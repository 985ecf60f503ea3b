/* The plan's turn at mal_step, and which of plan or policy decides: a plan overrides the
 * policy; the policy acts at the end of a sampling interval (decide.c). */
#include "core.h"
#include "decide.h"
#include "monitor.h"
#include "procs.h"
#include "reconf.h"

static mal_status_t run_action(const engine_parts_t *parts, engine_procs_t *procs,
                               const schedule_action_t *act)
{
    switch (act->kind) {
    case SCHEDULE_EXPAND: {
        mal_spawn_mode_t mode = act->spawn == SCHEDULE_SPAWN_BATCHED    ? MAL_SPAWN_BATCHED
                                : act->spawn == SCHEDULE_SPAWN_PER_CALL ? MAL_SPAWN_PER_CALL
                                                                        : MAL_SPAWN_DEFAULT;
        return engine_expand_planned(parts, procs, act->count, mode, NULL);
    }
    case SCHEDULE_SHRINK:
        return engine_shrink(parts, procs, act->count, act->ranks, NULL, act->release);
    case SCHEDULE_REBALANCE:
        return engine_reported_rebalance(parts, act->weights, act->count, act->iteration);
    }
    return engine_fail(MAL_ERR_ARG, "plan entry of unknown kind %d", (int)act->kind);
}

/* The plan's action for the iteration that just ended, if any. An entry that fell due
 * while an asynchronous expansion ran (the plan waits for it) runs late, one per step,
 * said on rank 0: plan_next is the same on every rank, joiners included. */
static mal_status_t planned_action(const engine_parts_t *parts, engine_procs_t *procs,
                                   const schedule_t *plan)
{
    engine_group_t *g = parts->group;
    if (g->plan_next >= plan->count ||
        plan->actions[g->plan_next].iteration > g->iteration)
        return MAL_CONTINUE;
    const schedule_action_t *act = &plan->actions[g->plan_next++];
    if (act->iteration < g->iteration && g->rank == 0 && parts->conf->summary)
        engine_notice("libmal: plan entry %zu (iteration %lld) runs late, at iteration %lld: "
                      "an asynchronous expansion was under way\n", g->plan_next,
               (long long)act->iteration, (long long)g->iteration);
    return run_action(parts, procs, act);
}

mal_status_t engine_decide_step(const engine_parts_t *parts, engine_procs_t *procs,
                                engine_decider_t *pol)
{
    if (pol->schedule.count > 0)
        return planned_action(parts, procs, &pol->schedule);
    return engine_monitor_closed(parts->sink->mon) ? engine_policy_step(parts, procs, pol)
                                                  : MAL_CONTINUE;
}
