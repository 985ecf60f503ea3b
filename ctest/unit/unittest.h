/* The check macro of the unit tests (no MPI): counts failures and says where. */
#ifndef MAL_UNITTEST_H
#define MAL_UNITTEST_H

#include <stdint.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

/* xorshift64: the same pseudo-random sequence on every run, so a random instance that
 * fails fails again. Each test keeps its own state (its own seed). */
static inline uint64_t unit_rng(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif /* MAL_UNITTEST_H */
