/* Private state and helpers of the libmal runtime. Never installed. */
#ifndef MAL_ENGINE_H
#define MAL_ENGINE_H

#include "mal.h"
#include "partition.h"

#include <stdint.h>

#define ENGINE_NAME_MAX 64

/* One of the two buffers of a structure: memory that is also an MPI window, so other
 * ranks can pull from it without any setup at rebalance time. */
typedef struct {
    MPI_Win win;      /* MPI_WIN_NULL when absent                        */
    char *base;       /* local memory of the window                      */
    int64_t *caps;    /* capacity in rows of every rank (same everywhere) */
} engine_buffer_t;

struct mal_array {
    char name[ENGINE_NAME_MAX];
    mal_distribution_t distribution;
    int64_t global_rows;
    int64_t row_len;
    int64_t row_bytes;
    int64_t *bounds;            /* layout: nparts + 1 boundaries (all ranks)      */
    int64_t *offsets;           /* where each rank's part starts in buf[current],
                                 * in rows (all ranks)                             */
    engine_buffer_t buf[2];     /* buf[current] holds the data, the other is spare */
    int current;
    struct mal_array *next;
};

typedef struct {
    bool initialized;
    MPI_Comm comm;
    int rank;
    int size;
    mal_config_t config;
    mal_redist_t method;
    int64_t count_limit;        /* largest count handed to one MPI call (MAL_MAX_COUNT) */
    mal_array_t *arrays;
    int windows;
    mal_rebalance_stats_t last;
} engine_state_t;

extern engine_state_t engine;

/* Record (and log once) an error found on this rank; returns `status`. */
mal_status_t engine_fail(mal_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether engine_fail prints to stderr (mal_config_t.log_errors; on before mal_init). */
void engine_set_logging(bool on);

/* Map an MPI return code to MAL_ERR_MPI with the MPI error string; MAL_OK for success. */
mal_status_t engine_mpi_check(int rc, const char *call);

/* Guard for calls that need mal_init; returns MAL_OK when initialised. */
mal_status_t engine_require_init(const char *call);

/* FNV-1a over bytes, chained through `hash`: fingerprints collective arguments. */
uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes);
#define ENGINE_HASH_SEED 1469598103934665603ULL

/* Agree across mal_comm() on the outcome of a collective call: every rank passes its
 * local status and a fingerprint of the arguments that must match. Ranks that failed
 * keep their status; the others get MAL_ERR_REMOTE, or MAL_ERR_MISMATCH when the
 * fingerprints differ. One small allreduce. */
mal_status_t engine_agree(mal_status_t local, uint64_t fingerprint, const char *call);

/* Resolve MAL_REDIST_DEFAULT from the environment; MAL_ERR_ARG (naming `call`) on an
 * unknown value. */
mal_status_t engine_resolve_method(mal_redist_t requested, mal_redist_t *method,
                                   const char *call);

/* Windows of a structure (array.c). */
mal_status_t engine_buffer_alloc(engine_buffer_t *buf, int64_t row_bytes,
                                 const int64_t *caps);
void engine_buffer_free(engine_buffer_t *buf);
/* Free a structure's windows (collective) and memory; the caller unlinks it. */
void engine_array_destroy(mal_array_t *a);
int64_t engine_grown_capacity(int64_t rows);

/* Where this rank's local part starts in buffer `b` of `a`. */
char *engine_part_base(const mal_array_t *a, int b, int64_t offset_rows);

/* One structure's transfer plan as the executors (redist.c) see it. Offsets in segments
 * are rows relative to the part starts; all ranks compute the same plan data. */
typedef struct {
    const int64_t *old_bounds; /* layouts of every rank: decisions that must agree */
    const int64_t *new_bounds; /* across ranks are taken from these, not the segments */
    const partition_segment_t *recv;
    size_t nrecv;
    const partition_segment_t *send;
    size_t nsend;
    int64_t row_bytes;
    char *src;                  /* this rank's old part                              */
    char *dst;                  /* this rank's new part                              */
    MPI_Win src_win;            /* window holding every rank's old part              */
    const int64_t *src_offsets; /* where each rank's old part starts in src_win, rows */
    MPI_Win dst_win;            /* window holding every rank's new part              */
    const int64_t *dst_offsets; /* where each rank's new part starts in dst_win, rows */
    const int64_t *in_rows;     /* rows arriving at / leaving each rank: how the     */
    const int64_t *out_rows;    /* copy work of a segment is shared (RMA push)       */
    bool kept_in_place;         /* rows that stay are already at their new address   */
    int *counts;                /* 4 * nparts ints of scratch (alltoallv)            */
    MPI_Request *requests;      /* engine_p2p_messages(plan) requests (p2p)          */
} engine_plan_t;

/* Messages the p2p executor posts for this plan, so the plan can hold the requests
 * before the collective part begins (no allocation can fail half-way through it). */
size_t engine_p2p_messages(const engine_plan_t *plan);

/* Issue the one-sided calls of the plan inside epochs already open on src_win and (with
 * `push`) dst_win: MPI_Get for the pulled share of every incoming segment, MPI_Put for
 * the pushed share of every outgoing one (none without `push`). */
mal_status_t engine_redist_rma(const engine_plan_t *plan, bool push);
mal_status_t engine_redist_alltoallv(const engine_plan_t *plan);
mal_status_t engine_redist_p2p(const engine_plan_t *plan);
void engine_copy_local(const engine_plan_t *plan);

#endif /* MAL_ENGINE_H */
