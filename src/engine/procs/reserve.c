/* A prespawned process's prepared memory (pool.c, PREPARE): mapped and populated while
 * it is parked, claimed by the structure of the same name when an expansion wakes it. */
#include "memory.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine_reserve {
    char name[ENGINE_NAME_MAX];
    engine_buffer_t kept;
    struct engine_reserve *next;
};

void engine_pool_reserve(engine_procs_t *procs, const char *name, int64_t bytes)
{
    for (struct engine_reserve *r = procs->reserves; r != NULL; r = r->next)
        if (strcmp(r->name, name) == 0 && r->kept.mapped >= (size_t)bytes)
            return; /* prepared already */
    struct engine_reserve *r = calloc(1, sizeof *r);
    if (r == NULL || !engine_direct_reserve(bytes, &r->kept)) {
        free(r); /* an optimisation only: the wake maps the memory instead */
        return;
    }
    snprintf(r->name, sizeof r->name, "%s", name);
    r->next = procs->reserves;
    procs->reserves = r;
}

bool engine_pool_reserved(const engine_procs_t *procs, const char *name, char **base,
                          size_t *mapped)
{
    for (const struct engine_reserve *r = procs->reserves; r != NULL; r = r->next)
        if (strcmp(r->name, name) == 0) {
            *base = r->kept.base;
            *mapped = r->kept.mapped;
            return true;
        }
    return false;
}

void engine_pool_claim(engine_procs_t *procs, const char *name, engine_buffer_t *buf)
{
    for (struct engine_reserve **p = &procs->reserves; *p != NULL; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0) {
            struct engine_reserve *r = *p;
            *p = r->next;
            *buf = r->kept;
            free(r);
            return;
        }
}

void engine_pool_drop_reserves(engine_procs_t *procs)
{
    while (procs->reserves != NULL) {
        struct engine_reserve *r = procs->reserves;
        procs->reserves = r->next;
        engine_direct_free(&r->kept);
        free(r);
    }
}
