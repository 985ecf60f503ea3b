/* libmal-pmpi: PMPI interposition, the application's communication timed for libmal's
 * monitor (include/mal_pmpi.h says who links it and what changes without it).
 *
 * It defines the MPI calls the examples (and typical iterative codes) use; each one
 * forwards to its PMPI_ entry point and, while the monitor counts, reports its time and
 * its size as the prediction model counts it (mal_comm_op_t) through
 * mal_monitor_record_comm. Point-to-point completion calls (receives, waits) add time
 * only: the message was counted when it was sent. Each call on a communicator first asks
 * mal_pmpi_check_comm (debug mode). These and the hooks of the constructor and
 * MPI_Finalize are the library's only ways into libmal.
 * Everything else here is static: the library exports MPI_ names and nothing more. */
#include "mal_pmpi.h"

#include <mpi.h>
#include <stddef.h>

/* libmal is compiled with hidden visibility; these wrappers work only if exported, so
 * that the application's MPI calls bind to them before libmpi. */
#define MAL_PMPI_EXPORT __attribute__((visibility("default")))

static double type_bytes(MPI_Datatype type, double count)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_size(type, &size);
    return count * size;
}

static double comm_procs(MPI_Comm comm)
{
    int n = 1;
    PMPI_Comm_size(comm, &n);
    return n;
}

/* Entries of a counts array: the remote group's size on an intercommunicator. */
static double sum_counts(const int *counts, MPI_Comm comm)
{
    double total = 0;
    int inter = 0, n = 1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    for (int r = 0; r < n && counts != NULL; r++)
        total += counts[r];
    return total;
}

/* Debug mode: a call on a communicator that is no longer the application's is named, and
 * the job aborted, before it can hang in MPI (mal_pmpi_check_comm). */
#define MAL_CHECKED(comm) mal_pmpi_check_comm(comm, __func__)

/* Forward the call; when counting, time it and record `bytes` (evaluated afterwards). */
#define MAL_TIMED(op, is_call, bytes, call)                                             \
    do {                                                                                \
        if (!mal_monitor_counting())                                                    \
            return call;                                                                \
        double t0_ = PMPI_Wtime();                                                      \
        int rc_ = call;                                                                 \
        mal_monitor_record_comm(op, bytes, PMPI_Wtime() - t0_, is_call);                \
        return rc_;                                                                     \
    } while (0)

MAL_PMPI_EXPORT
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SEND, true, type_bytes(type, count),
              PMPI_Send(buf, count, type, dest, tag, comm));
}

MAL_PMPI_EXPORT
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, MPI_Request *request)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SEND, true, type_bytes(type, count),
              PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

MAL_PMPI_EXPORT
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SEND, false, 0, PMPI_Recv(buf, count, type, source, tag, comm, status));
}

MAL_PMPI_EXPORT
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SEND, false, 0,
              PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

MAL_PMPI_EXPORT
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SEND, true, type_bytes(sendtype, sendcount),
              PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, status));
}

MAL_PMPI_EXPORT
int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MAL_TIMED(MAL_COMM_SEND, false, 0, PMPI_Wait(request, status));
}

MAL_PMPI_EXPORT
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    MAL_TIMED(MAL_COMM_SEND, false, 0, PMPI_Waitall(count, requests, statuses));
}

MAL_PMPI_EXPORT
int MPI_Barrier(MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_BARRIER, true, 0, PMPI_Barrier(comm));
}

MAL_PMPI_EXPORT
int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_BCAST, true, type_bytes(type, count),
              PMPI_Bcast(buf, count, type, root, comm));
}

MAL_PMPI_EXPORT
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_REDUCE, true, type_bytes(type, count),
              PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

MAL_PMPI_EXPORT
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                  MPI_Op op, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_ALLREDUCE, true, type_bytes(type, count),
              PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
}

MAL_PMPI_EXPORT
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_ALLGATHER, true, type_bytes(recvtype, recvcount * comm_procs(comm)),
              PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm));
}

MAL_PMPI_EXPORT
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_ALLGATHER, true, type_bytes(recvtype, sum_counts(recvcounts, comm)),
              PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm));
}

/* Gathers and scatters: the size is every process's own block times the processes,
 * taken from the side MPI reads (with MPI_IN_PLACE at the root, the other side). */
MAL_PMPI_EXPORT
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_GATHER, true,
              sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, recvcount * comm_procs(comm))
                                      : type_bytes(sendtype, sendcount * comm_procs(comm)),
              PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                          comm));
}

MAL_PMPI_EXPORT
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_GATHER, true,
              sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, sum_counts(recvcounts, comm))
                                      : type_bytes(sendtype, sendcount * comm_procs(comm)),
              PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, root, comm));
}

MAL_PMPI_EXPORT
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SCATTER, true,
              recvbuf == MPI_IN_PLACE ? type_bytes(sendtype, sendcount * comm_procs(comm))
                                      : type_bytes(recvtype, recvcount * comm_procs(comm)),
              PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm));
}

MAL_PMPI_EXPORT
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_SCATTER, true,
              recvbuf == MPI_IN_PLACE ? type_bytes(sendtype, sum_counts(sendcounts, comm))
                                      : type_bytes(recvtype, recvcount * comm_procs(comm)),
              PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                            recvtype, root, comm));
}

MAL_PMPI_EXPORT
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_ALLTOALL, true,
              sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, recvcount * comm_procs(comm))
                                      : type_bytes(sendtype, sendcount * comm_procs(comm)),
              PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm));
}

MAL_PMPI_EXPORT
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    MAL_CHECKED(comm);
    MAL_TIMED(MAL_COMM_ALLTOALL, true,
              sendbuf == MPI_IN_PLACE ? type_bytes(recvtype, sum_counts(recvcounts, comm))
                                      : type_bytes(sendtype, sum_counts(sendcounts, comm)),
              PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm));
}

/* SHMEM (MAL_REDIST=shmem): Open MPI's shmem_finalize finalizes MPI itself, and
 * MPI_Finalize before or after it crashes, so the program's MPI_Finalize ends SHMEM
 * instead when libmal started it (src/engine/transport/shmem.c). */
MAL_PMPI_EXPORT
int MPI_Finalize(void)
{
    return mal_pmpi_finalize_shmem() ? MPI_SUCCESS : PMPI_Finalize();
}

/* Loaded: libmal learns that the program's MPI_Finalize comes here, which mal_init
 * requires before it starts SHMEM. */
__attribute__((constructor)) static void attach_to_libmal(void)
{
    mal_pmpi_attach();
}
