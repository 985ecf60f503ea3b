/* The plain-MPI baseline the benchmarks compare libmal with: block layouts by weights
 * and one MPI_Alltoallv between two layouts of an array, written with MPI calls only,
 * as a malleability library without windows (MaM, Flex-MPI) moves data. */
#ifndef PLAIN_REDIST_H
#define PLAIN_REDIST_H

#include <mpi.h>

#include "matrix_input.h"

/* Block bounds of `n` items over `p` parts by rounded cumulative weights. */
void plain_bounds(const double *w, int p, long long n, long long *bounds);

/* Row bounds (and their nnz offsets) whose nonzeros follow the weights: the row where
 * each cumulative nnz target falls. O(rows). */
void plain_nnz_bounds(const mi_source_t *src, const double *w, int p, long long *rows,
                      long long *nnz);

/* Items of `esz` bytes laid out by old bounds `ob`, moved to new bounds `nb` over
 * `comm` (bounds indexed by its ranks): MPI_Alltoallv from `src` into `dst`, the
 * overlap with this rank's own old part copied with memcpy. Returns the bytes this rank
 * received from others. Counts are ints: every part must stay below 2^31 items. */
long long plain_alltoallv(MPI_Comm comm, const long long *ob, const long long *nb,
                          long long esz, const char *src, char *dst);

#endif /* PLAIN_REDIST_H */
