/* A process's state: the views the layers derive from the settings object (the same way
 * at the initial start and at a join), and this process's entry into the active set
 * (the initial start, a join, a wake). What a process spawns by default, its own
 * program and arguments, is read here from /proc. */
#include "core.h"
#include "monitor.h"
#include "procs.h"
#include "settings.h"
#include "spawning.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file of a small /proc entry, NUL-terminated; *len excludes the NUL. */
static char *read_small_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* This process's arguments after the program name (/proc/self/cmdline). */
static char **own_arguments(void)
{
    size_t len = 0;
    char *text = read_small_file("/proc/self/cmdline", &len);
    if (text == NULL)
        return NULL;
    size_t count = 0;
    for (size_t i = 0; i < len; i++)
        count += text[i] == '\0';
    char **argv = calloc(count + 1, sizeof *argv);
    size_t k = 0;
    /* Skip the program name: MPI_Comm_spawn takes the arguments alone. */
    for (size_t i = strlen(text) + 1; argv != NULL && i < len; i += strlen(text + i) + 1)
        argv[k++] = strdup(text + i);
    free(text);
    return argv;
}


static char *own_program(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        return NULL;
    path[n] = '\0';
    return strdup(path);
}

/* The processes layer's view of the settings object. A joining process leaves the model's
 * parameters, the policy and the room to its join message (rank 0's view). */
static mal_status_t derive_procs(const settings_t *set, bool joining, engine_settings_t *out)
{
    engine_settings_t s = {0};
    s.spawn_mode = (mal_spawn_mode_t)settings_num(set, SETTING_SPAWN_MODE);
    s.sample_interval = (int)settings_num(set, SETTING_SAMPLE_INTERVAL);
    s.grace = (int)settings_num(set, SETTING_GRACE);
    s.pool = settings_num(set, SETTING_POOL) != 0;
    s.prefetch = (int)settings_num(set, SETTING_PREFETCH);
    s.async = settings_num(set, SETTING_ASYNC) != 0;
    s.release_nodes = settings_num(set, SETTING_RELEASE_NODES) != 0;
    s.learn = settings_num(set, SETTING_LEARN) != 0;
    s.summary = settings_num(set, SETTING_SUMMARY) != 0;
    s.calibration = settings_text_copy(set, SETTING_CALIBRATION);
    const char *plan = settings_text(set, SETTING_PLAN);
    s.plan = strdup(plan != NULL ? plan : "");
    s.report = settings_text_copy(set, SETTING_REPORT);
    s.hosts = settings_text_copy(set, SETTING_HOSTS);
    mal_status_t st = MAL_OK;
    /* Rank 0's view, which a joiner receives instead (joininfo.c). */
    if (!joining)
        st = engine_monitor_params(s.calibration, &s.params);
    if (!joining && !st)
        st = engine_policy_resolve(set, &s);
    if (!joining && !st)
        st = engine_room_resolve(set, &s);
    bool program = settings_text(set, SETTING_SPAWN_PROGRAM) != NULL;
    bool argv = set->value[SETTING_SPAWN_ARGV].argv != NULL;
    s.program = program ? settings_text_copy(set, SETTING_SPAWN_PROGRAM) : own_program();
    s.argv = argv ? settings_argv_copy(set, SETTING_SPAWN_ARGV) : own_arguments();
    if (!st && (s.plan == NULL || s.program == NULL || s.argv == NULL))
        st = engine_fail(MAL_ERR_NOMEM, "mal_init: cannot record the spawn settings "
                         "(program, arguments or plan)");
    if (st) {
        engine_settings_free(&s);
        return st;
    }
    *out = s;
    return MAL_OK;
}

mal_status_t engine_state_derive(const engine_parts_t *parts, bool joining)
{
    *parts->xfer = engine_transfer_of(parts->settings);
    parts->reg->headroom = parts->settings->value[SETTING_HEADROOM].real;
    return derive_procs(parts->settings, joining, parts->conf);
}

void engine_state_enter(const engine_parts_t *parts, const engine_procs_t *procs, MPI_Comm comm)
{
    engine_group_t *g = parts->group;
    g->comm = comm;
    MPI_Comm_rank(comm, &g->rank);
    MPI_Comm_size(comm, &g->size);
    engine_set_log_rank(g->rank);
    engine_sink_t *sink = parts->sink;
    if (sink->mon == NULL) /* initial processes: rank 0 reports the model's checks */
        sink->mon = engine_monitor_init(parts->conf, procs->initial, g->iteration,
                                        procs->initial && g->rank == 0);
    sink->stats.last.method = parts->xfer->method;
}

void engine_settings_free(engine_settings_t *s)
{
    for (size_t i = 0; s->argv != NULL && s->argv[i] != NULL; i++)
        free(s->argv[i]);
    free(s->argv);
    free(s->plan);
    free(s->report);
    free(s->hosts);
    free(s->program);
    free(s->calibration);
    engine_policy_free(s);
    engine_room_free(s);
    *s = (engine_settings_t){0};
}

/* What every rank must share beyond the settings' own rows (settings_hash): what was
 * derived from them, the model's parameters, the policy and the room. */
uint64_t engine_settings_fingerprint(const engine_settings_t *s, uint64_t hash)
{
    /* Field by field: the struct's padding is not initialised. */
    hash = engine_hash(hash, &s->params, offsetof(predict_params_t, cores));
    hash = engine_hash(hash, &s->params.cores, sizeof s->params.cores);
    hash = engine_policy_fingerprint(s, hash);
    return engine_room_fingerprint(s, hash);
}

