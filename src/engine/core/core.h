/* The core layer (core/): error recording and messages, agreement over a communicator,
 * names, weights, hosts and the settings every later layer reads. It uses only the pure
 * modules (src/policy, src/predict) and include/. Private, never installed. */
#ifndef MAL_CORE_H
#define MAL_CORE_H

#include "allocation.h"
#include "mal.h"
#include "policy.h"
#include "predict.h"
#include "settings.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    bool pool;                  /* released processes park, reusable               */
    int prefetch;               /* processes kept parked by prespawning             */
    bool async;                 /* expansions that spawn run in the background      */
    policy_config_t policy;
    avail_t avail;
    int64_t avail_mtime_ns;     /* the file's modification time when `avail` was read
                                 * (the decider reads it again when it changes)      */
    /* What the job may grow into (procs/room.c): the allocation's hosts and slots, or
     * only a number of slots (MPI_UNIVERSE_SIZE: no hosts); slots 0 for no limit. */
    alloc_t room;
    char *room_source;          /* where the limit comes from, for notices; NULL none */
    bool room_unconfirmed;      /* MPI_UNIVERSE_SIZE while oversubscription is not
                                 * known: probed before an expansion is refused      */
    /* Returning emptied nodes to Slurm (procs/release.c, MAL_RELEASE_NODES). */
    bool release_nodes;         /* the setting, off for good after a failure          */
    bool learn;                 /* MAL_LEARN: the model corrected in the run           */
    char *room_job;             /* the Slurm job the room is the allocation of, NULL
                                 * when it is not a Slurm allocation                  */
    unsigned char *room_kept;   /* per room host, 1 where an initial process runs (it
                                 * stays until MPI_Finalize): never returned; NULL
                                 * when nothing is to be returned                     */
} engine_settings_t;

/* The text of a status code, the message of this process's last failure, and a method's
 * name (mal_strerror, mal_error_message, mal_redist_name). */
const char *engine_strerror(mal_status_t status);
const char *engine_error_message(void);
const char *engine_redist_name(mal_redist_t method);

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
bool engine_logging(void);

/* The library's notices and summary lines (notice.c): on stderr, never on the
 * application's stdout (its results, perhaps data piped elsewhere), each notice written
 * at once (one write: lines of processes sharing a terminal do not mix within a line).
 * A notice of several parts is built with engine_notice_add, then written by
 * engine_notice_write; engine_notice writes one built from a single format. Callers
 * decide whether to say anything (the summary setting, MAL_QUIET). */
typedef struct {
    char text[2048];
    size_t used;
} engine_notice_t;
void engine_notice_add(engine_notice_t *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void engine_notice_write(const engine_notice_t *n);
void engine_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Map an MPI return code to MAL_ERR_MPI with the MPI error string; MAL_OK for success. */
mal_status_t engine_mpi_check(int rc, const char *call);
/* The MPI error string of `rc`, or "MPI error RC" where the library has none. */
void engine_mpi_error_text(int rc, char text[MPI_MAX_ERROR_STRING]);

/* MPI_Waitall on n requests without their statuses, through PMPI_Waitall when `quiet`
 * (libmal's own traffic, which the monitor does not count); the MPI return code. */
int engine_waitall(int n, MPI_Request *reqs, bool quiet);

/* The public call the user made, named by every message until the next one: each
 * public call that can fail says so first (engine_require_init does). Between
 * engine_enclose(true) and (false) the name stays: mal_step carrying out its plan
 * through mal_expand is still the user's mal_step. */
void engine_enter(const char *call);
void engine_enclose(bool on);

/* FNV-1a over bytes (core/agree.c), chained through `hash`: fingerprints collective arguments. */
uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes);
#define ENGINE_HASH_SEED 1469598103934665603ULL

/* Agree across `comm` on the outcome of a collective call (core/agree.c): every rank
 * passes its local status and a fingerprint of the arguments that must match. Ranks
 * that failed keep their status; the others get MAL_ERR_REMOTE, or MAL_ERR_MISMATCH when
 * the fingerprints differ. One small allreduce. */
mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call);

/* One argument of a collective call, as the agreement names it when ranks differ. */
typedef struct {
    const char *name;              /* as the public call calls it: "row_len"            */
    int64_t value;                 /* this rank's; for a text, engine_text_value's       */
    const char *(*show)(int64_t);  /* the value's name (an enum's), NULL: the number     */
    bool text;                     /* a text's hash: the message names the ranks only   */
} engine_arg_t;
/* A text's value for an engine_arg_t (a hash, NULL allowed). */
int64_t engine_text_value(const char *text);

/* engine_agree_in over the arguments `args` (the same names in the same order on every
 * rank) and a list of doubles (`list_name`, `list` of `count`, NULL for none): when they
 * differ, the message names the first argument that does and how, e.g. "mal_alloc_window:
 * arguments differ between ranks: row_len is 1 on rank 0, 2 on rank 1" or "weights[2] is
 * 1 on rank 0, 3 on rank 2". Collective over `comm`; one or two more allreduces only
 * then, and only when every rank is in a call of the same shape (`call`, the number of
 * arguments, `count`) and has the memory for them: ranks in different calls, or in
 * engine_agree_in, get the message without the names. A rank whose `local` status is an
 * error reads neither the arguments nor the list. */
mal_status_t engine_agree_args(MPI_Comm comm, mal_status_t local, const engine_arg_t *args,
                               int nargs, const char *list_name, const double *list,
                               int count, const char *call);

/* n weights of 1 (malloc'd, NULL without memory): what NULL weights mean (core/weights.c). */
double *engine_even_weights(int n);

/* One finite, non-negative weight per rank (core/weights.c), at least one positive (not NULL). */
mal_status_t engine_check_weights(const double *weights, int n, const char *call);

/* The index-th name of the comma-separated list `hosts` (cyclically), malloc'd; NULL
 * for a NULL list or without memory. */
char *engine_host_at(const char *hosts, int64_t index); /* core/host.c */
/* The same host in place, without a copy: its start in `hosts` and its length; NULL
 * (and 0) when hosts is NULL. */
const char *engine_host_span(const char *hosts, int64_t index, size_t *len);
/* A hash of this host's name: processes with equal ids share a host (core/host.c). */
uint64_t engine_host_id(void);
/* Cores of this host (hwloc), at least 1 (core/host.c). */
int engine_host_cores(void);

/* ---- the policy's settings (core/policy_settings.c) ---- */
/* Resolve the policy text, the availability file and the run length (mal_init, before
 * the agreement: errors are MAL_ERR_ARG naming the item or line). */
mal_status_t engine_policy_resolve(const settings_t *set, engine_settings_t *s);
void engine_policy_free(engine_settings_t *s);
uint64_t engine_policy_fingerprint(const engine_settings_t *s, uint64_t hash);

/* The names messages give an argument's value (core/names.c): "MAL_BLOCK",
 * "MAL_SPAWN_BATCHED", a method's name ("rma"); for engine_arg_t.show. */
const char *engine_distribution_name(int64_t distribution);
const char *engine_spawn_mode_name(int64_t mode);
const char *engine_method_name(int64_t method);
/* "given" or "NULL": whether a pointer argument was given. */
const char *engine_pointer_name(int64_t given);
/* "expand", "shrink", "rebalance" or "none" (core/names.c). */
const char *engine_action_name(mal_action_t a);
/* The code's name as written in mal_status.h ("MAL_ERR_SPAWN"), for reports (core/names.c). */
const char *engine_status_name(mal_status_t status);

#endif /* MAL_CORE_H */
