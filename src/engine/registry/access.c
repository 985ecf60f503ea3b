/* A structure as the other layers see it (registry.h): what they read of it and what a
 * reconfiguration's commit changes. The buffer getters take a const structure and hand
 * back a buffer that may be changed (as strchr does): the planner reads through const
 * handles what its commit later changes through the same structure. */
#include "core.h"
#include "registry_impl.h"

#include <stdlib.h>
#include <string.h>

mal_array_t *engine_array_first(const engine_registry_t *reg)
{
    return reg->arrays;
}

mal_array_t *engine_array_next(const mal_array_t *a)
{
    return a->next;
}

int engine_array_count(const engine_registry_t *reg)
{
    int n = 0;
    for (const mal_array_t *a = reg->arrays; a != NULL; a = a->next)
        n++;
    return n;
}

const char *engine_array_name(const mal_array_t *a)
{
    return a->name;
}

int64_t engine_array_global_rows(const mal_array_t *a)
{
    return a->global_rows;
}

int64_t engine_array_row_len(const mal_array_t *a)
{
    return a->row_len;
}

int64_t engine_array_row_bytes(const mal_array_t *a)
{
    return a->row_bytes;
}

int64_t engine_array_bytes(const mal_array_t *a)
{
    return a->global_rows * a->row_bytes;
}

const char *engine_array_pointer_call(const mal_array_t *a)
{
    switch (a->part) {
    case CSR_PART_ROWPTR: return "mal_csr_rowptr";
    case CSR_PART_COLIND: return "mal_csr_colind";
    case CSR_PART_VALUES: return "mal_csr_values";
    case CSR_PART_NONE: break;
    }
    return "mal_local_data";
}

bool engine_array_replicated(const mal_array_t *a)
{
    return a->distribution == MAL_REPLICATED;
}

bool engine_array_read_mostly(const mal_array_t *a)
{
    return a->read_mostly;
}

int64_t engine_array_halo(const mal_array_t *a)
{
    return a->halo;
}

const int64_t *engine_array_bounds(const mal_array_t *a)
{
    return a->bounds;
}

const int64_t *engine_array_offsets(const mal_array_t *a)
{
    return a->offsets;
}

int64_t engine_array_local_rows(const mal_array_t *a, int rank)
{
    if (a->distribution == MAL_REPLICATED)
        return a->global_rows;
    return a->bounds[rank + 1] - a->bounds[rank];
}

int64_t engine_array_first_row(const mal_array_t *a, int rank)
{
    return a->distribution == MAL_BLOCK ? a->bounds[rank] : 0;
}

char *engine_array_local_data(const mal_array_t *a, int me)
{
    return engine_part_base(a, a->current, a->offsets[me]);
}

engine_buffer_t *engine_array_current(const mal_array_t *a)
{
    return (engine_buffer_t *)&a->buf[a->current];
}

engine_buffer_t *engine_array_spare(const mal_array_t *a)
{
    return (engine_buffer_t *)&a->buf[1 - a->current];
}

const mal_array_t *engine_array_largest_block(const engine_registry_t *reg)
{
    const mal_array_t *largest = NULL;
    double best = -1;
    for (const mal_array_t *a = reg->arrays; a != NULL; a = a->next) {
        double bytes = (double)a->global_rows * (double)a->row_bytes;
        if (a->distribution == MAL_BLOCK && bytes > best) {
            best = bytes;
            largest = a;
        }
    }
    return largest;
}

int64_t engine_array_share_bytes(const engine_registry_t *reg, const mal_array_t *a,
                                 int64_t procs)
{
    int64_t rows = a->distribution == MAL_REPLICATED
                       ? a->global_rows
                       : engine_array_capacity(reg, a, (a->global_rows + procs - 1) / procs);
    return rows * a->row_bytes;
}

bool engine_array_sources(const mal_array_t *a, const int64_t **offsets,
                          const engine_peer_mem_t **peers)
{
    const engine_buffer_t *cur = &a->buf[a->current];
    bool held = a->read_mostly && a->layout == ENGINE_LAYOUT_OWN && cur->peers != NULL;
    *offsets = a->offsets;
    *peers = held ? cur->peers : a->prepulled.peers;
    return *offsets != NULL && *peers != NULL;
}

engine_prepull_t *engine_array_prepulled(const mal_array_t *a)
{
    return (engine_prepull_t *)&a->prepulled;
}

void engine_array_rebalanced(mal_array_t *a, const int64_t *bounds, const int64_t *offsets,
                             int nprocs, bool in_place)
{
    memcpy(a->bounds, bounds, ((size_t)nprocs + 1) * sizeof *a->bounds);
    memcpy(a->offsets, offsets, (size_t)nprocs * sizeof *a->offsets);
    a->buf[a->current].crossed = true;
    if (!in_place)
        a->current = 1 - a->current;
    a->buf[a->current].crossed = true;
}

void engine_array_install(mal_array_t *a, int64_t *bounds, int64_t *offsets,
                          const engine_buffer_t *target, engine_buffer_t kept)
{
    a->buf[0] = (engine_buffer_t){.win = MPI_WIN_NULL};
    if (target != NULL) {
        free(a->bounds);
        free(a->offsets);
        a->bounds = bounds;
        a->offsets = offsets;
        a->buf[0] = *target;
        a->buf[0].crossed = true; /* the rows it holds came through it */
    }
    a->buf[1] = kept;
    a->current = 0;
    a->holds = 0; /* buffers of its own, whatever it held before */
}
