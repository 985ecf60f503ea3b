/**
 * @file mal.h
 * @brief libmal: malleable MPI applications with a one-sided redistribution engine.
 *
 * This is the whole public surface of libmal, and its reference. Structures registered
 * with mal_alloc_window() live in memory that other processes reach one-sidedly (MPI-3
 * RMA windows, or private buffers copied by cross-memory attach) from the moment they are
 * allocated; a rebalance computes a new block layout from per-rank weights and every
 * process pulls its new partition in a passive-target epoch. mal_step(), called once per
 * iteration, carries out the reconfigurations a plan or the policy asks for.
 *
 * The calls are grouped by what they act on (each group is a Doxygen module):
 * - @ref mal_status "Status and errors": the codes every call returns, and their text.
 * - @ref mal_setup "Setup": version, configuration, mal_init() and mal_finalize().
 * - @ref mal_processes "Processes and communicator": mal_comm(), the iteration count,
 *   whether this process was started by an expansion.
 * - @ref mal_arrays "Registered arrays": dense distributed 2-D structures.
 * - @ref mal_csr "CSR matrices": row-distributed sparse matrices, and the arrays that
 *   follow their rows.
 * - @ref mal_values "Replicated values": small values carried to joining processes.
 * - @ref mal_reconfiguration "Reconfiguration": mal_step(), mal_rebalance(),
 *   mal_expand(), mal_shrink() and their figures.
 * - @ref mal_transport "Transport selection": how a rebalance moves data.
 * - @ref mal_monitoring "Monitoring, model and decisions": what the monitor measured,
 *   what the model predicted and what the policy decided.
 * - @ref mal_deprecated "Deprecated aliases": the names of the previous release.
 *
 * @section mal_conventions Conventions used throughout
 * - Every call that can fail returns a ::mal_status_t with three kinds of value: negative
 *   is an error, MAL_OK (0, also spelt MAL_CONTINUE) is success, and the positive
 *   outcomes MAL_RECONFIGURED and MAL_REMOVED are returned only by the calls that change
 *   the process set (mal_step(), mal_expand(), mal_shrink()). Test `st < 0` for an error.
 *   mal_rebalance() returns MAL_OK, not MAL_RECONFIGURED: the caller asked for the new
 *   layout and knows it changed.
 * - mal_strerror() names a code and mal_error_message() gives the detailed message of
 *   the most recent failure on the calling process (it names the call and the offending
 *   argument).
 * - Output parameters are written only on success. A failed call changes nothing, except
 *   where its documentation says otherwise.
 * - "Collective" means every process of mal_comm() must make the call, with the same
 *   arguments where stated. Collective calls check that the arguments agree across ranks
 *   before changing anything: if any rank finds a problem, every rank fails, that rank
 *   with its own code and the others with MAL_ERR_REMOTE (MAL_ERR_MISMATCH when the
 *   arguments differ between ranks). "Local" means the call does not communicate and
 *   each process may make it on its own.
 * - Every call that needs mal_init() and returns a ::mal_status_t returns
 *   MAL_ERR_NOT_INITIALIZED before mal_init() and MAL_ERR_RELEASED on a process that a
 *   shrink released; the exceptions are mal_finalize() and mal_last_reconfig(), which
 *   work on a released process, and mal_step(), which returns MAL_REMOVED there again.
 *   Calls that return a value instead of a status (getters) give NULL, -1, 0, false or
 *   "none" for a NULL handle or before mal_init(), as each says.
 * - Handles (::mal_array_t, ::mal_csr_t) and every string a call returns belong to the
 *   library: the user never frees them. Handles stay valid across rebalances and
 *   reconfigurations until their free call, mal_finalize() or the release of their
 *   process.
 * - Local pointers (mal_local_data(), mal_csr_rowptr(), mal_csr_colind(),
 *   mal_csr_values()), mal_first_row(), mal_local_rows() and the mal_csr_ row and nonzero
 *   counts must be re-read after every mal_rebalance(), every mal_step(), mal_expand() or
 *   mal_shrink() that returns MAL_RECONFIGURED, and (for its matrix) mal_csr_set_rows();
 *   mal_comm() after every MAL_RECONFIGURED.
 * - libmal is not thread-safe: call it from one thread (the one that makes its MPI calls;
 *   MPI_THREAD_SINGLE suffices, except for asynchronous expansions, mal_config_t.async,
 *   whose background thread needs MPI_THREAD_MULTIPLE).
 *
 * @section mal_names Names
 * Every call starts with mal_ and names what it acts on. A registered dense structure is
 * an *array* (::mal_array_t); a sparse matrix is a *csr*; a carried value a *value*.
 * mal_alloc_window() and mal_step() keep the names users know from the design
 * (mal_alloc_window() does allocate the array inside a window or direct buffer); the
 * other array calls name the array they act on (mal_alloc_array_weighted(),
 * mal_alloc_array_aligned(), mal_free_array(), mal_find_array()), so "window" names only
 * the memory. Predicates read as questions and say what they ask about:
 * mal_is_initialized() (was mal_initialized(), easily confused with mal_is_initial())
 * and mal_is_initial_process(). mal_buffer_count() (was mal_window_count()) counts
 * buffers, not only MPI windows: windows, SHMEM blocks and direct buffers, one or two
 * per array. The previous names remain for one release as aliases (@ref
 * mal_deprecated).
 *
 * @section mal_last Which "last" call to read
 * - mal_last_rebalance(): this process's bytes and time in the most recent successful
 *   mal_rebalance(), whether the application called it or a plan or the policy did
 *   through mal_step(); not changed by an expansion or shrink.
 * - mal_last_reconfig(): the figures of the most recent reconfiguration that mal_step(),
 *   mal_expand() or mal_shrink() carried out (an expansion, a shrink, or a plan's or the
 *   policy's rebalance), successful or abandoned, identical on every rank and the same
 *   as the MAL_REPORT record; a direct mal_rebalance() call does not change it.
 * - mal_last_prediction(): what the model predicted for the sampling interval after the
 *   most recent reconfiguration, and what was measured.
 * - mal_last_decision(): the policy's most recent decision, action or not.
 */
#ifndef MAL_H
#define MAL_H

#include "mal_status.h" /* defines MAL_API too */

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mal_version.h"


#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mal_status Status and errors
 * @brief The status codes every fallible call returns, and their text.
 * @{
 */

/* The status list, ::mal_status_t and mal_strerror() are in mal_status.h (MPI-free,
 * included above), so the pure modules return the same codes. */

/**
 * @brief Detailed message of the most recent failed call on this process.
 * @return A string owned by the library, overwritten by the next failing call; "" when no
 *         call has failed yet. The message starts with the public call the user made
 *         (for a reconfiguration that mal_step() carried out: "mal_step: mal_expand: ...")
 *         and names the offending argument.
 * @note Local; callable before mal_init(). With mal_config_t.log_errors (the default)
 *       each failure is also printed once to stderr where it is found.
 */
MAL_API const char *mal_error_message(void);

/** @} */

/**
 * @defgroup mal_transport Transport selection
 * @brief How a rebalance or reconfiguration moves data between processes.
 *
 * Every method executes the same transfer plan; they differ in the MPI (or OpenSHMEM)
 * calls that carry it. The method is chosen at mal_init() (mal_config_t.redist or the
 * MAL_REDIST environment variable) and may be changed between rebalances with
 * mal_set_redist().
 * @{
 */

/** How a rebalance moves data. All execute the same transfer plan. */
typedef enum {
    MAL_REDIST_DEFAULT = 0, /**< MAL_REDIST from the environment if set, else AUTO  */
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
                                 mal_redist_supported()) and mal_init() over every PE */,
    MAL_REDIST_AUTO         /**< the default: per reconfiguration, the executor among
                                 rma, rma-get, alltoallv and p2p that the calibration
                                 (mal-calibrate, mal_config_t.calibration) or else the
                                 documented defaults say moves fastest for its link
                                 class (every rank on one host, or several hosts) and
                                 state (the first move of a structure: cold; later
                                 ones: warm). The report and the summary line name
                                 the executor it took; mal_last_rebalance() too      */
} mal_redist_t;

/**
 * @brief Choose the redistribution method of the following rebalances.
 * @param method The method; MAL_REDIST_DEFAULT re-reads the MAL_REDIST environment
 *               variable.
 * @return MAL_OK; MAL_ERR_ARG for an unknown method, or for MAL_REDIST_DEFAULT when the
 *         MAL_REDIST environment variable names none; MAL_ERR_NOT_INITIALIZED;
 *         MAL_ERR_RELEASED; MAL_ERR_UNSUPPORTED for MAL_REDIST_SHMEM when mal_init() did
 *         not start the SHMEM transport. On error the method in effect stays.
 * @note Local, but every rank must have set the same method before the next
 *       mal_rebalance() (which checks it and returns MAL_ERR_MISMATCH otherwise), and
 *       agree on shmem or not before the next allocation (checked likewise).
 *       MAL_REDIST_DEFAULT re-reads the MAL_REDIST environment variable.
 *       Memory follows the method in effect when a structure is allocated: on the
 *       symmetric heap under MAL_REDIST_SHMEM, in MPI windows or direct buffers
 *       otherwise. shmem needs the first, rma and rma-get the second; alltoallv and p2p
 *       move either. A rebalance with a method its structures' memory cannot serve
 *       returns MAL_ERR_UNSUPPORTED naming the structure, and nothing moves.
 */
MAL_API mal_status_t mal_set_redist(mal_redist_t method);

/** @brief The method in effect.
 *  @return The method of the following rebalances: never MAL_REDIST_DEFAULT once
 *          initialised, and MAL_REDIST_DEFAULT before mal_init().
 *  @note Local. */
MAL_API mal_redist_t mal_get_redist(void);

/**
 * @brief Whether this libmal was built with @p method.
 * @param method The method asked about.
 * @return true for the MPI methods, true for MAL_REDIST_SHMEM only when built with
 *         OpenSHMEM (MAL_WITH_SHMEM); false for MAL_REDIST_DEFAULT and unknown values.
 * @note Local; callable before mal_init().
 */
MAL_API bool mal_redist_supported(mal_redist_t method);

/**
 * @brief Whether this MPI can start processes, which an expansion beyond the processes
 *        parked in the pool needs.
 * @param why When not NULL and the answer is false, set to the reason (the library, and
 *        what it answered), a static string owned by libmal.
 * @return true with Open MPI; with an MPICH-family MPI, whether its device has dynamic
 *         processes (Debian 12's MPICH 4.0.2, ch4:ucx, has none: an expansion that must
 *         spawn is then refused with MAL_ERR_UNSUPPORTED, and the application goes on).
 *         Probed once per process, without starting anything.
 * @note Local; callable after MPI_Init(), before mal_init() too.
 */
MAL_API bool mal_spawn_supported(const char **why);

/** @brief The name of a method, as the MAL_REDIST environment variable spells it.
 *  @param method The method to name.
 *  @return "rma", "rma-get", "alltoallv", "p2p", "shmem", "auto" or "default";
 *          "unknown" otherwise. A static string owned by the library.
 *  @note Local; callable before mal_init(). */
MAL_API const char *mal_redist_name(mal_redist_t method);

/** @} */

/**
 * @defgroup mal_arrays Registered arrays
 * @brief Dense distributed 2-D structures (rows of fixed length) that libmal moves.
 *
 * An array is allocated collectively, split in block rows over the processes (or
 * replicated on all), and registered under a unique name; every rebalance and
 * reconfiguration moves its rows to the new layout. The application reads its local rows
 * through mal_local_data(), mal_first_row() and mal_local_rows(), which it re-reads after
 * each change of layout.
 *
 * Stencil codes (examples/heat2d.c): mal_alloc_halo() keeps ghost rows around every
 * block, mal_neighbors() names the ranks to exchange them with (skipping ranks that hold
 * zero rows), mal_halo_exchange() does the exchange, and mal_swap_arrays() swaps the
 * two grids of a double-buffered update without copying.
 * @{
 */

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
    MAL_REPLICATED = 2, /**< every rank holds all rows; a rebalance leaves it in place    */
    /** Flag OR-ed into MAL_BLOCK (MAL_BLOCK | MAL_READ_MOSTLY): the application does not
     *  change these rows between iterations (a matrix, a mesh). An asynchronous
     *  expansion (mal_config_t.async) moves them in the background, while the old
     *  processes go on iterating; rows written after that are not moved again, so a
     *  structure written after mal_step() started an asynchronous expansion must not
     *  carry the flag. Without async it changes nothing. */
    MAL_READ_MOSTLY = 0x100
} mal_distribution_t;

/** Opaque handle of a registered array. Owned by the library. */
typedef struct mal_array mal_array_t;

/** @} */

/**
 * @defgroup mal_reconfiguration Reconfiguration
 * @brief The iteration loop (mal_step()), rebalancing, growing and shrinking, and the
 *        figures of what they did.
 *
 * A reconfiguration changes the layout of every registered array and matrix
 * (mal_rebalance()), or the set of processes and then the layout (mal_expand(),
 * mal_shrink()). Each is all or nothing: when it fails every process keeps its old
 * processes, layout, data and local pointers. mal_step() carries out the ones a plan
 * (mal_config_t.plan) or the policy (mal_config_t.policy) asks for.
 * @{
 */

/** How an expansion starts its processes (see mal_expand()). */
typedef enum {
    MAL_SPAWN_DEFAULT = 0, /**< MAL_SPAWN from the environment (per-call|batched), else
                                MAL_SPAWN_PER_CALL                                  */
    MAL_SPAWN_PER_CALL,    /**< one MPI_Comm_spawn per process: each new process is its
                                own MPI job, so a later release lets it exit at once  */
    MAL_SPAWN_BATCHED      /**< one MPI_Comm_spawn for all: faster to start, but a
                                process released alone parks until its batch ends     */
} mal_spawn_mode_t;

/** @} */

/**
 * @defgroup mal_setup Setup: version, configuration, initialisation
 * @brief What a program calls once: the version, mal_config_init(), mal_init() and
 *        mal_finalize().
 *
 * The version macros MAL_VERSION_MAJOR, MAL_VERSION_MINOR, MAL_VERSION_PATCH,
 * MAL_VERSION (a string) and MAL_VERSION_NUMBER (major * 10000 + minor * 100 + patch)
 * come from mal_version.h, generated from the project's version and included here:
 * they say which header a program was compiled with, mal_version() which library it
 * runs with.
 * @{
 */

/** @brief The version of the libmal the program runs with.
 *  @return "MAJOR.MINOR.PATCH", equal to MAL_VERSION when header and library match. A
 *          static string owned by the library.
 *  @note Local; callable before mal_init(). */
MAL_API const char *mal_version(void);

/** @brief The running library's version as numbers. Any pointer may be NULL.
 *  @param[out] major Where to write the major version, or NULL.
 *  @param[out] minor Where to write the minor version, or NULL.
 *  @param[out] patch Where to write the patch version, or NULL.
 *  @note Local; callable before mal_init(). */
MAL_API void mal_version_numbers(int *major, int *minor, int *patch);

/** Run-time configuration. Fill it with mal_config_init() before changing fields.
 *  Strings are copied by mal_init(). A process spawned by libmal ignores the
 *  configuration it passes to mal_init() and inherits its parents' (except log_errors).
 *  Later versions of libmal only ever add fields at the end: a program built against an
 *  older mal.h keeps working, the fields it does not know taking their defaults. */
typedef struct {
    /** The size of this structure as the program was compiled, which tells mal_init()
     *  which fields the program knows. Set by mal_config_init(); never set it by hand. */
    size_t size;
    /** Redistribution method; MAL_REDIST_DEFAULT lets the MAL_REDIST environment variable
     *  (rma|rma-get|alltoallv|p2p|shmem|auto) choose, falling back to MAL_REDIST_AUTO.
     *  Any other value wins over the environment. Default: MAL_REDIST_DEFAULT. */
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
     *  -N (release the last N ranks), -\@R:R:... (release these ranks, initial ones
     *  too; either with a final ! releases them for good even with mal_config_t.pool),
     *  or w=W:W:... (rebalance to one weight per rank). ITER counts completed
     *  iterations: "10:+2" acts in the mal_step() call that ends the 10th iteration.
     *  Example: "10:+2,20:-1,30:w=1:2:1". Default: NULL. */
    const char *plan;
    /** JSON-lines report file, appended to: one record per reconfiguration, policy
     *  decision, checked prediction and parked process, each with its schema version and
     *  kind (docs/report.md). NULL: the MAL_REPORT environment variable (no file when
     *  unset). Default: NULL. */
    const char *report;
    /** Print a one-line summary of each reconfiguration on rank 0 (stderr), and one
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
     *  MAL_ERR_ARG naming the file and line. Rank 0 reads the file again when its
     *  modification time changes (a changed file that does not parse keeps the
     *  previous view, with a notice). */
    const char *availability;
    /** Iterations of the whole run (the policy's objective needs it); 0: unknown. */
    int64_t iterations;
    /** Where buffers live for the one-sided methods and the baselines alike; see
     *  ::mal_memory_t. Default: MAL_MEMORY_DEFAULT. */
    mal_memory_t memory;
    /** Keep released processes in a pool (1) instead of ending them (0): a process a
     *  shrink releases parks inside the call that released it, using no CPU, and the
     *  next expansion takes parked processes before it spawns any (no spawn, no
     *  MPI_Init, no merge; their memory stays mapped). A reused process returns from
     *  that call with MAL_RECONFIGURED, its handles valid and its structures holding
     *  their new parts, at the iteration the others are at: its loop must follow
     *  mal_iteration() and keep nothing but registered data across the call. One
     *  released for good (mal_pool_release(), or the others' mal_finalize()) returns
     *  MAL_REMOVED. Processes spawned by prefetch and async are pooled whatever this
     *  says. -1: MAL_POOL from the environment, else 0. */
    int pool;
    /** Processes to spawn into the pool at mal_init() and after each shrink that
     *  leaves fewer parked (prespawn), parked until an expansion takes them. -1:
     *  MAL_PREFETCH from the environment, else 0. Must be -1..4096. */
    int prefetch;
    /** Asynchronous expansion (1): an expansion that needs new processes spawns them in
     *  the background (a thread on rank 0; MPI_THREAD_MULTIPLE required, else libmal
     *  says so once and expands synchronously), with their MPI_Init, join, memory and
     *  MAL_READ_MOSTLY rows, while the application iterates; a later mal_step() switches
     *  to the new processes (the rows that changed, the new communicator) and returns
     *  MAL_RECONFIGURED. Shrinks and rebalances stay synchronous. -1: MAL_ASYNC from the
     *  environment, else 0. */
    int async;
    /** Debug mode (1), to find the two mistakes a malleable program makes silently.
     *  After a reconfiguration, the memory a pointer read before it (mal_local_data(),
     *  mal_csr_colind(), mal_csr_values()) leads into is made inaccessible until the next
     *  one begins, and an access there prints a line naming the structure and aborts
     *  instead of reading rows that are no longer this process's; rebalances then always
     *  move rows to the other buffer, so that the old one can be protected. With
     *  libmal-pmpi linked, a call on MPI_COMM_WORLD while the application's processes
     *  (mal_comm()) are no longer MPI_COMM_WORLD's is named and the job aborted instead of
     *  hanging. Only libmal's own memory is protected (not an MPI-allocated window,
     *  MAL_MEMORY=window, nor a SHMEM block), and an access MPI makes through the kernel
     *  fails inside MPI without the line. It costs time (copies a rebalance would have
     *  left in place, a spare that may have to grow for them); results are unchanged.
     *  Every rank must have the same value. -1: MAL_DEBUG from the environment, else 0. */
    int debug;
    /** Give emptied nodes back to Slurm (1). When the job's room is a Slurm allocation
     *  (SLURM_JOB_NODELIST; not MAL_HOSTFILE) and a shrink leaves a host of it without
     *  any of the application's processes (active, parked in the pool, or initial ones,
     *  which stay until MPI_Finalize), rank 0 runs `scontrol update JobId=... NodeList=`
     *  with the nodes the job keeps, and every rank drops the node from the room, so
     *  expansions no longer place there. A host where a process runs inside a Slurm
     *  step (Open MPI's daemons started by srun) is kept: Slurm ends every process of
     *  the job on a node that leaves it, and mpiexec aborts when it loses a daemon. A
     *  failure is said once and the application goes on. Every rank must have the same
     *  value. -1: MAL_RELEASE_NODES from the environment, else 0. */
    int release_nodes;
    /** Correct the prediction model within the run (1): every checked prediction
     *  corrects its term for the later predictions and the policy's decisions (see
     *  "Monitoring and the prediction model" in docs/guide/library.md); 0 keeps the
     *  calibration's model throughout. -1: MAL_LEARN from the environment, else 1. */
    int learn;
} mal_config_t;

/**
 * @brief Fill @p config with the defaults documented at ::mal_config_t.
 * @param[out] config The configuration to fill.
 * @return MAL_ERR_ARG if @p config is NULL, else MAL_OK.
 * @note Local; callable before mal_init(). A macro over mal_config_init_size(), which
 *       records the size of ::mal_config_t the program was compiled with;
 *       `(mal_config_init)(config)` calls the function, which records this library's.
 */
MAL_API mal_status_t mal_config_init(mal_config_t *config);

/**
 * @brief Fill the first @p size bytes of @p config with the defaults documented at
 *        ::mal_config_t, and set config->size to @p size.
 * @param[out] config The configuration to fill.
 * @param size The size of ::mal_config_t the caller was compiled with.
 * @return MAL_ERR_ARG if @p config is NULL, or if @p size is smaller than the first
 *         version's structure or larger than this library's (a program built against a
 *         newer mal.h), else MAL_OK.
 * @note Local; callable before mal_init(). mal_config_init() calls it with
 *       sizeof(mal_config_t).
 */
MAL_API mal_status_t mal_config_init_size(mal_config_t *config, size_t size);

/** @brief mal_config_init() records the size the program was compiled with. */
#define mal_config_init(config) mal_config_init_size((config), sizeof(mal_config_t))

/**
 * @brief Initialise libmal over a duplicate of @p comm, or join a running application.
 * @param comm    The communicator of the malleable application (usually MPI_COMM_WORLD).
 *                It is duplicated; the caller keeps ownership of @p comm.
 * @param config  Configuration, copied (its strings too); NULL means the defaults of
 *                mal_config_init().
 * @return MAL_OK; MAL_ERR_ARG for MPI_COMM_NULL, an intercommunicator or bad fields or
 *         environment variables (including a malformed plan or policy, an unreadable
 *         calibration or availability file); MAL_ERR_ALREADY_INITIALIZED if called twice
 *         without mal_finalize(); MAL_ERR_MPI if MPI is not initialised or duplication
 *         fails; MAL_ERR_MISMATCH if headroom, min_rows, the method, MAL_MAX_COUNT, the
 *         plan or the spawn settings differ between ranks; MAL_ERR_REMOTE if another
 *         rank failed; MAL_ERR_NOMEM; MAL_ERR_UNSUPPORTED for the shmem method without
 *         OpenSHMEM in this build, over a communicator smaller than the job, or with a
 *         plan that adds or releases processes, and for a plan that the launcher or MPI
 *         library in use would hang on (the message names the fix). On error libmal
 *         stays uninitialised and mal_init() may be called again.
 * @note Collective over @p comm. MPI must be initialised (MPI_THREAD_SINGLE suffices:
 *       libmal makes MPI calls only from the thread that calls it; with
 *       mal_config_t.async, MPI_THREAD_MULTIPLE is needed for the background thread).
 *
 * A process started by a libmal expansion (it has an MPI parent) runs the same main():
 * here it joins the malleable communicator instead, receives the configuration, the
 * iteration number, the carried values and every registered structure and matrix with
 * its new partition already written into its buffers. Its mal_alloc_window(),
 * mal_alloc_array_weighted(), mal_alloc_array_aligned() and mal_alloc_csr() calls then
 * hand them back without communicating (mal_is_initial_process() is false and
 * mal_iteration() tells where to resume). If the expansion it was spawned for is
 * abandoned (another spawn or an allocation failed), or this process (or another of
 * its spawn) cannot receive or read what it is sent, or joining fails, the process
 * takes no part in the application: mal_init() says why on stderr (unless the
 * expansion was abandoned by the existing processes, which report it), finalizes MPI
 * and exits it with status 0. The existing processes then go on with their old
 * processes, layout and data (the expansion fails with MAL_ERR_SPAWN).
 */
MAL_API mal_status_t mal_init(MPI_Comm comm, const mal_config_t *config);

/**
 * @brief Free every registered array and matrix, and the malleable communicator.
 * @return MAL_OK, or MAL_ERR_NOT_INITIALIZED.
 * @note Collective over mal_comm(). Invalidates every ::mal_array_t and ::mal_csr_t
 *       handle, every local pointer and mal_comm() (on a released process they already
 *       are); registered values are forgotten. Call it before MPI_Finalize().
 *       mal_init() may be called again.
 *       On a process that mal_step() released (MAL_REMOVED) it is local, but it returns
 *       only when the other processes of the same MPI job (its MPI_COMM_WORLD) reach
 *       mal_finalize() too, since MPI cannot finalize part of a job: a released initial
 *       process parks here in a wait that polls with growing sleeps (no busy CPU); a
 *       process spawned alone returns at once and can exit.
 */
MAL_API mal_status_t mal_finalize(void);

/** @brief Whether libmal is initialised on this process.
 *  @return true between a successful mal_init() and mal_finalize() (also on a released
 *          process, until its mal_finalize()), false otherwise.
 *  @note Local; callable at any time. */
MAL_API bool mal_is_initialized(void);

/** @} */

/**
 * @defgroup mal_processes Processes and communicator
 * @brief Who takes part now: the malleable communicator, the iteration count, and
 *        whether this process was started by an expansion.
 * @{
 */

/**
 * @brief The malleable communicator.
 * @return The library's communicator, or MPI_COMM_NULL before mal_init() and on a
 *         process that was released. It belongs to the library: do not free it. It stays
 *         valid until the next reconfiguration that returns MAL_RECONFIGURED or
 *         MAL_REMOVED (mal_step(), mal_expand(), mal_shrink()) or mal_finalize(): re-read
 *         it then, with its rank and size.
 * @note Local.
 */
MAL_API MPI_Comm mal_comm(void);

/** @brief Iterations completed.
 *  @return mal_step() calls since mal_init(), carried to spawned processes; 0 before
 *          mal_init().
 *  @note Local. */
MAL_API int64_t mal_iteration(void);

/** @brief Whether this process was started with the application, not by an expansion.
 *  @return false on a process started by a libmal expansion (its data arrive with the
 *          structures, it must not load input); true otherwise, and before mal_init().
 *  @note Local. */
MAL_API bool mal_is_initial_process(void);

/** @} */

/**
 * @addtogroup mal_arrays
 * @{
 */

/**
 * @brief Allocate a distributed 2-D array in memory reached one-sidedly and register it.
 * @param name         Unique name, 1..63 characters, copied.
 * @param type         Element datatype: any committed datatype whose true lower bound is 0
 *                     (predefined, or e.g. a contiguous type of 3 doubles). libmal uses
 *                     only its extent: rows move as bytes, so all processes must share
 *                     one data representation. The caller keeps ownership of @p type.
 * @param global_rows  Number of rows (> 0).
 * @param row_len      Elements per row (> 0); a row is row_len * extent(type) bytes.
 * @param distribution MAL_BLOCK (initially an even block-row split) or MAL_REPLICATED.
 * @param[out] array   The new handle, valid until mal_free_array(), mal_finalize() or the
 *                     release of this process.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (NULL/empty/too
 *         long name, NULL @p array, zero rows or row length, bad datatype or
 *         distribution, size overflow); MAL_ERR_EXISTS (name already registered);
 *         MAL_ERR_MISMATCH (arguments differ between ranks); MAL_ERR_NOMEM / MAL_ERR_MPI
 *         (allocation); MAL_ERR_UNSUPPORTED (windows over spawned processes that this MPI
 *         library's one-sided component would hang on; the message names the fix);
 *         MAL_ERR_REMOTE (another rank failed).
 * @note Collective over mal_comm(), with identical arguments except @p array. On a
 *       process that joined by an expansion, a call naming a structure it received is
 *       local instead: it checks the arguments match (MAL_ERR_MISMATCH otherwise) and
 *       returns the structure with its rows already in place. The local rows are
 *       zero-initialised. Where the memory lives follows mal_config_t.memory and the
 *       method in effect (see mal_memory_name()). The name keeps the design's
 *       "window"; the other array calls say "array" (see @ref mal_names).
 */
MAL_API mal_status_t mal_alloc_window(const char *name, MPI_Datatype type,
                                      int64_t global_rows, int64_t row_len,
                                      mal_distribution_t distribution, mal_array_t **array);

/**
 * @brief Allocate a block-row array whose initial split follows @p weights
 *        (one per rank of mal_comm(), as for mal_rebalance()) instead of the even
 *        split: for data that starts unevenly (known node speeds, a restart), with no
 *        rebalance and so no data movement.
 * @param name         As for mal_alloc_window().
 * @param type         As for mal_alloc_window().
 * @param global_rows  As for mal_alloc_window().
 * @param row_len      As for mal_alloc_window().
 * @param weights      One finite, non-negative weight per rank of mal_comm(), at least
 *                     one positive, as for mal_rebalance().
 * @param[out] array   The new handle, as for mal_alloc_window().
 * @return As mal_alloc_window(); MAL_ERR_ARG also for NULL @p weights, or weights that
 *         are negative, not finite or all zero, or a min_rows the rows cannot meet.
 * @note Collective over mal_comm(), with identical arguments on every rank (the weights
 *       included, else MAL_ERR_MISMATCH). On a joining process it behaves as
 *       mal_alloc_window() (the weights are ignored: the rows arrive at the current
 *       layout). Formerly mal_alloc_window_weighted().
 */
MAL_API mal_status_t mal_alloc_array_weighted(const char *name, MPI_Datatype type,
                                              int64_t global_rows, int64_t row_len,
                                              const double *weights, mal_array_t **array);

/**
 * @brief Free a registered array and its buffers.
 * @param array The array to free, or NULL.
 * @return MAL_OK (NULL on every rank is a no-op); MAL_ERR_NOT_INITIALIZED;
 *         MAL_ERR_RELEASED; MAL_ERR_ARG for one of a matrix's three parts (free the
 *         matrix with mal_free_csr()); MAL_ERR_MISMATCH if the ranks name different
 *         arrays (or NULL on some); MAL_ERR_REMOTE.
 * @note Collective over mal_comm(), even for NULL (so a NULL on some ranks is reported
 *       rather than left to hang), with the same array on every rank. @p array and its
 *       local pointer become invalid. Formerly mal_free_window().
 */
MAL_API mal_status_t mal_free_array(mal_array_t *array);

/**
 * @brief Look up a registered array by name.
 * @param name The name it was allocated under.
 * @return The handle, or NULL if none (or libmal is not initialised); a matrix's parts
 *         are not returned. Local. Formerly mal_find_window().
 */
MAL_API mal_array_t *mal_find_array(const char *name);

/**
 * @brief Address of this rank's local rows (row-major, row_len elements per row).
 * @param array The array.
 * @return The library-owned buffer, or NULL for a NULL handle. For MAL_BLOCK it holds
 *         mal_local_rows() rows starting at global row mal_first_row(); for
 *         MAL_REPLICATED all rows. Writable. Invalid after the next mal_rebalance(),
 *         reconfiguration (MAL_RECONFIGURED), mal_free_array() or mal_finalize():
 *         re-read it.
 * @note Local.
 */
MAL_API void *mal_local_data(const mal_array_t *array);

/** @brief First global row held locally.
 *  @param array The array.
 *  @return The row; 0 for MAL_REPLICATED; -1 for NULL.
 *  @note Local; changes with the layout, like mal_local_data(). */
MAL_API int64_t mal_first_row(const mal_array_t *array);

/** @brief Number of rows held locally.
 *  @param array The array.
 *  @return The count; all rows for MAL_REPLICATED; -1 for NULL.
 *  @note Local; changes with the layout, like mal_local_data(). */
MAL_API int64_t mal_local_rows(const mal_array_t *array);

/** @brief Total number of rows.
 *  @param array The array.
 *  @return The global row count; -1 for NULL.
 *  @note Local; never changes. */
MAL_API int64_t mal_global_rows(const mal_array_t *array);

/** @brief Elements per row.
 *  @param array The array.
 *  @return The row length; -1 for NULL.
 *  @note Local; never changes. */
MAL_API int64_t mal_row_len(const mal_array_t *array);

/**
 * @brief Where the buffer holding @p array's data lives.
 * @param array The array.
 * @return "direct" (private memory reached by cross-memory attach), "window" (an MPI
 *         window), "symmetric" (the SHMEM heap), or "none" for NULL or before
 *         mal_init(). A static string owned by the library.
 * @note Local. Every rank of an array gives the same answer; it may change at a
 *       reconfiguration (new buffers are created on the new communicator).
 */
MAL_API const char *mal_memory_name(const mal_array_t *array);

/**
 * @brief Number of buffers (MPI windows, SHMEM symmetric blocks and direct buffers)
 *        libmal currently holds on this process, for leak checks: an array holds one,
 *        or two while it keeps a spare for rebalances; a matrix holds those of its three
 *        parts.
 * @return 0 when not initialised. Local. Formerly mal_window_count().
 */
MAL_API int mal_buffer_count(void);

/**
 * @brief Allocate a block-row array with a halo: @p halo_rows rows of room before and
 *        after every rank's block, for the ghost rows of a stencil code.
 * @param name         As for mal_alloc_window().
 * @param type         As for mal_alloc_window().
 * @param global_rows  As for mal_alloc_window().
 * @param row_len      As for mal_alloc_window().
 * @param halo_rows    Rows of room on each side of every block: 0 .. global_rows (and at
 *                     most INT_MAX); 0 gives a plain MAL_BLOCK array.
 * @param[out] array   The new handle, as for mal_alloc_window().
 * @return As mal_alloc_window(); MAL_ERR_ARG also for @p halo_rows out of range.
 * @note Collective over mal_comm(), with identical arguments except @p array; on a
 *       joining process it is local and hands back the array with its rows in place, as
 *       mal_alloc_window() does (MAL_ERR_MISMATCH when the halo differs from the one that
 *       arrived). The initial split is MAL_BLOCK's even one; every rebalance and
 *       reconfiguration moves the array like any block array.
 *
 * mal_local_data() points at the first row of the block, as for any array; the halo is
 * the @p halo_rows rows before it and the @p halo_rows rows after the block's last, in
 * the same buffer: with a halo of one row, `u = mal_local_data(a)` and `rows =
 * mal_local_rows(a)`, the rows at `u - row_len` and `u + rows * row_len` are valid and
 * writable. Every rank has them, one that holds zero rows too (then both halos are
 * adjacent), and every buffer libmal makes for the array keeps them around the block:
 * the initial ones, those a rebalance grows or moves the block into, a joining
 * process's. libmal never moves halo rows and no move reads or writes them: a rebalance
 * or reconfiguration moves the owned rows only, and after one the halo's contents are
 * unspecified (they start zeroed). The application fills them by its exchange
 * (mal_halo_exchange(), or its own with mal_neighbors()) before reading them, as a
 * stencil does every iteration anyway; values that must survive a reconfiguration,
 * such as fixed boundary rows, belong in owned rows, not in the halo.
 */
MAL_API mal_status_t mal_alloc_halo(const char *name, MPI_Datatype type,
                                    int64_t global_rows, int64_t row_len, int64_t halo_rows,
                                    mal_array_t **array);

/** @brief Rows of halo on each side of every block.
 *  @param array The array.
 *  @return The halo_rows of mal_alloc_halo(); 0 for any other array; -1 for NULL.
 *  @note Local; never changes. */
MAL_API int64_t mal_halo_rows(const mal_array_t *array);

/**
 * @brief The nearest ranks before and after this rank's block that hold rows: the
 *        partners of a halo exchange.
 * @param array A MAL_BLOCK array (with a halo or not).
 * @param[out] up   The nearest lower rank whose block is not empty (it holds the rows
 *                  just before this block); MPI_PROC_NULL when there is none, and when
 *                  this rank holds no rows.
 * @param[out] down The nearest higher rank whose block is not empty (the rows just after
 *                  this block); MPI_PROC_NULL likewise.
 * @return MAL_OK; MAL_ERR_ARG (NULL @p array, @p up or @p down, a replicated array);
 *         MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 * @note Local. Ranks of mal_comm(); they change with the layout, like mal_first_row():
 *       re-read them after every mal_rebalance() and MAL_RECONFIGURED. A rebalance gives
 *       a rank with a zero weight zero rows: its neighbours skip it, and it gets
 *       MPI_PROC_NULL for both, so the two MPI_Sendrecv calls of a one-row halo exchange
 *       on mal_comm() work unchanged whatever the layout. A halo wider than a
 *       neighbour's block needs rows of several ranks: mal_halo_exchange() does that.
 */
MAL_API mal_status_t mal_neighbors(const mal_array_t *array, int *up, int *down);

/** Tag of the messages mal_halo_exchange() sends on mal_comm(): no receive with this tag
 *  (or MPI_ANY_TAG) of the application may be pending on mal_comm() during the call. */
#define MAL_HALO_TAG 7413

/**
 * @brief Fill this rank's halo rows with the rows the other ranks hold: the exchange of a
 *        stencil code, on mal_comm().
 * @param array An array from mal_alloc_halo() with a halo of at least one row.
 * @return MAL_OK; MAL_ERR_ARG (NULL, a replicated array, an array without halo);
 *         MAL_ERR_MPI; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED. It allocates nothing:
 *         the messages with the two neighbours are posted at once; a halo wider than
 *         their blocks, with more partners, is exchanged one pair of ranks at a time in
 *         an order every rank follows, which cannot wait for ever.
 * @note Every rank of mal_comm() calls it for the same array (one holding zero rows
 *       too), but it communicates point to point only, with the ranks whose rows fall in
 *       its halo or whose halo holds its rows (the two neighbours of mal_neighbors() when
 *       the halo is no wider than their blocks), with no agreement: a bad argument is
 *       the same on every rank and fails there before any message. After it, the halo
 *       row k rows before the block (k = 1 .. halo) holds global row mal_first_row() - k
 *       and the one k rows after its last holds row mal_first_row() + mal_local_rows() +
 *       k - 1; halo rows beyond the grid (before row 0, after the last) are not written,
 *       nor is the halo of a rank holding zero rows. Owned rows are only read. Messages
 *       carry tag MAL_HALO_TAG and count as the application's communication in the
 *       monitor (libmal-pmpi).
 */
MAL_API mal_status_t mal_halo_exchange(mal_array_t *array);

/**
 * @brief Exchange the data of two arrays of the same layout in O(1): double buffering.
 * @param a The first array.
 * @param b The second: another array with the same distribution, global rows, row
 *          length, row size in bytes, halo, layout source (their own split, or the same
 *          matrix's rows) and current layout. Neither may be MAL_READ_MOSTLY.
 * @return MAL_OK; MAL_ERR_ARG naming what differs, or for NULL, the same array twice or
 *         a MAL_READ_MOSTLY array (nothing swapped);
 *         MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 * @note Local: no communication and no copy, whatever the size. The handles exchange
 *       their buffers: afterwards @p a holds the rows @p b held and the other way round
 *       (re-read mal_local_data() of both; first rows and row counts stay), and each
 *       follows every later rebalance and reconfiguration with the rows it holds then.
 *       Every rank of mal_comm() must make the same swaps, as a stencil's loop does:
 *       buffers are shared objects (MPI windows), so the next
 *       mal_rebalance(), mal_expand(), mal_shrink() or reconfiguration of mal_step()
 *       checks that first and fails on every rank with MAL_ERR_MISMATCH, nothing moved,
 *       when the ranks swapped differently; mal_free_array() checks the array it frees
 *       likewise, and mal_finalize() frees every buffer whatever the swaps.
 */
MAL_API mal_status_t mal_swap_arrays(mal_array_t *a, mal_array_t *b);

/** @} */

/**
 * @defgroup mal_csr CSR matrices
 * @brief Row-distributed sparse matrices whose parts follow the nonzeros, and the arrays
 *        aligned to their rows.
 *
 * A matrix is registered empty with mal_alloc_csr() and filled with mal_csr_set_rows().
 * Its row pointer, column indices and values are three registered arrays
 * ("NAME:rowptr", "NAME:colind", "NAME:values") that every rebalance and
 * reconfiguration moves so that each process holds a share of the nonzeros proportional
 * to its weight. Arrays allocated with mal_alloc_array_aligned() follow its rows.
 * @{
 */

/** Column index of a CSR matrix. 32 bits: 4 bytes less per nonzero to store and move
 *  than 64-bit indices; matrices are limited to MAL_COLIND_MAX columns (checked). Row
 *  pointers are 64-bit, so the number of nonzeros is not limited by it. */
typedef int32_t mal_colind_t;
/** The largest number of columns of a matrix. */
#define MAL_COLIND_MAX INT32_MAX

/** Opaque handle of a registered CSR matrix. Owned by the library. */
typedef struct mal_csr mal_csr_t;

/**
 * @brief Register a row-distributed sparse matrix in CSR form, initially with no
 *        nonzero (every row empty, rows split evenly); mal_csr_set_rows() fills it.
 * @param name        Unique among matrices, 1..55 characters, copied. Its three parts
 *                    are registered as the structures "NAME:rowptr", "NAME:colind" and
 *                    "NAME:values", names a mal_alloc_window() call then cannot take;
 *                    they are not returned by mal_find_array().
 * @param global_rows Number of rows (> 0).
 * @param global_cols Number of columns, 1..MAL_COLIND_MAX.
 * @param value_type  Datatype of one value, as for mal_alloc_window(): lower bound 0,
 *                    only its extent is used; the caller keeps ownership.
 * @param[out] csr    The new handle, valid until mal_free_csr(), mal_finalize() or the
 *                    release of this process (MAL_REMOVED).
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (bad name,
 *         sizes or datatype, NULL @p csr); MAL_ERR_EXISTS (the name or one of its part
 *         names is taken); MAL_ERR_MISMATCH; MAL_ERR_NOMEM / MAL_ERR_MPI;
 *         MAL_ERR_UNSUPPORTED (as for mal_alloc_window()); MAL_ERR_REMOTE.
 * @note Collective over mal_comm() with identical arguments except @p csr. The row
 *       pointer, column indices and values each live in buffers like an array's. Every
 *       rebalance and reconfiguration moves the matrix so that each process holds a
 *       share of the nonzeros proportional to its weight (to within one row's
 *       nonzeros): the row pointer slice, column indices and values of the rows that
 *       change owner move one-sidedly like any structure. On a process that joined by
 *       an expansion the call is local and hands back the matrix with its rows in place
 *       (as for mal_alloc_window()).
 */
MAL_API mal_status_t mal_alloc_csr(const char *name, int64_t global_rows,
                                   int64_t global_cols, MPI_Datatype value_type,
                                   mal_csr_t **csr);

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
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (NULL matrix or
 *         needed array, negative counts, rowptr decreasing or not spanning local_nnz, a
 *         column out of range, row counts not summing to the matrix's rows, a new row
 *         layout while arrays are aligned to the matrix); MAL_ERR_MISMATCH (ranks name
 *         different matrices); MAL_ERR_NOMEM / MAL_ERR_MPI; MAL_ERR_REMOTE. The message
 *         names the first offending index. On error the matrix keeps its previous rows
 *         and data.
 * @note Collective over mal_comm(). The data are copied (the caller keeps its arrays)
 *       into new buffers sized for the given layout (with the configured headroom); the
 *       previous ones are freed once the new ones hold the data, so for a moment both
 *       exist. Every local pointer of the matrix (mal_csr_rowptr(), mal_csr_colind(),
 *       mal_csr_values()) becomes invalid, even when the layout stays the same: re-read
 *       them.
 */
MAL_API mal_status_t mal_csr_set_rows(mal_csr_t *csr, int64_t local_rows, int64_t local_nnz,
                                      const int64_t *rowptr, const mal_colind_t *colind,
                                      const void *values);

/**
 * @brief Free a matrix and its buffers.
 * @param csr The matrix to free, or NULL.
 * @return MAL_OK (NULL on every rank is a no-op); MAL_ERR_NOT_INITIALIZED;
 *         MAL_ERR_RELEASED; MAL_ERR_ARG if arrays are still aligned to it (free them
 *         first); MAL_ERR_MISMATCH; MAL_ERR_REMOTE.
 * @note Collective over mal_comm(), like mal_free_array(). The handle and every local
 *       pointer of the matrix become invalid.
 */
MAL_API mal_status_t mal_free_csr(mal_csr_t *csr);

/** @brief Look up a registered matrix by name.
 *  @param name The name it was allocated under.
 *  @return The matrix registered under @p name, or NULL (also before mal_init()).
 *  @note Local. */
MAL_API mal_csr_t *mal_find_csr(const char *name);

/**
 * @brief Local row pointer, rebased: mal_csr_local_rows() + 1 offsets with [0] == 0,
 *        into mal_csr_colind() and mal_csr_values().
 * @param csr The matrix.
 * @return Library-owned, read-only; NULL for a NULL handle. Like the other local pointers
 *         of the matrix it is invalid after the next rebalance, reconfiguration or
 *         mal_csr_set_rows(): re-read it.
 * @note Local.
 */
MAL_API const int64_t *mal_csr_rowptr(const mal_csr_t *csr);

/** @brief Local column indices.
 *  @param csr The matrix.
 *  @return mal_csr_local_nnz() indices, library-owned and read-only, invalidated like
 *          mal_csr_rowptr(); NULL for NULL.
 *  @note Local. */
MAL_API const mal_colind_t *mal_csr_colind(const mal_csr_t *csr);

/** @brief Local values.
 *  @param csr The matrix.
 *  @return mal_csr_local_nnz() elements of the value type, library-owned and writable
 *          (the sparsity pattern is fixed, the values may change between rebalances),
 *          invalidated like mal_csr_rowptr(); NULL for NULL.
 *  @note Local. */
MAL_API void *mal_csr_values(const mal_csr_t *csr);

/** @brief Where a CSR matrix's parts live (all three live alike).
 *  @param matrix The matrix.
 *  @return As mal_memory_name().
 *  @note Local. */
MAL_API const char *mal_csr_memory_name(const mal_csr_t *matrix);

/** @brief First global row held locally.
 *  @param csr The matrix.
 *  @return The row; -1 for NULL.
 *  @note Local; changes with the layout. */
MAL_API int64_t mal_csr_first_row(const mal_csr_t *csr);
/** @brief Rows held locally.
 *  @param csr The matrix.
 *  @return The count; -1 for NULL.
 *  @note Local; changes with the layout. */
MAL_API int64_t mal_csr_local_rows(const mal_csr_t *csr);
/** @brief Nonzeros held locally.
 *  @param csr The matrix.
 *  @return The count; -1 for NULL.
 *  @note Local; changes with the layout. */
MAL_API int64_t mal_csr_local_nnz(const mal_csr_t *csr);
/** @brief Global number of rows.
 *  @param csr The matrix.
 *  @return The count; -1 for NULL.
 *  @note Local. */
MAL_API int64_t mal_csr_global_rows(const mal_csr_t *csr);
/** @brief Global number of columns.
 *  @param csr The matrix.
 *  @return The count; -1 for NULL.
 *  @note Local. */
MAL_API int64_t mal_csr_global_cols(const mal_csr_t *csr);
/** @brief Global number of nonzeros.
 *  @param csr The matrix.
 *  @return The count; -1 for NULL.
 *  @note Local; changes only with mal_csr_set_rows(). */
MAL_API int64_t mal_csr_global_nnz(const mal_csr_t *csr);

/**
 * @brief Allocate a dense block array whose rows always follow a matrix's rows
 *        (vectors of a sparse solver: x, r, p, q on A's layout).
 * @param name    As for mal_alloc_window().
 * @param type    As for mal_alloc_window().
 * @param row_len Elements per row (> 0).
 * @param matrix  The matrix to follow; the array has its number of rows, and
 *                mal_first_row() / mal_local_rows() equal mal_csr_first_row() /
 *                mal_csr_local_rows() at all times (rebalances move it by the matrix's
 *                nnz-weighted row layout; min_rows does not apply to it).
 * @param[out] array The new handle.
 * @return As mal_alloc_window(); MAL_ERR_ARG also for a NULL @p matrix (on a joining
 *         process, a call that does not name the received array's matrix gets
 *         MAL_ERR_MISMATCH).
 * @note Collective over mal_comm() with identical arguments (the same matrix); local on
 *       a joining process that received the array. The local rows start zeroed.
 *       The matrix cannot be freed, nor given a new row layout, while it has followers.
 *       Formerly mal_alloc_window_aligned().
 */
MAL_API mal_status_t mal_alloc_array_aligned(const char *name, MPI_Datatype type,
                                             int64_t row_len, const mal_csr_t *matrix,
                                             mal_array_t **array);

/** @} */

/**
 * @defgroup mal_values Replicated values
 * @brief Small values (a residual, a time step) that joining processes receive.
 * @{
 */

/**
 * @brief Register a value carried to processes that join later (e.g. a residual).
 * @param name   1..63 characters, copied. Registering a name again replaces the entry.
 * @param bytes  Its size, 1 byte .. 1 MiB.
 * @param value  Memory of @p bytes bytes that libmal reads at each expansion (from rank
 *               0) and, on a joining process, overwrites with the carried bytes here. It
 *               stays the caller's and must stay valid until mal_finalize() or a new
 *               registration of the name.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (NULL, bad name,
 *         0 or more than 1 MiB); MAL_ERR_NOMEM; MAL_ERR_MISMATCH on a joining process
 *         when the carried value has another size.
 * @note Local (nothing is sent until an expansion). The iteration number is carried
 *       without registration.
 */
MAL_API mal_status_t mal_register_value(const char *name, void *value, size_t bytes);

/** @} */

/**
 * @addtogroup mal_reconfiguration
 * @{
 */

/** What a reconfiguration did. */
typedef enum {
    MAL_ACTION_NONE = 0, /**< nothing was done (or no reconfiguration yet)     */
    MAL_ACTION_EXPAND,   /**< processes were spawned and merged               */
    MAL_ACTION_SHRINK,   /**< processes were released                          */
    MAL_ACTION_REBALANCE /**< same processes, new weights                      */
} mal_action_t;

/** Figures of the most recent reconfiguration, identical on every rank that took part
 *  (times are the maximum over the ranks, bytes the sum). See @ref mal_last. */
typedef struct {
    mal_action_t action;     /**< what was done (or tried)                          */
    int64_t iteration;       /**< mal_iteration() when it happened                  */
    int procs_before;        /**< processes before it                               */
    int procs_after;         /**< equals procs_before when it failed                */
    int64_t bytes_moved;     /**< bytes that changed owner, all structures          */
    double spawn_seconds;    /**< spawning and merging (expand)                     */
    double process_seconds;  /**< changing the process set: spawning and merging
                                  (expand, = spawn_seconds), splitting the released
                                  processes off (shrink); 0 for a rebalance           */
    double window_seconds;   /**< creating the buffers on the new communicator      */
    double redist_seconds;   /**< moving the data, including agreeing on success    */
    double total_seconds;    /**< the whole reconfiguration                         */
    mal_status_t status;     /**< MAL_OK, or why it was abandoned                   */
    mal_spawn_mode_t spawn_mode; /**< how processes were spawned (expand only)      */
    int pooled;              /**< processes taken from the pool (expand)            */
    int spawned;             /**< processes spawned for it (expand)                 */
    bool async;              /**< asynchronous: spawned in the background           */
    double background_seconds; /**< asynchronous: from the start of the background
                                  phase to the switch (the old processes iterated)  */
    double switch_seconds;   /**< asynchronous: the switch in mal_step(), the part of
                                  the expansion the application waited for; equals
                                  total_seconds for a synchronous one              */
    int64_t bytes_ahead;     /**< asynchronous: of bytes_moved, the MAL_READ_MOSTLY
                                  rows copied in the background                    */
} mal_reconfig_stats_t;

/**
 * @brief End of one iteration: count it and carry out what the plan says now, or, without
 *        a plan, what the policy decides at the end of a sampling interval.
 * @return MAL_CONTINUE (nothing changed); MAL_RECONFIGURED (processes were added or
 *         removed, or the layout changed: re-read mal_comm(), mal_local_data(),
 *         mal_first_row() and mal_local_rows()); MAL_REMOVED (this process was released:
 *         leave the loop and call mal_finalize(); every later mal_step() returns it
 *         again); MAL_ERR_NOT_INITIALIZED. A negative code (MAL_ERR_SPAWN,
 *         MAL_ERR_TIMEOUT, MAL_ERR_LIMIT for an expansion beyond the slots of the job's
 *         allocation, MAL_ERR_NOMEM, ...) means a planned or decided
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
 *       does not communicate. A reconfiguration it carries out updates
 *       mal_last_reconfig() and, for a successful rebalance, mal_last_rebalance().
 *       With mal_config_t.async, an expansion that needs new processes starts in the
 *       background and mal_step() returns MAL_CONTINUE; while it runs every mal_step()
 *       agrees in one small MPI_Allreduce whether every rank's background phase is
 *       done, and the plan and the policy wait; the one that finds it done switches and
 *       returns MAL_RECONFIGURED. An asynchronous expansion abandoned in the background
 *       (spawn failed or timed out) is reported (report, summary, stderr,
 *       mal_last_reconfig()) and mal_step() returns MAL_CONTINUE. With
 *       mal_config_t.pool, a process a plan or the policy releases parks inside
 *       mal_step() (see mal_shrink()).
 */
MAL_API mal_status_t mal_step(void);

/**
 * @brief Move every MAL_BLOCK array and every matrix to the block layout given by
 *        @p weights.
 * @param weights One finite, non-negative weight per rank of mal_comm(), at least one
 *                positive; identical on every rank. Rank r receives a share of each
 *                matrix's nonzeros proportional to weights[r] (to within one row's
 *                nonzeros; see mal_alloc_csr()), with its aligned arrays (min_rows
 *                does not apply to these), and a share of each other array's rows:
 *                boundaries are the rounded cumulative shares, so counts sum exactly to
 *                the total, boundaries are monotone and a zero weight gets zero rows.
 *                With min_rows = m > 0 in the configuration, each positive-weight rank
 *                first receives m rows and the rest is shared by weight (MAL_ERR_ARG if
 *                the rows cannot cover that).
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (NULL,
 *         negative, NaN, infinite or all-zero weights); MAL_ERR_MISMATCH (weights or
 *         method differ between ranks); MAL_ERR_UNSUPPORTED (the method cannot reach an
 *         array's memory, see mal_set_redist()); MAL_ERR_NOMEM / MAL_ERR_MPI;
 *         MAL_ERR_REMOTE. On any error every array keeps its old layout, data and local
 *         pointer; the only thing a failed rebalance may have changed is a spare buffer
 *         released while growing it.
 * @note Collective over mal_comm(). Invalidates local data pointers, first rows and row
 *       counts of arrays and matrices: re-read them (mal_comm() stays). A rebalance
 *       that leaves the layout unchanged moves nothing and creates no buffer. Each
 *       rank's part sits inside a buffer with headroom on both sides: when every rank's
 *       new part fits around the rows it keeps, those rows are not touched at all and
 *       only incoming rows are written; otherwise all parts move to the second buffer
 *       (kept rows copied with memcpy, never through MPI), which is grown collectively
 *       only if some part outgrows it. On success it updates mal_last_rebalance() (not
 *       mal_last_reconfig(), which records what mal_step() carries out).
 */
MAL_API mal_status_t mal_rebalance(const double *weights);

/**
 * @brief Add @p count processes now (what a "+N" plan entry does).
 * @param count   Processes to spawn, >= 1.
 * @param mode    MAL_SPAWN_PER_CALL, MAL_SPAWN_BATCHED or MAL_SPAWN_DEFAULT (config).
 * @param weights One weight per process of the new set (old ranks first, new ones
 *                last), as for mal_rebalance(); NULL for an even split.
 * @return MAL_RECONFIGURED; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG;
 *         MAL_ERR_SPAWN (program missing or not executable, no free slot, bad host, a
 *         spawned process that could not receive or read what it is sent to join);
 *         MAL_ERR_TIMEOUT (the MPI runtime lost the new processes' start at every
 *         attempt: each is bounded by MAL_RECONF_TIMEOUT seconds, default 60, read when
 *         the program starts); MAL_ERR_LIMIT (the new processes would go beyond the
 *         slots of the job's allocation: Slurm's, MAL_HOSTFILE's or MPI_UNIVERSE_SIZE;
 *         nothing is spawned); MAL_ERR_NOMEM / MAL_ERR_MPI; MAL_ERR_REMOTE;
 *         MAL_ERR_MISMATCH when the arguments differ between ranks; MAL_ERR_UNSUPPORTED
 *         once SHMEM was started in this process (its set of PEs is fixed at start), or
 *         for windows over spawned processes that this MPI library would hang on. On
 *         error the application keeps its processes, layout and data; spawned processes
 *         exit.
 * @note Collective over mal_comm(). New processes run main() from the start and join
 *       in mal_init(); they get the ranks after the existing ones. Every array and
 *       matrix is moved to its new layout in buffers created on the new communicator:
 *       the old owners write the newcomers' rows with MPI_Put (method rma/rma-get) or
 *       the configured baseline moves them over the new communicator. On success
 *       mal_comm() and every local pointer, first row and row count are invalid:
 *       re-read them. Updates mal_last_reconfig(), successful or not.
 *       Parked processes (mal_config_t.pool, prefetch) are taken first, the oldest
 *       first or those on the hosts the policy placed the expansion on; only the rest
 *       are spawned. This call is always synchronous (mal_config_t.async applies to the
 *       expansions a plan or the policy decides in mal_step()); refused
 *       (MAL_ERR_UNSUPPORTED) while an asynchronous expansion runs.
 */
MAL_API mal_status_t mal_expand(int count, mal_spawn_mode_t mode, const double *weights);

/**
 * @brief Release processes now (what a "-N" or "-\@R:R" plan entry does).
 * @param count   Number of processes to release, 1 .. size-1.
 * @param ranks   The ranks to release (count distinct ranks of mal_comm(), initial ones
 *                allowed), or NULL for the last @p count ranks.
 * @param weights One weight per remaining process (in their new rank order), or NULL
 *                for an even split.
 * @return MAL_RECONFIGURED on the remaining processes, MAL_REMOVED on the released
 *         ones; errors as for mal_expand() (nothing changes on error).
 * @note Collective over mal_comm(). The remaining processes pull the released ranks'
 *       rows before anyone leaves; survivors keep their relative order. On the
 *       remaining processes mal_comm() and every local pointer, first row and row count
 *       are invalid: re-read them. On a released process every handle and local
 *       pointer is invalid, mal_comm() is MPI_COMM_NULL, and only mal_finalize() (and
 *       the local getters) remain. Updates mal_last_reconfig(), successful or not.
 *       With mal_config_t.pool, a released process does not return at once: it parks
 *       in this call (no CPU) until an expansion takes it back (MAL_RECONFIGURED, its
 *       handles valid, its structures holding their new parts) or it is released for
 *       good (MAL_REMOVED, as above). A shrink then refills the pool to
 *       mal_config_t.prefetch. Refused (MAL_ERR_UNSUPPORTED) while an asynchronous
 *       expansion runs, like mal_expand() and mal_rebalance().
 */
MAL_API mal_status_t mal_shrink(int count, const int *ranks, const double *weights);

/** The process pool as this process knows it (see mal_config_t.pool). */
typedef struct {
    int active;              /**< processes of mal_comm() (0 on a parked process)     */
    int parked;              /**< processes parked in the pool, reusable              */
    int64_t spawned;         /**< processes spawned since mal_init(), prespawn included */
    int64_t reused;          /**< processes taken from the pool by expansions         */
    int64_t released;        /**< processes released for good since mal_init()        */
    bool async_pending;      /**< an asynchronous expansion is under way              */
} mal_pool_info_t;

/**
 * @brief The pool's counts: active and parked processes, spawns and reuses.
 * @param[out] info Where to write them.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_ARG for NULL.
 * @note Local.
 */
MAL_API mal_status_t mal_pool_info(mal_pool_info_t *info);

/**
 * @brief Release parked processes for good: they leave their parked call with
 *        MAL_REMOVED, and a spawned one ends, freeing its core.
 * @param count Processes to release, the most recently parked first; -1 for all.
 * @return MAL_OK; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED; MAL_ERR_ARG (count below
 *         -1 or above the parked count); MAL_ERR_MISMATCH (@p count differs between
 *         ranks).
 * @note Collective over mal_comm().
 */
MAL_API mal_status_t mal_pool_release(int count);

/** What the most recent mal_rebalance() did on the calling process. */
typedef struct {
    mal_redist_t method;     /**< method used                                      */
    int64_t bytes_received;  /**< bytes this rank pulled from other ranks           */
    int64_t bytes_sent;      /**< bytes other ranks pulled from this rank           */
    int64_t bytes_kept;      /**< bytes that stayed on this rank                    */
    int windows_created;     /**< buffers created by this rebalance (0 when it fit) */
    bool layout_changed;     /**< false when the new layout equalled the old one    */
    bool in_place;           /**< every structure that moved kept its staying rows
                                  where they were (no local copy, no buffer swap)   */
    double seconds;          /**< wall time of the call on this rank                */
} mal_rebalance_stats_t;

/**
 * @brief Statistics of the most recent successful mal_rebalance() on this process
 *        (called directly, or by mal_step() for a plan or the policy). See
 *        @ref mal_last.
 * @param[out] stats Where to write them.
 * @return MAL_ERR_ARG for NULL, MAL_ERR_NOT_INITIALIZED, MAL_ERR_RELEASED, else MAL_OK
 *         (all zero but the method before the first rebalance). Local.
 */
MAL_API mal_status_t mal_last_rebalance(mal_rebalance_stats_t *stats);

/**
 * @brief Figures of the most recent reconfiguration that mal_step(), mal_expand() or
 *        mal_shrink() carried out (expand, shrink, or a plan's or the policy's
 *        rebalance), successful or not; a direct mal_rebalance() call does not change
 *        them. See @ref mal_last.
 * @param[out] stats Where to write them.
 * @return MAL_ERR_ARG for NULL, MAL_ERR_NOT_INITIALIZED, else MAL_OK (action
 *         MAL_ACTION_NONE before the first). Local; also on a released process.
 */
MAL_API mal_status_t mal_last_reconfig(mal_reconfig_stats_t *stats);

/** @} */

/**
 * @defgroup mal_monitoring Monitoring, model and decisions
 * @brief What the monitor measured, what the prediction model expected of the most
 *        recent reconfiguration, and what the policy decided.
 * @{
 */

/**
 * What the monitor measured on this process since mal_init(). An iteration is the time
 * between two mal_step() calls, mal_step() itself excluded. Communication is the time in
 * the application's MPI calls, counted by PMPI interposition when the program links the
 * opt-in wrapper library libmal-pmpi (see mal_pmpi.h: CMake mal::pmpi, by hand -lmal-pmpi
 * -lmal); without it communication is 0 and the whole iteration counts as computation.
 * Calls libmal makes itself are not counted. Waiting for a slower rank inside a collective
 * counts as communication; the rest of the iteration is computation.
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
    /** @var mal_monitor_t::last_wall
     *  The latest iteration's wall seconds. */
    /** @var mal_monitor_t::last_cpu
     *  The latest iteration's CPU seconds. */
    /** @var mal_monitor_t::last_comm
     *  The latest iteration's communication seconds. */
    /** @var mal_monitor_t::last_work
     *  The latest iteration's work units. */
    double last_wall, last_cpu, last_comm, last_work;
    bool in_grace;          /**< the latest iteration was in a grace period          */
    int64_t load_changes;   /**< load changes detected: the computation per work unit
                                 left [best / 1.25, best * 1.25] in 2 iterations in a
                                 row, best being its minimum since the last change   */
} mal_monitor_t;

/** @brief Copy this process's monitor totals.
 *  @param[out] m Where to write them.
 *  @return MAL_OK; MAL_ERR_ARG for NULL; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 *  @note Local. */
MAL_API mal_status_t mal_monitor_read(mal_monitor_t *m);

/** @brief The hardware counter the monitor uses.
 *  @return "PAPI_FP_OPS", "PAPI_DP_OPS" or "PAPI_TOT_INS", or "none (reason)" when PAPI
 *          cannot count here (then computing power comes from reported work). A string
 *          owned by the library, valid until mal_finalize(); never NULL.
 *  @note Local. */
MAL_API const char *mal_monitor_counter(void);

/**
 * @brief Report work done by this process in the current iteration (rows, nonzeros,
 *        floating-point operations: any unit, the same on every rank). Calls add up.
 * @param units The work done, >= 0.
 * @return MAL_OK; MAL_ERR_ARG for a negative, NaN or infinite value;
 *         MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 * @note Local. Computing power is work per second of computation (Flex-MPI's "counts"
 *       mode). Without a hardware counter and without this call, the rows this rank
 *       holds of its largest block array are the work of each iteration.
 */
MAL_API mal_status_t mal_set_work(double units);

/** The model's prediction of the sampling interval that follows a reconfiguration, and
 *  (once that interval has ended) what it measured. Times are seconds over the whole
 *  interval: computation and communication are the slowest rank's computation and the
 *  rest of the slowest rank's wall time; process and redistribution are the
 *  reconfiguration's own (process_seconds, and redist_seconds + window_seconds). */
typedef struct {
    int64_t iteration;        /**< when the reconfiguration happened (0: none yet)   */
    mal_action_t action;      /**< the reconfiguration predicted                     */
    /** @var mal_prediction_t::procs_before
     *  Processes before the reconfiguration. */
    /** @var mal_prediction_t::procs_after
     *  Processes after the reconfiguration. */
    int procs_before, procs_after;
    int64_t interval;         /**< iterations of the interval predicted              */
    double lambda;            /**< communication correction used (eqs. 4-5)          */
    /** @var mal_prediction_t::comp
     *  Predicted computation seconds. */
    /** @var mal_prediction_t::comm
     *  Predicted communication seconds. */
    /** @var mal_prediction_t::process
     *  Predicted process-change seconds. */
    /** @var mal_prediction_t::redist
     *  Predicted redistribution seconds. */
    double comp, comm, process, redist;
    bool measured;            /**< the measured fields below are filled              */
    /** @var mal_prediction_t::comp_measured
     *  Measured computation seconds (valid when @ref measured). */
    /** @var mal_prediction_t::comm_measured
     *  Measured communication seconds. */
    /** @var mal_prediction_t::process_measured
     *  Measured process-change seconds. */
    /** @var mal_prediction_t::redist_measured
     *  Measured redistribution seconds. */
    double comp_measured, comm_measured, process_measured, redist_measured;
} mal_prediction_t;

/** @brief The prediction made at the most recent reconfiguration that could be predicted
 *  (one sampling interval of measurements before it) and what followed. A process that
 *  joined in it has none. See @ref mal_last.
 *  @param[out] p Where to write it.
 *  @return MAL_OK; MAL_ERR_ARG for NULL; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 *  @note Local. */
MAL_API mal_status_t mal_last_prediction(mal_prediction_t *p);

/** The policy's most recent decision (see mal_config_t.policy), made on rank 0 at the
 *  end of a sampling interval and known to every rank. Times are seconds per sampling
 *  interval, predicted by the model. */
typedef struct {
    int64_t iteration;        /**< when it was made (0: none yet)                     */
    mal_action_t action;      /**< MAL_ACTION_NONE when the set stays as it is         */
    /** @var mal_decision_t::procs_before
     *  Processes when it was made. */
    /** @var mal_decision_t::procs_after
     *  Processes after the action chosen. */
    int procs_before, procs_after;
    double goal;              /**< what the objective allows the next interval (0: no
                                   objective)                                         */
    double current;           /**< predicted with no action                            */
    /** @var mal_decision_t::comp
     *  Predicted computation seconds of the action chosen. */
    /** @var mal_decision_t::comm
     *  Predicted communication seconds of the action chosen. */
    /** @var mal_decision_t::process
     *  Predicted process-change seconds of the action chosen. */
    /** @var mal_decision_t::redist
     *  Predicted redistribution seconds of the action chosen. */
    double comp, comm, process, redist;
    char reason[256];         /**< why, in one sentence                                */
} mal_decision_t;

/** @brief The policy's most recent decision. See @ref mal_last.
 *  @param[out] d Where to write it.
 *  @return MAL_OK; MAL_ERR_ARG for NULL; MAL_ERR_NOT_INITIALIZED; MAL_ERR_RELEASED.
 *  @note Local. */
MAL_API mal_status_t mal_last_decision(mal_decision_t *d);

/** @} */

/**
 * @defgroup mal_deprecated Deprecated aliases
 * @brief The names of the previous release, kept for one release.
 *
 * Each is a macro for its new name (see @ref mal_names), so old sources compile
 * unchanged and call the same function; error messages name the new call. They will be
 * removed in the next release: replace each (whole words) by the name it stands for.
 * Define MAL_NO_DEPRECATED before including mal.h to check that a program no longer
 * uses them.
 * @{
 */
#ifndef MAL_NO_DEPRECATED
/** @deprecated Use mal_is_initialized(). */
#define mal_initialized mal_is_initialized
/** @deprecated Use mal_is_initial_process(). */
#define mal_is_initial mal_is_initial_process
/** @deprecated Use mal_alloc_array_weighted(). */
#define mal_alloc_window_weighted mal_alloc_array_weighted
/** @deprecated Use mal_alloc_array_aligned(). */
#define mal_alloc_window_aligned mal_alloc_array_aligned
/** @deprecated Use mal_free_array(). */
#define mal_free_window mal_free_array
/** @deprecated Use mal_find_array(). */
#define mal_find_window mal_find_array
/** @deprecated Use mal_buffer_count(). */
#define mal_window_count mal_buffer_count
#endif
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* MAL_H */
