/* Private state and helpers of the libmal runtime. Never installed. */
#ifndef MAL_ENGINE_H
#define MAL_ENGINE_H

#include "mal.h"
#include "mal_pmpi.h"
#include "partition.h"
#include "policy.h"
#include "predict.h"
#include "schedule.h"
#include "transport.h"

#include <stdint.h>
#include <sys/types.h>

#define ENGINE_NAME_MAX 64

/* One of the two buffers of a structure: memory other ranks can pull from without any
 * setup at rebalance time. Direct memory (every rank on one node: private memory that
 * peers copy by cross-memory attach, direct.c), an MPI window, or (SHMEM transport) a
 * symmetric-heap allocation, whose local address is also every PE's address of it. */
typedef struct {
    MPI_Win win;      /* MPI_WIN_NULL when absent, direct or symmetric   */
    char *base;       /* local memory of the buffer                      */
    int64_t *caps;    /* capacity in rows of every rank (same everywhere) */
    bool symmetric;   /* allocated with shmem_malloc                     */
    engine_peer_mem_t *peers; /* direct: every rank's process and base   */
    size_t mapped;    /* direct: bytes mapped at base                    */
    bool pending;     /* not a buffer, only this process's direct memory
                       * kept from one (caps: the old capacities over the
                       * new communicator where known, else NULL), which
                       * the next allocation of the structure reuses     */
    bool borrowed;    /* direct: its memory still belongs to another buffer
                       * of this process (the donor) until the move that
                       * needs it commits                               */
    bool lent;        /* direct: its memory now belongs to another buffer:
                       * freeing it must not unmap it                   */
    bool crossed;     /* data have crossed between ranks through it: its
                       * first-transfer costs are paid (the model's cold
                       * bandwidth applies until then)                    */
} engine_buffer_t;

/* Where a structure's new block layout comes from at a rebalance or reconfiguration. */
typedef enum {
    ENGINE_LAYOUT_OWN = 0, /* its rows split by the weights (partition_block)           */
    ENGINE_LAYOUT_ROWS,    /* a matrix's nnz-weighted row layout (row pointer, aligned)  */
    ENGINE_LAYOUT_NNZ      /* that layout in nonzeros (column indices, values)           */
} engine_layout_t;

/* Which part of a matrix a structure is (internal structures are not the user's). */
typedef enum { CSR_PART_NONE = 0, CSR_PART_ROWPTR, CSR_PART_COLIND, CSR_PART_VALUES }
    csr_part_t;

struct mal_array {
    char name[ENGINE_NAME_MAX];
    engine_layout_t layout;
    struct mal_csr *matrix;     /* the matrix followed (layout != OWN)             */
    csr_part_t part;            /* != NONE: one of that matrix's own parts         */
    mal_distribution_t distribution;
    int64_t global_rows;
    int64_t row_len;
    int64_t row_bytes;
    int64_t *bounds;            /* layout: nparts + 1 boundaries (all ranks)      */
    int64_t *offsets;           /* where each rank's part starts in buf[current],
                                 * in rows (all ranks)                             */
    engine_buffer_t buf[2];     /* buf[current] holds the data, the other is spare */
    int current;
    bool adoptable;             /* arrived with a join: the next mal_alloc_window of
                                 * this name hands it back without communicating    */
    struct mal_array *next;
};

/* A CSR matrix: three block structures in the registry. The row pointer holds, for each
 * row, the global nnz offset of its end: those numbers stay valid wherever the row goes,
 * so it moves as plain bytes and only the local rebased copy is rebuilt after a move.
 * Column indices and values are structures whose "rows" are nonzeros, laid out by the
 * nnz offsets of the row bounds (ENGINE_LAYOUT_NNZ), so a row range moves as one
 * contiguous range of each. */
struct mal_csr {
    char name[ENGINE_NAME_MAX];
    int64_t global_rows, global_cols, value_bytes;
    mal_array_t *rowptr, *colind, *values;
    int64_t *local_rowptr;      /* local rows + 1, rebased to 0                    */
    /* The layout a rebalance or reconfiguration is moving to, over the new process
     * set, and this process's rebased row pointer for it (allocated before anything
     * moves, filled after the commit). NULL outside one. */
    int64_t *next_rows, *next_nnz, *next_local;
    /* Row pointers are double-buffered like the data (capacities in entries): a move
     * writes the one that is free, so its pages are not first touched on the critical
     * path (a fresh 3 MiB row pointer cost 8 ms of faults here). */
    int64_t local_cap, next_cap, *spare_local, spare_cap;
    bool adoptable;             /* arrived with a join (see mal_array.adoptable)   */
    struct mal_csr *next;
};

/* A value registered with mal_register_value, or (pending) one carried to a joining
 * process and not yet claimed by its mal_register_value. */
typedef struct engine_value {
    char name[ENGINE_NAME_MAX];
    void *ptr;                  /* user memory; NULL while pending                  */
    unsigned char *carried;     /* bytes received at the join; NULL once claimed    */
    size_t bytes;
    struct engine_value *next;
} engine_value_t;

/* Settings of dynamic process management, resolved from the configuration and the
 * environment at mal_init and carried to every spawned process. Strings are owned. */
typedef struct {
    char *plan;                 /* plan text ("" when none)                         */
    char *report;               /* JSON-lines report path, NULL for none            */
    char *hosts;                /* comma-separated host list, NULL for none         */
    char *program;              /* what an expansion spawns                         */
    char **argv;                /* its arguments, NULL-terminated                   */
    mal_spawn_mode_t spawn_mode;/* resolved: never MAL_SPAWN_DEFAULT                */
    bool summary;
    int sample_interval;        /* resolved: >= 1                                   */
    int grace;                  /* resolved: >= 0                                   */
    char *calibration;          /* calibration file, NULL for the defaults          */
    predict_params_t params;    /* the model's machine parameters                   */
    /* The policy decides only where no plan is given; rank 0 decides, so only it
     * needs the configuration and the resource view (joiners get policy_on). */
    bool policy_on;
    char *policy_text;          /* as given, NULL for the default                   */
    char *availability;         /* availability file, NULL for this host alone      */
    int64_t iterations;         /* of the whole run, 0 unknown                      */
    policy_config_t policy;
    avail_t avail;
} engine_settings_t;

/* The registry layer's state: every registered structure and value of this process. */
typedef struct {
    mal_array_t *arrays;
    mal_csr_t *matrices;        /* in creation order on every rank                */
    engine_value_t *values;
    int windows;
    double headroom;            /* mal_config_t.headroom: how much capacities grow  */
} engine_registry_t;

/* How data moves: the transport chosen at mal_init (or by mal_set_redist). */
typedef struct {
    mal_redist_t method;
    bool direct;                /* buffers may be direct memory (MAL_MEMORY)           */
    bool shmem;                 /* this mal_init started (or reused) the SHMEM transport
                                 * over mal_comm(): symmetric allocations are allowed  */
    int64_t count_limit;        /* largest count handed to one MPI call (MAL_MAX_COUNT) */
} engine_transfer_t;

/* The processes layer's state: this process's job and its place in the malleable set. */
typedef struct {
    MPI_Comm job;               /* this process's MPI job (its MPI_COMM_WORLD peers
                                 * that use libmal): they finalize MPI together      */
    bool initial;               /* not started by a libmal expansion               */
    bool removed;               /* released by a shrink: only mal_finalize is left  */
    int64_t spawned;            /* processes spawned so far: next host in the list  */
    engine_settings_t settings;
    char *spawn_hosts;          /* the decided expansion's hosts (comma-separated),
                                 * used instead of settings.hosts, from index
                                 * spawn_hosts_base; NULL otherwise                   */
    int64_t spawn_hosts_base;
} engine_procs_t;

/* What decides reconfigurations: the plan and the policy (decide.c). */
typedef struct {
    schedule_t schedule;
    size_t next_action;         /* first plan entry not yet carried out             */
    double start_seconds;       /* MPI_Wtime at mal_init (rank 0 measures the run)   */
    policy_state_t policy_state;
    mal_decision_t decision;    /* the latest, on every rank                         */
    bool decision_fresh;        /* the reconfiguration under way carries it out:
                                 * the report names its reason                       */
} engine_decider_t;

/* Figures of the latest rebalance and reconfiguration. */
typedef struct {
    mal_rebalance_stats_t last;
    mal_reconfig_stats_t reconfig;
} engine_stats_t;

/* One mal_init's monitor (monitor.c), opaque outside it. */
typedef struct monitor monitor_t;

typedef struct {
    bool initialized;
    MPI_Comm comm;
    int rank;
    int size;
    mal_config_t config;
    int64_t iteration;          /* mal_step calls, carried to joiners               */
    engine_registry_t reg;
    engine_transfer_t xfer;
    engine_procs_t procs;
    engine_decider_t pol;
    engine_stats_t stats;
    monitor_t *mon;             /* engine_monitor_init .. engine_monitor_finalize      */
} engine_state_t;

/* The state of this process's libmal (api/context.c): for the API layer only. */
engine_state_t *engine_context(void);

/* Record (and log once) an error found on this rank; returns `status`. The message
 * starts with the public call the user made (engine_enter), unless it names it first
 * already: a helper shared by several calls need not know which one reached it. */
mal_status_t engine_fail(mal_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The rank engine_fail's messages name ("libmal[rank]"): mal_comm()'s while libmal is
 * initialised (mal_init, a join, a shrink set it), -1 for none. */
void engine_set_log_rank(int rank);

/* Whether engine_fail prints to stderr (mal_config_t.log_errors; on before mal_init). */
void engine_set_logging(bool on);

/* Map an MPI return code to MAL_ERR_MPI with the MPI error string; MAL_OK for success. */
mal_status_t engine_mpi_check(int rc, const char *call);

/* The public call the user made, named by every message until the next one: each
 * public call that can fail says so first (engine_require_init does). Between
 * engine_enclose(true) and (false) the name stays: mal_step carrying out its plan
 * through mal_expand is still the user's mal_step. */
void engine_enter(const char *call);
void engine_enclose(bool on);

/* Guard for calls that need mal_init (api/guard.c) (it names `call` as the call in progress, see
 * engine_enter); returns MAL_OK when initialised. */
mal_status_t engine_require_init(const char *call);

/* FNV-1a over bytes (core/agree.c), chained through `hash`: fingerprints collective arguments. */
uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes);
#define ENGINE_HASH_SEED 1469598103934665603ULL

/* Agree across `comm` on the outcome of a collective call (core/agree.c): every rank
 * passes its local status and a fingerprint of the arguments that must match. Ranks
 * that failed keep their status; the others get MAL_ERR_REMOTE, or MAL_ERR_MISMATCH when
 * the fingerprints differ. One small allreduce. */
mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call);

/* Resolve MAL_REDIST_DEFAULT from the environment; MAL_ERR_ARG (naming `call`) on an
 * unknown value. */
mal_status_t engine_resolve_method(mal_redist_t requested, mal_redist_t *method,
                                   const char *call);

/* Initial layout of a structure over `nprocs` ranks with block bounds `bounds`: the
 * capacity of every rank (headroom split before and after the part) and where each
 * part starts in it (array.c). */
void engine_initial_place(const engine_registry_t *reg, mal_distribution_t dist,
                          int64_t global_rows, const int64_t *bounds, int nprocs,
                          int64_t *caps, int64_t *offsets);

/* Buffers of a structure (array.c): direct memory or a window (symmetric-heap blocks
 * are the registry's own allocations); every page is populated now, so no first touch
 * lands in a move; `reg` counts them (mal_buffer_count). */
/* Whether the buffer holds memory (a window or a symmetric block). */
bool engine_buffer_present(const engine_buffer_t *buf);
/* A reconfiguration's new buffer over `comm`, collective; `caps` must be the same on
 * every rank (MAL_ERR_MISMATCH otherwise). `donor`: this process's spare of the
 * structure (its memory is borrowed where large enough), NULL on a joining process. */
mal_status_t engine_buffer_alloc_in(MPI_Comm comm, engine_registry_t *reg,
                                    const engine_transfer_t *xfer, engine_buffer_t *buf,
                                    int64_t row_bytes, const int64_t *caps,
                                    const engine_buffer_t *donor);
/* Give `buf` (over `comm`, mal_comm()) the capacities `caps`: direct memory is kept by
 * the ranks it still fits, otherwise the buffer is freed and allocated again (a
 * symmetric block when `symmetric`). Collective; on failure the buffer is absent on
 * every rank. */
mal_status_t engine_buffer_regrow(MPI_Comm comm, engine_registry_t *reg,
                                  const engine_transfer_t *xfer, engine_buffer_t *buf,
                                  int64_t row_bytes, const int64_t *caps, bool symmetric);
void engine_buffer_free(engine_registry_t *reg, engine_buffer_t *buf);
/* Whether rank `rank`'s direct memory of `buf` (a buffer or kept memory) already holds
 * `cap` rows: a new buffer of that capacity maps nothing there. For the model. */
bool engine_buffer_holds(const engine_buffer_t *buf, int rank, int64_t cap);
/* "direct", "window", "symmetric" or "none". */
const char *engine_buffer_kind(const engine_buffer_t *buf);

/* ---- Direct memory (direct.c) ---- */
/* Collective over `comm`: when `allowed` and every rank reaches every other one by
 * cross-memory attach (one host, permitted, proven), map `bytes` of private memory
 * (huge pages where the kernel has them, populated), or borrow `donor`'s (a direct
 * buffer or kept memory of this process, left untouched: b->borrowed) when it is large
 * enough, and learn every rank's address: *used = true. Otherwise *used = false and nothing is allocated (the caller creates
 * a window). Errors are agreed. */
mal_status_t engine_direct_alloc(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                                 bool allowed, const engine_buffer_t *donor, bool *used);
/* `b` borrowed its memory from `donor`: hand it over for good (the donor's free no
 * longer unmaps it). */
void engine_buffer_settle(engine_buffer_t *b, engine_buffer_t *donor);
/* Collective over the communicator of direct buffer `b`: ranks whose memory is smaller
 * than `bytes` map new memory, the others keep theirs; every rank learns the new
 * addresses. On failure `b` holds nothing on any rank. */
mal_status_t engine_direct_regrow(MPI_Comm comm, engine_buffer_t *b, int64_t bytes);
void engine_direct_free(engine_buffer_t *b);
/* Seconds per byte of this process's last population of at least 1 MiB of direct
 * memory, 0 before any: the model prices the next one with it. */
double engine_direct_populate_cost(void);
/* Whether the kernel gives transparent huge pages to memory that asks (THP enabled
 * "always" or "madvise"). */
bool engine_direct_huge_pages(void);
/* Free a structure's windows (collective) and memory; the caller unlinks it. */
void engine_array_destroy(engine_registry_t *reg, mal_array_t *a);
/* `rows` with the registry's headroom. */
int64_t engine_grown_capacity(const engine_registry_t *reg, int64_t rows);

/* Where this rank's local part starts in buffer `b` of `a`. */
char *engine_part_base(const mal_array_t *a, int b, int64_t offset_rows);

/* n weights of 1 (malloc'd, NULL without memory): what NULL weights mean (core/weights.c). */
double *engine_even_weights(int n);

/* One finite, non-negative weight per rank (core/weights.c), at least one positive (not NULL). */
mal_status_t engine_check_weights(const double *weights, int n, const char *call);

/* ---- The OpenSHMEM runtime (shmem.c; its transfers are declared in transport.h). A
 * libmal built without OpenSHMEM answers MAL_ERR_UNSUPPORTED to every call that needs
 * it. ---- */

/* Start SHMEM for mal_init over `comm`, which must span every process of the job
 * (shmem_init is collective over all of them). Idempotent within a process. */
mal_status_t engine_shmem_start(MPI_Comm comm);
/* Whether libmal started SHMEM in this process (the PE set is then fixed). */
bool engine_shmem_active(void);
/* Collective over every PE: a symmetric block of `bytes` (the same on all), or an
 * error naming the heap limit. */
mal_status_t engine_shmem_alloc(size_t bytes, char **out);
void engine_shmem_free(char *base);

/* Settings (dpm.c). */
mal_status_t engine_settings_resolve(const mal_config_t *cfg, engine_settings_t *out);
void engine_settings_free(engine_settings_t *s);
uint64_t engine_settings_fingerprint(const engine_settings_t *s, uint64_t hash);

/* Dynamic process management (dpm.c). */
/* On rank 0 only: spawn `n` processes over MPI_COMM_SELF (a failure there cannot leave
 * other ranks inside MPI_Comm_spawn) and merge with them into *pair (rank 0 = this). */
mal_status_t engine_spawn(const engine_procs_t *procs, int n, int call_index, MPI_Comm *inter,
                          MPI_Comm *pair);

/* ---- bounded spawns (spawnguard.c) ---- */
#define ENGINE_MAX_SIBLINGS 256
/* A spawn the runtime loses is tried this many times in all. */
#define ENGINE_SPAWN_ATTEMPTS 3
/* Seconds after which the runtime fails a spawn whose start it lost; 0 = never. */
int engine_spawn_bound(void);
/* Rank 0 at mal_init: says when no bound is in force. */
void engine_spawn_bound_notice(void);
/* MAL_ERR_ARG when MAL_RECONF_TIMEOUT (read at load) is not valid. */
mal_status_t engine_reconf_timeout_check(void);
/* A spawned child's mal_init: SIGTERM is fatal again. */
void engine_spawn_guard_end(void);
/* Marks the spawn's children as libmal's (their SIGTERM guard). */
mal_status_t engine_spawn_mark(MPI_Info info);
int engine_spawn_siblings(pid_t *pids, int max);
/* Records the processes that appeared since `before`; returns how many. */
int engine_spawn_note_stuck(const pid_t *before, int nbefore);
bool engine_spawn_clean_exit_allowed(void);
/* mal_finalize: ends the recorded processes. */
void engine_spawn_end_stuck(void);
/* Collective over `members` (and the children through `pair`, significant on rank 0
 * only): an intracommunicator with the members first and the children last. */
mal_status_t engine_join_members(MPI_Comm members, MPI_Comm pair, MPI_Comm *joined);
/* The children's side of engine_join_members. */
mal_status_t engine_join_children(MPI_Comm pair, MPI_Comm *joined);
/* Wait, without spinning, until every process of this MPI job (procs->job) reaches this
 * call; `report`: say (summary, report) how long this process waited. */
void engine_park(const engine_procs_t *procs, bool report);
/* A spawned process whose expansion was abandoned: free *comm, finalize and exit. */
_Noreturn void engine_leave_abandoned(engine_procs_t *procs, MPI_Comm *comm);

/* ---- CSR matrices (csr.c) ---- */

/* A change of process set as the nnz-weighted layout sees it: the union U of old and new
 * processes (the old ones first, in their old order: `old_procs` of them; the others
 * held nothing), this process's rank in the new set N (-1 on a leaver), N's size and its
 * weights (NULL = even). A rebalance is U = N = mal_comm(). */
typedef struct {
    MPI_Comm u;
    int me_u, old_procs;
    int me_n, n_n;
    const double *weights;
    uint64_t fingerprint;       /* of the arguments that must agree (weights), or 0  */
} engine_relayout_t;

/* Collective over U: every matrix's next layout over N (next_rows, next_nnz) and this
 * process's next rebased row pointer buffer. Each nnz target is resolved by the process
 * holding it and one allreduce combines them. `local` is this rank's status so far; it
 * is agreed, with the fingerprint, before the allreduce (weights that differ between
 * ranks would give each rank another layout). Returns this rank's status after it, for the caller's
 * next agreement; on failure the caller calls engine_csr_discard. */
mal_status_t engine_csr_relayout(engine_registry_t *reg, const engine_relayout_t *r,
                                 mal_status_t local);
/* After the structures were committed to the next layout: rebuild the rebased row
 * pointers of process `me` (its rank in the new set) and drop the planning data. */
void engine_csr_commit(engine_registry_t *reg, int me);
void engine_csr_discard(engine_registry_t *reg);
/* The new bounds of a structure that follows a matrix (over N, n_n + 1 entries). */
const int64_t *engine_csr_next_bounds(const mal_array_t *a);
/* Free every matrix handle (their structures are freed with the registry). */
void engine_csr_free_all(engine_registry_t *reg);
/* Link into / unlink from the registry. */
void engine_array_link(engine_registry_t *reg, mal_array_t *a);
void engine_array_unlink(engine_registry_t *reg, mal_array_t *a);
/* Bytes of one row of `row_len` elements of `type`, 0 with the error recorded. */
int64_t engine_row_bytes(MPI_Datatype type, int64_t row_len, int64_t global_rows,
                         const char *call);

/* Joining (join.c): mal_init of a process started by an expansion; `e` is reset to
 * the state the join brings (a process that cannot join leaves MPI and exits). */
mal_status_t engine_join(engine_state_t *e, MPI_Comm parent, const mal_config_t *cfg);
/* Rank 0's side: send what a child needs to join `e`'s processes, `remaining` joins
 * after its own. */
mal_status_t engine_send_join_info(const engine_state_t *e, MPI_Comm pair, int remaining,
                                   int new_procs, const double *weights);
/* Tell children that their spawn is abandoned (before they joined). */
void engine_send_join_abort(MPI_Comm pair);

/* Expansion and shrink (procs/resize.c) of `e`'s processes, for mal_expand, mal_shrink,
 * a plan and the policy: the public calls' arguments, checked and agreed here; the
 * caller has checked that libmal is initialised. Collective over e->comm. */
mal_status_t engine_expand(engine_state_t *e, int count, mal_spawn_mode_t mode,
                           const double *weights);
mal_status_t engine_shrink(engine_state_t *e, int count, const int *ranks,
                           const double *weights);

/* ---- monitoring and prediction (monitor.c) ---- */

/* The model's parameters: the file's, or the defaults for a NULL path. */
mal_status_t engine_monitor_params(const char *path, predict_params_t *out);
/* Start measuring (mal_init, a join) with the settings `s` (copied): a new monitor, NULL
 * without memory (it then counts nothing: every call below accepts NULL). `initial`:
 * this process started with the application; `iteration`: mal_step calls so far;
 * `announce`: say what it counts (rank 0 of mal_init, when summaries are on). */
monitor_t *engine_monitor_init(const engine_settings_t *s, bool initial, int64_t iteration,
                               bool announce);
/* Free the monitor and set *mon to NULL. */
void engine_monitor_finalize(monitor_t **mon);
/* The application's MPI calls reach the monitor through mal_monitor_record_comm
 * (include/mal_pmpi.h), from the optional wrapper library src/pmpi. libmal's own calls
 * are not the application's communication: inside libmal, call the PMPI_ names of the
 * functions src/pmpi/pmpi.c defines (test_monitor checks the counts are exact). */
bool engine_monitor_counting(const monitor_t *mon);
void engine_monitor_record(monitor_t *mon, mal_comm_op_t op, double bytes, double seconds,
                           bool call);
/* mal_set_work: units of work of the iteration in progress (checked by the caller). */
void engine_monitor_add_work(monitor_t *mon, double units);
/* What mal_monitor_read, mal_monitor_counter and mal_last_prediction answer. */
mal_monitor_t engine_monitor_totals(const monitor_t *mon);
const char *engine_monitor_counter(const monitor_t *mon);
mal_prediction_t engine_monitor_prediction(const monitor_t *mon);
/* mal_step: close the iteration that ends (its work defaults to the rows rank `rank`
 * holds of `reg`'s largest block structure), then (after the step's own work) open the
 * next; engine_monitor_step gathers the interval over `comm` when it is complete at
 * `iteration` (collective). Its failure (no memory for the gather on some rank) is
 * agreed over `comm`: every rank gets an error, the interval's samples are dropped. */
void engine_monitor_end_iteration(monitor_t *mon, const engine_registry_t *reg, int rank);
mal_status_t engine_monitor_step(monitor_t *mon, MPI_Comm comm, int64_t iteration);
void engine_monitor_begin_iteration(monitor_t *mon);
/* Where an expansion's new processes start, for the model: new process k on entry
 * first + k of the comma-separated list `hosts` (cyclically); hosts NULL: on rank 0's
 * host. */
typedef struct {
    const char *hosts;
    int64_t first;
} engine_host_list_t;
/* The index-th name of the comma-separated list `hosts` (cyclically), malloc'd; NULL
 * for a NULL list or without memory. */
char *engine_host_at(const char *hosts, int64_t index); /* core/host.c */
/* Before a reconfiguration that every rank of `comm` (mal_comm()) is making at
 * `iteration` (collective): predict the interval after it. old_of_new[k] is the current
 * rank of new rank k, -1 for a new process (NULL: ranks keep their numbers, the ones
 * beyond are new); weights (NULL: even) are the new set's; `changed` processes come or
 * go; the new ones start on `new_hosts`. */
void engine_monitor_predict(monitor_t *mon, MPI_Comm comm, int64_t iteration,
                            mal_action_t action, int changed, const int *old_of_new,
                            int procs_after, const double *weights,
                            engine_host_list_t new_hosts);
/* While it is planned: the transfer plan of one structure, other copies, new windows. */
void engine_monitor_plan(monitor_t *mon, const int64_t *old_bounds,
                         const int64_t *new_bounds, int nparts, int64_t row_bytes,
                         predict_rma_mode_t mode, bool cold);
void engine_monitor_copy(monitor_t *mon, int part, int64_t bytes, int64_t ops, bool remote);
/* A buffer created for the move: bytes[r] of new memory rank r maps (0 where it keeps
 * or borrows memory), nparts ranks (those beyond the current set are new processes). */
void engine_monitor_window(monitor_t *mon, const int64_t *bytes, int nparts);
/* After it (engine_report): what it cost, having moved data by `method`; the next
 * interval starts (at s->iteration). */
void engine_monitor_reconfigured(monitor_t *mon, const mal_reconfig_stats_t *s,
                                 mal_redist_t method);
/* Cores of this host (hwloc), at least 1 (core/host.c). */
int engine_host_cores(void);
/* The number every rank's host is known by in the gathered samples. */
double engine_host_hash(const char *name);
/* The interval just gathered, for the policy (rank 0 of `size` ranks, at `iteration`):
 * per-rank steady means, the work expected next, the communication profile and lambda.
 * procs[r].host receives nothing; hosts[r] the rank's host hash. False when some rank
 * had no steady iteration. Fills in->procs = procs, in->nprocs, iteration, interval,
 * interval_seconds, work, comm, lambda. procs and hosts need `size` entries. */
bool engine_monitor_sample(const monitor_t *mon, int64_t iteration, int size,
                           policy_input_t *in, policy_proc_t *procs, double *hosts);
/* Whether engine_monitor_step closed an interval in this mal_step. */
bool engine_monitor_closed(const monitor_t *mon);

/* A copy of s, or NULL for NULL or "" (dpm.c). */
char *engine_dup_or_null(const char *s);

/* ---- the policy's settings (core/policy_settings.c) ---- */
/* Resolve the policy text, the availability file and the run length (mal_init, before
 * the agreement: errors are MAL_ERR_ARG naming the item or line). */
mal_status_t engine_policy_resolve(const mal_config_t *cfg, engine_settings_t *s);
void engine_policy_free(engine_settings_t *s);
uint64_t engine_policy_fingerprint(const engine_settings_t *s, uint64_t hash);

/* ---- the policy (decide.c) ---- */
/* At the end of a sampling interval: decide on rank 0, broadcast, carry it out.
 * Collective over e->comm. Returns MAL_CONTINUE, MAL_RECONFIGURED, MAL_REMOVED or an
 * error. */
mal_status_t engine_policy_step(engine_state_t *e);

/* ---- rebalances and the outcome of every reconfiguration (reconf/) ---- */
/* The work of mal_rebalance (rebalance.c), collective over e->comm; its figures go to
 * e->stats.last. */
mal_status_t engine_rebalance(engine_state_t *e, const double *weights);
/* A plan's (`decision` NULL) or the policy's rebalance, predicted and reported like the
 * other reconfigurations (rebalance.c). */
mal_status_t engine_reported_rebalance(engine_state_t *e, const double *weights, int count,
                                       int64_t plan_iteration, const mal_decision_t *decision);
/* "expand", "shrink", "rebalance" or "none" (core/names.c). */
const char *engine_action_name(mal_action_t a);
/* The code's name as written in mal_status.h ("MAL_ERR_SPAWN"), for reports (core/names.c). */
const char *engine_status_name(mal_status_t status);

/* ---- the MPI library's configuration (platform.c) ---- */
/* What this process's Open MPI selected, read once through MPI_T. */
typedef struct {
    bool known;                 /* Open MPI's osc components were recognised       */
    char pml[64];               /* the selected pml ("ob1", "ucx"), "" unknown      */
    char osc[128];              /* usable osc components, comma-separated          */
    bool windows_span_jobs;     /* each of them creates windows over processes of
                                 * different jobs on every rank alike (ucx, pt2pt)  */
    bool oversubscribe;         /* the launcher lets spawns oversubscribe slots    */
    int universe;               /* MPI_UNIVERSE_SIZE, 0 when not given             */
    int world;                  /* size of this process's MPI_COMM_WORLD           */
    int thread_level;           /* MPI_Query_thread                                */
} engine_platform_t;
const engine_platform_t *engine_platform(void);
const char *engine_thread_level_name(int level);
/* mal_init on the initial processes: refuse (MAL_ERR_UNSUPPORTED, naming the fix) a plan
 * that spawns more processes than the launcher has room for, or that spawns while
 * structures live in windows (`direct` false) an osc component cannot span. */
mal_status_t engine_platform_check(const schedule_t *plan, bool direct);
/* Before MPI_Win_allocate over `comm` (collective: the answer is the same on every
 * member): MAL_ERR_UNSUPPORTED, naming `call` and the fix, when the window would span
 * processes of different jobs with an osc component that hangs there. */
mal_status_t engine_window_allowed(MPI_Comm comm, const char *call);
/* Whether the library was probed (only where a check needed it: it costs 0.3 s). */
bool engine_platform_probed(void);
/* Rank 0's line on the MPI library (mal_init, when summaries are on and a check probed
 * it). */
void engine_platform_announce(void);

/* Free the registered and carried values (registry/values.c). */
void engine_free_values(engine_registry_t *reg);

/* Reconfiguration report (reconf/outcome.c): reduce the figures over `comm`, store them
 * (e->stats.reconfig), tell the monitor, and on its rank 0 write the JSON line and the
 * summary, with `decision` (the policy's behind it, NULL for none). */
void engine_report(engine_state_t *e, MPI_Comm comm, mal_reconfig_stats_t *local,
                   const mal_decision_t *decision);

#endif /* MAL_ENGINE_H */
