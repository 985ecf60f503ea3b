/**
 * @file mal_pmpi.h
 * @brief The hook between libmal's monitor and the optional PMPI wrapper library.
 *
 * libmal itself defines no MPI_ function. Programs that want the policy and the
 * prediction model to see their communication link the wrapper library libmal-pmpi
 * (CMake: mal::pmpi; by hand: -lmal-pmpi -lmal, before the MPI library). It defines
 * MPI_Send, MPI_Recv, MPI_Sendrecv, MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Waitall,
 * MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather(v), MPI_Gather(v),
 * MPI_Scatter(v) and MPI_Alltoall(v); each forwards to its PMPI_ entry point and, while
 * the monitor counts, reports the call here. libmal's own calls use the PMPI_ names and
 * are never counted.
 *
 * Without the wrapper library the monitor still runs: the communication of an iteration
 * is 0, so the whole iteration counts as computation (waiting for a slower rank
 * included), the communication profile is empty and the model predicts no
 * communication. mal_monitor_read() then reports comm_seconds = comm_calls = 0. The
 * loaded-mode balancing, which compares the ranks' computation times, needs the wrapper
 * library to tell waiting from computing.
 *
 * The OpenSHMEM transport (MAL_REDIST=shmem) needs the wrapper library: Open MPI's
 * shmem_finalize finalizes MPI itself, so libmal-pmpi's MPI_Finalize ends SHMEM instead
 * (mal_pmpi_finalize_shmem) when libmal started it. Without it, mal_init refuses
 * MAL_REDIST=shmem with MAL_ERR_UNSUPPORTED.
 *
 * In debug mode (MAL_DEBUG=1, mal_config_t.debug) each wrapper also asks
 * mal_pmpi_check_comm before it calls MPI, which names a call on MPI_COMM_WORLD made
 * after the application's processes stopped being MPI_COMM_WORLD's and aborts the job
 * instead of letting the call hang.
 *
 * Another PMPI tool can be used instead: it reports what it intercepts through the same
 * two calls (and may ask mal_pmpi_check_comm), and for SHMEM calls mal_pmpi_attach when
 * loaded and mal_pmpi_finalize_shmem from its MPI_Finalize. Only one library may define
 * each MPI_ function of a program.
 */
#ifndef MAL_PMPI_H
#define MAL_PMPI_H

#include "mal_status.h" /* MAL_API */

#include <mpi.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of communication the prediction model tells apart. Bytes per call are, by kind:
 *  SEND: the message (a send, a receive or a sendrecv half, counted once per message);
 *  BARRIER: 0; BCAST, REDUCE, ALLREDUCE: the buffer; ALLGATHER, GATHER, SCATTER: all
 *  the gathered (scattered) bytes together; ALLTOALL: the bytes one process sends.
 *  @ingroup mal_monitoring */
typedef enum {
    MAL_COMM_SEND = 0,   /**< a point-to-point message: send, receive, sendrecv half */
    MAL_COMM_BARRIER,    /**< MPI_Barrier */
    MAL_COMM_BCAST,      /**< MPI_Bcast */
    MAL_COMM_REDUCE,     /**< MPI_Reduce */
    MAL_COMM_ALLREDUCE,  /**< MPI_Allreduce */
    MAL_COMM_ALLGATHER,  /**< MPI_Allgather, MPI_Allgatherv */
    MAL_COMM_GATHER,     /**< MPI_Gather, MPI_Gatherv */
    MAL_COMM_SCATTER,    /**< MPI_Scatter, MPI_Scatterv */
    MAL_COMM_ALLTOALL    /**< MPI_Alltoall, MPI_Alltoallv */
} mal_comm_op_t;

/**
 * @brief Whether the monitor counts the application's communication now.
 * @return true between mal_init() and mal_finalize(), outside libmal's own calls;
 *         false otherwise.
 * @note Local; cheap enough to ask before every MPI call, so that a wrapper times the
 *       call only when it counts.
 * @ingroup mal_monitoring
 */
MAL_API bool mal_monitor_counting(void);

/**
 * @brief Report one intercepted MPI call of the application to the monitor.
 * @param op      what kind of communication it was
 * @param bytes   its size as the model counts it (see ::mal_comm_op_t)
 * @param seconds the wall time spent in the call
 * @param call    true for a call that is one message or collective; false for time
 *                only (a receive or a wait completing a message counted when sent)
 * @note Local. Ignored while the monitor does not count, and for an unknown op.
 * @ingroup mal_monitoring
 */
MAL_API void mal_monitor_record_comm(mal_comm_op_t op, double bytes, double seconds, bool call);

/**
 * @brief Debug mode: check the communicator of one of the application's MPI calls
 *        before the call enters MPI.
 * @param comm the call's communicator
 * @param call its name ("MPI_Allreduce"), which the message names
 * @note Local. Returns at once unless debug mode is on (mal_config_t.debug), libmal is
 *       initialised on an active process and @p comm is MPI_COMM_WORLD. When the
 *       processes of mal_comm() are then no longer MPI_COMM_WORLD's (an expansion or a
 *       shrink changed them) it prints
 *       `libmal[RANK]: mal_debug: CALL on MPI_COMM_WORLD while the application's
 *       processes are mal_comm() (N processes, MPI_COMM_WORLD has M): use mal_comm()`
 *       and aborts the job (MPI_Abort over mal_comm()): the call would wait for processes
 *       that never take part, or mix processes that are not the application's. Not
 *       checked: a program whose mal_init() was given a part of MPI_COMM_WORLD (it may
 *       use MPI_COMM_WORLD for work of its own), and other communicators.
 * @ingroup mal_monitoring
 */
MAL_API void mal_pmpi_check_comm(MPI_Comm comm, const char *call);

/**
 * @brief Say that the program's MPI_Finalize reaches mal_pmpi_finalize_shmem(): the
 *        wrapper library calls it when loaded (a constructor). mal_init() refuses
 *        MAL_REDIST=shmem until it was called.
 * @note Local; any time, even before MPI_Init.
 * @ingroup mal_monitoring
 */
MAL_API void mal_pmpi_attach(void);

/**
 * @brief The wrapper's MPI_Finalize: end SHMEM, and with it MPI, if libmal started it.
 * @return whether MPI is finalized now (the wrapper then returns MPI_SUCCESS); false
 *         when SHMEM was not started, and the wrapper calls PMPI_Finalize.
 * @note Collective like MPI_Finalize; after mal_finalize().
 * @ingroup mal_monitoring
 */
MAL_API bool mal_pmpi_finalize_shmem(void);

#ifdef __cplusplus
}
#endif

#endif /* MAL_PMPI_H */
