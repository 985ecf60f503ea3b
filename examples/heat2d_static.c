/* heat2d_static: a 2-D heat stencil on plain MPI, the program examples/heat2d.c makes
 * malleable (`diff examples/heat2d_static.c examples/heat2d.c` is every change).
 *
 * The explicit heat equation on a grid of --rows x --cols cells: the border cells keep
 * their first temperature, and a square in the middle is heated by a source that weakens
 * as the simulated time t goes on. The grid is split in block rows over the processes;
 * each keeps one ghost row before and one after its block, refreshed from its
 * neighbours every step, and two grids: a step reads one and writes the other, then
 * they are swapped. A cell's update reads only the previous grid, always in the same
 * order, so the last grid is bit-identical whatever the number of processes: the last
 * line gives its checksum and t, and heat2d prints the same under any plan. */
#include "checksum.h"
#include "cli.h"
#include "mal_version.h"

#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.2  /* diffusion per step (stable below 0.25) */
#define DT 0.01    /* simulated time per step                */
#define SOURCE 4.0 /* heating per unit of time at t = 0       */

typedef struct {
    int64_t n, m, iters;
} options_t;

static void usage(FILE *out);
static const char *version(void)
{
    return MAL_VERSION;
}
static const cli_t cli = {"heat2d_static", version, usage};

/* What a step reads. */
typedef struct {
    int64_t n, m;       /* rows and columns of the whole grid                       */
    double t;           /* the simulated time                                       */
    double *u, *v;      /* this rank's rows of the current and the next grid; the
                         * ghost rows are u[-m .. -1] and u[rows * m .. rows * m + m - 1] */
    MPI_Comm comm;
    int rank, size, up, down; /* the ranks holding the rows before and after this block */
    int64_t first, rows;
} heat_t;

static double *ghosted_rows(const heat_t *h)
{
    double *p = calloc((size_t)(h->rows + 2) * (size_t)h->m, sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "%s: out of memory\n", cli.name);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    return p + h->m; /* the first row of the block, after its ghost row */
}

/* The first temperature of cell (i, j): the top border hot, the rest a pattern of the
 * global indices, so the data do not depend on the split. */
static double initial(int64_t i, int64_t j)
{
    if (i == 0)
        return 1.0;
    return (double)((i * 7 + j * 13) % 17) / 17.0;
}

static void fill_initial(heat_t *h)
{
    for (int64_t i = 0; i < h->rows; i++)
        for (int64_t j = 0; j < h->m; j++)
            h->u[i * h->m + j] = initial(h->first + i, j);
}

static void refresh(heat_t *h)
{
    h->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(h->comm, &h->rank);
    MPI_Comm_size(h->comm, &h->size);
    h->first = h->rank * (h->n / h->size); /* the static even split */
    h->rows = h->n / h->size + (h->rank == h->size - 1 ? h->n % h->size : 0);
    h->up = h->rank > 0 ? h->rank - 1 : MPI_PROC_NULL;
    h->down = h->rank < h->size - 1 ? h->rank + 1 : MPI_PROC_NULL;
}

static void allocate(heat_t *h)
{
    h->u = ghosted_rows(h);
    h->v = ghosted_rows(h);
}

/* The ghost rows: the block's first row goes up and its last row down, the neighbours'
 * come back around the block. */
static void exchange(heat_t *h)
{
    int m = (int)h->m;
    double *u = h->u;
    MPI_Sendrecv(u, m, MPI_DOUBLE, h->up, 0, u + h->rows * h->m, m, MPI_DOUBLE, h->down, 0,
                 h->comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + (h->rows - 1) * h->m, m, MPI_DOUBLE, h->down, 1, u - h->m, m,
                 MPI_DOUBLE, h->up, 1, h->comm, MPI_STATUS_IGNORE);
}

static bool heated(const heat_t *h, int64_t i, int64_t j)
{
    return i >= h->n / 2 - h->n / 8 && i < h->n / 2 + h->n / 8 && j >= h->m / 2 - h->m / 8 &&
           j < h->m / 2 + h->m / 8;
}

/* The next grid: the borders as they were, every other cell from its four neighbours
 * and the source. */
static void step(heat_t *h)
{
    int64_t m = h->m;
    double heat = DT * SOURCE / (1.0 + h->t);
    for (int64_t r = 0; r < h->rows; r++) {
        int64_t i = h->first + r;
        const double *c = h->u + r * m;
        double *next = h->v + r * m;
        if (i == 0 || i == h->n - 1) {
            memcpy(next, c, (size_t)m * sizeof *next);
            continue;
        }
        next[0] = c[0];
        next[m - 1] = c[m - 1];
        for (int64_t j = 1; j < m - 1; j++) {
            double around = c[j - m] + c[j + m] + c[j - 1] + c[j + 1] - 4.0 * c[j];
            next[j] = c[j] + ALPHA * around + (heated(h, i, j) ? heat : 0.0);
        }
    }
}

static void swap(heat_t *h)
{
    double *t = h->u;
    h->u = h->v;
    h->v = t;
}

static void iterate(heat_t *h, const options_t *o)
{
    for (int64_t it = 0; it < o->iters; it++) {
        exchange(h);
        step(h);
        swap(h);
        h->t += DT;
    }
}

/* The whole grid on rank 0, and its checksum with t. */
static void report(const heat_t *h, const options_t *o)
{
    int *counts = malloc((size_t)h->size * sizeof *counts);
    int *displs = malloc((size_t)h->size * sizeof *displs);
    double *grid = h->rank == 0 ? malloc((size_t)(h->n * h->m) * sizeof *grid) : NULL;
    int mine = (int)(h->rows * h->m);
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, h->comm);
    for (int r = 0, at = 0; h->rank == 0 && r < h->size; at += counts[r], r++)
        displs[r] = at;
    MPI_Gatherv(h->u, mine, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0, h->comm);
    if (h->rank == 0)
        printf("%s: grid %" PRId64 "x%" PRId64 " iterations %" PRId64 " t %a hash %016" PRIx64
               " (%d processes)\n", cli.name, h->n, h->m, o->iters, h->t,
               checksum_fnv1a64(grid, (size_t)(h->n * h->m) * sizeof *grid), h->size);
    free(counts);
    free(displs);
    free(grid);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: %s [--rows N] [--cols M] [--iters I]\n"
            "  --rows   rows of the grid (default 192)\n"
            "  --cols   columns of the grid (default 160)\n"
            "  --iters  steps (default 40)\n"
            CLI_STANDARD_USAGE
            "Exit status: 0, 1 when the run fails, 2 for a usage error.\n", cli.name);
}

/* Every process parses, before MPI starts. The grid travels as int counts in MPI_Gatherv:
 * at most 8192 x 8192 cells. */
static void parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){.n = 192, .m = 160, .iters = 40};
    static const struct option longopts[] = {
        {"rows", required_argument, NULL, 'n'}, {"cols", required_argument, NULL, 'm'},
        {"iters", required_argument, NULL, 'i'}, CLI_STANDARD_OPTIONS, {0}};
    for (int c; (c = cli_next(&cli, argc, argv, "", longopts)) != -1;) {
        switch (c) {
        case 'n':
            o->n = cli_integer(&cli, "--rows", optarg, 3, 8192);
            break;
        case 'm':
            o->m = cli_integer(&cli, "--cols", optarg, 3, 8192);
            break;
        case 'i':
            o->iters = cli_integer(&cli, "--iters", optarg, 0, INT_MAX);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    options_t o;
    parse_options(argc, argv, &o);
    MPI_Init(&argc, &argv);
    heat_t h = {.n = o.n, .m = o.m};
    refresh(&h);
    if (h.size > h.n) {
        fprintf(stderr, "%s: %" PRId64 " rows for %d processes\n", cli.name, h.n, h.size);
        MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAILURE);
    }
    allocate(&h);
    fill_initial(&h);
    iterate(&h, &o);
    report(&h, &o);
    free(h.u - h.m);
    free(h.v - h.m);
    MPI_Finalize();
    return 0;
}
