/* What mal_bench_redist's warm table (mal_bench_redist.c) and its cold mode
 * (redist_cold.c) share: options, patterns, the closed-form data and its checks
 * (redist_common.c), and the cold mode's entry points. */
#ifndef REDIST_BENCH_H
#define REDIST_BENCH_H

#include "cli.h"
#include "mal.h"
#include "matrix_input.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum { UNIFORM, SKEWED, ONE } shape_t;

typedef struct {
    const char *name;
    shape_t from, to;
} pattern_t;

extern const pattern_t patterns[];
#define NPATTERNS 5
#define PATTERN_SAME 4 /* nothing moves: left out of the cold table */

typedef struct {
    const char *sparse; /* matrix spec, NULL for dense data */
    long long size;
    int pattern; /* index, or -1 for all */
    int method;  /* mal_redist_t, or 0 for all; COLD_BASELINE in cold mode */
    int reps;
    long long row_len;
    double headroom;
    const char *csv;
    FILE *csv_out;          /* the data's stdout when csv is "-"                  */
    bool cold;              /* --cold: drive fresh processes per measurement      */
    int cold_reps;          /* --cold-reps: fresh runs per pattern and method     */
    int ranks;              /* --ranks: processes of each cold run                */
    const char *cold_run;   /* --cold-run FILE: one cold measurement (internal)   */
    int memory_states;      /* --memory-state: MEMORY_FRESH and/or _FRAGMENTED    */
    long long fragment_keep_mib; /* --fragment-keep: free memory left whole       */
    const cli_t *cli;       /* the program's name, version and usage (support/cli) */
} options_t;

/* The memory conditions of the cold table (bits of options_t.memory_states). */
#define MEMORY_FRESH 1
#define MEMORY_FRAGMENTED 2

/* The plain-MPI baseline of the cold table: malloc + first touch, then MPI_Alltoallv
 * into freshly allocated buffers, as a malleability library without windows does. */
#define COLD_BASELINE 100
#define COLD_BASELINE_NAME "mpi-alltoallv"

typedef struct {
    double median, first;
    long long moved;
    int windows;
    long long bad;
} result_t;

/* What is redistributed: a dense block structure, or a CSR matrix with its source (for
 * verification) and a row buffer. */
typedef struct {
    mal_array_t *dense;
    mal_csr_t *csr;
    mi_source_t *src;
    int32_t *row_cols;
    bool symmetric;     /* allocated under shmem */
    char what[256];     /* description for the header */
} data_t;

/* The memcpy bound (see sample_memcpy). */
typedef struct {
    char *src, *dst;
    size_t capacity;
    double *samples;
    int n;
} bound_t;

/* The weights of shape s over n ranks. */
void weights_of(shape_t s, double *w, int n);
double median(double *v, int n);
double value(long long g, long long c, int rep);
double sparse_value(long long g, long long k, int rep);
void fill_dense(mal_array_t *a, int rep);
long long count_bad_dense(mal_array_t *a, int rep);
void fill_sparse(mal_csr_t *m, int rep);
long long count_bad_sparse(const data_t *d, int rep);
double max_over_ranks(double t);
int check(mal_status_t st, const char *what);
void sample_memcpy(bound_t *b, long long moved);

/* Cold mode (redist_cold.c). */
int cold_driver(const options_t *o);
int cold_run(const options_t *o);

#endif /* REDIST_BENCH_H */
