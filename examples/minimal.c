/* The README's example, whole: a block-row array that follows the processes through
 * MAL_PLAN's (or the policy's) expansions, rebalances and shrinks. Row i ends holding
 * i * ITERS wherever it went; rank 0 says PASS when every row does. */
#include <mal.h>
#include <stdio.h>
#define ROWS 100000
#define ITERS 30

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mal_init(MPI_COMM_WORLD, NULL);       /* a spawned process joins here           */
    mal_array_t *a;                       /* zeroed; a joiner receives its rows     */
    mal_alloc_window("a", MPI_DOUBLE, ROWS, 1, MAL_BLOCK, &a);
    mal_status_t st = MAL_OK;
    for (int64_t it = mal_iteration(); it < ITERS && st != MAL_REMOVED; it++) {
        double *x = mal_local_data(a);    /* re-read: a reconfiguration moves rows  */
        for (int64_t i = 0; i < mal_local_rows(a); i++)
            x[i] += (double)(mal_first_row(a) + i);
        st = mal_step();                  /* counts the iteration, acts on the plan */
    }
    if (st != MAL_REMOVED) {              /* a released process holds no rows       */
        const double *x = mal_local_data(a);
        long bad = 0, all = 0;
        for (int64_t i = 0; i < mal_local_rows(a); i++)
            bad += x[i] != (double)((mal_first_row(a) + i) * ITERS);
        MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, mal_comm());
        int rank;
        MPI_Comm_rank(mal_comm(), &rank);
        if (rank == 0)
            printf("minimal: %s (%ld wrong rows)\n", all ? "FAIL" : "PASS", all);
    }
    mal_finalize();                       /* a released initial process parks here  */
    MPI_Finalize();
    return 0;
}
