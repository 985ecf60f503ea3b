/* The registry as the join message carries it (procs/joininfo.c writes and reads the
 * message, and says its format): structures, matrices and values described on the
 * sender and made again on the joining process, unregistered and without buffers until
 * its data phase; and, on a parked process an expansion wakes, the arrived registry
 * grafted onto the one it kept (procs/wake.c). */
#include "core.h"
#include "registry_impl.h"

#include <stdlib.h>
#include <string.h>

static bool name_fits(const char *name)
{
    return name != NULL && strlen(name) < ENGINE_NAME_MAX;
}

engine_csr_desc_t engine_csr_describe(const mal_csr_t *m)
{
    return (engine_csr_desc_t){.name = m->name, .global_rows = m->global_rows,
                               .global_cols = m->global_cols, .value_bytes = m->value_bytes};
}

bool engine_csr_arrived(engine_registry_t *reg, const engine_csr_desc_t *d)
{
    mal_csr_t *m = name_fits(d->name) ? engine_csr_new(d->name, d->global_rows,
                                                       d->global_cols, d->value_bytes)
                                      : NULL;
    if (m == NULL)
        return false;
    m->adoptable = true;
    engine_csr_append(reg, m);
    return true;
}

engine_array_desc_t engine_array_describe(const mal_array_t *a)
{
    engine_array_desc_t d = {
        .name = a->name, .distribution = a->distribution, .global_rows = a->global_rows,
        .row_len = a->row_len, .row_bytes = a->row_bytes, .halo = a->halo,
        .layout = a->layout,
        .part = a->part, .read_mostly = a->read_mostly, .matrix = a->matrix,
        .bounds = a->bounds};
    const int64_t *offsets;
    const engine_peer_mem_t *peers;
    if (engine_array_sources(a, &offsets, &peers)) { /* read only, as said in registry.h */
        d.offsets = (int64_t *)offsets;
        d.peers = (engine_peer_mem_t *)peers;
    }
    return d;
}

/* Point a structure at its matrix, and a matrix at its parts: a part is handed back by
 * mal_alloc_csr, not mal_alloc_window. False when it names no matrix but needs one. */
static bool link_matrix(mal_array_t *a, mal_csr_t *matrix)
{
    a->matrix = matrix;
    if ((a->layout != ENGINE_LAYOUT_OWN || a->part != CSR_PART_NONE) && matrix == NULL)
        return false;
    switch (a->part) {
    case CSR_PART_ROWPTR: matrix->rowptr = a; break;
    case CSR_PART_COLIND: matrix->colind = a; break;
    case CSR_PART_VALUES: matrix->values = a; break;
    case CSR_PART_NONE: return true;
    }
    a->adoptable = false;
    return true;
}

bool engine_array_arrived(engine_registry_t *reg, const engine_array_desc_t *d)
{
    mal_array_t *a = name_fits(d->name) ? calloc(1, sizeof *a) : NULL;
    if (a == NULL) {
        free(d->bounds);
        free(d->offsets);
        free(d->peers);
        return false;
    }
    strcpy(a->name, d->name);
    a->distribution = d->distribution;
    a->global_rows = d->global_rows;
    a->row_len = d->row_len;
    a->row_bytes = d->row_bytes;
    a->halo = d->halo;
    a->layout = d->layout;
    a->part = d->part;
    a->read_mostly = d->read_mostly;
    a->bounds = d->bounds;
    a->offsets = d->offsets;
    a->prepulled.peers = d->peers;
    a->buf[0].win = a->buf[1].win = MPI_WIN_NULL;
    a->adoptable = true;
    if (!link_matrix(a, d->matrix)) {
        engine_array_destroy(reg, a);
        return false;
    }
    /* At the end: the sender's registry order, which every later collective follows. */
    mal_array_t **tail = &reg->arrays;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = a;
    return true;
}

static const engine_value_t *registered(const engine_value_t *v)
{
    while (v != NULL && v->ptr == NULL)
        v = v->next;
    return v;
}

const engine_value_t *engine_value_first(const engine_registry_t *reg)
{
    return registered(reg->values);
}

const engine_value_t *engine_value_next(const engine_value_t *v)
{
    return registered(v->next);
}

engine_value_desc_t engine_value_describe(const engine_value_t *v)
{
    return (engine_value_desc_t){.name = v->name, .data = v->ptr, .bytes = v->bytes};
}

bool engine_value_arrived(engine_registry_t *reg, const engine_value_desc_t *d)
{
    engine_value_t *v = name_fits(d->name) && d->bytes > 0 ? calloc(1, sizeof *v) : NULL;
    if (v == NULL) {
        free(d->data);
        return false;
    }
    strcpy(v->name, d->name);
    v->carried = d->data;
    v->bytes = d->bytes;
    v->next = reg->values;
    reg->values = v;
    return true;
}

/* ---- a woken process ------------------------------------------------------------------ */

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
        mal_csr_t *mine = engine_csr_find(own, m->name);
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

void engine_registry_graft(engine_registry_t *own, engine_registry_t *fresh)
{
    graft_matrices(own, fresh);
    mal_array_t *order = NULL, **tail = &order;
    while (fresh->arrays != NULL) {
        mal_array_t *a = fresh->arrays;
        fresh->arrays = a->next;
        a->next = NULL;
        mal_array_t *mine = take_array(&own->arrays, a->name);
        mal_array_t *kept = mine != NULL ? graft_array(mine, a) : a;
        *tail = kept;
        tail = &kept->next;
    }
    engine_array_destroy_all(own); /* the structures the active processes no longer have */
    own->arrays = order;
    graft_values(own, fresh);
}
