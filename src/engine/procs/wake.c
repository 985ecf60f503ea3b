/* A parked process that an expansion wakes (pool.c): the join information grafted onto
 * what it holds, the spawns that complete the expansion, its data phase. */
#include "core.h"
#include "join.h"
#include "monitor.h"
#include "plan.h"
#include "pool.h"
#include "procs.h"
#include "reconf.h"
#include "registry.h"
#include "spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mal_array_t *take_array(mal_array_t **list, const char *name)
{
    for (mal_array_t **p = list; *p != NULL; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0) {
            mal_array_t *a = *p;
            *p = a->next;
            a->next = NULL;
            return a;
        }
    return NULL;
}

static mal_csr_t *find_matrix(mal_csr_t *list, const char *name)
{
    for (; list != NULL; list = list->next)
        if (strcmp(list->name, name) == 0)
            return list;
    return NULL;
}

/* The woken process's own object for a structure that arrived (`fresh`): the old layout
 * from the message, no buffer but the memory it kept. */
static mal_array_t *graft_array(mal_array_t *own, mal_array_t *fresh)
{
    free(own->bounds);
    free(own->offsets);
    own->bounds = fresh->bounds;
    own->offsets = NULL;
    fresh->bounds = NULL;
    engine_buffer_t kept = own->buf[1].pending ? own->buf[1] : own->buf[0];
    if (!kept.pending)
        kept = (engine_buffer_t){.win = MPI_WIN_NULL};
    own->buf[0] = (engine_buffer_t){.win = MPI_WIN_NULL};
    own->buf[1] = kept;
    own->current = 0;
    free(fresh->offsets);
    free(fresh->prepulled.peers);
    free(fresh);
    return own;
}

/* Matrices: a woken process that held them keeps its objects (the application's
 * handles); one that did not takes the arrived ones. */
static void graft_matrices(engine_registry_t *own, engine_registry_t *fresh)
{
    mal_csr_t **tail = &own->matrices;
    while (*tail != NULL)
        tail = &(*tail)->next;
    while (fresh->matrices != NULL) {
        mal_csr_t *m = fresh->matrices;
        fresh->matrices = m->next;
        m->next = NULL;
        mal_csr_t *mine = find_matrix(own->matrices, m->name);
        if (mine == NULL) {
            *tail = m;
            tail = &m->next;
            continue;
        }
        for (mal_array_t *a = fresh->arrays; a != NULL; a = a->next)
            if (a->matrix == m)
                a->matrix = mine;
        free(m);
    }
}

/* The arrived values: a registered one takes the bytes; one still pending (a prespawned
 * process, whose mal_init has not returned, got values at its spawn) takes the new
 * bytes instead of those of its spawn; one it does not know yet is pending. */
static void graft_values(engine_registry_t *own, engine_registry_t *fresh)
{
    while (fresh->values != NULL) {
        engine_value_t *v = fresh->values, *w = own->values;
        fresh->values = v->next;
        while (w != NULL && strcmp(v->name, w->name) != 0)
            w = w->next;
        if (w != NULL && w->ptr != NULL && w->bytes == v->bytes)
            memcpy(w->ptr, v->carried, v->bytes);
        if (w != NULL && w->ptr == NULL) {
            free(w->carried);
            w->carried = v->carried;
            w->bytes = v->bytes;
            v->carried = NULL;
        }
        if (w == NULL) {
            v->next = own->values;
            own->values = v;
        } else {
            free(v->carried);
            free(v);
        }
    }
}

/* The arrived registry (in the sender's order, which every collective follows) onto this
 * process's: its own objects keep their identity, the arrived ones fill the gaps,
 * structures the active processes no longer have are dropped. */
static void graft_registry(engine_procs_t *procs, engine_registry_t *own, engine_registry_t *fresh)
{
    graft_matrices(own, fresh);
    mal_array_t *order = NULL, **tail = &order;
    while (fresh->arrays != NULL) {
        mal_array_t *a = fresh->arrays;
        fresh->arrays = a->next;
        a->next = NULL;
        mal_array_t *mine = take_array(&own->arrays, a->name);
        mal_array_t *kept = mine != NULL ? graft_array(mine, a) : a;
        if (!kept->buf[1].pending)
            engine_pool_claim(procs, kept->name, &kept->buf[1]);
        *tail = kept;
        tail = &kept->next;
    }
    while (own->arrays != NULL) {
        mal_array_t *gone = own->arrays;
        own->arrays = gone->next;
        engine_array_destroy(own, gone);
    }
    own->arrays = order;
    graft_values(own, fresh);
}

/* What a woken process reads before it takes it over: a state of its own, as a joining
 * process would build it. */
typedef struct {
    engine_group_t group;
    settings_t settings;
    engine_settings_t conf;
    engine_registry_t reg;
    engine_transfer_t xfer;
    engine_sink_t sink;
    engine_procs_t procs;
} received_t;

static void received_free(received_t *t)
{
    engine_settings_free(&t->conf);
    settings_free(&t->settings);
    free(t->procs.parked);
    while (t->reg.arrays != NULL) {
        mal_array_t *a = t->reg.arrays;
        t->reg.arrays = a->next;
        engine_array_destroy(&t->reg, a);
    }
    engine_csr_free_all(&t->reg);
    engine_free_values(&t->reg);
}

/* The active processes' progress, pool, registry and settings (which mal_set_redist may
 * have changed while this process was parked) onto this process's. */
static void adopt_received(const engine_parts_t *parts, engine_procs_t *procs, received_t *t)
{
    parts->group->iteration = t->group.iteration;
    parts->group->plan_next = t->group.plan_next;
    procs->spawned = t->procs.spawned;
    free(procs->parked);
    procs->parked = t->procs.parked;
    procs->nparked = t->procs.nparked;
    procs->reused = t->procs.reused;
    procs->released = t->procs.released;
    t->procs.parked = NULL;
    graft_registry(procs, parts->reg, &t->reg);
    parts->reg->generation = t->reg.generation; /* the active processes' count */
    settings_free(parts->settings);
    *parts->settings = t->settings;
    t->settings = (settings_t){0};
    parts->xfer->method = t->xfer.method;
}

mal_status_t engine_receive_wake(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm pair,
                                 engine_join_header_t *h)
{
    received_t t = {.group.comm = MPI_COMM_NULL};
    engine_parts_t into = {.group = &t.group, .settings = &t.settings, .conf = &t.conf,
                           .reg = &t.reg, .xfer = &t.xfer, .sink = &t.sink};
    *h = (engine_join_header_t){0};
    const char *why = engine_receive_join_info(pair, &into, &t.procs, h);
    if (why == NULL) {
        adopt_received(parts, procs, &t);
    } else {
        free(h->weights);
        h->weights = NULL;
    }
    received_free(&t);
    engine_pool_drop_reserves(procs);
    return why == NULL ? MAL_OK : engine_fail(MAL_ERR_SPAWN, "a parked process %s", why);
}

mal_status_t engine_follow_spawns(MPI_Comm *comm, int64_t remaining)
{
    for (int64_t i = 0; i < remaining; i++) {
        int ok = 0;
        engine_bcast_flag(&ok, *comm);
        MPI_Comm next = MPI_COMM_NULL;
        mal_status_t st = ok ? engine_join_members(*comm, MPI_COMM_NULL, &next)
                             : engine_fail(MAL_ERR_SPAWN, "the expansion was abandoned");
        MPI_Comm_free(comm);
        if (st)
            return st;
        *comm = next;
    }
    return MAL_OK;
}

mal_status_t engine_join_woken(const engine_parts_t *parts, engine_procs_t *procs, MPI_Comm comm,
                               engine_join_header_t *h)
{
    engine_state_enter(parts, procs, comm); /* the data phase reports to the monitor */
    mal_status_t st = engine_join_data(parts, comm, h);
    free(h->weights);
    h->weights = NULL;
    if (st) { /* parked again, in no active set */
        MPI_Comm_free(&parts->group->comm);
        engine_set_log_rank(-1);
        return st;
    }
    procs->removed = false;
    if (h->remaining > 0) { /* processes were spawned after it: world is the new set */
        MPI_Comm_free(&procs->world);
        MPI_Comm_dup(comm, &procs->world);
        MPI_Comm_set_errhandler(procs->world, MPI_ERRORS_RETURN);
    }
    return MAL_OK;
}
