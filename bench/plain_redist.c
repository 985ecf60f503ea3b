#include "plain_redist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void plain_bounds(const double *w, int p, long long n, long long *bounds)
{
    double total = 0, acc = 0;
    for (int r = 0; r < p; r++)
        total += w[r];
    bounds[0] = 0;
    for (int r = 0; r < p; r++) {
        acc += w[r];
        bounds[r + 1] = r + 1 == p ? n : llround((double)n * acc / total);
    }
}

void plain_nnz_bounds(const mi_source_t *src, const double *w, int p, long long *rows,
                      long long *nnz)
{
    long long n = mi_rows(src), total = mi_nnz(src);
    long long *targets = malloc(((size_t)p + 1) * sizeof *targets);
    plain_bounds(w, p, total, targets);
    long long z = 0, row = 0;
    rows[0] = nnz[0] = 0;
    for (int r = 1; r <= p; r++) {
        while (row < n && z < targets[r])
            z += mi_row_nnz(src, row++);
        rows[r] = r == p ? n : row;
        nnz[r] = r == p ? total : z;
    }
    free(targets);
}

static long long lmax(long long a, long long b) { return a > b ? a : b; }
static long long lmin(long long a, long long b) { return a < b ? a : b; }

long long plain_alltoallv(MPI_Comm comm, const long long *ob, const long long *nb,
                          long long esz, const char *src, char *dst)
{
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int *c = calloc(4 * (size_t)p, sizeof *c);
    int *sc = c, *sd = c + p, *rc = c + 2 * p, *rd = c + 3 * p;
    long long in = 0;
    for (int r = 0; r < p; r++) {
        long long slo = lmax(ob[me], nb[r]), shi = lmin(ob[me + 1], nb[r + 1]);
        long long rlo = lmax(nb[me], ob[r]), rhi = lmin(nb[me + 1], ob[r + 1]);
        if (r == me) {
            if (shi > slo)
                memcpy(dst + (slo - nb[me]) * esz, src + (slo - ob[me]) * esz,
                       (size_t)((shi - slo) * esz));
            continue;
        }
        if (shi > slo) {
            sc[r] = (int)(shi - slo);
            sd[r] = (int)(slo - ob[me]);
        }
        if (rhi > rlo) {
            rc[r] = (int)(rhi - rlo);
            rd[r] = (int)(rlo - nb[me]);
            in += (rhi - rlo) * esz;
        }
    }
    MPI_Datatype item;
    MPI_Type_contiguous((int)esz, MPI_BYTE, &item);
    MPI_Type_commit(&item);
    MPI_Alltoallv(src, sc, sd, item, dst, rc, rd, item, comm);
    MPI_Type_free(&item);
    free(c);
    return in;
}
