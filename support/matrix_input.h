/* Sparse matrices row by row, for the examples, benchmarks and tests of distributed CSR
 * matrices.
 *
 * Pure C (no MPI, no libmal). Each rank opens the same spec and extracts only its own
 * block of rows. Conventions: 0-based indices, row pointers int64_t, column indices
 * int32_t (matrices with more than INT32_MAX columns are refused), values double, the
 * columns of a row strictly increasing.
 *
 * Specs:
 *   <path>        a Matrix Market file, read with CHOLMOD (cholmod_l_read_matrix) and kept
 *                 in memory as CSR. Banner required ("%%MatrixMarket matrix ..."):
 *                 coordinate or array; real, integer or pattern (values 1.0); general,
 *                 symmetric or skew-symmetric (one stored triangle is expanded to both).
 *                 Complex and hermitian files are refused. Duplicates are summed (CHOLMOD);
 *                 explicitly stored zeros of coordinate files are kept, zeros of array
 *                 files dropped. Rectangular general files are accepted: check
 *                 mi_rows() == mi_cols() where a square matrix is required.
 *   poisson:N     2-D 5-point Laplacian on an N x N grid (row y*N+x): N^2 rows,
 *                 diagonal 4, neighbours -1, SPD; 1 <= N <= 46340; 5N^2 - 4N nonzeros.
 *   poisson3d:N   3-D 7-point Laplacian on an N x N x N grid (row (z*N+y)*N+x): N^3 rows,
 *                 diagonal 6, neighbours -1, SPD; 1 <= N <= 1290; 7N^3 - 6N^2 nonzeros.
 *   powerlaw:N    N x N, 1 <= N <= INT32_MAX. Row i has L(i) = min(N, floor(2 u^(-2/3)))
 *                 entries, u in (0,1] a hash of i (Pareto, x_m = 2, alpha = 1.5: mean ~5.5,
 *                 P(L >= l) = (2/l)^1.5), computed in exact integer arithmetic so every
 *                 machine gets the same matrix. Columns: the diagonal plus L(i)-1 others
 *                 spread evenly over the row from a hashed offset. Off-diagonal values
 *                 -(0.5 + 0.5 h(min(i,j), max(i,j))) in (-1, -0.5], diagonal L(i): every row
 *                 strictly diagonally dominant. The pattern is NOT symmetric (a symmetric
 *                 pattern would make row lengths depend on other rows); meant for
 *                 redistribution benchmarks. Opening sums the row lengths (O(N)).
 * A generator name wins over a file of the same name: write "./poisson:5" for the file.
 *
 * Generators cost O(1) per row length and per entry and keep no per-row state. No
 * function modifies a source after mi_open, so one source may be read by several
 * threads at once. */
#ifndef MAL_SUPPORT_MATRIX_INPUT_H
#define MAL_SUPPORT_MATRIX_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct mi_source mi_source_t; /* opaque */

/* Opens `spec` (above). Returns 0 and sets *src, or -1 with *src = NULL and a message
 * naming the problem in err (if err != NULL and errlen > 0): an unreadable file (with
 * strerror), a directory, an empty file, no Matrix Market banner, a complex matrix, a
 * malformed file (CHOLMOD's diagnosis), N out of range or not a number, an unknown
 * generator, out of memory. */
int mi_open(const char *spec, mi_source_t **src, char *err, size_t errlen);
void mi_close(mi_source_t *src); /* NULL is fine */

int64_t mi_rows(const mi_source_t *src);
int64_t mi_cols(const mi_source_t *src);
int64_t mi_nnz(const mi_source_t *src);         /* total stored entries */
int64_t mi_max_row_nnz(const mi_source_t *src); /* largest mi_row_nnz */

/* Entries of `row` (0 <= row < mi_rows), or -1 if out of range. O(1) for generators. */
int64_t mi_row_nnz(const mi_source_t *src, int64_t row);

/* Writes the row's entries (columns strictly increasing) to cols[] and vals[] (room for
 * mi_row_nnz entries each; vals may be NULL for the pattern only); returns the count, or
 * -1 if row is out of range. */
int64_t mi_row(const mi_source_t *src, int64_t row, int32_t *cols, double *vals);

/* Rows [first, first+count) as CSR: *rowptr gets count+1 entries rebased to 0, *colind and
 * *values (*rowptr)[count] entries; the caller free()s all three (arrays are never NULL on
 * success, even when empty). Returns 0, or -1 with err set and the pointers set to NULL
 * (range outside [0, mi_rows], out of memory). */
int mi_block(const mi_source_t *src, int64_t first, int64_t count, int64_t **rowptr,
             int32_t **colind, double **values, char *err, size_t errlen);

/* E.g. "bcsstk13.mtx (2003 x 2003, 83883 nnz)", "poisson:1000 (1000000 x 1000000, 4996000
 * nnz)". Owned by the source. */
const char *mi_describe(const mi_source_t *src);

#endif /* MAL_SUPPORT_MATRIX_INPUT_H */
