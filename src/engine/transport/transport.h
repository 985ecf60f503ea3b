/* The transport layer: how the rows of a transfer plan travel between ranks. Every
 * rebalance, expansion and shrink moves its structures through one operations table;
 * the executor (reconfig.c) calls nothing else. Implementations: MPI RMA over windows or
 * direct memory (transport_rma.c), MPI_Alltoallv (transport_coll.c), MPI_Isend/Irecv
 * (transport_p2p.c) and OpenSHMEM (transport_shmem.c). */
#ifndef MAL_TRANSPORT_H
#define MAL_TRANSPORT_H

#include "mal.h"
#include "partition.h"
#include "settings.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct engine_transport engine_transport_t;

/* Where a rank's direct buffer is: its process, the buffer's address there and its
 * size (a transfer past it is refused, never a write into the peer's other memory). */
typedef struct {
    int64_t pid;      /* 0: not reachable by cross-memory attach                  */
    uint64_t base;
    uint64_t size;
} engine_peer_mem_t;

/* The two paths a row travels by: cross-memory attach between processes of one host,
 * or an MPI call (a window, a collective, messages). Counted per reconfiguration in
 * engine_plan_t.moved_by and reported as bytes_by_memory and bytes_by_mpi. */
enum { ENGINE_PATH_MEMORY, ENGINE_PATH_MPI };

/* How data moves: the transport chosen at mal_init (or by mal_set_redist). The transport
 * layer's settings: its memory (memory.h: which memory a buffer gets) reads them, and the
 * planner hands the transports what they need of them in engine_plan_t. */
typedef struct {
    mal_redist_t method;
    bool direct;                /* buffers may be direct memory (MAL_MEMORY)           */
    bool shmem;                 /* this mal_init started (or reused) the SHMEM transport
                                 * over mal_comm(): symmetric allocations are allowed  */
    int64_t count_limit;        /* largest count handed to one MPI call (MAL_MAX_COUNT) */
} engine_transfer_t;

/* The transport's settings from the settings object: the initial start's and a join's. */
static inline engine_transfer_t engine_transfer_of(const settings_t *set)
{
    mal_redist_t method = (mal_redist_t)settings_num(set, SETTING_REDIST);
    return (engine_transfer_t){
        .method = method, .shmem = method == MAL_REDIST_SHMEM,
        .direct = settings_num(set, SETTING_MEMORY) == MAL_MEMORY_DIRECT,
        .count_limit = settings_num(set, SETTING_MAX_COUNT)};
}

/* How one reconfiguration's rows moved: the executor (the method set, or what
 * MAL_REDIST_AUTO took for its link class and state) and the bytes this rank copied
 * per path (ENGINE_PATH_*: cross-memory attach, MPI). */
typedef struct {
    mal_redist_t method;
    bool automatic;             /* taken by MAL_REDIST_AUTO                          */
    int link, state;            /* what it was taken for: PREDICT_LINK_*, PREDICT_*  */
    int64_t by[2];
} engine_moved_t;

/* Who copies a segment: both sides sharing it (a rebalance, where every rank has both
 * buffers), the destination alone (a shrink: only the old buffers span everyone; also
 * rma-get and shmem rebalances), or the source alone (an expansion: only the new
 * buffers span everyone). */
typedef enum { ENGINE_RMA_SPLIT, ENGINE_RMA_PULL, ENGINE_RMA_PUSH } engine_rma_mode_t;

/* One side of a plan that peers reach one-sidedly: the old parts or the new ones. */
typedef enum { ENGINE_SIDE_SRC, ENGINE_SIDE_DST } engine_side_t;

/* How a rank's buffer is reached by its peers: an MPI window, direct memory (every
 * rank's process and base) or the symmetric address of a SHMEM block. */
typedef struct {
    MPI_Win win;                     /* MPI_WIN_NULL when absent                 */
    const engine_peer_mem_t *peers;  /* direct memory (then win is MPI_WIN_NULL) */
    const engine_peer_mem_t *near;   /* a window's: the ranks of this host that
                                      * cross-memory attach reaches (pid != 0),
                                      * moved that way; NULL when none          */
    char *base;                      /* SHMEM: the symmetric address             */
    const int64_t *offsets;          /* where each rank's part starts, rows      */
} engine_remote_t;

/* One structure's transfer plan as the transports see it. Offsets in segments are rows
 * relative to the part starts; all ranks compute the same plan data. */
typedef struct {
    MPI_Comm comm;             /* the communicator of both layouts: ranks are parts  */
    int me;                    /* this rank in comm                                  */
    int nprocs;                /* size of comm = parts of both layouts               */
    const int64_t *old_bounds; /* layouts of every rank: decisions that must agree   */
    const int64_t *new_bounds; /* across ranks are taken from these, not the segments */
    const partition_segment_t *recv;
    size_t nrecv;
    const partition_segment_t *send;
    size_t nsend;
    int64_t row_bytes;
    int64_t count_limit;        /* largest count handed to one MPI call              */
    char *src;                  /* this rank's old part (NULL: none)                 */
    char *dst;                  /* this rank's new part (NULL: none)                 */
    engine_remote_t src_at;     /* every rank's old parts                            */
    engine_remote_t dst_at;     /* every rank's new parts                            */
    const int64_t *in_rows;     /* rows arriving at / leaving each rank: how the     */
    const int64_t *out_rows;    /* copy work of a segment is shared (SPLIT)          */
    bool kept_in_place;         /* rows that stay are already at their new address   */
    engine_rma_mode_t mode;     /* who copies each segment (one-sided transports)    */
    int64_t *moved_by;          /* bytes this rank copied by each ENGINE_PATH_*      */
    void *scratch;              /* the transport's, from allocate to free            */
} engine_plan_t;

/* The operations every transport provides. Call order for one move, on every rank of
 * the plan's communicator (the executor's epoch discipline, reconfig.c):
 *   allocate                 before any collective step: nothing fails half-way later
 *   expose(SRC)              before the agreement that orders the user's stores
 *   expose(DST)              once the target buffers exist, when the mode pushes
 *   pull                     the plan's rows: remote ones started, local ones copied
 *   complete(side, false)    every started transfer finished at origin and target
 *   (agreement over the communicator: all or nothing)
 *   complete(side, true)     the epoch ends (also after a failure)
 *   free
 * A side is completed only when it was exposed; pull returns MAL_OK or an error
 * recorded with engine_fail. */
struct engine_transport {
    const char *name;
    mal_status_t (*allocate)(engine_plan_t *plan);
    mal_status_t (*expose)(engine_plan_t *plan, engine_side_t side);
    mal_status_t (*pull)(engine_plan_t *plan);
    mal_status_t (*complete)(engine_plan_t *plan, engine_side_t side, bool close);
    void (*free)(engine_plan_t *plan);
};

extern const engine_transport_t engine_transport_rma;       /* windows or direct memory */
extern const engine_transport_t engine_transport_alltoallv;
extern const engine_transport_t engine_transport_p2p;
extern const engine_transport_t engine_transport_shmem;

/* The one place a transport is chosen (transport.c): `method`'s, except that replicated rows always
 * travel one-sidedly (an expansion pushes them to the joiners whatever the method). */
const engine_transport_t *engine_transport_choose(mal_redist_t method, bool replicated);
/* Who copies each segment for `method` in a move of `action` (one-sided transports). */
engine_rma_mode_t engine_transport_mode(mal_redist_t method, mal_action_t action);
/* Whether `method` moves rows one-sidedly (rma, rma-get or shmem). */
bool engine_method_one_sided(mal_redist_t method);

/* Table entries shared by the transports that keep no scratch, open no epoch or leave
 * nothing pending after pull (transport_common.c, like the helpers below). */
mal_status_t engine_transport_no_scratch(engine_plan_t *plan);
void engine_transport_free_scratch(engine_plan_t *plan);
mal_status_t engine_transport_no_epoch(engine_plan_t *plan, engine_side_t side);
mal_status_t engine_transport_none_pending(engine_plan_t *plan, engine_side_t side,
                                           bool close);

/* Copy the rows that stay on this rank from its old part to its new one (all
 * transports share it; nothing when they are kept in place). */
void engine_copy_local(const engine_plan_t *plan);
/* Largest byte count of one get, put or message under `count_limit`. */
int64_t engine_chunk_bytes(int64_t count_limit);

/* Walk the plan's remote segments one-sidedly: `transfer` gets (put false) the pulled
 * share of every incoming segment and puts the pushed share of every outgoing one, as
 * the plan's mode shares them (the RMA and SHMEM transports use it). */
typedef mal_status_t (*engine_one_sided_fn)(const engine_plan_t *plan, bool put, char *buf,
                                            int64_t bytes, int peer, int64_t disp);
mal_status_t engine_one_sided_walk(const engine_plan_t *plan, engine_one_sided_fn transfer);

/* ---- the OpenSHMEM runtime (shmem.c). A libmal built without OpenSHMEM answers
 * MAL_ERR_UNSUPPORTED to every call that needs it. ---- */
/* Non-blocking get (or put) of `bytes` between local `buf` and `remote`, a symmetric
 * address, on mal_comm() rank `peer`; completed by engine_shmem_quiet. */
mal_status_t engine_shmem_transfer(bool put, char *buf, char *remote, int64_t bytes,
                                   int peer);
mal_status_t engine_shmem_quiet(void);

/* ---- direct memory (direct.c) ---- */
/* Whether rank `peer`'s buffer at `at` is reached by cross-memory attach. */
bool engine_remote_near(const engine_remote_t *at, int peer);
/* Copy `bytes` between local `buf` and byte `disp` of rank `peer`'s direct buffer
 * (put: to it). Complete on return. */
mal_status_t engine_direct_transfer(const engine_peer_mem_t *peers, bool put, char *buf,
                                    int64_t bytes, int peer, int64_t disp);

#endif /* MAL_TRANSPORT_H */
