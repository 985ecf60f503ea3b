/* A sparse matrix given row by row in closed form, for the MPI tests: every 5th row is
 * empty, the others have 1..8 entries, and with `heavy` one row holds most of the
 * nonzeros. Values carry a version, so data left stale by a move is caught. */
#ifndef MAL_SPARSE_ROWS_H
#define MAL_SPARSE_ROWS_H

#include "mal.h"

#include <stdint.h>
#include <stdlib.h>

#define SP_ROWS 1013
#define SP_COLS 997
#define SP_HEAVY_ROW 611
#define SP_HEAVY_LEN 9000

static inline int64_t sp_row_len(int64_t row, int heavy)
{
    if (heavy && row == SP_HEAVY_ROW)
        return SP_HEAVY_LEN;
    return row % 5 == 0 ? 0 : 1 + (row * 7 + 3) % 8;
}

static inline int64_t sp_max_row(int heavy)
{
    return heavy ? SP_HEAVY_LEN : 8;
}

static inline mal_colind_t sp_col(int64_t row, int64_t k)
{
    return (mal_colind_t)((row * 31 + k * 17) % SP_COLS);
}

static inline double sp_value(int64_t row, int64_t k, int64_t version)
{
    return (double)(row * 100003 + k * 7 + version * 1000000007LL) + 0.5;
}

/* Rows [first, first + count) as a CSR block; the caller frees the three arrays. */
static inline int64_t sp_block(int64_t first, int64_t count, int heavy, int64_t version,
                               int64_t **rowptr, mal_colind_t **colind, double **values)
{
    *rowptr = malloc(((size_t)count + 1) * sizeof **rowptr);
    (*rowptr)[0] = 0;
    for (int64_t i = 0; i < count; i++)
        (*rowptr)[i + 1] = (*rowptr)[i] + sp_row_len(first + i, heavy);
    int64_t nnz = (*rowptr)[count];
    *colind = malloc((size_t)(nnz ? nnz : 1) * sizeof **colind);
    *values = malloc((size_t)(nnz ? nnz : 1) * sizeof **values);
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < sp_row_len(first + i, heavy); k++) {
            (*colind)[(*rowptr)[i] + k] = sp_col(first + i, k);
            (*values)[(*rowptr)[i] + k] = sp_value(first + i, k, version);
        }
    return nnz;
}

/* Overwrite the local values with `version`. */
static inline void sp_write_values(mal_csr_t *a, int64_t version)
{
    const int64_t *rp = mal_csr_rowptr(a);
    double *v = mal_csr_values(a);
    int64_t first = mal_csr_first_row(a), rows = mal_csr_local_rows(a);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = 0; k < rp[i + 1] - rp[i]; k++)
            v[rp[i] + k] = sp_value(first + i, k, version);
}

/* Wrong entries of the local block (row lengths, columns, values). */
static inline int64_t sp_count_bad(const mal_csr_t *a, int heavy, int64_t version)
{
    const int64_t *rp = mal_csr_rowptr(a);
    const mal_colind_t *c = mal_csr_colind(a);
    const double *v = mal_csr_values(a);
    int64_t first = mal_csr_first_row(a), rows = mal_csr_local_rows(a), bad = 0;
    if (rp[0] != 0 || rp[rows] != mal_csr_local_nnz(a))
        return 1 + rows;
    for (int64_t i = 0; i < rows; i++) {
        int64_t len = rp[i + 1] - rp[i];
        if (len != sp_row_len(first + i, heavy)) {
            bad++;
            continue;
        }
        for (int64_t k = 0; k < len; k++)
            bad += c[rp[i] + k] != sp_col(first + i, k) ||
                   v[rp[i] + k] != sp_value(first + i, k, version);
    }
    return bad;
}

/* Total nonzeros of the generated matrix. */
static inline int64_t sp_total_nnz(int heavy)
{
    int64_t n = 0;
    for (int64_t r = 0; r < SP_ROWS; r++)
        n += sp_row_len(r, heavy);
    return n;
}

#endif /* MAL_SPARSE_ROWS_H */
