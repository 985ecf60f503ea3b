/**
 * @file mal.h
 * @brief libmal: malleable MPI applications with a one-sided redistribution engine.
 *
 * This is the whole public surface of libmal. Structures registered with
 * mal_alloc_window() live in MPI-3 RMA windows from the moment they are allocated;
 * a rebalance computes a new block layout from per-rank weights and every process
 * pulls its new partition with MPI_Get in a passive-target epoch.
 *
 * Conventions used throughout:
 * - Every call that can fail returns a ::mal_status_t (0 = success, negative = error);
 *   mal_strerror() names the code and mal_error_message() gives the detailed message of
 *   the most recent failure on the calling process (it names the offending argument).
 * - Output parameters are written only on success. A failed call changes nothing.
 * - "Collective" means every process of mal_comm() must make the call, with the same
 *   arguments where stated. Collective calls check that the arguments agree across ranks
 *   before changing anything: if any rank finds a problem, every rank fails, that rank
 *   with its own code and the others with MAL_ERR_REMOTE (MAL_ERR_MISMATCH when the
 *   arguments differ between ranks).
 * - Handles (::mal_array_t) belong to the library; the user never frees them directly.
 */
#ifndef MAL_H
#define MAL_H

#include "mal_status.h"

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Detailed message of the most recent failed call on this process.
 * @return A string owned by the library, overwritten by the next failing call; "" when no
 *         call has failed yet. The message starts with the public call the user made
 *         (for a reconfiguration that mal_step() carried out: "mal_step: mal_expand: ...")
 *         and names the offending argument.
 * @note Not collective; callable before mal_init().
 */
const char *mal_error_message(void);

/** How a rebalance moves data. All execute the same transfer plan. */
typedef enum {
    MAL_REDIST_DEFAULT = 0, /**< MAL_REDIST from the environment if set, else RMA   */
    MAL_REDIST_RMA,         /**< one-sided, both sides of each segment copy: the
                                 destination pulls part with MPI_Get, the source
                                 pushes the rest with MPI_Put, in passive-target
                                 epochs, shares chosen so every rank's copy work is
                                 balanced (the engine)                              */
    MAL_REDIST_ALLTOALLV,   /**< one MPI_Alltoallv per structure (baseline)          */
    MAL_REDIST_P2P,         /**< MPI_Isend/MPI_Irecv per segment (baseline)          */
    MAL_REDIST_RMA_GET,     /**< one-sided, pull only: every destination MPI_Gets
                                 all its incoming rows (sources stay passive)        */
    MAL_REDIST_SHMEM        /**< OpenSHMEM, pull only: structures live on the
                                 symmetric heap and every destination fetches its
                                 incoming rows with shmem_getmem_nbi + shmem_quiet.
                                 Chosen at mal_init() only (it starts SHMEM and puts
                                 the structures allocated afterwards on the symmetric
                                 heap); the process set is then fixed for the rest
                                 of the process: mal_expand() and mal_shrink()
                                 return MAL_ERR_UNSUPPORTED. Needs a
                                 libmal built with MAL_WITH_SHMEM (see
                                 mal_redist_supported()) and mal_init() over every PE */
} mal_redist_t;

/** Where a structure's buffers live (see mal_memory_name()). */
typedef enum {
    MAL_MEMORY_DEFAULT = 0, /**< MAL_MEMORY from the environment (direct|window), else
                                 MAL_MEMORY_DIRECT                                   */
    MAL_MEMORY_DIRECT,      /**< when every rank of the communicator runs on one node:
                                 private memory (transparent huge pages where the
                                 kernel offers them, populated at allocation) that
                                 peers copy one-sidedly with cross-memory attach
                                 (process_vm_readv/writev), which maps nothing and so
                                 costs the same cold as warm; MPI windows otherwise
                                 (several nodes, or cross-memory attach not permitted) */
    MAL_MEMORY_WINDOW       /**< always MPI windows (MPI_Win_allocate), moved with
                                 MPI_Get/MPI_Put                                     */
} mal_memory_t;

/** How a structure's rows are placed on the processes. */
typedef enum {
    MAL_BLOCK = 1,     /**< contiguous block rows, one block per rank, follows rebalances */
    MAL_REPLICATED = 2 /**< every rank holds all rows; a rebalance leaves it in place     */
} mal_distribution_t;

/** How an expansion starts its processes (see mal_expand()). */
typedef enum {
    MAL_SPAWN_DEFAULT = 0, /**< MAL_SPAWN from the environment (per-call|batched), else
                                MAL_SPAWN_PER_CALL                                  */
    MAL_SPAWN_PER_CALL,    /**< one MPI_Comm_spawn per process: each new process is its
                                own MPI job, so a later release lets it exit at once  */
    MAL_SPAWN_BATCHED      /**< one MPI_Comm_spawn for all: faster to start, but a
                                process released alone parks until its batch ends     */
} mal_spawn_mode_t;

/** Run-time configuration. Fill it with mal_config_init() before changing fields.
 *  Strings are copied by mal_init(). A process spawned by libmal ignores the
 *  configuration it passes to mal_init() and inherits its parents' (except log_errors). */
typedef struct {
    /** Redistribution method; MAL_REDIST_DEFAULT lets the MAL_REDIST environment variable
     *  (rma|rma-get|alltoallv|p2p|shmem) choose, falling back to MAL_REDIST_RMA. Any other value wins
     *  over the environment. Default: MAL_REDIST_DEFAULT. */
    mal_redist_t redist;
    /** Extra capacity, as a fraction of the local part, given to a window when it must
     *  grow, split evenly before and after the part. Rebalances whose new parts fit
     *  create no window. In [0, 64]. Default: 0.5. */
    double headroom;
    /** Minimum rows for every rank with a positive weight in a rebalance (0 = none).
     *  Default: 0. See mal_rebalance() for the exact rule. */
    int64_t min_rows;
    /** Print each error once to stderr, where it is found, prefixed with the rank.
     *  Default: true. */
    bool log_errors;
    /** Reconfiguration plan applied by mal_step(), an operator override of the policy;
     *  NULL: the MAL_PLAN environment variable (none when unset). Comma-separated
     *  entries ITER:ACTION, iterations strictly increasing, where ACTION is
     *  +N (spawn N processes; +Nb batched, +Np one per call, else spawn_mode),
     *  -N (release the last N ranks), -@R:R:... (release these ranks, initial ones
     *  too), or w=W:W:... (rebalance to one weight per rank). ITER counts completed
     *  iterations: "10:+2" acts in the mal_step() call that ends the 10th iteration.
     *  Example: "10:+2,20:-1,30:w=1:2:1". Default: NULL. */
    const char *plan;
    /** File to which one JSON line per reconfiguration is appended by rank 0; NULL: the
     *  MAL_REPORT environment variable (no file when unset). Default: NULL. */
    const char *report;
    /** Print a one-line summary of each reconfiguration on rank 0 (stdout), and one
     *  line from each released process when it leaves mal_finalize (how long it parked,
     *  its CPU time meanwhile). Default: true; MAL_QUIET=1 in the environment turns it
     *  off. */
    bool summary;
    /** Spawn mode of plan entries without a b/p suffix. Default: MAL_SPAWN_DEFAULT. */
    mal_spawn_mode_t spawn_mode;
    /** Comma-separated host names for new processes, used in turn (MPI_Info "host");
     *  NULL: MAL_HOSTS from the environment, else wherever the MPI runtime places them
     *  (oversubscribing one node). Default: NULL. */
    const char *hosts;
    /** Program spawned by an expansion; NULL: this process's own executable
     *  (/proc/self/exe). Default: NULL. */
    const char *spawn_program;
    /** NULL-terminated arguments given to spawned processes (without the program name);
     *  NULL: this process's own arguments (/proc/self/cmdline). Default: NULL. */
    char *const *spawn_argv;
    /** Iterations per sampling interval of the monitor: at the end of each one mal_step()
     *  gathers every rank's figures (one small MPI_Allgather; the first after mal_init()
     *  or a reconfiguration also agrees, in one small MPI_Allreduce, that every rank
     *  found memory for them) and checks the last prediction. Intervals restart at
     *  every reconfiguration. 0: MAL_SAMPLE_INTERVAL from the environment, else 10.
     *  Must be 0..1000000. */
    int sample_interval;
    /** Iterations the monitor does not learn from after a reconfiguration or a detected
     *  load change (Dyn-MPI's grace period; they are still counted as measured time).
     *  -1: MAL_GRACE from the environment, else 5. Must be -1..1000000. */
    int grace;
    /** Calibration file of the prediction model, as written by mal-calibrate; NULL: the
     *  MAL_CALIBRATION environment variable, else the documented defaults of
     *  src/predict (said once at mal_init). A file that cannot be read or has a bad
     *  line makes mal_init fail with MAL_ERR_ARG naming the line. Default: NULL. */
    const char *calibration;
    /** The reconfiguring policy that decides in mal_step() at the end of every sampling
     *  interval when no plan is given (a plan overrides it); NULL: MAL_POLICY from the
     *  environment, else the default. Comma-separated key=value items:
     *  speedup=F (finish F, in (0,1), faster than the static estimate) or time=S
     *  (finish within S seconds): Flex-MPI's objective, which needs @ref iterations;
     *  constraint=efficiency|cost (fewest processes, or cheapest per hour, that meet
     *  it); tolerance=F (0.05); min=N, max=N, preferred=N (process limits; without an
     *  objective the set grows to preferred while cores are free); inhibit=N,
     *  inhibit_s=S (no new action within N iterations or S seconds of the last);
     *  imbalance=F (rebalance when (max-min)/max of the ranks' computation times
     *  exceeds F and the gain pays for the move; 0.10, 0 turns it off);
     *  mode=dedicated|loaded (balance by the classes' nominal power, or by measured
     *  power and release ranks slowed by other users); release=0|1 (1);
     *  iterations=N. "off" turns the policy off. Default (NULL, unset): no objective,
     *  dedicated, balancing at 0.10. A malformed text makes mal_init() fail with
     *  MAL_ERR_ARG naming the item. */
    const char *policy;
    /** Availability file of the resource view: one host per line, "host cores class
     *  gflops_per_core price_per_core_hour" ('#' comments); new processes are spawned
     *  on the hosts the policy picks (MPI_Info "host"). This host's cores are at most
     *  what hwloc finds. NULL: MAL_AVAILABILITY from the environment, else this host
     *  alone (hwloc's cores, one class). A bad line makes mal_init() fail with
     *  MAL_ERR_ARG naming the file and line. */
    const char *availability;
    /** Iterations of the whole run (the policy's objective needs it); 0: unknown. */
    int64_t iterations;
    /** Where buffers live for the one-sided methods and the baselines alike; see
     *  ::mal_memory_t. Default: MAL_MEMORY_DEFAULT. */
    mal_memory_t memory;
} mal_config_t;

/**
 * @brief Fill @p config with the defaults documented at ::mal_config_t.
 * @return MAL_ERR_ARG if @p config is NULL, else MAL_OK.
 * @note Not collective; callable before mal_init().
 */
mal_status_t mal_config_init(mal_config_t *config);

/**
 * @brief Initialise libmal over a duplicate of @p comm, or join a running application.
 * @param comm    The communicator of the malleable application (usually MPI_COMM_WORLD).
 *                It is duplicated; the caller keeps ownership of @p comm.
 * @param config  Configuration, copied; NULL means the defaults of mal_config_init().
 * @return MAL_OK; MAL_ERR_ARG for MPI_COMM_NULL, an intercommunicator or bad fields
 *         (including a malformed plan); MAL_ERR_ALREADY_INITIALIZED if called twice
 *         without mal_finalize(); MAL_ERR_MPI if MPI is not initialised or duplication
 *         fails; MAL_ERR_MISMATCH if headroom, min_rows, the method, MAL_MAX_COUNT, the
 *         plan or the spawn settings differ between ranks; MAL_ERR_REMOTE if another
 *         rank failed; MAL_ERR_UNSUPPORTED for the shmem method without OpenSHMEM in
 *         this build, over a communicator smaller than the job, or with a plan that
 *         adds or releases processes.
 * @note Collective over @p comm. MPI must be initialised (MPI_THREAD_SINGLE suffices:
 *       libmal makes MPI calls only from the thread that calls it).
 *
 * A process started by a libmal expansion (it has an MPI parent) runs the same main():
 * here it joins the malleable communicator instead, receives the configuration, the
 * iteration number, the carried values and every registered structure and matrix with
 * its new partition already written into its windows. Its mal_alloc_window(),
 * mal_alloc_window_aligned() and mal_alloc_csr() calls then hand them back without
 * communicating (mal_is_initial() is false and
 * mal_iteration() tells where to resume). If the expansion it was spawned for is
 * abandoned (another spawn or an allocation failed), or this process (or another of
 * its spawn) cannot receive or read what it is sent, or joining fails, the process
 * takes no part in the application: mal_init() says why on stderr (unless the
 * expansion was abandoned by the existing processes, which report it), finalizes MPI
 * and exits it with status 0. The existing processes then go on with their old
 * processes, layout and data (the expansion fails with MAL_ERR_SPAWN).
 */
mal_status_t mal_init(MPI_Comm comm, const mal_config_t *config);

/**
 * @brief Free every registered structure and matrix, and the malleable communicator.
 * @return MAL_OK, or MAL_ERR_NOT_INITIALIZED.
 * @note Collective over mal_comm(). Every ::mal_array_t and ::mal_csr_t handle and every
 *       local pointer becomes invalid (on a released process they already are). Call it before MPI_Finalize(). mal_init() may be called again.
 *       On a process that mal_step() released (MAL_REMOVED) it is local, but it returns
 *       only when the other processes of the same MPI job (its MPI_COMM_WORLD) reach
 *       mal_finalize() too, since MPI cannot finalize part of a job: a released initial
 *       process parks here in a wait that polls with growing sleeps (no busy CPU); a
 *       process spawned alone returns at once and can exit.
 */
mal_status_t mal_finalize(void);

/** @brief True between a successful mal_init() and mal_finalize(). Not collective. */
bool mal_initialized(void);

/**
 * @brief The malleable communicator.
 * @return The library's communicator, or MPI_COMM_NULL before mal_init(). It belongs to
 *         the library: do not free it. It stays valid until the next reconfiguration
 *         (mal_step() returning MAL_RECONFIGURED) or mal_finalize(); MPI_COMM_NULL on a
 *         process that was released.
 * @note Not collective.
 */
MPI_Comm mal_comm(void);

/** Opaque handle of a registered structure. Owned by the library. */
typedef struct mal_array mal_array_t;

/**
 * @brief Allocate a distributed 2-D structure inside an MPI window and register it.
 * @param name         Unique name, 1..63 characters, copied.
 * @param type         Element datatype: any committed datatype whose true lower bound is 0
 *                     (predefined, or e.g. a contiguous type of 3 doubles). libmal uses
 *                     only its extent: rows move as bytes, so all processes must share
 *                     one data representation. The caller keeps ownership of @p type.
 * @param global_rows  Number of rows (> 0).
 * @param row_len      Elements per row (> 0); a row is row_len * extent(type) bytes.
 * @param distribution MAL_BLOCK (initially an even block-row split) or MAL_REPLICATED.
 * @param[out] array   The new handle, valid until mal_free_window() or mal_finalize().
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG (NULL/empty/too long name, NULL
 *         @p array, zero rows or row length, bad datatype or distribution, size
 *         overflow); MAL_ERR_EXISTS (name already registered); MAL_ERR_MISMATCH
 *         (arguments differ between ranks); MAL_ERR_NOMEM / MAL_ERR_MPI (allocation);
 *         MAL_ERR_REMOTE (another rank failed).
 * @note Collective over mal_comm(), with identical arguments except @p array. On a
 *       process that joined by an expansion, a call naming a structure it received is
 *       local instead: it checks the arguments match (MAL_ERR_MISMATCH otherwise) and
 *       returns the structure with its rows already in place. The local
 *       rows are zero-initialised. Their address (mal_local_data()) stays valid until the
 *       next mal_rebalance(), mal_free_window() or mal_finalize().
 */
mal_status_t mal_alloc_window(const char *name, MPI_Datatype type, int64_t global_rows,
                              int64_t row_len, mal_distribution_t distribution,
                              mal_array_t **array);

/**
 * @brief Allocate a block-row structure whose initial split follows @p weights
 *        (one per rank of mal_comm(), as for mal_rebalance()) instead of the even
 *        split: for data that starts unevenly (known node speeds, a restart), with no
 *        rebalance and so no data movement.
 * @return As mal_alloc_window(); MAL_ERR_ARG also for NULL @p weights, or weights that
 *         are negative, not finite or all zero, or a min_rows the rows cannot meet.
 * @note Collective over mal_comm(), with identical arguments on every rank (the weights
 *       included, else MAL_ERR_MISMATCH). On a joining process it behaves as
 *       mal_alloc_window() (the weights are ignored: the rows arrive at the current
 *       layout).
 */
mal_status_t mal_alloc_window_weighted(const char *name, MPI_Datatype type,
                                       int64_t global_rows, int64_t row_len,
                                       const double *weights, mal_array_t **array);

/**
 * @brief Free a registered structure and its windows.
 * @return MAL_OK (NULL on every rank is a no-op); MAL_ERR_NOT_INITIALIZED;
 *         MAL_ERR_MISMATCH if the ranks name different structures (or NULL on some).
 * @note Collective over mal_comm(), even for NULL (so a NULL on some ranks is reported
 *       rather than left to hang), with the same structure on every rank. @p array and
 *       its local pointer become invalid.
 */
mal_status_t mal_free_window(mal_array_t *array);

/**
 * @brief Look up a registered structure by name.
 * @return The handle, or NULL if none (or libmal is not initialised). Not collective.
 */
mal_array_t *mal_find_window(const char *name);

/**
 * @brief Address of this rank's local rows (row-major, row_len elements per row).
 * @return The library-owned buffer, or NULL for a NULL handle. For MAL_BLOCK it holds
 *         mal_local_rows() rows starting at global row mal_first_row(); for
 *         MAL_REPLICATED all rows. Invalid after the next mal_rebalance(): re-read it.
 * @note Not collective.
 */
void *mal_local_data(const mal_array_t *array);

/** @brief First global row held locally (0 for MAL_REPLICATED; -1 for NULL). */
int64_t mal_first_row(const mal_array_t *array);

/** @brief Number of rows held locally (all rows for MAL_REPLICATED; -1 for NULL). */
int64_t mal_local_rows(const mal_array_t *array);

/** @brief Total number of rows (-1 for NULL). */
int64_t mal_global_rows(const mal_array_t *array);

/** @brief Elements per row (-1 for NULL). */
int64_t mal_row_len(const mal_array_t *array);

/**
 * @brief Move every MAL_BLOCK structure to the block layout given by @p weights.
 * @param weights One finite, non-negative weight per rank of mal_comm(), at least one
 *                positive; identical on every rank. Rank r receives a share of each
 *                matrix's nonzeros proportional to weights[r] (to within one row's
 *                nonzeros; see mal_alloc_csr()), with its aligned structures (min_rows
 *                does not apply to these), and a share of each other structure's rows:
 *                boundaries are the rounded
 *                cumulative shares, so counts sum exactly to the total, boundaries are
 *                monotone and a zero weight gets zero rows. With min_rows = m > 0 in the
 *                configuration, each positive-weight rank first receives m rows and the
 *                rest is shared by weight (MAL_ERR_ARG if the rows cannot cover that).
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG (NULL, negative, NaN, infinite
 *         or all-zero weights); MAL_ERR_MISMATCH (weights or method differ between
 *         ranks); MAL_ERR_NOMEM / MAL_ERR_MPI; MAL_ERR_REMOTE. On any error every
 *         structure keeps its old layout, data and local pointer; the only thing a failed
 *         rebalance may have changed is a spare buffer released while growing it.
 * @note Collective over mal_comm(). Local data pointers, first rows and row counts may
 *       change: re-read them. A rebalance that leaves the layout unchanged moves nothing
 *       and creates no window. Each rank's part sits inside a buffer with headroom on
 *       both sides: when every rank's new part fits around the rows it keeps, those rows
 *       are not touched at all and only incoming rows are written; otherwise all parts
 *       move to the second buffer (kept rows copied with memcpy, never through MPI),
 *       which is grown collectively only if some part outgrows it.
 */
mal_status_t mal_rebalance(const double *weights);

/**
 * @brief Choose the redistribution method of the following rebalances.
 * @return MAL_OK; MAL_ERR_ARG for an unknown method; MAL_ERR_NOT_INITIALIZED;
 *         MAL_ERR_UNSUPPORTED for MAL_REDIST_SHMEM when mal_init() did not start the
 *         SHMEM transport.
 * @note Not collective, but every rank must have set the same method before the next
 *       mal_rebalance() (which checks it and returns MAL_ERR_MISMATCH otherwise), and
 *       agree on shmem or not before the next allocation (checked likewise).
 *       MAL_REDIST_DEFAULT re-reads the MAL_REDIST environment variable.
 *       Memory follows the method in effect when a structure is allocated: on the
 *       symmetric heap under MAL_REDIST_SHMEM, in MPI windows otherwise. shmem needs
 *       the first, rma and rma-get the second; alltoallv and p2p move either. A
 *       rebalance with a method its structures' memory cannot serve returns
 *       MAL_ERR_UNSUPPORTED naming the structure, and nothing moves.
 */
mal_status_t mal_set_redist(mal_redist_t method);

/**
 * @brief Whether this libmal was built with @p method: true for the MPI methods, true
 *        for MAL_REDIST_SHMEM only when built with OpenSHMEM (MAL_WITH_SHMEM).
 * @note Not collective; callable before mal_init().
 */
bool mal_redist_supported(mal_redist_t method);

/** @brief The method in effect (never MAL_REDIST_DEFAULT once initialised). */
mal_redist_t mal_get_redist(void);

/** @brief "rma", "rma-get", "alltoallv", "p2p", "shmem" or "default"; "unknown" otherwise. */
const char *mal_redist_name(mal_redist_t method);

/** What the most recent mal_rebalance() did on the calling process. */
typedef struct {
    mal_redist_t method;     /**< method used                                      */
    int64_t bytes_received;  /**< bytes this rank pulled from other ranks           */
    int64_t bytes_sent;      /**< bytes other ranks pulled from this rank           */
    int64_t bytes_kept;      /**< bytes that stayed on this rank                    */
    int windows_created;     /**< windows created by this rebalance (0 when it fit) */
    bool layout_changed;     /**< false when the new layout equalled the old one    */
    bool in_place;           /**< every structure that moved kept its staying rows
                                  where they were (no local copy, no buffer swap)   */
    double seconds;          /**< wall time of the call on this rank                */
} mal_rebalance_stats_t;

/**
 * @brief Statistics of the most recent successful mal_rebalance() on this process.
 * @return MAL_ERR_ARG for NULL, MAL_ERR_NOT_INITIALIZED, else MAL_OK (all zero before the
 *         first rebalance). Not collective.
 */
mal_status_t mal_last_rebalance(mal_rebalance_stats_t *stats);

/**
 * @brief Number of MPI windows (and SHMEM symmetric blocks) libmal currently holds on
 *        this process (for leak checks).
 * @return 0 when not initialised. Not collective.
 */
int mal_window_count(void);

/**
 * @brief Where the buffer holding @p array's data lives: "direct" (private memory
 *        reached by cross-memory attach), "window" (an MPI window), "symmetric" (the
 *        SHMEM heap), or "none" for NULL or before mal_init().
 * @note Not collective. Every rank of a structure gives the same answer.
 */
const char *mal_memory_name(const mal_array_t *array);

/* ---------------------------------------------------------------------------------- */
/* Sparse matrices: row-distributed CSR whose parts follow the nonzeros.              */
/* ---------------------------------------------------------------------------------- */

/** Column index of a CSR matrix. 32 bits: 4 bytes less per nonzero to store and move
 *  than 64-bit indices; matrices are limited to MAL_COLIND_MAX columns (checked). Row
 *  pointers are 64-bit, so the number of nonzeros is not limited by it. */
typedef int32_t mal_colind_t;
#define MAL_COLIND_MAX INT32_MAX

/** Opaque handle of a registered CSR matrix. Owned by the library. */
typedef struct mal_csr mal_csr_t;

/**
 * @brief Register a row-distributed sparse matrix in CSR form, initially with no
 *        nonzero (every row empty, rows split evenly); mal_csr_set_rows() fills it.
 * @param name        Unique among matrices, 1..55 characters, copied. Its three parts
 *                    are registered as the structures "NAME:rowptr", "NAME:colind" and
 *                    "NAME:values", names a mal_alloc_window() call then cannot take;
 *                    they are not returned by mal_find_window().
 * @param global_rows Number of rows (> 0).
 * @param global_cols Number of columns, 1..MAL_COLIND_MAX.
 * @param value_type  Datatype of one value, as for mal_alloc_window(): lower bound 0,
 *                    only its extent is used; the caller keeps ownership.
 * @param[out] csr    The new handle, valid until mal_free_csr(), mal_finalize() or the
 *                    release of this process (MAL_REMOVED).
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG (bad name, sizes or datatype,
 *         NULL @p csr); MAL_ERR_EXISTS (the name or one of its part names is taken);
 *         MAL_ERR_MISMATCH; MAL_ERR_NOMEM / MAL_ERR_MPI; MAL_ERR_REMOTE.
 * @note Collective over mal_comm() with identical arguments except @p csr. The row
 *       pointer, column indices and values each live in MPI windows. Every rebalance and
 *       reconfiguration moves the matrix so that each process holds a share of the
 *       nonzeros proportional to its weight (to within one row's nonzeros): the row
 *       pointer slice, column indices and values of the rows that change owner move
 *       one-sidedly like any structure. On a process that joined by an expansion the
 *       call is local and hands back the matrix with its rows in place (as for
 *       mal_alloc_window()).
 */
mal_status_t mal_alloc_csr(const char *name, int64_t global_rows, int64_t global_cols,
                           MPI_Datatype value_type, mal_csr_t **csr);

/**
 * @brief Set the matrix's rows: each process gives a contiguous block of rows, rank 0
 *        the first block, rank 1 the next, and so on (the blocks become the layout).
 * @param csr        The matrix.
 * @param local_rows Rows given by this process (>= 0; they sum to the matrix's rows).
 * @param local_nnz  Nonzeros given by this process (>= 0).
 * @param rowptr     local_rows + 1 offsets, non-decreasing, with rowptr[local_rows] -
 *                   rowptr[0] == local_nnz. rowptr[0] need not be 0 (a slice of a
 *                   global row pointer is rebased). May be NULL when local_rows is 0.
 * @param colind     local_nnz column indices in [0, global_cols), row by row (any order
 *                   within a row: libmal moves them as they are). May be NULL if
 *                   local_nnz is 0.
 * @param values     local_nnz values of the matrix's value type. May be NULL if
 *                   local_nnz is 0.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG (NULL matrix or needed array,
 *         negative counts, rowptr decreasing or not spanning local_nnz, a column out of
 *         range, row counts not summing to the matrix's rows, a new row layout while
 *         structures are aligned to the matrix); MAL_ERR_MISMATCH (ranks name different
 *         matrices); MAL_ERR_NOMEM / MAL_ERR_MPI; MAL_ERR_REMOTE. The message names the
 *         first offending index. On error the matrix keeps its previous rows and data.
 * @note Collective over mal_comm(). The data are copied into new windows sized for the
 *       given layout (with the configured headroom); the previous ones are freed once the
 *       new ones hold the data, so for a moment both exist. Every local pointer of the
 *       matrix (mal_csr_rowptr(), mal_csr_colind(), mal_csr_values()) becomes invalid,
 *       even when the layout stays the same: re-read them.
 */
mal_status_t mal_csr_set_rows(mal_csr_t *csr, int64_t local_rows, int64_t local_nnz,
                              const int64_t *rowptr, const mal_colind_t *colind,
                              const void *values);

/**
 * @brief Free a matrix and its windows.
 * @return MAL_OK (NULL on every rank is a no-op); MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG if
 *         structures are still aligned to it (free them first); MAL_ERR_MISMATCH;
 *         MAL_ERR_REMOTE.
 * @note Collective over mal_comm(), like mal_free_window(). The handle and every local
 *       pointer of the matrix become invalid.
 */
mal_status_t mal_free_csr(mal_csr_t *csr);

/** @brief The matrix registered under @p name, or NULL. Not collective. */
mal_csr_t *mal_find_csr(const char *name);

/**
 * @brief Local row pointer, rebased: mal_csr_local_rows() + 1 offsets with [0] == 0,
 *        into mal_csr_colind() and mal_csr_values().
 * @return Library-owned, read-only; NULL for a NULL handle. Like the other local pointers
 *         of the matrix it is invalid after the next rebalance, reconfiguration or
 *         mal_csr_set_rows(): re-read it.
 */
const int64_t *mal_csr_rowptr(const mal_csr_t *csr);

/** @brief Local column indices (mal_csr_local_nnz() of them); read-only. NULL for NULL. */
const mal_colind_t *mal_csr_colind(const mal_csr_t *csr);

/** @brief Local values (mal_csr_local_nnz() elements of the value type), writable: the
 *  sparsity pattern is fixed, the values may change between rebalances. NULL for NULL. */
void *mal_csr_values(const mal_csr_t *csr);

/** As mal_memory_name() for a CSR matrix's parts (all three live alike). */
const char *mal_csr_memory_name(const mal_csr_t *matrix);

/** @brief First global row held locally (-1 for NULL). */
int64_t mal_csr_first_row(const mal_csr_t *csr);
/** @brief Rows held locally (-1 for NULL). */
int64_t mal_csr_local_rows(const mal_csr_t *csr);
/** @brief Nonzeros held locally (-1 for NULL). */
int64_t mal_csr_local_nnz(const mal_csr_t *csr);
/** @brief Global number of rows (-1 for NULL). */
int64_t mal_csr_global_rows(const mal_csr_t *csr);
/** @brief Global number of columns (-1 for NULL). */
int64_t mal_csr_global_cols(const mal_csr_t *csr);
/** @brief Global number of nonzeros (-1 for NULL). */
int64_t mal_csr_global_nnz(const mal_csr_t *csr);

/**
 * @brief Allocate a dense block structure whose rows always follow a matrix's rows
 *        (vectors of a sparse solver: x, r, p, q on A's layout).
 * @param name    As for mal_alloc_window().
 * @param type    As for mal_alloc_window().
 * @param row_len Elements per row (> 0).
 * @param matrix  The matrix to follow; the structure has its number of rows, and
 *                mal_first_row() / mal_local_rows() equal mal_csr_first_row() /
 *                mal_csr_local_rows() at all times (rebalances move it by the matrix's
 *                nnz-weighted row layout; min_rows does not apply to it).
 * @param[out] array The new handle.
 * @return As mal_alloc_window(); MAL_ERR_ARG also for a NULL @p matrix (on a joining
 *         process, a call that does not name the received structure's matrix gets
 *         MAL_ERR_MISMATCH).
 * @note Collective over mal_comm() with identical arguments (the same matrix); local on
 *       a joining process that received the structure. The local rows start zeroed.
 *       The matrix cannot be freed, nor given a new row layout, while it has followers.
 */
mal_status_t mal_alloc_window_aligned(const char *name, MPI_Datatype type, int64_t row_len,
                                      const mal_csr_t *matrix, mal_array_t **array);

/* ---------------------------------------------------------------------------------- */
/* Malleability: the iteration loop, growing and shrinking.                           */
/* ---------------------------------------------------------------------------------- */

/** What a reconfiguration did. */
typedef enum {
    MAL_ACTION_NONE = 0,
    MAL_ACTION_EXPAND,   /**< processes were spawned and merged               */
    MAL_ACTION_SHRINK,   /**< processes were released                          */
    MAL_ACTION_REBALANCE /**< same processes, new weights                      */
} mal_action_t;

/** Figures of the most recent reconfiguration, identical on every rank that took part
 *  (times are the maximum over the ranks, bytes the sum). */
typedef struct {
    mal_action_t action;
    int64_t iteration;       /**< mal_iteration() when it happened                  */
    int procs_before;
    int procs_after;         /**< equals procs_before when it failed                */
    int64_t bytes_moved;     /**< bytes that changed owner, all structures          */
    double spawn_seconds;    /**< spawning and merging (expand)                     */
    double process_seconds;  /**< changing the process set: spawning and merging
                                  (expand, = spawn_seconds), splitting the released
                                  processes off (shrink); 0 for a rebalance           */
    double window_seconds;   /**< creating the windows on the new communicator      */
    double redist_seconds;   /**< moving the data, including agreeing on success    */
    double total_seconds;    /**< the whole reconfiguration                         */
    mal_status_t status;     /**< MAL_OK, or why it was abandoned                   */
    mal_spawn_mode_t spawn_mode; /**< how processes were spawned (expand only)      */
} mal_reconfig_stats_t;

/**
 * @brief End of one iteration: count it and carry out what the plan says now, or, without
 *        a plan, what the policy decides at the end of a sampling interval.
 * @return MAL_CONTINUE (nothing changed); MAL_RECONFIGURED (processes were added or
 *         removed, or the layout changed: re-read mal_comm(), mal_local_data(),
 *         mal_first_row() and mal_local_rows()); MAL_REMOVED (this process was released:
 *         leave the loop and call mal_finalize()); MAL_ERR_NOT_INITIALIZED. A negative
 *         code (MAL_ERR_SPAWN, MAL_ERR_TIMEOUT, MAL_ERR_NOMEM, ...) means a planned or decided
 *         reconfiguration was abandoned: the application goes on with its old processes,
 *         layout and data, and the reason is in mal_error_message() and the report. At
 *         the end of a sampling interval it may also mean that the monitor could not
 *         gather it (MAL_ERR_NOMEM on a rank without memory for the figures,
 *         MAL_ERR_REMOTE on the others): the interval's figures are dropped and nothing
 *         is carried out in that call; the next interval starts as usual.
 * @note Collective over mal_comm(). It closes the monitor's measurement of the iteration
 *       (see ::mal_monitor_t); at the end of a sampling interval it gathers every rank's
 *       figures (one small MPI_Allgather, after one small MPI_Allreduce in the first
 *       interval after mal_init() or a reconfiguration) and, unless a plan is given or
 *       the policy is off, rank 0 decides and broadcasts the decision (one small
 *       MPI_Bcast, see mal_last_decision()); otherwise, between planned actions, it
 *       does not communicate.
 */
mal_status_t mal_step(void);

/** @brief Iterations completed (mal_step() calls since mal_init(), carried to spawned
 *  processes). 0 before mal_init(). Not collective. */
int64_t mal_iteration(void);

/** @brief False on a process started by a libmal expansion (its data arrive with the
 *  structures, it must not load input). True otherwise. Not collective. */
bool mal_is_initial(void);

/**
 * @brief Register a value carried to processes that join later (e.g. a residual).
 * @param name   1..63 characters. Registering a name again replaces the entry.
 * @param value  Memory of @p bytes bytes that libmal reads at each expansion (from rank
 *               0) and, on a joining process, overwrites with the carried bytes here.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG (NULL, bad name, 0 or more than
 *         1 MiB); MAL_ERR_NOMEM; MAL_ERR_MISMATCH on a joining process when the carried
 *         value has another size.
 * @note Not collective. The iteration number is carried without registration.
 */
mal_status_t mal_register_value(const char *name, void *value, size_t bytes);

/**
 * @brief Add @p count processes now (what a "+N" plan entry does).
 * @param count   Processes to spawn, >= 1.
 * @param mode    MAL_SPAWN_PER_CALL, MAL_SPAWN_BATCHED or MAL_SPAWN_DEFAULT (config).
 * @param weights One weight per process of the new set (old ranks first, new ones
 *                last), as for mal_rebalance(); NULL for an even split.
 * @return MAL_RECONFIGURED; MAL_ERR_ARG; MAL_ERR_SPAWN (program missing or not
 *         executable, no free slot, bad host, a spawned process that could not receive
 *         or read what it is sent to join); MAL_ERR_TIMEOUT (the MPI runtime lost the new
 *         processes' start at every attempt: each is bounded by MAL_RECONF_TIMEOUT
 *         seconds, default 60, read when the program starts); MAL_ERR_NOMEM / MAL_ERR_MPI;
 *         MAL_ERR_REMOTE;
 *         MAL_ERR_MISMATCH when the arguments differ between ranks; MAL_ERR_UNSUPPORTED
 *         once SHMEM was started in this process (its set of PEs is fixed at start). On error the
 *         application keeps its processes, layout and data; spawned processes exit.
 * @note Collective over mal_comm(). New processes run main() from the start and join
 *       in mal_init(); they get the ranks after the existing ones. Every structure is
 *       moved to its new layout in windows created on the new communicator: the old
 *       owners write the newcomers' rows with MPI_Put (method rma/rma-get) or the
 *       configured baseline moves them over the new communicator.
 */
mal_status_t mal_expand(int count, mal_spawn_mode_t mode, const double *weights);

/**
 * @brief Release processes now (what a "-N" or "-@R:R" plan entry does).
 * @param count   Number of processes to release, 1 .. size-1.
 * @param ranks   The ranks to release (count distinct ranks of mal_comm(), initial ones
 *                allowed), or NULL for the last @p count ranks.
 * @param weights One weight per remaining process (in their new rank order), or NULL
 *                for an even split.
 * @return MAL_RECONFIGURED on the remaining processes, MAL_REMOVED on the released
 *         ones; errors as for mal_expand() (nothing changes on error).
 * @note Collective over mal_comm(). The remaining processes pull the released ranks'
 *       rows with MPI_Get before anyone leaves; survivors keep their relative order.
 */
mal_status_t mal_shrink(int count, const int *ranks, const double *weights);

/* ---------------------------------------------------------------------------------- */
/* Monitoring and prediction.                                                          */
/* ---------------------------------------------------------------------------------- */

/**
 * What the monitor measured on this process since mal_init(). An iteration is the time
 * between two mal_step() calls, mal_step() itself excluded. Communication is the time in
 * the application's MPI calls, counted by PMPI interposition: libmal defines MPI_Send,
 * MPI_Recv, MPI_Sendrecv, MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Waitall, MPI_Barrier,
 * MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather, MPI_Allgatherv, MPI_Gather,
 * MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Alltoall and MPI_Alltoallv, which time the
 * call and forward it to its PMPI_ entry point (nothing to change in the application;
 * another PMPI tool in the same program would clash with these). Calls libmal makes
 * itself are not counted. Waiting for a slower rank inside a collective counts as
 * communication; the rest of the iteration is computation.
 */
typedef struct {
    int64_t iterations;     /**< iterations measured                                 */
    double wall_seconds;    /**< their wall time                                     */
    double cpu_seconds;     /**< CPU time of the calling thread in them (<= wall)    */
    double comm_seconds;    /**< time in the application's MPI communication calls   */
    int64_t comm_calls;     /**< messages and collectives counted                    */
    double comm_bytes;      /**< their bytes (as the prediction model counts them)   */
    double work;            /**< work units: the counter's events, else what
                                 mal_set_work() reported, else the rows held of the
                                 largest block structure, per iteration              */
    long long counter;      /**< total of the hardware counter (mal_monitor_counter()),
                                 -1 when there is none                               */
    double last_wall, last_cpu, last_comm, last_work; /**< the latest iteration     */
    bool in_grace;          /**< the latest iteration was in a grace period          */
    int64_t load_changes;   /**< load changes detected: the computation per work unit
                                 left [best / 1.25, best * 1.25] in 2 iterations in a
                                 row, best being its minimum since the last change   */
} mal_monitor_t;

/** @brief Copy this process's monitor totals. MAL_ERR_ARG for NULL. Not collective. */
mal_status_t mal_monitor_read(mal_monitor_t *m);

/** @brief The hardware counter the monitor uses ("PAPI_FP_OPS", "PAPI_DP_OPS",
 *  "PAPI_TOT_INS"), or "none (reason)" when PAPI cannot count here (then computing power
 *  comes from reported work). Never NULL. Not collective. */
const char *mal_monitor_counter(void);

/**
 * @brief Report work done by this process in the current iteration (rows, nonzeros,
 *        floating-point operations: any unit, the same on every rank). Calls add up.
 * @return MAL_OK; MAL_ERR_ARG for a negative, NaN or infinite value;
 *         MAL_ERR_NOT_INITIALIZED. Not collective.
 * @note Computing power is work per second of computation (Flex-MPI's "counts" mode).
 *       Without a hardware counter and without this call, the rows this rank holds of
 *       its largest block structure are the work of each iteration.
 */
mal_status_t mal_set_work(double units);

/** The model's prediction of the sampling interval that follows a reconfiguration, and
 *  (once that interval has ended) what it measured. Times are seconds over the whole
 *  interval: computation and communication are the slowest rank's computation and the
 *  rest of the slowest rank's wall time; process and redistribution are the
 *  reconfiguration's own (process_seconds, and redist_seconds + window_seconds). */
typedef struct {
    int64_t iteration;        /**< when the reconfiguration happened (0: none yet)   */
    mal_action_t action;
    int procs_before, procs_after;
    int64_t interval;         /**< iterations of the interval predicted              */
    double lambda;            /**< communication correction used (eqs. 4-5)          */
    double comp, comm, process, redist;      /**< predicted                          */
    bool measured;            /**< the measured fields below are filled              */
    double comp_measured, comm_measured, process_measured, redist_measured;
} mal_prediction_t;

/** @brief The prediction made at the most recent reconfiguration that could be predicted
 *  (one sampling interval of measurements before it) and what followed. A process that
 *  joined in it has none. MAL_ERR_ARG for NULL. Not collective. */
mal_status_t mal_last_prediction(mal_prediction_t *p);

/** The policy's most recent decision (see mal_config_t.policy), made on rank 0 at the
 *  end of a sampling interval and known to every rank. Times are seconds per sampling
 *  interval, predicted by the model. */
typedef struct {
    int64_t iteration;        /**< when it was made (0: none yet)                     */
    mal_action_t action;      /**< MAL_ACTION_NONE when the set stays as it is         */
    int procs_before, procs_after;
    double goal;              /**< what the objective allows the next interval (0: no
                                   objective)                                         */
    double current;           /**< predicted with no action                            */
    double comp, comm, process, redist; /**< predicted for the action chosen           */
    char reason[256];         /**< why, in one sentence                                */
} mal_decision_t;

/** @brief The policy's most recent decision; MAL_ERR_ARG for NULL. Not collective. */
mal_status_t mal_last_decision(mal_decision_t *d);

/**
 * @brief Figures of the most recent reconfiguration (expand, shrink, or a plan's
 *        rebalance), successful or not.
 * @return MAL_ERR_ARG for NULL, MAL_ERR_NOT_INITIALIZED, else MAL_OK (action
 *         MAL_ACTION_NONE before the first). Not collective.
 */
mal_status_t mal_last_reconfig(mal_reconfig_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif /* MAL_H */
