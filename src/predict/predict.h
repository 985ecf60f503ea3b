/* The computational prediction model (CPM) of Flex-MPI §4.5, pure: numbers in, numbers
 * out, no MPI. Private to libmal (never installed); the engine, mal-calibrate, the
 * validation benchmark and (later) the simulator use it.
 *
 * T_interval = T_computation + T_communication + T_process + T_redistribution   (eq. 2)
 */
#ifndef MAL_PREDICT_H
#define MAL_PREDICT_H

#include "mal_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- machine parameters (the calibration file) ------------------------------------- */

/* Link classes, states and executors of predict_params_t.redist_bw. The executors are
 * in the order of mal_redist_t from MAL_REDIST_RMA (rma, alltoallv, p2p, rma-get). */
enum { PREDICT_LINK_HOST, PREDICT_LINK_NET, PREDICT_LINKS };
enum { PREDICT_WARM, PREDICT_COLD, PREDICT_STATES };
enum { PREDICT_EXECUTORS = 4 };

/* What mal-calibrate measures. Times in seconds, sizes in bytes. */
typedef struct {
    double alpha;               /* Hockney latency of one message                       */
    double beta;                /* Hockney transfer time per byte                       */
    double gamma;               /* reduction arithmetic per byte                        */
    double get_bandwidth;       /* bytes/s one rank copies one-sided, all ranks at once,
                                 * between buffers that have exchanged data before      */
    double cold_get_bandwidth;  /* the same for the first transfer between buffers that
                                 * never did (a window's first epoch maps the peer's
                                 * memory page by page; direct memory maps nothing)     */
    double get_latency;         /* per one-sided operation (one get or put)             */
    double copy_bandwidth;      /* bytes/s of a local memcpy                            */
    double epoch_seconds;       /* fixed cost of one redistribution (epochs, agreement)  */
    double window_seconds;      /* per window created                                   */
    double window_byte_seconds; /* per byte of window created (allocation, first epoch) */
    double fault_byte_seconds;  /* per byte of memory a reconfiguration maps, which the
                                 * move writing it faults in 4 KiB page by page (the
                                 * application's own allocation is populated at once,
                                 * in huge pages: window_byte_seconds)                */
    double spawn_seconds;       /* per process spawned and merged alone (eq. 6)         */
    double spawn_host_seconds;  /* of spawn_seconds, the fixed cost of the spawn call and
                                 * its merge, which an expansion pays once per host its
                                 * new processes start on (the engine spawns once per
                                 * host); 0: every process priced alone                */
    double remove_seconds;      /* per process released (eq. 7)                         */
    double pool_wake_seconds;   /* per process taken from the pool: it joins the active
                                 * set with no spawn, MPI_Init, merge nor new memory    */
    double async_slowdown;      /* iteration time of the old set while an expansion runs
                                 * in the background, over the undisturbed one (>= 1;
                                 * 1.5: iterations 50% slower meanwhile)                */
    int cores;                  /* cores of the host the calibration ran on             */
    /* What each executor moved per second in a rebalance, by link class (pairs of one
     * host, pairs across hosts), state (warm: buffers that exchanged data before; cold:
     * the first move after allocation, everything inside) and executor; the automatic
     * method (MAL_REDIST_AUTO) takes the fastest. 0: not measured.                    */
    double redist_bw[PREDICT_LINKS][PREDICT_STATES][PREDICT_EXECUTORS];
} predict_params_t;

/* The documented defaults (mal-calibrate on a 2-core development VM), used when no
 * calibration file is given. */
void predict_params_default(predict_params_t *p);
/* The executor (0..PREDICT_EXECUTORS-1, see redist_bw) with the highest bandwidth for
 * `link` and `state`; the first on a tie; where none of the file's is measured, the
 * documented defaults' choice. */
int predict_fastest_executor(const predict_params_t *p, int link, int state);
/* The name of calibration key (link, state, executor): "redist_host_cold_rma-get". */
const char *predict_redist_key(int link, int state, int executor);

/* Read a calibration file: "key = value" lines, '#' starts a comment, blank lines are
 * ignored; every key of predict_params_t must appear exactly once, with a finite number
 * (>= 0; > 0 for the bandwidths; >= 1 for async_slowdown; cores an integer >= 1), except
 * the optional keys, which files written before they existed lack: cold_get_bandwidth
 * (get_bandwidth when absent), spawn_host_seconds (0 when absent: each process priced as
 * spawned alone, as before the key), pool_wake_seconds, async_slowdown and
 * fault_byte_seconds (the defaults). Returns MAL_OK; or MAL_ERR_ARG,
 * leaving *out unchanged and writing to err (errlen bytes; err may be NULL) a message
 * naming the file and line:
 * "FILE:LINE: unknown key 'x'", "FILE:LINE: 'alpha' is not a number: 'abc'",
 * "FILE:LINE: 'beta' appears twice (first on line 3)", "FILE:LINE: expected 'key =
 * value'", "FILE: missing key 'gamma'" (a partial file), "FILE: cannot open: ...".
 * predict_params_parse does the same for an open stream (name is used in messages
 * only). */
mal_status_t predict_params_read(const char *path, predict_params_t *out, char *err,
                                 size_t errlen);
mal_status_t predict_params_parse(FILE *in, const char *name, predict_params_t *out,
                                  char *err, size_t errlen);

/* Write every key, one per line with a comment giving its unit, in a form
 * predict_params_read reads back to the same values (%.17g). `header` (may be NULL) is
 * written first as '#' comment lines. Returns MAL_OK, or MAL_ERR_ARG when the stream
 * `out` reports a write error (errno says which). */
mal_status_t predict_params_write(FILE *out, const predict_params_t *p, const char *header);

/* ---- communication (Hockney model over MPICH's algorithms) ------------------------- */

/* Operations the monitor tells apart. Bytes per call are, by operation:
 * SEND: the message (a send, a receive or a sendrecv half, counted once per message);
 * BARRIER: 0; BCAST, REDUCE, ALLREDUCE: the buffer; ALLGATHER, GATHER, SCATTER: all
 * the gathered (scattered) bytes together; ALLTOALL: the bytes one process sends. */
typedef enum {
    PREDICT_OP_SEND = 0,
    PREDICT_OP_BARRIER,
    PREDICT_OP_BCAST,
    PREDICT_OP_REDUCE,
    PREDICT_OP_ALLREDUCE,
    PREDICT_OP_ALLGATHER,
    PREDICT_OP_GATHER,
    PREDICT_OP_SCATTER,
    PREDICT_OP_ALLTOALL,
    PREDICT_OP_COUNT
} predict_op_t;

/* Name of an operation ("send", "allreduce", ...); "?" when out of range. */
const char *predict_op_name(predict_op_t op);

/* Cost of one call with p processes and n bytes, from the cost formulas of the
 * algorithms MPICH uses (Thakur, Rabenseifner, Gropp 2005), with L = ceil(log2 p):
 *  SEND       alpha + n beta                     (also with p = 1: a self message)
 *  BARRIER    L alpha                            (dissemination)
 *  BCAST      n < 12 KiB or p < 8: L (alpha + n beta)                    (binomial)
 *             else (L + p - 1) alpha + 2 (p-1)/p n beta    (scatter + ring allgather)
 *  REDUCE     n <= 2 KiB: L (alpha + n beta + n gamma)                    (binomial)
 *             else 2 L alpha + 2 (p-1)/p n beta + (p-1)/p n gamma      (Rabenseifner)
 *  ALLREDUCE  n <= 2 KiB: L (alpha + n beta + n gamma)           (recursive doubling)
 *             else 2 L alpha + 2 (p-1)/p n beta + (p-1)/p n gamma      (Rabenseifner)
 *  ALLGATHER  n < 80 KiB: L alpha + (p-1)/p n beta          (recursive doubling/Bruck)
 *             else (p-1) alpha + (p-1)/p n beta                                (ring)
 *  GATHER, SCATTER  L alpha + (p-1)/p n beta                                (binomial)
 *  ALLTOALL   (p-1) (alpha + n/p beta)                                      (pairwise)
 * Every collective costs 0 with p <= 1. Negative n counts as 0. */
double predict_op_cost(const predict_params_t *m, predict_op_t op, int p, double bytes);

/* What an application communicated, per iteration on one process: calls of each
 * operation and their mean bytes per call (see predict_op_t). */
typedef struct {
    double calls[PREDICT_OP_COUNT];
    double bytes[PREDICT_OP_COUNT];
} predict_comm_profile_t;

/* Hockney time of `iterations` iterations of the profile with p processes: the sum over
 * operations of calls * predict_op_cost(op, p, bytes). Message sizes are assumed not to
 * depend on p (the examples exchange whole vectors and scalars). */
double predict_comm_model(const predict_params_t *m, const predict_comm_profile_t *per_iter,
                          int p, double iterations);

/* The correction of eqs. 4-5: lambda = real / model of the previous interval, so that
 * model * lambda reproduces what was measured; 1 when either is not positive (no
 * communication to learn from). (The paper prints eq. 4 with estimated / real, which
 * would amplify the error it means to remove; the ratio used here corrects it.) */
double predict_lambda(double model_prev, double real_prev);

/* ---- computation (eq. 3) ------------------------------------------------------------ */

/* Linear extrapolation (least squares over the n values, oldest first) of the next value
 * of a regular series: the work of the next interval from the past ones. n == 1 returns
 * that value; n <= 0 returns 0. Never negative. */
double predict_extrapolate(const double *history, int n);

/* Computing power a process gets when `procs` processes share `cores` cores of a host:
 * core_power * min(1, cores / procs); cores < 1 counts as 1. */
double predict_shared_power(double core_power, int procs, int cores);

/* eq. 3 for unequal parts: the computation ends when the slowest process ends,
 * max over i of work[i] / power[i] (parts with no work are skipped; a part with work and
 * no power gives +infinity). With work proportional to power it equals
 * sum(work) / sum(power), the paper's form. */
double predict_comp(int n, const double *work, const double *power);

/* ---- process creation and removal (eqs. 6-7) ---------------------------------------- */

double predict_spawn(const predict_params_t *m, int nprocs);
double predict_remove(const predict_params_t *m, int nprocs);

/* Processes added by an expansion of `nprocs` of which `pooled` (clamped to 0..nprocs)
 * come from the pool: the s = nprocs - pooled others are spawned in c spawn calls (one
 * per run of them placed on one host, one per process in per-call mode: `hosts`,
 * clamped to 1..s), the pooled ones only woken:
 * c h + s (spawn_seconds - h) + pooled pool_wake_seconds,
 * with h = min(spawn_host_seconds, spawn_seconds), the call's share of a lone spawn. */
double predict_grow(const predict_params_t *m, int nprocs, int pooled, int hosts);

/* ---- an expansion on the application's critical path -------------------------------- */

/* What an expansion does, for predict_expand. */
typedef struct {
    int procs;           /* processes added                                           */
    int pooled;          /* of them, taken from the pool (clamped to 0..procs)          */
    int hosts;           /* hosts the spawned ones start on (spawn calls; < 1: one)     */
    bool async;          /* asynchronous (mal_config_t.async); only an expansion that
                          * spawns (procs > pooled) runs in the background, one the pool
                          * serves whole is synchronous                               */
    double populate;     /* seconds the spawned processes need to create and populate
                          * their memory (predict_redist's window terms); nothing when
                          * every process comes from the pool, whose memory is kept   */
    double move;         /* seconds of moving the data: predict_redist with no window
                          * (the epoch, the communicator swap, the copies)           */
    double read_mostly;  /* of move's copies (move - epoch_seconds), the share of
                          * MAL_READ_MOSTLY structures, in [0, 1]                     */
} predict_expand_t;

/* What it costs the application. */
typedef struct {
    double background;   /* wall seconds of the background phase (stretched by the
                          * slowdown: it shares the cores); 0 when synchronous        */
    double switch_seconds; /* what mal_step waits for: synchronous, everything;
                          * asynchronous, the switch = epoch_seconds + the copies of the
                          * data that is not read-mostly                              */
    double process;      /* eq. 2's process term: synchronous, predict_grow;
                          * asynchronous, its share of the background's slowdown      */
    double redist;       /* eq. 2's redistribution term: synchronous, populate + move;
                          * asynchronous, the switch + the slowdown's share of the
                          * background's population and read-mostly copies            */
} predict_expand_cost_t;

/* Synchronous:  process = G, redist = populate + move, switch = G + populate + move,
 *               background = 0, with G = predict_grow(procs, pooled, hosts).
 * Asynchronous: the background's work A = G + populate + (move - epoch) read_mostly
 *               shares the cores with the old set, whose iterations run async_slowdown
 *               (s) times slower meanwhile, and stretches alike: background = A s wall
 *               seconds, in which the application loses A s (1 - 1/s) = A (s - 1)
 *               seconds of iterations; switch = epoch + (move - epoch) (1 - read_mostly);
 *               process = G (s - 1), redist = switch + (A - G) (s - 1).
 *               process + redist is the stall either way.
 * populate is counted only when some process is spawned; s < 1 counts as 1, a
 * read_mostly outside [0, 1] as the nearest bound, move below epoch as epoch. */
predict_expand_cost_t predict_expand(const predict_params_t *m, const predict_expand_t *x);

/* ---- redistribution of a transfer plan (one-sided) ---------------------------------- */

/* Who copies the rows of a segment in the one-sided executors. */
typedef enum {
    PREDICT_RMA_SPLIT = 0, /* destination pulls, source pushes, shares by
                              partition_push_rows (method rma)                     */
    PREDICT_RMA_PULL,      /* destination gets everything (rma-get, shrink)         */
    PREDICT_RMA_PUSH       /* source puts everything (expansion)                    */
} predict_rma_mode_t;

/* Copy work of one rank in a redistribution. */
typedef struct {
    int64_t remote_bytes; /* bytes this rank moves with gets and puts           */
    int64_t ops;          /* gets and puts it issues                            */
    int64_t local_bytes;  /* bytes it copies locally (memcpy); set by the caller  */
    int64_t cold_bytes;   /* of remote_bytes, those between buffers that never
                           * exchanged data before (set by the caller)          */
    int64_t net_bytes;    /* of remote_bytes, those between parts on different
                           * hosts (predict_plan_load_hosts)                    */
    int64_t net_cold_bytes; /* of net_bytes, the cold ones (set by the caller)  */
} predict_load_t;

/* Add to load[0..nparts) the work of moving one structure of `row_bytes`-byte rows from
 * old_bounds to new_bounds (nparts + 1 entries each, same nparts: leavers and joiners
 * are empty parts), executed in `mode`: for each segment of partition_plan_recv, the
 * rank that copies a share gets its bytes and one op (a share of 0 rows costs nothing).
 * Rows that stay on their rank are not counted (whether they need a local copy is the
 * caller's knowledge). `load` is accumulated, not cleared, so several structures add up.
 * Returns MAL_OK; MAL_ERR_ARG for nparts < 1, MAL_ERR_NOMEM when its scratch arrays
 * cannot be allocated (load is then unchanged). */
mal_status_t predict_plan_load(const int64_t *old_bounds, const int64_t *new_bounds,
                               int nparts, int64_t row_bytes, predict_rma_mode_t mode,
                               predict_load_t *load);
/* The same, where part r runs on host `host[r]` (any value naming it; NULL: one host):
 * the bytes a rank copies to or from a part on another host also go to its net_bytes. */
mal_status_t predict_plan_load_hosts(const int64_t *old_bounds, const int64_t *new_bounds,
                                     int nparts, int64_t row_bytes, predict_rma_mode_t mode,
                                     const double *host, predict_load_t *load);
/* What one rank copies per second across hosts, warm or cold (PREDICT_WARM,
 * PREDICT_COLD): the fastest executor's throughput across hosts in redist_bw (one rank
 * per host, the link's), the documented defaults' where the file's is not measured. */
double predict_net_bandwidth(const predict_params_t *m, int state);

/* Time of a redistribution: epoch_seconds + windows * window_seconds + window_bytes *
 * window_byte_seconds + the copy time, where rank r needs
 * t_r = ops_r get_latency + (remote_bytes_r - cold_bytes_r) / get_bandwidth
 *       + cold_bytes_r / cold_get_bandwidth + local_bytes_r / copy_bandwidth
 * for the bytes within one host, and the net bytes at predict_net_bandwidth (warm ones
 * and cold ones each at theirs)
 * and at most `cores` ranks copy at once: copy time = max(max_r t_r, sum_r t_r / cores).
 * `windows` and `window_bytes` are what the busiest rank creates. */
double predict_redist(const predict_params_t *m, int nparts, const predict_load_t *load,
                      int windows, int64_t window_bytes);

/* ---- one interval ------------------------------------------------------------------- */

/* The four terms of eq. 2 for one sampling interval, seconds. */
typedef struct {
    double comp, comm, process, redist;
} predict_interval_t;

/* comp + comm + process + redist. */
double predict_total(const predict_interval_t *t);

/* Relative error of a prediction, (predicted - measured) / measured; 0 when both are 0,
 * +-infinity when only measured is 0. */
double predict_rel_error(double predicted, double measured);

#endif /* MAL_PREDICT_H */
