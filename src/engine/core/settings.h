/* The settings of libmal, in one table: every field of mal_config_t and every environment
 * variable libmal reads, with its default, its parser and its check. mal_init resolves
 * the configuration through it (a field set in the configuration wins, else the
 * environment, else the default), and the settings reference of docs/guide/library.md is
 * printed from it (ctest/settings/settings_table.c; the test settings.reference compares
 * the two). */
#ifndef MAL_SETTINGS_H
#define MAL_SETTINGS_H

#include "mal.h"
#include "wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

/* How a setting is written and checked. */
typedef enum {
    SETTING_CHOICE, /* an enum field; its values from 1 are `names`, 0 defers to the
                     * environment, which names one of them                          */
    SETTING_INT,    /* an int field in [min, max]; `unset` defers to the environment  */
    SETTING_INT64,  /* an int64_t field in [min, max], configuration only             */
    SETTING_REAL,   /* a double field in [min, max], configuration only               */
    SETTING_TEXT,   /* a string field; NULL defers to the environment                 */
    SETTING_ARGV,   /* a NULL-terminated argument vector, configuration only          */
    SETTING_BOOL,   /* a bool field; the environment variable, when set to 1, turns
                     * it off                                                          */
    SETTING_NUMBER, /* environment only: an integer in [min, max]                      */
    SETTING_FLAG    /* environment only: on when set                                   */
} setting_type_t;

/* One row of the table; the order of the settings reference. */
typedef enum {
    SETTING_REDIST,
    SETTING_MEMORY,
    SETTING_HEADROOM,
    SETTING_MIN_ROWS,
    SETTING_PLAN,
    SETTING_SPAWN_MODE,
    SETTING_HOSTS,
    SETTING_HOSTFILE,
    SETTING_ALLOCATION,
    SETTING_SPAWN_PROGRAM,
    SETTING_SPAWN_ARGV,
    SETTING_RECONF_TIMEOUT,
    SETTING_REPORT,
    SETTING_SUMMARY,
    SETTING_LOG_ERRORS,
    SETTING_SAMPLE_INTERVAL,
    SETTING_GRACE,
    SETTING_CALIBRATION,
    SETTING_POLICY,
    SETTING_AVAILABILITY,
    SETTING_ITERATIONS,
    SETTING_POOL,
    SETTING_PREFETCH,
    SETTING_ASYNC,
    SETTING_DEBUG,
    SETTING_RELEASE_NODES,
    SETTING_LEARN,
    SETTING_MAX_COUNT,
    SETTING_FAULT_SPAWN_HANG,
    SETTING_FAULT_DIRECT,
    SETTING_FAULT_JOIN,
    SETTING_FAULT_MONITOR,
    SETTING_COUNT_
} setting_id_t;

typedef struct {
    const char *field;        /* member of mal_config_t, NULL: environment only      */
    size_t offset;            /* its offset in mal_config_t                          */
    const char *env;          /* environment variable, NULL: configuration only      */
    setting_type_t type;
    const char *const *names; /* SETTING_CHOICE: value k + 1 is names[k], NULL ends   */
    int64_t min, max;         /* the accepted range of numbers                        */
    int64_t unset;            /* SETTING_INT: the field's value that defers           */
    int64_t fallback;         /* numbers and choices: the value when nothing is set   */
    double initial;           /* numbers, choices, switches: mal_config_init's value  */
    const char *unit;         /* what a number is, in messages ("an integer")        */
    const char *values;       /* the reference's accepted values                     */
    const char *fallback_doc; /* the reference's default                             */
    const char *effect;       /* the reference's meaning                             */
    bool test_knob;           /* for the tests, not for users                         */
    bool agree;               /* every rank must have the same value (mal_init checks
                               * it: capacities, layouts, chunks and the plan are
                               * computed by each rank for all)                       */
    bool local;               /* each process's own: not in settings_t, read where it
                               * is used (a joiner keeps its own)                     */
} setting_t;

/* The table, SETTING_COUNT_ rows in setting_id_t order. */
const setting_t *setting_row(setting_id_t id);

/* The environment variable's text, NULL when it is unset or empty. */
const char *setting_env(setting_id_t id);

/* Whether a flag (or any environment-only setting) is set in the environment. */
bool setting_flag(setting_id_t id);

/* Parse `text` as the number setting `id` takes: false when it is not one in range.
 * No side effect, so it may run before MPI_Init (spawnguard.c). */
bool setting_parse_number(setting_id_t id, const char *text, int64_t *out);

/* The number of an environment-only setting: its default when unset; MAL_ERR_ARG naming
 * the variable and its range for a bad text. */
mal_status_t setting_number(setting_id_t id, int64_t *out);
/* The same for a text read earlier (at load). */
mal_status_t setting_number_from(setting_id_t id, const char *text, int64_t *out);

/* A choice: `requested` when it names one; else the environment's; else the default.
 * `subject` starts the message of an unknown value ("mal_init: config->redist"). */
mal_status_t setting_choice(setting_id_t id, int requested, const char *subject, int *out);

/* An int field: the configuration's value, else the environment's, else the default. */
mal_status_t setting_int(const mal_config_t *cfg, setting_id_t id, int *out);

/* A string: the configuration's, else the environment variable's (NULL when neither). */
const char *setting_text(const mal_config_t *cfg, setting_id_t id);
/* The same, copied (malloc'd), or NULL for none or "" (and without memory). */
char *setting_text_copy(const mal_config_t *cfg, setting_id_t id);

/* A switch: the configuration's value, unless the environment turns it off. */
bool setting_bool(const mal_config_t *cfg, setting_id_t id);

/* Check every row that has a field or an environment variable, in table order: the
 * first bad one fails with MAL_ERR_ARG naming it (config->FIELD or VARIABLE='text').
 * MAL_RECONF_TIMEOUT, read at load, is checked by spawnguard.c. */
mal_status_t settings_check(const mal_config_t *cfg);

/* ---- the settings object -------------------------------------------------------- */

/* A setting's resolved value: numbers, choices, switches and flags in `num`, reals in
 * `real`, texts (and a flag's text) in `text`, argument vectors in `argv`; texts and
 * vectors owned, NULL for none. */
typedef struct {
    int64_t num;
    double real;
    char *text;
    char **argv;
} setting_value_t;

/* Every setting that is not `local`, resolved once (the configuration, else the
 * environment, else the default): the engine's one settings object. A joining process
 * receives its parents' whole in the join message (settings_pack) instead of reading its
 * own configuration and environment, so a setting added to the table reaches it with no
 * other line. */
typedef struct {
    setting_value_t value[SETTING_COUNT_];
} settings_t;

/* Resolve every row of `cfg` and the environment (after settings_check). MAL_ERR_NOMEM
 * without memory for a copy. */
mal_status_t settings_resolve(const mal_config_t *cfg, settings_t *out);
void settings_free(settings_t *s);
/* The values every rank must share (rows marked `agree`), hashed onto `hash`. */
uint64_t settings_hash(const settings_t *s, uint64_t hash);
/* The object on the wire, row by row in table order; unpack sets r->failed on a short or
 * bad message (and frees what it read). */
void settings_pack(const settings_t *s, engine_wire_t *w);
void settings_unpack(engine_wire_reader_t *r, settings_t *s);

static inline int64_t settings_num(const settings_t *s, setting_id_t id)
{
    return s->value[id].num;
}
static inline const char *settings_text(const settings_t *s, setting_id_t id)
{
    return s->value[id].text;
}
/* Owned copies of a text or an argument vector: NULL for none (or without memory). */
char *settings_text_copy(const settings_t *s, setting_id_t id);
char **settings_argv_copy(const settings_t *s, setting_id_t id);

/* mal_config_init: every field at its initial value (NULL for strings). */
void settings_defaults(mal_config_t *cfg);

/* The settings reference (docs/guide/library.md): a Markdown table of every row. */
void settings_markdown(FILE *out);

#endif
