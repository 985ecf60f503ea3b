/* mal_register_value: check mal_init, hand the registry (values.c) this process's
 * registry. */
#include "api.h"
#include "registry.h"

mal_status_t mal_register_value(const char *name, void *value, size_t bytes)
{
    mal_status_t st = engine_require_init("mal_register_value");
    return st ? st : engine_value_register(&engine_context()->reg, name, value, bytes);
}
