/* The check macro of the unit tests (no MPI): counts failures and says where. */
#ifndef MAL_UNITTEST_H
#define MAL_UNITTEST_H

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

#endif /* MAL_UNITTEST_H */
