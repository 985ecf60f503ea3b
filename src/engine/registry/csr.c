/* CSR matrices: registration, setting rows, accessors, and the nnz-weighted layout that
 * every rebalance and reconfiguration computes for them before planning.
 *
 * A matrix is three block structures of the registry (see struct mal_csr), so moving
 * it is the ordinary engine's job: one-sided pulls and pushes, the baselines, chunking,
 * in-place moves, joins. What is particular to it is where the boundaries go (by
 * nonzeros, computed here from a distributed prefix) and the rebased row pointer. */
#include "core.h"
#include "registry_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const part_suffix[] = {"", ":rowptr", ":colind", ":values"};
#define CSR_NAME_MAX (ENGINE_NAME_MAX - 8) /* room for the longest suffix */

static mal_csr_t *find_csr(const engine_registry_t *reg, const char *name)
{
    for (mal_csr_t *m = reg->matrices; m != NULL; m = m->next)
        if (strcmp(m->name, name) == 0)
            return m;
    return NULL;
}

mal_csr_t *engine_csr_find(const engine_registry_t *reg, const char *name)
{
    return name != NULL ? find_csr(reg, name) : NULL;
}

mal_csr_t *engine_csr_first(const engine_registry_t *reg)
{
    return reg->matrices;
}

mal_csr_t *engine_csr_next(const mal_csr_t *m)
{
    return m->next;
}

mal_array_t *engine_csr_part(const mal_csr_t *m, csr_part_t part)
{
    return part == CSR_PART_ROWPTR ? m->rowptr : part == CSR_PART_COLIND ? m->colind
           : part == CSR_PART_VALUES ? m->values : NULL;
}

const int64_t *engine_csr_local_rowptr(const mal_csr_t *m)
{
    return m->local_rowptr;
}

static bool has_followers(const engine_registry_t *reg, const mal_csr_t *m)
{
    for (const mal_array_t *a = reg->arrays; a != NULL; a = a->next)
        if (a->matrix == m && a->part == CSR_PART_NONE)
            return true;
    return false;
}

static bool name_taken(const engine_registry_t *reg, const char *name)
{
    for (const mal_array_t *a = reg->arrays; a != NULL; a = a->next)
        if (strcmp(a->name, name) == 0)
            return true;
    return false;
}

/* ---- registration ------------------------------------------------------------------ */

static mal_status_t check_csr_name(const engine_registry_t *reg, const char *name)
{
    if (name == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr: name is NULL");
    size_t len = strnlen(name, CSR_NAME_MAX);
    if (len == 0 || len >= CSR_NAME_MAX)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr: name must have 1..%d characters",
                           CSR_NAME_MAX - 1);
    if (find_csr(reg, name) != NULL)
        return engine_fail(MAL_ERR_EXISTS, "mal_alloc_csr: matrix \"%s\" is already "
                           "registered", name);
    for (int part = CSR_PART_ROWPTR; part <= CSR_PART_VALUES; part++) {
        char full[ENGINE_NAME_MAX];
        snprintf(full, sizeof full, "%s%s", name, part_suffix[part]);
        if (name_taken(reg, full))
            return engine_fail(MAL_ERR_EXISTS, "mal_alloc_csr(\"%s\"): a structure named "
                               "\"%s\" is registered", name, full);
    }
    return MAL_OK;
}

static mal_status_t check_csr_args(const engine_registry_t *reg, const char *name,
                                   int64_t rows, int64_t cols, MPI_Datatype type,
                                   mal_csr_t **csr, int64_t *value_bytes)
{
    mal_status_t st = check_csr_name(reg, name);
    if (st)
        return st;
    if (csr == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr(\"%s\"): csr is NULL", name);
    if (rows <= 0)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr(\"%s\"): global_rows is %lld, must be "
                           "> 0", name, (long long)rows);
    if (cols <= 0 || cols > MAL_COLIND_MAX)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr(\"%s\"): global_cols is %lld, must be "
                           "in 1..%d (32-bit column indices)", name, (long long)cols,
                           MAL_COLIND_MAX);
    *value_bytes = engine_row_bytes(type, 1, 0, "mal_alloc_csr");
    return *value_bytes > 0 ? MAL_OK : MAL_ERR_ARG;
}

/* The three parts for the row layout `rows` and nnz layout `nnz` (nprocs + 1 each),
 * created collectively by the public call `call`; on failure none is left. */
static mal_status_t create_parts(const engine_regctx_t *ctx, const char *call,
                                 const mal_csr_t *m, const int64_t *rows, const int64_t *nnz,
                                 mal_array_t *parts[3])
{
    int64_t sizes[3] = {sizeof(int64_t), sizeof(mal_colind_t), m->value_bytes};
    int64_t totals[3] = {m->global_rows, nnz[ctx->size], nnz[ctx->size]};
    mal_status_t st = MAL_OK;
    for (int i = 0; i < 3; i++)
        parts[i] = NULL;
    for (int i = 0; i < 3 && !st; i++) {
        char full[ENGINE_NAME_MAX];
        snprintf(full, sizeof full, "%s%s", m->name, part_suffix[CSR_PART_ROWPTR + i]);
        st = engine_array_create(ctx, call, full, totals[i], 1, sizes[i],
                                 i == 0 ? rows : nnz, &parts[i]);
    }
    for (int i = 0; i < 3 && st; i++)
        if (parts[i] != NULL)
            engine_array_destroy(ctx->reg, parts[i]);
    return st;
}

/* Put the parts in the registry (the same order on every rank) and point them here. */
static void attach_parts(engine_registry_t *reg, mal_csr_t *m, mal_array_t *parts[3])
{
    for (int i = 0; i < 3; i++) {
        parts[i]->part = (csr_part_t)(CSR_PART_ROWPTR + i);
        parts[i]->layout = i == 0 ? ENGINE_LAYOUT_ROWS : ENGINE_LAYOUT_NNZ;
        parts[i]->matrix = m;
        engine_array_link(reg, parts[i]);
    }
    m->rowptr = parts[0];
    m->colind = parts[1];
    m->values = parts[2];
}

static void detach_parts(engine_registry_t *reg, mal_csr_t *m)
{
    mal_array_t *parts[3] = {m->rowptr, m->colind, m->values};
    for (int i = 0; i < 3; i++)
        if (parts[i] != NULL) {
            engine_array_unlink(reg, parts[i]);
            engine_array_destroy(reg, parts[i]);
        }
    m->rowptr = m->colind = m->values = NULL;
}

void engine_csr_append(engine_registry_t *reg, mal_csr_t *m)
{
    mal_csr_t **tail = &reg->matrices;
    while (*tail != NULL)
        tail = &(*tail)->next;
    m->next = NULL;
    *tail = m;
}

static mal_status_t adopt_csr(mal_csr_t *m, int64_t rows, int64_t cols, MPI_Datatype type,
                              mal_csr_t **csr)
{
    int64_t value_bytes = engine_row_bytes(type, 1, 0, "mal_alloc_csr");
    if (value_bytes <= 0)
        return MAL_ERR_ARG;
    if (csr == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_alloc_csr(\"%s\"): csr is NULL", m->name);
    if (rows != m->global_rows || cols != m->global_cols || value_bytes != m->value_bytes)
        return engine_fail(MAL_ERR_MISMATCH, "mal_alloc_csr(\"%s\") on a joining process: "
                           "%lld x %lld of %lld-byte values, but the application holds "
                           "%lld x %lld of %lld-byte values", m->name, (long long)rows,
                           (long long)cols, (long long)value_bytes,
                           (long long)m->global_rows, (long long)m->global_cols,
                           (long long)m->value_bytes);
    m->adoptable = false;
    *csr = m;
    return MAL_OK;
}

mal_csr_t *engine_csr_new(const char *name, int64_t rows, int64_t cols, int64_t value_bytes)
{
    mal_csr_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    strcpy(m->name, name);
    m->global_rows = rows;
    m->global_cols = cols;
    m->value_bytes = value_bytes;
    return m;
}

static void free_matrix(mal_csr_t *m)
{
    if (m == NULL)
        return;
    free(m->local_rowptr);
    free(m->next_rows);
    free(m->next_nnz);
    free(m->next_local);
    free(m->spare_local);
    free(m);
}

/* A row pointer buffer of at least `entries`, with headroom, its pages touched now. */
static int64_t *touched_rowptr(const engine_registry_t *reg, int64_t entries, int64_t *cap)
{
    *cap = engine_grown_capacity(reg, entries);
    int64_t *p = malloc((size_t)*cap * sizeof *p);
    if (p != NULL)
        memset(p, 0, (size_t)*cap * sizeof *p);
    return p;
}

/* After set_rows: a spare row pointer for the even share (or this rank's, if larger),
 * touched now, off any move's critical path. Best effort: a move allocates one if not. */
static void prepare_spare_rowptr(const engine_regctx_t *ctx, mal_csr_t *m, int64_t mine)
{
    int64_t even = (m->global_rows + ctx->size - 1) / ctx->size;
    free(m->spare_local);
    m->spare_local = touched_rowptr(ctx->reg, (even > mine ? even : mine) + 1, &m->spare_cap);
    if (m->spare_local == NULL)
        m->spare_cap = 0;
}

mal_status_t engine_csr_alloc(const engine_regctx_t *ctx, const char *name,
                              int64_t global_rows, int64_t global_cols,
                              MPI_Datatype value_type, mal_csr_t **csr)
{
    mal_csr_t *joined = name != NULL ? find_csr(ctx->reg, name) : NULL;
    if (joined != NULL && joined->adoptable)
        return adopt_csr(joined, global_rows, global_cols, value_type, csr);
    int64_t value_bytes = 0;
    mal_status_t st = check_csr_args(ctx->reg, name, global_rows, global_cols, value_type, csr,
                                     &value_bytes);
    int64_t fields[3] = {global_rows, global_cols, value_bytes};
    uint64_t fp = st ? 0 : engine_hash(engine_hash(ENGINE_HASH_SEED, name, strlen(name)),
                                       fields, sizeof fields);
    /* Every row empty, rows split evenly: zero-filled windows already say so (the row
     * ends are all 0). */
    size_t p = (size_t)ctx->size;
    mal_csr_t *m = st ? NULL : engine_csr_new(name, global_rows, global_cols, value_bytes);
    int64_t *rows = malloc((p + 1) * sizeof *rows), *nnz = calloc(p + 1, sizeof *nnz);
    if (!st && (m == NULL || rows == NULL || nnz == NULL))
        st = engine_fail(MAL_ERR_NOMEM, "mal_alloc_csr(\"%s\"): no memory", name);
    if (!st) {
        partition_even(global_rows, ctx->size, rows);
        int64_t mine = rows[ctx->rank + 1] - rows[ctx->rank];
        if ((m->local_rowptr = calloc((size_t)mine + 1, sizeof *m->local_rowptr)) == NULL)
            st = engine_fail(MAL_ERR_NOMEM, "mal_alloc_csr(\"%s\"): no memory", name);
        else
            m->local_cap = mine + 1;
    }
    mal_array_t *parts[3];
    if (!(st = engine_agree_in(ctx->comm, st, fp, "mal_alloc_csr")))
        st = create_parts(ctx, "mal_alloc_csr", m, rows, nnz, parts);
    free(rows);
    free(nnz);
    if (st) {
        free_matrix(m);
        return st;
    }
    attach_parts(ctx->reg, m, parts);
    engine_csr_append(ctx->reg, m);
    *csr = m;
    return MAL_OK;
}

/* ---- setting rows ------------------------------------------------------------------- */

static mal_status_t check_rowptr(const mal_csr_t *m, int64_t rows, int64_t nnz,
                                 const int64_t *rowptr)
{
    if (rows > 0 && rowptr == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): rowptr is NULL for %lld "
                           "rows", m->name, (long long)rows);
    for (int64_t i = 0; i < rows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): rowptr decreases: "
                               "rowptr[%lld] = %lld < rowptr[%lld] = %lld", m->name,
                               (long long)(i + 1), (long long)rowptr[i + 1], (long long)i,
                               (long long)rowptr[i]);
    int64_t span = rows > 0 ? rowptr[rows] - rowptr[0] : 0;
    if (span != nnz)
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): rowptr spans %lld "
                           "nonzeros (rowptr[%lld] - rowptr[0]) but local_nnz is %lld",
                           m->name, (long long)span, (long long)rows, (long long)nnz);
    return MAL_OK;
}

static mal_status_t check_entries(const mal_csr_t *m, int64_t nnz, const mal_colind_t *colind,
                                  const void *values)
{
    if (nnz > 0 && (colind == NULL || values == NULL))
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): %s is NULL for %lld "
                           "nonzeros", m->name, colind == NULL ? "colind" : "values",
                           (long long)nnz);
    for (int64_t k = 0; k < nnz; k++)
        if (colind[k] < 0 || colind[k] >= m->global_cols)
            return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): colind[%lld] is %lld, "
                               "outside the %lld columns", m->name, (long long)k,
                               (long long)colind[k], (long long)m->global_cols);
    return MAL_OK;
}

static mal_status_t check_local_rows(const mal_csr_t *m, int64_t rows, int64_t nnz,
                                     const int64_t *rowptr, const mal_colind_t *colind,
                                     const void *values)
{
    if (m == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows: csr is NULL");
    if (rows < 0 || nnz < 0)
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): local_rows %lld and "
                           "local_nnz %lld must be >= 0", m->name, (long long)rows,
                           (long long)nnz);
    mal_status_t st = check_rowptr(m, rows, nnz, rowptr);
    return st ? st : check_entries(m, nnz, colind, values);
}

/* The layouts the processes' blocks make, from the gathered (rows, nnz) pairs. */
static mal_status_t layouts_of(const engine_regctx_t *ctx, const mal_csr_t *m,
                               const int64_t *counts, int64_t *rows, int64_t *nnz)
{
    int p = ctx->size;
    rows[0] = nnz[0] = 0;
    for (int r = 0; r < p; r++) {
        rows[r + 1] = rows[r] + counts[2 * r];
        nnz[r + 1] = nnz[r] + counts[2 * r + 1];
    }
    if (rows[p] != m->global_rows)
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): the processes give %lld "
                           "rows in all, the matrix has %lld", m->name,
                           (long long)rows[p], (long long)m->global_rows);
    if (has_followers(ctx->reg, m) && !partition_same(rows, m->rowptr->bounds, p))
        return engine_fail(MAL_ERR_ARG, "mal_csr_set_rows(\"%s\"): structures are aligned to "
                           "the matrix, so its row layout cannot change (give the rows "
                           "mal_csr_first_row()/mal_csr_local_rows() say, or free them)",
                           m->name);
    return MAL_OK;
}

/* Copy this process's block into the new parts: row ends as global nnz offsets. */
static void fill_parts(int me, mal_csr_t *m, mal_array_t *parts[3], const int64_t *rowptr,
                       const mal_colind_t *colind, const void *values, int64_t *rebased)
{
    int64_t rows = parts[0]->bounds[me + 1] - parts[0]->bounds[me];
    int64_t z0 = parts[1]->bounds[me], nnz = parts[1]->bounds[me + 1] - z0;
    int64_t *ends = (int64_t *)engine_part_base(parts[0], 0, parts[0]->offsets[me]);
    rebased[0] = 0;
    for (int64_t i = 0; i < rows; i++) {
        rebased[i + 1] = rowptr[i + 1] - rowptr[0];
        ends[i] = z0 + rebased[i + 1];
    }
    if (nnz > 0) {
        memcpy(engine_part_base(parts[1], 0, parts[1]->offsets[me]), colind,
               (size_t)nnz * sizeof *colind);
        memcpy(engine_part_base(parts[2], 0, parts[2]->offsets[me]), values,
               (size_t)(nnz * m->value_bytes));
    }
}

mal_status_t engine_csr_set_rows(const engine_regctx_t *ctx, mal_csr_t *csr,
                                 int64_t local_rows, int64_t local_nnz,
                                 const int64_t *rowptr, const mal_colind_t *colind,
                                 const void *values)
{
    mal_status_t st = check_local_rows(csr, local_rows, local_nnz, rowptr, colind, values);
    size_t p = (size_t)ctx->size;
    int64_t *counts = malloc(2 * p * sizeof *counts);
    int64_t *rows = malloc((p + 1) * sizeof *rows), *nnz = malloc((p + 1) * sizeof *nnz);
    int64_t *rebased = st ? NULL : malloc(((size_t)local_rows + 1) * sizeof *rebased);
    if (!st && (counts == NULL || rows == NULL || nnz == NULL || rebased == NULL))
        st = engine_fail(MAL_ERR_NOMEM, "mal_csr_set_rows: no memory");
    uint64_t fp = csr ? engine_hash(ENGINE_HASH_SEED, csr->name, strlen(csr->name)) : 0;
    mal_array_t *parts[3];
    if (!(st = engine_agree_in(ctx->comm, st, fp, "mal_csr_set_rows"))) {
        int64_t mine[2] = {local_rows, local_nnz};
        st = engine_mpi_check(PMPI_Allgather(mine, 2, MPI_INT64_T, counts, 2, MPI_INT64_T,
                                            ctx->comm), "MPI_Allgather");
        /* Everyone has the same counts: a layout error is found on every rank. The
         * agreement covers a gather that failed on some ranks only. */
        if (!st)
            st = layouts_of(ctx, csr, counts, rows, nnz);
        if (!(st = engine_agree_in(ctx->comm, st, 0, "mal_csr_set_rows")))
            st = create_parts(ctx, "mal_csr_set_rows", csr, rows, nnz, parts);
    }
    if (!st) {
        fill_parts(ctx->rank, csr, parts, rowptr, colind, values, rebased);
        detach_parts(ctx->reg, csr);
        attach_parts(ctx->reg, csr, parts);
        free(csr->local_rowptr);
        csr->local_rowptr = rebased;
        csr->local_cap = rows[ctx->rank + 1] - rows[ctx->rank] + 1;
        rebased = NULL;
        prepare_spare_rowptr(ctx, csr, csr->local_cap - 1);
    }
    free(counts);
    free(rows);
    free(nnz);
    free(rebased);
    return st;
}

mal_status_t engine_csr_free(const engine_regctx_t *ctx, mal_csr_t *csr)
{
    mal_status_t st = MAL_OK;
    if (csr != NULL && has_followers(ctx->reg, csr))
        st = engine_fail(MAL_ERR_ARG, "mal_free_csr(\"%s\"): structures are still aligned to "
                         "it; free them first", csr->name);
    uint64_t fp = csr ? engine_hash(ENGINE_HASH_SEED, csr->name, strlen(csr->name)) : 0;
    if ((st = engine_agree_in(ctx->comm, st, fp, "mal_free_csr")) || csr == NULL)
        return st;
    detach_parts(ctx->reg, csr);
    for (mal_csr_t **p = &ctx->reg->matrices; *p != NULL; p = &(*p)->next)
        if (*p == csr) {
            *p = csr->next;
            break;
        }
    free_matrix(csr);
    return MAL_OK;
}

void engine_csr_free_all(engine_registry_t *reg)
{
    while (reg->matrices != NULL) {
        mal_csr_t *m = reg->matrices;
        reg->matrices = m->next;
        free_matrix(m);
    }
}

/* ---- the nnz-weighted layout of a change ---------------------------------------------- */

int engine_csr_count(const engine_registry_t *reg)
{
    int n = 0;
    for (const mal_csr_t *m = reg->matrices; m != NULL; m = m->next)
        n++;
    return n;
}

void engine_csr_discard(engine_registry_t *reg)
{
    for (mal_csr_t *m = reg->matrices; m != NULL; m = m->next) {
        free(m->next_rows);
        free(m->next_nnz);
        if (m->next_local != NULL && m->spare_local == NULL) { /* back to the spare */
            m->spare_local = m->next_local;
            m->spare_cap = m->next_cap;
        } else {
            free(m->next_local);
        }
        m->next_rows = m->next_nnz = m->next_local = NULL;
    }
}

static mal_status_t alloc_next(engine_registry_t *reg, int n_n)
{
    for (mal_csr_t *m = reg->matrices; m != NULL; m = m->next) {
        m->next_rows = malloc(((size_t)n_n + 1) * sizeof *m->next_rows);
        m->next_nnz = malloc(((size_t)n_n + 1) * sizeof *m->next_nnz);
        if (m->next_rows == NULL || m->next_nnz == NULL)
            return engine_fail(MAL_ERR_NOMEM, "no memory for the layout of matrix \"%s\"",
                               m->name);
    }
    return MAL_OK;
}

/* This process's part of the targets of one matrix: the nnz targets of the new layout
 * (in next_nnz) that fall in its old rows, resolved into (row, nnz) pairs in `sums`;
 * the others stay 0 for the sum. Targets decided without data are set by everyone. */
static mal_status_t resolve_targets(mal_csr_t *m, const engine_relayout_t *r, int64_t *sums)
{
    const int64_t *ob = m->rowptr->bounds, *oz = m->colind->bounds;
    int64_t total = oz[r->old_procs];
    if (total == 0) { /* no nonzero to balance: split the rows */
        memset(m->next_nnz, 0, ((size_t)r->n_n + 1) * sizeof *m->next_nnz);
        return partition_block(m->global_rows, r->n_n, r->weights, 0, m->next_rows)
                   ? engine_fail(MAL_ERR_ARG, "matrix \"%s\": bad weights", m->name)
                   : MAL_OK;
    }
    if (partition_block(total, r->n_n, r->weights, 0, m->next_nnz))
        return engine_fail(MAL_ERR_ARG, "matrix \"%s\": bad weights", m->name);
    /* Targets increase with k, so their owners do: one walk over the old parts. */
    for (int k = 0, q = 0; k <= r->n_n; k++) {
        int64_t t = m->next_nnz[k];
        if (partition_nnz_trivial(t, total, m->global_rows, &m->next_rows[k], &m->next_nnz[k]))
            continue;
        m->next_rows[k] = m->next_nnz[k] = 0; /* filled by the sum */
        q = partition_nnz_owner(oz, r->old_procs, t, q);
        if (q == r->me_u)
            partition_nnz_resolve(m->local_rowptr, ob[q + 1] - ob[q], ob[q], oz[q], t,
                                  &sums[2 * k], &sums[2 * k + 1]);
    }
    return MAL_OK;
}

/* The weights were agreed, so every rank holds the same bounds; a sum that is not a
 * layout would be a defect of the resolution, refused rather than acted on. */
static mal_status_t check_layout(const mal_csr_t *m, int n)
{
    const int64_t *b = m->next_rows, *z = m->next_nnz;
    bool ok = b[0] == 0 && b[n] == m->global_rows && z[0] == 0 &&
              z[n] == m->colind->global_rows;
    for (int r = 0; r < n && ok; r++)
        ok = b[r] <= b[r + 1] && z[r] <= z[r + 1];
    return ok ? MAL_OK
              : engine_fail(MAL_ERR_MPI, "matrix \"%s\": the nnz-weighted layout is "
                            "inconsistent", m->name);
}

static void add_sums(mal_csr_t *m, const int64_t *sums, int n)
{
    for (int k = 0; k <= n; k++) {
        m->next_rows[k] += sums[2 * k];
        m->next_nnz[k] += sums[2 * k + 1];
    }
}

static mal_status_t alloc_next_local(engine_registry_t *reg, int me_n)
{
    for (mal_csr_t *m = reg->matrices; m != NULL && me_n >= 0; m = m->next) {
        int64_t rows = m->next_rows[me_n + 1] - m->next_rows[me_n];
        if (m->spare_local != NULL && m->spare_cap >= rows + 1) {
            m->next_local = m->spare_local;
            m->next_cap = m->spare_cap;
            m->spare_local = NULL;
            continue;
        }
        free(m->spare_local);
        m->spare_local = NULL;
        if ((m->next_local = touched_rowptr(reg, rows + 1, &m->next_cap)) == NULL)
            return engine_fail(MAL_ERR_NOMEM, "no memory for the row pointer of \"%s\"",
                               m->name);
    }
    return MAL_OK;
}

mal_status_t engine_csr_relayout(engine_registry_t *reg, const engine_relayout_t *r,
                                 mal_status_t local)
{
    int count = engine_csr_count(reg);
    size_t per = 2 * ((size_t)r->n_n + 1);
    engine_relayout_t rr = *r;
    double *even = r->weights ? NULL : engine_even_weights(r->n_n);
    rr.weights = r->weights ? r->weights : even;
    int64_t *sums = calloc(per * (size_t)count, sizeof *sums);
    mal_status_t st = local;
    if (!st && (sums == NULL || rr.weights == NULL))
        st = engine_fail(MAL_ERR_NOMEM, "no memory to lay out %d matrices", count);
    if (!st)
        st = alloc_next(reg, r->n_n);
    int i = 0;
    for (mal_csr_t *m = reg->matrices; m != NULL && !st; m = m->next, i++)
        st = resolve_targets(m, &rr, sums + per * (size_t)i);
    /* Everyone enters the allreduce or nobody does. */
    st = engine_agree_in(r->u, st, r->fingerprint, "nnz-weighted layout");
    if (!st)
        st = engine_mpi_check(PMPI_Allreduce(MPI_IN_PLACE, sums, (int)(per * (size_t)count),
                                            MPI_INT64_T, MPI_SUM, r->u),
                              "MPI_Allreduce (nnz-weighted layout)");
    i = 0;
    for (mal_csr_t *m = reg->matrices; m != NULL && !st; m = m->next, i++) {
        add_sums(m, sums + per * (size_t)i, r->n_n);
        st = check_layout(m, r->n_n);
    }
    if (!st)
        st = alloc_next_local(reg, r->me_n);
    free(sums);
    free(even);
    return st;
}

const int64_t *engine_csr_next_bounds(const mal_array_t *a)
{
    if (a->layout == ENGINE_LAYOUT_OWN)
        return NULL;
    return a->layout == ENGINE_LAYOUT_NNZ ? a->matrix->next_nnz : a->matrix->next_rows;
}

void engine_csr_commit(engine_registry_t *reg, int me)
{
    for (mal_csr_t *m = reg->matrices; m != NULL && me >= 0; m = m->next) {
        const mal_array_t *rp = m->rowptr;
        int64_t rows = rp->bounds[me + 1] - rp->bounds[me], z0 = m->colind->bounds[me];
        const int64_t *ends = (const int64_t *)engine_part_base(rp, rp->current,
                                                                rp->offsets[me]);
        m->next_local[0] = 0;
        for (int64_t i = 0; i < rows; i++)
            m->next_local[i + 1] = ends[i] - z0;
        free(m->spare_local);
        m->spare_local = m->local_rowptr; /* the next move writes this one */
        m->spare_cap = m->local_cap;
        m->local_rowptr = m->next_local;
        m->local_cap = m->next_cap;
        m->next_local = NULL;
    }
    engine_csr_discard(reg);
}
