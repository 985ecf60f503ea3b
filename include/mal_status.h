/**
 * @file mal_status.h
 * @brief libmal's status codes: the one list every libmal module returns from.
 *
 * Included by mal.h; free of MPI, so that libmal's pure modules (partitioning, the
 * prediction model, the policy) and the tools built on them without MPI (mal-sim) use
 * the same codes as the public calls. Conventions: a fallible function returns a
 * ::mal_status_t (MAL_OK = 0, a negative code on error); a yes/no question returns bool;
 * counts and values come back through output parameters or as documented plain values.
 */
#ifndef MAL_STATUS_H
#define MAL_STATUS_H

#ifndef MAL_API
/** Marks the calls libmal exports. libmal is compiled with hidden visibility, so a call
 *  without it is not part of the library's interface (and a program's own global of the
 *  same name as an internal one cannot clash with it). */
#  if defined(__GNUC__) || defined(__clang__)
#    define MAL_API __attribute__((visibility("default")))
#  else
#    define MAL_API
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The single list of status codes. ::mal_status_t and mal_strerror() are both generated
 * from it, so a code cannot be added to one and forgotten in the other.
 */
#define MAL_STATUS_LIST(X)                                                        \
    X(MAL_OK, 0, "success")                                                       \
    X(MAL_ERR_ARG, -1, "invalid argument")                                        \
    X(MAL_ERR_NOT_INITIALIZED, -2, "libmal is not initialised (call mal_init)")   \
    X(MAL_ERR_ALREADY_INITIALIZED, -3, "libmal is already initialised")           \
    X(MAL_ERR_EXISTS, -4, "a structure with this name is already registered")     \
    X(MAL_ERR_NOMEM, -5, "out of memory")                                         \
    X(MAL_ERR_MPI, -6, "an MPI call failed")                                      \
    X(MAL_ERR_MISMATCH, -7, "arguments of a collective call differ between ranks") \
    X(MAL_ERR_REMOTE, -8, "another rank failed in this collective call")          \
    X(MAL_ERR_SPAWN, -9, "spawning processes failed")                             \
    X(MAL_ERR_RELEASED, -10, "this process was released (call mal_finalize)")      \
    X(MAL_ERR_UNSUPPORTED, -11, "not supported by this build or transport")       \
    X(MAL_ERR_TIMEOUT, -12, "a reconfiguration step did not complete in time "     \
      "(MAL_RECONF_TIMEOUT)")                                                     \
    X(MAL_ERR_LIMIT, -13, "the expansion goes beyond the slots of the job's allocation") \
    X(MAL_RECONFIGURED, 1, "reconfigured: re-read pointers, rows and mal_comm()")  \
    X(MAL_REMOVED, 2, "this process was released: leave the loop, mal_finalize")

/** Status returned by every fallible libmal call: 0 on success, negative on error.
 *  mal_step() and the reconfiguring calls also return the positive outcomes
 *  MAL_RECONFIGURED and MAL_REMOVED; MAL_CONTINUE is MAL_OK under its loop name.
 *  @ingroup mal_status */
typedef enum {
#define MAL_STATUS_ENUM_(name, value, text) name = value,
    MAL_STATUS_LIST(MAL_STATUS_ENUM_)
#undef MAL_STATUS_ENUM_
    MAL_CONTINUE = MAL_OK
} mal_status_t;

/* The values come from MAL_STATUS_LIST, so their documentation is kept here. */
/** @var MAL_OK
 *  Success (0). Under its loop name MAL_CONTINUE, what mal_step() returns when nothing
 *  changed. */
/** @var MAL_ERR_ARG
 *  An argument, a configuration field, an environment variable or a file line is
 *  invalid; mal_error_message() names it. */
/** @var MAL_ERR_NOT_INITIALIZED
 *  The call needs mal_init() first. */
/** @var MAL_ERR_ALREADY_INITIALIZED
 *  mal_init() was called twice without mal_finalize(). */
/** @var MAL_ERR_EXISTS
 *  A structure or matrix with this name is already registered. */
/** @var MAL_ERR_NOMEM
 *  Memory could not be allocated. */
/** @var MAL_ERR_MPI
 *  An MPI call failed, or MPI is not initialised. */
/** @var MAL_ERR_MISMATCH
 *  The arguments of a collective call differ between ranks. */
/** @var MAL_ERR_REMOTE
 *  Another rank failed in this collective call (it has the detailed message). */
/** @var MAL_ERR_SPAWN
 *  Spawning processes failed: program missing, no free slot, bad host, or a new process
 *  could not join. */
/** @var MAL_ERR_RELEASED
 *  This process was released by a shrink: only mal_finalize() and the local getters
 *  remain. */
/** @var MAL_ERR_UNSUPPORTED
 *  Not supported by this build, this transport or this MPI library (the message names
 *  the fix). */
/** @var MAL_ERR_TIMEOUT
 *  A reconfiguration step did not complete within MAL_RECONF_TIMEOUT seconds. */
/** @var MAL_ERR_LIMIT
 *  An expansion would go beyond the slots of the job's allocation (a Slurm allocation,
 *  MAL_HOSTFILE, or MPI_UNIVERSE_SIZE without oversubscription): refused before anything
 *  is spawned; the processes, layout and data are unchanged. */
/** @var MAL_RECONFIGURED
 *  The process set or the layout changed: re-read mal_comm(), local pointers, first
 *  rows and row counts. */
/** @var MAL_REMOVED
 *  This process was released: leave the loop and call mal_finalize(). */
/** @var MAL_CONTINUE
 *  MAL_OK under the name the iteration loop reads: mal_step() changed nothing. */

/**
 * @brief Short, static description of a status code.
 * @param status The code to describe.
 * @return A string owned by the library, valid for the life of the program; never NULL
 *         (unknown codes give "unknown libmal status").
 * @note Local; callable before mal_init().
 * @ingroup mal_status
 */
MAL_API const char *mal_strerror(mal_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* MAL_STATUS_H */
