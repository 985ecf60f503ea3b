/* The JSON-lines report (report.h; the schema in docs/report.md). */
#include "core.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One record being written: long enough for an error message escaped in full. */
typedef struct {
    char text[8192];
    size_t len;
    bool overflow;
} record_t;

static void put(record_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof r->text - r->len;
    int n = vsnprintf(r->text + r->len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        r->overflow = true;
    else
        r->len += (size_t)n;
}

static void begin(record_t *r, const char *kind)
{
    r->len = 0;
    r->overflow = false;
    put(r, "{\"schema\":%d,\"kind\":\"%s\"", REPORT_SCHEMA, kind);
}

static void integer(record_t *r, const char *key, long long v)
{
    put(r, ",\"%s\":%lld", key, v);
}

/* Seconds and ratios with 6 decimals; JSON has no NaN or infinity: null. */
static void real(record_t *r, const char *key, double v)
{
    if (isfinite(v))
        put(r, ",\"%s\":%.6f", key, v);
    else
        put(r, ",\"%s\":null", key);
}

static void boolean(record_t *r, const char *key, bool v)
{
    put(r, ",\"%s\":%s", key, v ? "true" : "false");
}

/* A string with quotes, backslashes and control characters escaped. */
static void text(record_t *r, const char *key, const char *s)
{
    put(r, ",\"%s\":\"", key);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            put(r, "\\%c", c);
        else if (c < 0x20)
            put(r, "\\u%04x", c);
        else
            put(r, "%c", c);
    }
    put(r, "\"");
}

static int append(record_t *r, const char *path)
{
    put(r, "}\n");
    if (r->overflow) {
        errno = EOVERFLOW;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, r->text, r->len);
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)r->len ? 0 : -1;
}

/* What the policy predicted for the reconfiguration it decided. */
static void policy_fields(record_t *r, const mal_decision_t *d)
{
    put(r, ",\"decided_by\":\"policy\"");
    real(r, "goal_s", d->goal);
    real(r, "predicted_current_s", d->current);
    real(r, "predicted_comp_s", d->comp);
    real(r, "predicted_comm_s", d->comm);
    real(r, "predicted_process_s", d->process);
    real(r, "predicted_redist_s", d->redist);
    text(r, "reason", d->reason);
}

static void counts(record_t *r, long long iteration, mal_action_t action, int before,
                   int after)
{
    integer(r, "iteration", iteration);
    text(r, "action", engine_action_name(action));
    integer(r, "procs_before", before);
    integer(r, "procs_after", after);
}

/* "0:3" or "1:2:1": the plan's notation, at most REPORT_LIST_MAX items. */
static void list(record_t *r, const char *key, const int *ints, const double *reals, int n)
{
    if ((ints == NULL && reals == NULL) || n <= 0 || n > REPORT_LIST_MAX)
        return;
    put(r, ",\"%s\":\"", key);
    for (int i = 0; i < n; i++) {
        if (ints != NULL)
            put(r, "%s%d", i ? ":" : "", ints[i]);
        else
            put(r, "%s%g", i ? ":" : "", reals[i]);
    }
    put(r, "\"");
}

/* Flat, as every record (docs/report.md): phase_agree_s .. phase_commit_s. */
static void phase_fields(record_t *r, const report_phases_t *p)
{
    real(r, "phase_agree_s", p->agree);
    real(r, "phase_spawn_s", p->spawn);
    real(r, "phase_merge_s", p->merge);
    real(r, "phase_join_s", p->join);
    real(r, "phase_plan_s", p->plan);
    real(r, "phase_setup_s", p->setup);
    real(r, "phase_transfer_s", p->transfer);
    real(r, "phase_commit_s", p->commit);
}

int report_reconfig(const char *path, const mal_reconfig_stats_t *s, const report_moved_t *moved,
                    const report_change_t *change, const report_phases_t *phases,
                    const char *error, const mal_decision_t *policy)
{
    record_t r;
    begin(&r, "reconfig");
    counts(&r, (long long)s->iteration, s->action, s->procs_before, s->procs_after);
    if (change != NULL) {
        list(&r, "released", change->released, NULL, change->nreleased);
        list(&r, "weights", NULL, change->weights, change->nweights);
    }
    integer(&r, "bytes_moved", (long long)s->bytes_moved);
    integer(&r, "bytes_by_memory", (long long)moved->bytes_by_memory);
    integer(&r, "bytes_by_mpi", (long long)moved->bytes_by_mpi);
    real(&r, "spawn_s", s->spawn_seconds);
    real(&r, "process_s", s->process_seconds);
    real(&r, "windows_s", s->window_seconds);
    real(&r, "redist_s", s->redist_seconds);
    real(&r, "total_s", s->total_seconds);
    if (phases != NULL)
        phase_fields(&r, phases);
    /* Bytes per second, whole: 0 when nothing took time. */
    double bw = s->redist_seconds > 0 ? (double)s->bytes_moved / s->redist_seconds : 0.0;
    put(&r, ",\"bandwidth_Bps\":%.0f", bw);
    text(&r, "method", moved->method);
    boolean(&r, "auto", moved->automatic);
    text(&r, "outcome", engine_status_name(s->status));
    if (s->action == MAL_ACTION_EXPAND) {
        text(&r, "spawn_mode", s->spawn_mode == MAL_SPAWN_BATCHED ? "batched" : "per-call");
        integer(&r, "pooled", s->pooled);
        integer(&r, "spawned", s->spawned);
        boolean(&r, "async", s->async);
        real(&r, "switch_s", s->switch_seconds);
        real(&r, "background_s", s->background_seconds);
        integer(&r, "bytes_ahead", (long long)s->bytes_ahead);
    }
    if (error != NULL)
        text(&r, "error", error);
    if (policy != NULL)
        policy_fields(&r, policy);
    return append(&r, path);
}

int report_decision(const char *path, const mal_decision_t *d)
{
    record_t r;
    begin(&r, "decision");
    counts(&r, (long long)d->iteration, d->action, d->procs_before, d->procs_after);
    real(&r, "goal_s", d->goal);
    real(&r, "current_s", d->current);
    real(&r, "predicted_s", d->comp + d->comm + d->process + d->redist);
    text(&r, "reason", d->reason);
    return append(&r, path);
}

int report_prediction(const char *path, const mal_prediction_t *p, const report_bounds_t *b)
{
    record_t r;
    begin(&r, "prediction");
    counts(&r, (long long)p->iteration, p->action, p->procs_before, p->procs_after);
    integer(&r, "interval", (long long)p->interval);
    real(&r, "lambda", p->lambda);
    real(&r, "comp_pred_s", p->comp);
    real(&r, "comp_meas_s", p->comp_measured);
    real(&r, "comm_pred_s", p->comm);
    real(&r, "comm_meas_s", p->comm_measured);
    real(&r, "process_pred_s", p->process);
    real(&r, "process_meas_s", p->process_measured);
    real(&r, "redist_pred_s", p->redist);
    real(&r, "redist_meas_s", p->redist_measured);
    if (b != NULL) {
        real(&r, "model_total_s", b->model_total);
        real(&r, "total_low_s", b->low);
        real(&r, "total_high_s", b->high);
    }
    return append(&r, path);
}

int report_parked(const char *path, const report_parked_t *p)
{
    record_t r;
    begin(&r, "parked");
    boolean(&r, "initial", p->initial);
    text(&r, "left_by", p->left_by);
    real(&r, "wall_s", p->wall_seconds);
    real(&r, "cpu_s", p->cpu_seconds);
    integer(&r, "rss_bytes", p->rss_bytes);
    return append(&r, path);
}

int report_nodes(const char *path, const report_nodes_t *n)
{
    record_t r;
    begin(&r, "nodes");
    integer(&r, "iteration", n->iteration);
    text(&r, "job", n->job);
    text(&r, "nodes", n->nodes);
    text(&r, "outcome", n->outcome);
    text(&r, "remaining", n->remaining);
    integer(&r, "slots_after", n->slots_after);
    real(&r, "seconds", n->seconds);
    if (n->reason != NULL)
        text(&r, "reason", n->reason);
    return append(&r, path);
}
