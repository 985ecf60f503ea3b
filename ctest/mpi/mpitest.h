/* Shared helpers of the MPI tests: a check counter reduced over all ranks, and a
 * deterministic generator that every rank runs in lockstep. */
#ifndef MAL_MPITEST_H
#define MAL_MPITEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

static int mpitest_failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            if (mpitest_failures++ < 20) {                                        \
                int rank_;                                                        \
                MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                            \
                fprintf(stderr, "[%d] %s:%d: CHECK(%s) failed: ", rank_, __FILE__, \
                        __LINE__, #cond);                                         \
                fprintf(stderr, __VA_ARGS__);                                     \
                fputc('\n', stderr);                                              \
            }                                                                     \
        }                                                                         \
    } while (0)

static inline uint64_t mpitest_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Same sequence on every rank when seeded the same. */
static inline uint64_t mpitest_rand(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return mpitest_mix(*state);
}

/* One weight per rank for a rebalance, the same on every rank run with the same seed:
 * zero for about one rank in `zero_in`, else 1 .. `most`; never all zero. */
static inline void mpitest_weights(uint64_t *seed, int size, int zero_in, int most, double *w)
{
    int positive = 0;
    for (int r = 0; r < size; r++) {
        uint64_t x = mpitest_rand(seed);
        w[r] = x % (uint64_t)zero_in == 0 ? 0.0 : (double)(1 + x % (uint64_t)most);
        positive += w[r] > 0;
    }
    if (positive == 0)
        w[size - 1] = 1.0;
}

/* Reduce failures over MPI_COMM_WORLD; rank 0 prints the verdict. Returns the exit code. */
static inline int mpitest_verdict(const char *name, const char *summary)
{
    int total = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&mpitest_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("%s: PASS (%s)\n", name, summary);
        else
            printf("%s: FAIL (%d failed checks)\n", name, total);
    }
    return total == 0 ? 0 : 1;
}

#endif /* MAL_MPITEST_H */
