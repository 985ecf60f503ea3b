/* The settings object crosses to a joining process whole (core/settings.c): every row
 * that is not `local` is resolved from a configuration and an environment where each
 * differs from its default, written as the join message writes it, read back, and must
 * come out equal, row by row; the hash of the rows every rank must share must follow a
 * change of any of them and ignore the others. A row added to the table is covered with
 * no line here: the values are made from its type and range. */
#define _POSIX_C_SOURCE 200809L
#include "settings.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "settings_wire: FAIL: ");                                    \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static char *const argv_value[] = {"prog", "--flag", "", NULL};

/* A value of row `id` other than its default, in the field or in the environment. */
static void set_other(mal_config_t *cfg, setting_id_t id)
{
    const setting_t *s = setting_row(id);
    void *field = (char *)cfg + s->offset;
    char text[64];
    snprintf(text, sizeof text, "text-%d", (int)id);
    switch (s->type) {
    case SETTING_CHOICE: {
        int n = 0;
        while (s->names[n] != NULL)
            n++;
        *(int *)field = s->fallback == n ? 1 : n; /* a name other than the default */
        break;
    }
    case SETTING_INT:
        *(int *)field = (int)(s->fallback == s->max ? s->min : s->max);
        break;
    case SETTING_INT64:
        *(int64_t *)field = s->min + 3;
        break;
    case SETTING_REAL:
        *(double *)field = ((double)s->min + (double)s->max) / 3;
        break;
    case SETTING_TEXT:
        *(const char **)field = id == SETTING_PLAN ? "7:+1" : strdup(text);
        break;
    case SETTING_ARGV:
        *(char *const **)field = argv_value;
        break;
    case SETTING_BOOL:
        *(bool *)field = !*(bool *)field;
        break;
    case SETTING_NUMBER:
        snprintf(text, sizeof text, "%lld", (long long)(s->min + 1));
        setenv(s->env, text, 1);
        break;
    case SETTING_FLAG:
        setenv(s->env, text, 1);
        break;
    }
}

static bool same_value(const setting_value_t *a, const setting_value_t *b)
{
    if (a->num != b->num || a->real != b->real)
        return false;
    if ((a->text == NULL) != (b->text == NULL) || (a->text && strcmp(a->text, b->text)))
        return false;
    if ((a->argv == NULL) != (b->argv == NULL))
        return false;
    for (int k = 0; a->argv != NULL && (a->argv[k] || b->argv[k]); k++)
        if (!a->argv[k] || !b->argv[k] || strcmp(a->argv[k], b->argv[k]))
            return false;
    return true;
}

static void round_trip(const settings_t *sent)
{
    engine_wire_t w = {0};
    settings_pack(sent, &w);
    CHECK(!w.failed, "packing failed");
    engine_wire_reader_t r = {.data = w.data, .len = w.len};
    settings_t got;
    settings_unpack(&r, &got);
    CHECK(!r.failed && r.pos == w.len, "unpacking failed or left %zu bytes", w.len - r.pos);
    for (int id = 0; !r.failed && id < SETTING_COUNT_; id++)
        if (!setting_row((setting_id_t)id)->local)
            CHECK(same_value(&sent->value[id], &got.value[id]), "row %d (%s) changed on the "
                  "wire", id, setting_row((setting_id_t)id)->env ? setting_row(id)->env
                                                                : setting_row(id)->field);
    CHECK(settings_hash(sent, 1) == settings_hash(&got, 1), "the hash changed on the wire");
    /* A message cut short is refused, never read as defaults. */
    engine_wire_reader_t cut = {.data = w.data, .len = w.len / 2};
    settings_t half;
    settings_unpack(&cut, &half);
    CHECK(cut.failed, "half a message was read as settings");
    settings_free(&got);
    free(w.data);
}

/* The hash follows every row marked `agree`, and no other. */
static void hash_rows(const settings_t *base)
{
    uint64_t h = settings_hash(base, 1);
    for (int id = 0; id < SETTING_COUNT_; id++) {
        settings_t s = *base;
        s.value[id].num += 1;
        s.value[id].real += 0.5;
        bool moved = settings_hash(&s, 1) != h;
        CHECK(moved == setting_row((setting_id_t)id)->agree, "row %d: the hash %s", id,
              moved ? "changed, the row need not agree" : "ignored a row that must agree");
    }
}

int main(void)
{
    mal_config_t cfg;
    mal_config_init(&cfg);
    int rows = 0;
    for (int id = 0; id < SETTING_COUNT_; id++)
        if (!setting_row((setting_id_t)id)->local && !setting_row(id)->test_knob) {
            set_other(&cfg, (setting_id_t)id);
            rows++;
        }
    setenv("MAL_MAX_COUNT", "77", 1);
    settings_t set;
    CHECK(settings_check(&cfg) == MAL_OK, "the values made are refused: %s",
          mal_error_message());
    CHECK(settings_resolve(&cfg, &set) == MAL_OK, "resolve: %s", mal_error_message());
    mal_config_t defaults;
    mal_config_init(&defaults);
    settings_t plain;
    unsetenv("MAL_MAX_COUNT");
    for (int id = 0; id < SETTING_COUNT_; id++)
        if (setting_row((setting_id_t)id)->env != NULL &&
            (setting_row(id)->type == SETTING_NUMBER || setting_row(id)->type == SETTING_FLAG))
            unsetenv(setting_row(id)->env);
    settings_resolve(&defaults, &plain);
    int differ = 0;
    for (int id = 0; id < SETTING_COUNT_; id++)
        differ += !same_value(&set.value[id], &plain.value[id]);
    CHECK(differ >= rows, "only %d of %d rows differ from their defaults", differ, rows);
    round_trip(&set);
    hash_rows(&set);
    settings_free(&plain);
    settings_free(&set);
    if (failures)
        return 1;
    printf("settings_wire: PASS (%d rows carried, %d differing from their defaults)\n", rows,
           differ);
    return 0;
}
