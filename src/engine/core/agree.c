/* Fingerprints of collective arguments and the agreement on a collective call's outcome:
 * every layer that communicates uses them, over the communicator it is given. */
#include "core.h"

uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    /* One MAX-allreduce carries: worst status, a failing rank, and the fingerprint's
     * max and min (as max of its negation); 62 bits keep the negation in range. */
    int64_t fp = (int64_t)(fingerprint >> 2);
    int64_t v[4] = {-(int64_t)local, local ? rank : -1, fp, -fp};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm);
    if (local)
        return local;
    if (rc != MPI_SUCCESS)
        return engine_mpi_check(rc, call);
    if (v[0] != 0)
        return engine_fail(MAL_ERR_REMOTE, "%s: rank %lld failed: %s", call,
                           (long long)v[1], engine_strerror((mal_status_t)-v[0]));
    if (v[2] != -v[3])
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks", call);
    return MAL_OK;
}
