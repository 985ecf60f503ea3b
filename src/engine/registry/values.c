/* Replicated values (mal_register_value): user memory every process holds alike, carried
 * to joining processes; a value carried here before its mal_register_value is pending. */
#include "core.h"
#include "registry_impl.h"

#include <stdlib.h>
#include <string.h>

#define ENGINE_MAX_VALUE (1u << 20)

static engine_value_t *find_value(const engine_registry_t *reg, const char *name)
{
    for (engine_value_t *v = reg->values; v != NULL; v = v->next)
        if (strcmp(v->name, name) == 0)
            return v;
    return NULL;
}

static mal_status_t check_value(const char *name, const void *value, size_t bytes)
{
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
    return MAL_OK;
}

mal_status_t engine_value_register(engine_registry_t *reg, const char *name, void *value,
                                   size_t bytes)
{
    mal_status_t st = check_value(name, value, bytes);
    if (st)
        return st;
    engine_value_t *v = find_value(reg, name);
    if (v != NULL && v->carried != NULL && v->bytes != bytes)
        return engine_fail(MAL_ERR_MISMATCH, "mal_register_value(\"%s\"): %zu bytes, but %zu "
                           "were carried", name, bytes, v->bytes);
    if (v == NULL) {
        if ((v = calloc(1, sizeof *v)) == NULL)
            return engine_fail(MAL_ERR_NOMEM, "no memory to register \"%s\"", name);
        strcpy(v->name, name);
        v->next = reg->values;
        reg->values = v;
        reg->generation++;
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

void engine_free_values(engine_registry_t *reg)
{
    while (reg->values != NULL) {
        engine_value_t *v = reg->values;
        reg->values = v->next;
        free(v->carried);
        free(v);
    }
}
