/* The outcome of a reconfiguration (rebalance, expansion or shrink): its figures reduced
 * over the processes that took part, stored for mal_last_reconfig, told to the monitor,
 * and on rank 0 written to the report and the summary, with the decision behind it. */
#include "core.h"
#include "monitor.h"
#include "reconf.h"
#include "report.h"

#include <stdio.h>
#include <string.h>

static double bandwidth(const mal_reconfig_stats_t *s)
{
    return s->redist_seconds > 0 ? (double)s->bytes_moved / s->redist_seconds : 0.0;
}

static void write_json(const char *path, const mal_reconfig_stats_t *s,
                       const engine_moved_t *how, const report_change_t *change,
                       const report_phases_t *phases, const mal_decision_t *policy)
{
    report_moved_t moved = {.bytes_by_memory = how->by[ENGINE_PATH_MEMORY],
                            .bytes_by_mpi = how->by[ENGINE_PATH_MPI],
                            .method = engine_redist_name(how->method),
                            .automatic = how->automatic};
    if (report_reconfig(path, s, &moved, change, phases,
                        s->status < 0 ? engine_error_message() : NULL, policy) != 0)
        engine_fail(MAL_ERR_ARG, "cannot append to the report '%s'", path);
}

/* The summary lines of the decision behind the reconfiguration. */
static void add_decision(engine_notice_t *n, const mal_decision_t *d)
{
    engine_notice_add(n, "libmal:   policy predicted %.4f s per interval (comp %.4f, comm "
                      "%.4f, process %.4f, redist %.4f) against %.4f s without it%s",
                      d->comp + d->comm + d->process + d->redist, d->comp, d->comm,
                      d->process, d->redist, d->current, d->goal > 0 ? "" : "\n");
    if (d->goal > 0)
        engine_notice_add(n, ", goal %.4f s\n", d->goal);
}

/* "by rma", or "by alltoallv (auto: several hosts, cold)". */
static void name_executor(const engine_moved_t *how, char *out, size_t size)
{
    if (how->automatic)
        snprintf(out, size, "by %s (auto: %s, %s)", engine_redist_name(how->method),
                 how->link == PREDICT_LINK_HOST ? "one host" : "several hosts",
                 how->state == PREDICT_COLD ? "cold" : "warm");
    else
        snprintf(out, size, "by %s", engine_redist_name(how->method));
}

static void print_summary(const mal_reconfig_stats_t *s, const engine_moved_t *how,
                          const mal_decision_t *decision)
{
    engine_notice_t n = {.used = 0};
    char by[96];
    name_executor(how, by, sizeof by);
    engine_notice_add(&n, "libmal: it %lld %s %d -> %d procs, %.2f MiB moved %s, spawn "
           "%.3f s, windows %.3f s, redist %.3f s (%.0f MB/s), total %.3f s: %s%s\n",
           (long long)s->iteration, engine_action_name(s->action), s->procs_before, s->procs_after,
           (double)s->bytes_moved / (1 << 20), by, s->spawn_seconds, s->window_seconds,
           s->redist_seconds, bandwidth(s) / 1e6, s->total_seconds,
           s->status < 0 ? "abandoned, " : "ok",
           s->status < 0 ? engine_status_name(s->status) : "");
    if (s->status < 0)
        engine_notice_add(&n, "libmal:   reason: %s\n", engine_error_message());
    if (s->action == MAL_ACTION_EXPAND && s->status == MAL_OK && (s->pooled > 0 || s->async))
        engine_notice_add(&n, "libmal:   %d from the pool, %d spawned%s, %.2f MiB copied "
               "ahead; the application waited %.3f s%s\n", s->pooled, s->spawned,
               s->async ? " in the background" : "", (double)s->bytes_ahead / (1 << 20),
               s->switch_seconds, s->async ? " (the switch)" : "");
    if (decision != NULL)
        add_decision(&n, decision);
    engine_notice_write(&n);
}

void engine_phases_of(engine_sink_t *sink, const engine_reconfig_t *rc, double commit)
{
    report_phases_t *p = &sink->phases;
    p->join = rc->t_meet;
    p->plan = rc->t_plan;
    p->setup = rc->t_windows - rc->t_plan;
    p->transfer = rc->t_redist;
    p->commit = commit;
}

void engine_report(const engine_parts_t *parts, MPI_Comm comm, mal_reconfig_stats_t *local,
                   const engine_moved_t *moved, const report_change_t *change)
{
    const mal_decision_t *decision = parts->sink->reason;
    engine_moved_t executed = moved ? *moved : (engine_moved_t){.method = parts->xfer->method};
    /* The figures, then the phases (report.h: eight doubles in order), largest over the
     * ranks; the phases are the next reconfiguration's from here. */
    report_phases_t phases = parts->sink->phases;
    double t[7 + REPORT_PHASES] = {local->spawn_seconds, local->window_seconds,
                                   local->redist_seconds, local->total_seconds,
                                   local->process_seconds, local->switch_seconds,
                                   local->background_seconds};
    memcpy(t + 7, &phases, sizeof phases);
    PMPI_Allreduce(MPI_IN_PLACE, t, 7 + REPORT_PHASES, MPI_DOUBLE, MPI_MAX, comm);
    memcpy(&phases, t + 7, sizeof phases);
    parts->sink->phases = (report_phases_t){0};
    /* Bytes moved, of them copied ahead, and by each path: sums over the ranks. */
    int64_t sums[4] = {local->bytes_moved, local->bytes_ahead, executed.by[0],
                       executed.by[1]};
    PMPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_INT64_T, MPI_SUM, comm);
    executed.by[0] = sums[2];
    executed.by[1] = sums[3];
    /* The processes that started the expansion know how (the joiners do not). */
    int how[3] = {local->pooled, local->spawned, local->async};
    PMPI_Allreduce(MPI_IN_PLACE, how, 3, MPI_INT, MPI_MAX, comm);
    mal_reconfig_stats_t s = *local;
    s.spawn_seconds = t[0];
    s.window_seconds = t[1];
    s.redist_seconds = t[2];
    s.total_seconds = t[3];
    s.process_seconds = t[4];
    s.switch_seconds = t[5];
    s.background_seconds = t[6];
    s.bytes_moved = sums[0];
    s.bytes_ahead = sums[1];
    s.pooled = how[0];
    s.spawned = how[1];
    s.async = how[2] != 0;
    parts->sink->stats.reconfig = s;
    engine_monitor_reconfigured(parts->sink->mon, &s, executed.method);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        return;
    const engine_settings_t *set = parts->conf;
    if (set->report != NULL)
        write_json(set->report, &s, &executed, change, &phases, decision);
    if (set->summary)
        print_summary(&s, &executed, decision);
}
