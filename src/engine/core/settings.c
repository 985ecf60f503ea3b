/* The settings table and its resolution (settings.h). */
#include "core.h"
#include "settings.h"


#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(name) .field = #name, .offset = offsetof(mal_config_t, name)

/* Names of each enum's values from 1, in the order of include/mal.h. */
static const char *const redist_names[] = {"rma", "alltoallv", "p2p", "rma-get", "shmem", "auto",
                                           NULL};
static const char *const memory_names[] = {"direct", "window", NULL};
static const char *const spawn_names[] = {"per-call", "batched", NULL};

static const setting_t table[SETTING_COUNT_] = {
    [SETTING_REDIST] = {.agree = true,
        FIELD(redist), .env = "MAL_REDIST", .type = SETTING_CHOICE,
        .names = redist_names, .fallback = MAL_REDIST_AUTO, .fallback_doc = "`auto`",
        .effect = "how a reconfiguration moves data; `auto` takes, per reconfiguration, the "
                  "executor the calibration says is fastest for its link class and state; "
                  "`shmem` starts the OpenSHMEM transport (see \"The OpenSHMEM "
                  "transport\"), chosen at `mal_init` only"},
    [SETTING_MEMORY] = {FIELD(memory), .env = "MAL_MEMORY", .type = SETTING_CHOICE,
        .names = memory_names, .fallback = MAL_MEMORY_DIRECT, .fallback_doc = "`direct`",
        .effect = "where structures live (see \"Where structures live\")"},
    [SETTING_HEADROOM] = {.agree = true,
        FIELD(headroom), .type = SETTING_REAL, .initial = 0.5, .min = 0, .max = 64,
        .values = "0 to 64", .fallback_doc = "0.5",
        .effect = "extra capacity of a window that must grow, as a fraction of the local "
                  "part"},
    [SETTING_MIN_ROWS] = {.agree = true,
        FIELD(min_rows), .type = SETTING_INT64, .min = 0,
        .max = INT64_MAX, .values = ">= 0", .fallback_doc = "0",
        .effect = "rows every rank with a positive weight receives first in a rebalance"},
    [SETTING_PLAN] = {.agree = true,
        FIELD(plan), .env = "MAL_PLAN", .type = SETTING_TEXT,
        .values = "`10:+2,20:-1,30:w=1:2:1`", .fallback_doc = "none",
        .effect = "reconfiguration plan of `mal_step`, which overrides the policy: at "
                  "iteration 10 add 2 processes (`+2b` batched, `+2p` one per call), at 20 "
                  "release the last one (`-@0:2` releases ranks 0 and 2; a final `!`, `-1!`, "
                  "releases for good even with the pool), at 30 rebalance to weights 1:2:1"},
    [SETTING_SPAWN_MODE] = {.agree = true,
        FIELD(spawn_mode), .env = "MAL_SPAWN", .type = SETTING_CHOICE,
        .names = spawn_names, .fallback = MAL_SPAWN_PER_CALL, .fallback_doc = "`per-call`",
        .effect = "spawn mode of `+N` plan entries"},
    [SETTING_HOSTS] = {FIELD(hosts), .env = "MAL_HOSTS", .type = SETTING_TEXT,
        .values = "`h1,h2`", .fallback_doc = "the runtime's placement (this node)",
        .effect = "hosts for new processes, used in turn (MPI_Info `host`)"},
    [SETTING_HOSTFILE] = {.env = "MAL_HOSTFILE", .type = SETTING_FLAG,
        .values = "a file (`host slots=N` lines)",
        .fallback_doc = "the Slurm allocation, else `MPI_UNIVERSE_SIZE`",
        .effect = "hosts and slots the job may grow into: new processes fill them host by "
                  "host, an expansion beyond them is refused (see [Slurm](running.md#slurm))"},
    [SETTING_ALLOCATION] = {.env = "MAL_ALLOCATION", .type = SETTING_FLAG,
        .values = "`auto\\|off`", .fallback_doc = "`auto`",
        .effect = "`off`: no limit and no placement from the allocation, hostfile or "
                  "`MPI_UNIVERSE_SIZE` (see [Slurm](running.md#slurm))"},
    [SETTING_SPAWN_PROGRAM] = {FIELD(spawn_program), .type = SETTING_TEXT,
        .values = "a path", .fallback_doc = "this program (`/proc/self/exe`)",
        .effect = "program an expansion spawns"},
    [SETTING_SPAWN_ARGV] = {FIELD(spawn_argv), .type = SETTING_ARGV,
        .values = "NULL-terminated", .fallback_doc = "this program's arguments",
        .effect = "arguments of spawned processes"},
    [SETTING_RECONF_TIMEOUT] = {.local = true,
        .env = "MAL_RECONF_TIMEOUT", .type = SETTING_NUMBER,
        .min = 1, .max = 86400, .fallback = 60, .unit = "a number of seconds",
        .fallback_doc = "60",
        .effect = "seconds after which a spawn whose start the MPI runtime lost fails, and "
                  "(MPICH) a process whose MPI_Finalize hangs ends itself; read when the "
                  "program starts (see \"Bounded spawns\")"},
    [SETTING_REPORT] = {FIELD(report), .env = "MAL_REPORT", .type = SETTING_TEXT,
        .values = "a file", .fallback_doc = "none",
        .effect = "JSON-lines report, one record per reconfiguration, decision, checked "
                  "prediction and parked process (`docs/report.md`)"},
    [SETTING_SUMMARY] = {FIELD(summary), .env = "MAL_QUIET", .type = SETTING_BOOL, .initial = 1,
        .values = "`MAL_QUIET=1` turns it off", .fallback_doc = "true",
        .effect = "summary lines on stderr (rank 0, and released processes; never on the "
                  "application's stdout)"},
    [SETTING_LOG_ERRORS] = {.local = true,
        FIELD(log_errors), .type = SETTING_BOOL, .initial = 1, .values = "bool",
        .fallback_doc = "true", .effect = "print each error once to stderr, with the rank"},
    [SETTING_SAMPLE_INTERVAL] = {.agree = true,
        FIELD(sample_interval), .env = "MAL_SAMPLE_INTERVAL",
        .type = SETTING_INT, .min = 1, .max = 1000000, .unset = 0, .fallback = 10,
        .unit = "an integer", .fallback_doc = "10 (field 0: from the environment)",
        .effect = "iterations per sampling interval of the monitor"},
    [SETTING_GRACE] = {.agree = true,
        FIELD(grace), .env = "MAL_GRACE", .type = SETTING_INT, .min = 0,
        .max = 1000000, .unset = -1, .fallback = 5, .initial = -1, .unit = "an integer",
        .fallback_doc = "5 (field -1: from the environment)",
        .effect = "iterations not learnt from after a reconfiguration or a load change"},
    [SETTING_CALIBRATION] = {FIELD(calibration), .env = "MAL_CALIBRATION",
        .type = SETTING_TEXT, .values = "a file (`mal-calibrate`)",
        .fallback_doc = "built-in values, said at `mal_init`",
        .effect = "the prediction model's calibration; a bad line fails `mal_init`"},
    [SETTING_POLICY] = {FIELD(policy), .env = "MAL_POLICY", .type = SETTING_TEXT,
        .values = "`key=value,...` or `off`", .fallback_doc = "balancing at 0.10",
        .effect = "the reconfiguring policy (see \"The reconfiguring policy\")"},
    [SETTING_AVAILABILITY] = {FIELD(availability), .env = "MAL_AVAILABILITY",
        .type = SETTING_TEXT, .values = "a file", .fallback_doc = "this host alone",
        .effect = "hosts, cores, classes and prices the policy may use"},
    [SETTING_ITERATIONS] = {FIELD(iterations), .type = SETTING_INT64, .min = 0,
        .max = INT64_MAX, .values = ">= 0", .fallback_doc = "0 (unknown)",
        .effect = "iterations of the whole run (the policy's objective needs it)"},
    [SETTING_POOL] = {.agree = true,
        FIELD(pool), .env = "MAL_POOL", .type = SETTING_INT, .min = 0, .max = 1,
        .unset = -1, .fallback = 0, .initial = -1, .unit = "0 or 1",
        .fallback_doc = "0 (field -1: from the environment)",
        .effect = "released processes park in the pool and the next expansion reuses them; "
                  "a released process may then come back (see \"Process pool and "
                  "asynchronous expansion\")"},
    [SETTING_PREFETCH] = {.agree = true,
        FIELD(prefetch), .env = "MAL_PREFETCH", .type = SETTING_INT,
        .min = 0, .max = 4096, .unset = -1, .fallback = 0, .initial = -1,
        .unit = "an integer", .fallback_doc = "0 (field -1: from the environment)",
        .effect = "processes spawned into the pool at `mal_init` and after a shrink, parked "
                  "until an expansion takes them"},
    [SETTING_ASYNC] = {.agree = true,
        FIELD(async), .env = "MAL_ASYNC", .type = SETTING_INT, .min = 0,
        .max = 1, .unset = -1, .fallback = 0, .initial = -1, .unit = "0 or 1",
        .fallback_doc = "0 (field -1: from the environment)",
        .effect = "an expansion that spawns does it in the background while the application "
                  "iterates (needs `MPI_THREAD_MULTIPLE`)"},
    /* Agreed: it moves a rebalance's rows out of place, which every rank plans for all. */
    [SETTING_DEBUG] = {.agree = true,
        FIELD(debug), .env = "MAL_DEBUG", .type = SETTING_INT, .min = 0,
        .max = 1, .unset = -1, .fallback = 0, .initial = -1, .unit = "0 or 1",
        .fallback_doc = "0 (field -1: from the environment)",
        .effect = "debug mode: a pointer into a structure read before a reconfiguration "
                  "faults with a message naming the structure, and with libmal-pmpi a call on "
                  "`MPI_COMM_WORLD` once it no longer holds the application's processes is "
                  "named and the job aborted; rebalances then always move rows to the other "
                  "buffer (see \"Debug mode\")"},
    /* Agreed: every process of a shrink takes part in finding the hosts it empties. */
    [SETTING_RELEASE_NODES] = {.agree = true,
        FIELD(release_nodes), .env = "MAL_RELEASE_NODES", .type = SETTING_INT, .min = 0,
        .max = 1, .unset = -1, .fallback = 0, .initial = -1, .unit = "0 or 1",
        .fallback_doc = "0 (field -1: from the environment)",
        .effect = "a shrink that empties a host of the job's Slurm allocation hands that "
                  "node back to Slurm (`scontrol update`), and expansions no longer place "
                  "there (see docs/guide/running.md, \"Slurm\")"},
    /* Agreed: the policy's inputs are corrected on rank 0 as the model is everywhere. */
    [SETTING_LEARN] = {.agree = true,
        FIELD(learn), .env = "MAL_LEARN", .type = SETTING_INT, .min = 0,
        .max = 1, .unset = -1, .fallback = 1, .initial = -1, .unit = "0 or 1",
        .fallback_doc = "1 (field -1: from the environment)",
        .effect = "the prediction model corrects each of its terms from the run's checked "
                  "predictions (recursive least squares on the log error, the calibration "
                  "as the prior); 0 keeps the calibration's model (see \"Monitoring and "
                  "the prediction model\")"},
    [SETTING_MAX_COUNT] = {.agree = true,
        .env = "MAL_MAX_COUNT", .type = SETTING_NUMBER, .min = 1,
        .max = INT_MAX, .fallback = INT_MAX, .unit = "an integer", .fallback_doc = "`INT_MAX`",
        .test_knob = true,
        .effect = "the largest count libmal hands to one MPI call, so the chunked and typed "
                  "paths for counts past 2^31 run on small data"},
    [SETTING_FAULT_SPAWN_HANG] = {.local = true,
        .env = "MAL_FAULT_SPAWN_HANG", .type = SETTING_FLAG,
        .values = "`1`", .fallback_doc = "unset", .test_knob = true,
        .effect = "processes libmal spawns stop before `main`, as when the runtime loses "
                  "their start (the time-out path)"},
    [SETTING_FAULT_DIRECT] = {.local = true,
        .env = "MAL_FAULT_DIRECT", .type = SETTING_FLAG,
        .values = "`1`", .fallback_doc = "unset", .test_knob = true,
        .effect = "every direct-memory transfer of this process fails (a reconfiguration "
                  "fails half-way)"},
    [SETTING_FAULT_JOIN] = {.local = true,
        .env = "MAL_FAULT_JOIN", .type = SETTING_FLAG,
        .values = "`nomem\\|unpack`", .fallback_doc = "unset", .test_knob = true,
        .effect = "a process spawned by an expansion finds no memory for, or cannot read, "
                  "its join information (it exits; the expansion fails with "
                  "`MAL_ERR_SPAWN`)"},
    [SETTING_FAULT_MONITOR] = {.local = true,
        .env = "MAL_FAULT_MONITOR", .type = SETTING_FLAG,
        .values = "`1`", .fallback_doc = "unset", .test_knob = true,
        .effect = "this process finds no memory to gather the monitor's sampling interval "
                  "(`mal_step` fails on every rank, nothing else changes)"},
};

const setting_t *setting_row(setting_id_t id)
{
    return &table[id];
}

const char *setting_env(setting_id_t id)
{
    const char *text = table[id].env != NULL ? getenv(table[id].env) : NULL;
    return text != NULL && *text != '\0' ? text : NULL;
}

bool setting_flag(setting_id_t id)
{
    return table[id].env != NULL && getenv(table[id].env) != NULL;
}

bool setting_parse_number(setting_id_t id, const char *text, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < table[id].min || v > table[id].max)
        return false;
    *out = v;
    return true;
}

static mal_status_t bad_env(setting_id_t id, const char *text)
{
    const setting_t *s = &table[id];
    return engine_fail(MAL_ERR_ARG, "%s='%s' is not %s in %" PRId64 "..%" PRId64, s->env, text,
                       s->unit, s->min, s->max);
}

mal_status_t setting_number_from(setting_id_t id, const char *text, int64_t *out)
{
    *out = table[id].fallback;
    if (text == NULL || *text == '\0')
        return MAL_OK;
    return setting_parse_number(id, text, out) ? MAL_OK : bad_env(id, text);
}

mal_status_t setting_number(setting_id_t id, int64_t *out)
{
    return setting_number_from(id, setting_env(id), out);
}

static int name_count(const char *const *names)
{
    int n = 0;
    while (names[n] != NULL)
        n++;
    return n;
}

/* "MAL_X='text' is not one of a, b, c" */
static mal_status_t bad_choice(setting_id_t id, const char *text)
{
    const setting_t *s = &table[id];
    char list[128] = "";
    for (int k = 0; s->names[k] != NULL; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                 s->names[k]);
    return engine_fail(MAL_ERR_ARG, "%s='%s' is not one of %s", s->env, text, list);
}

mal_status_t setting_choice(setting_id_t id, int requested, const char *subject, int *out)
{
    const setting_t *s = &table[id];
    int n = name_count(s->names);
    if (requested >= 1 && requested <= n) {
        *out = requested;
        return MAL_OK;
    }
    if (requested != 0)
        return engine_fail(MAL_ERR_ARG, "%s %d is unknown", subject, requested);
    const char *text = setting_env(id);
    *out = (int)s->fallback;
    for (int k = 0; text != NULL && k < n; k++)
        if (strcmp(text, s->names[k]) == 0) {
            *out = k + 1;
            return MAL_OK;
        }
    return text == NULL ? MAL_OK : bad_choice(id, text);
}

static int64_t field_int(const mal_config_t *cfg, const setting_t *s)
{
    const char *p = (const char *)cfg + s->offset;
    if (s->type == SETTING_INT64)
        return *(const int64_t *)(const void *)p;
    return *(const int *)(const void *)p; /* an int or an enum of int size */
}

static mal_status_t out_of_range(const setting_t *s, int64_t v)
{
    if (s->max == INT64_MAX)
        return engine_fail(MAL_ERR_ARG, "config->%s (%" PRId64 ") must be >= %" PRId64, s->field,
                           v, s->min);
    return engine_fail(MAL_ERR_ARG, "config->%s (%" PRId64 ") must be in %" PRId64 "..%" PRId64,
                       s->field, v, s->min, s->max);
}

mal_status_t setting_int(const mal_config_t *cfg, setting_id_t id, int *out)
{
    const setting_t *s = &table[id];
    int64_t v = field_int(cfg, s);
    mal_status_t st = MAL_OK;
    if (v == s->unset && s->env != NULL) {
        const char *text = setting_env(id);
        v = s->fallback;
        if (text != NULL && !setting_parse_number(id, text, &v))
            st = bad_env(id, text);
    } else if (v < s->min || v > s->max) {
        st = out_of_range(s, v);
    }
    if (!st)
        *out = (int)v;
    return st;
}

const char *setting_text(const mal_config_t *cfg, setting_id_t id)
{
    const char *value = *(const char *const *)(const void *)((const char *)cfg +
                                                               table[id].offset);
    return value != NULL || table[id].env == NULL ? value : getenv(table[id].env);
}

char *setting_text_copy(const mal_config_t *cfg, setting_id_t id)
{
    const char *text = setting_text(cfg, id);
    return text != NULL && *text != '\0' ? strdup(text) : NULL;
}

bool setting_bool(const mal_config_t *cfg, setting_id_t id)
{
    bool value = *(const bool *)((const char *)cfg + table[id].offset);
    const char *text = table[id].env != NULL ? getenv(table[id].env) : NULL;
    return value && !(text != NULL && strcmp(text, "1") == 0);
}

static mal_status_t check_real(const mal_config_t *cfg, const setting_t *s)
{
    double v = *(const double *)(const void *)((const char *)cfg + s->offset);
    if (v >= (double)s->min && v <= (double)s->max)
        return MAL_OK;
    return engine_fail(MAL_ERR_ARG, "config->%s (%g) must be in [%g, %g]", s->field, v,
                       (double)s->min, (double)s->max);
}

static mal_status_t check_row(const mal_config_t *cfg, setting_id_t id)
{
    const setting_t *s = &table[id];
    int i = 0;
    int64_t n = 0;
    char subject[64];
    switch (s->type) {
    case SETTING_CHOICE:
        snprintf(subject, sizeof subject, "config->%s", s->field);
        return setting_choice(id, (int)field_int(cfg, s), subject, &i);
    case SETTING_INT:
        return setting_int(cfg, id, &i);
    case SETTING_INT64: {
        int64_t v = field_int(cfg, s);
        return v >= s->min && v <= s->max ? MAL_OK : out_of_range(s, v);
    }
    case SETTING_REAL:
        return check_real(cfg, s);
    case SETTING_NUMBER:
        return id == SETTING_RECONF_TIMEOUT ? MAL_OK : setting_number(id, &n);
    case SETTING_TEXT: case SETTING_ARGV: case SETTING_BOOL: case SETTING_FLAG:
        break; /* anything goes; texts are parsed by their modules */
    }
    return MAL_OK;
}

mal_status_t settings_check(const mal_config_t *cfg)
{
    mal_status_t st = MAL_OK;
    for (int id = 0; id < SETTING_COUNT_ && !st; id++)
        st = check_row(cfg, (setting_id_t)id);
    return st;
}

/* ---- the settings object ----------------------------------------------------------- */

static char **copy_argv(char *const *argv)
{
    if (argv == NULL)
        return NULL;
    size_t n = 0;
    while (argv[n] != NULL)
        n++;
    char **copy = calloc(n + 1, sizeof *copy);
    for (size_t i = 0; copy != NULL && i < n; i++)
        if ((copy[i] = strdup(argv[i])) == NULL) {
            for (size_t k = 0; k < i; k++)
                free(copy[k]);
            free(copy);
            return NULL;
        }
    return copy;
}

char *settings_text_copy(const settings_t *s, setting_id_t id)
{
    return s->value[id].text != NULL ? strdup(s->value[id].text) : NULL;
}

char **settings_argv_copy(const settings_t *s, setting_id_t id)
{
    return copy_argv(s->value[id].argv);
}

static void free_argv(char **argv)
{
    for (size_t i = 0; argv != NULL && argv[i] != NULL; i++)
        free(argv[i]);
    free(argv);
}

/* One row's value; false without memory for a copy. Checked values (settings_check ran). */
static bool resolve_row(const mal_config_t *cfg, setting_id_t id, setting_value_t *v)
{
    const setting_t *s = &table[id];
    const void *field = (const char *)cfg + s->offset;
    int i = 0;
    switch (s->type) {
    case SETTING_CHOICE:
        setting_choice(id, (int)field_int(cfg, s), s->field, &i);
        v->num = i;
        return true;
    case SETTING_INT:
        setting_int(cfg, id, &i);
        v->num = i;
        return true;
    case SETTING_INT64:
        v->num = field_int(cfg, s);
        return true;
    case SETTING_REAL:
        v->real = *(const double *)field;
        return true;
    case SETTING_BOOL:
        v->num = setting_bool(cfg, id);
        return true;
    case SETTING_NUMBER:
        setting_number(id, &v->num);
        return true;
    case SETTING_TEXT:
        v->text = setting_text_copy(cfg, id);
        return v->text != NULL || setting_text(cfg, id) == NULL || !*setting_text(cfg, id);
    case SETTING_ARGV:
        v->argv = copy_argv(*(char *const *const *)field);
        return v->argv != NULL || *(char *const *const *)field == NULL;
    case SETTING_FLAG:
        v->num = setting_flag(id);
        v->text = setting_env(id) != NULL ? strdup(setting_env(id)) : NULL;
        return v->text != NULL || setting_env(id) == NULL;
    }
    return true;
}

mal_status_t settings_resolve(const mal_config_t *cfg, settings_t *out)
{
    *out = (settings_t){0};
    for (int id = 0; id < SETTING_COUNT_; id++)
        if (!table[id].local && !resolve_row(cfg, (setting_id_t)id, &out->value[id])) {
            settings_free(out);
            return engine_fail(MAL_ERR_NOMEM, "mal_init: no memory for the settings");
        }
    return MAL_OK;
}

void settings_free(settings_t *s)
{
    for (int id = 0; id < SETTING_COUNT_; id++) {
        free(s->value[id].text);
        free_argv(s->value[id].argv);
    }
    *s = (settings_t){0};
}

uint64_t settings_hash(const settings_t *s, uint64_t hash)
{
    for (int id = 0; id < SETTING_COUNT_; id++) {
        const setting_value_t *v = &s->value[id];
        if (!table[id].agree)
            continue;
        hash = engine_hash(hash, &v->num, sizeof v->num);
        hash = engine_hash(hash, &v->real, sizeof v->real);
        if (v->text != NULL)
            hash = engine_hash(hash, v->text, strlen(v->text));
    }
    return hash;
}

void settings_pack(const settings_t *s, engine_wire_t *w)
{
    for (int id = 0; id < SETTING_COUNT_; id++) {
        const setting_value_t *v = &s->value[id];
        if (table[id].local)
            continue;
        engine_wire_put_i64(w, v->num);
        engine_wire_put(w, &v->real, sizeof v->real);
        engine_wire_put_str(w, v->text);
        int64_t argc = -1; /* -1: no vector */
        while (v->argv != NULL && v->argv[++argc] != NULL)
            ;
        engine_wire_put_i64(w, v->argv != NULL ? argc : -1);
        for (int64_t k = 0; v->argv != NULL && k < argc; k++)
            engine_wire_put_str(w, v->argv[k]);
    }
}

static char **unpack_argv(engine_wire_reader_t *r)
{
    int64_t argc = engine_wire_get_i64(r);
    if (argc < 0 || r->failed)
        return NULL;
    if ((size_t)argc > r->len - r->pos) { /* each string takes at least its length */
        r->failed = true;
        return NULL;
    }
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    r->failed |= argv == NULL;
    for (int64_t k = 0; argv != NULL && k < argc; k++)
        r->failed |= (argv[k] = engine_wire_get_str(r)) == NULL;
    return argv;
}

void settings_unpack(engine_wire_reader_t *r, settings_t *s)
{
    *s = (settings_t){0};
    for (int id = 0; id < SETTING_COUNT_; id++) {
        setting_value_t *v = &s->value[id];
        if (table[id].local)
            continue;
        v->num = engine_wire_get_i64(r);
        engine_wire_get(r, &v->real, sizeof v->real);
        v->text = engine_wire_get_str(r);
        v->argv = unpack_argv(r);
    }
    if (r->failed)
        settings_free(s);
}

/* ---- the settings reference (docs/guide/library.md) ------------------------------------- */

static void values_cell(FILE *out, const setting_t *s)
{
    if (s->type == SETTING_CHOICE) {
        fputc('`', out);
        for (int k = 0; s->names[k] != NULL; k++)
            fprintf(out, "%s%s", k ? "\\|" : "", s->names[k]);
        fputc('`', out);
    } else if (s->type == SETTING_INT || s->type == SETTING_NUMBER) {
        fprintf(out, "%" PRId64 "..%" PRId64, s->min, s->max);
    } else {
        fputs(s->values != NULL ? s->values : "", out);
    }
}

static void code_cell(FILE *out, const char *name)
{
    if (name != NULL)
        fprintf(out, "`%s` | ", name);
    else
        fputs("- | ", out);
}

static void markdown_row(FILE *out, const setting_t *s)
{
    fputs("| ", out);
    code_cell(out, s->field);
    code_cell(out, s->env);
    values_cell(out, s);
    fprintf(out, " | %s | %s |\n", s->fallback_doc, s->effect);
}

void settings_markdown(FILE *out)
{
    static const char *const header = "| `mal_config_t` field | environment | values | "
                                      "default | effect |\n|---|---|---|---|---|\n";
    fputs(header, out);
    for (int id = 0; id < SETTING_COUNT_; id++)
        if (!table[id].test_knob)
            markdown_row(out, &table[id]);
    fputs("\nTesting knobs (for the tests, not for applications):\n\n", out);
    fputs(header, out);
    for (int id = 0; id < SETTING_COUNT_; id++)
        if (table[id].test_knob)
            markdown_row(out, &table[id]);
}

void settings_defaults(mal_config_t *cfg)
{
    *cfg = (mal_config_t){.size = sizeof *cfg}; /* strings and argument vectors: NULL */
    for (int id = 0; id < SETTING_COUNT_; id++) {
        const setting_t *s = &table[id];
        void *p = (char *)cfg + s->offset;
        if (s->field == NULL)
            continue;
        switch (s->type) {
        case SETTING_CHOICE: case SETTING_INT: *(int *)p = (int)s->initial; break;
        case SETTING_INT64: *(int64_t *)p = (int64_t)s->initial; break;
        case SETTING_REAL: *(double *)p = s->initial; break;
        case SETTING_BOOL: *(bool *)p = s->initial != 0; break;
        default: break;
        }
    }
}

_Static_assert(sizeof(mal_redist_t) == sizeof(int) && sizeof(mal_memory_t) == sizeof(int) &&
                   sizeof(mal_spawn_mode_t) == sizeof(int),
               "choices are read and written as int");
