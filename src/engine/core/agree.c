/* Fingerprints of collective arguments and the agreement on a collective call's outcome:
 * every layer that communicates uses them, over the communicator it is given. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t engine_hash(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

/* The allreduce of engine_agree_in: this rank's outcome, with *differs set (and no
 * message) when every rank went through and the fingerprints differ. */
static mal_status_t agree_outcome(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                                  const char *call, bool *differs)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    *differs = false;
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
    *differs = v[2] != -v[3];
    return MAL_OK;
}

mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call)
{
    bool differs = false;
    mal_status_t st = agree_outcome(comm, local, fingerprint, call, &differs);
    if (differs)
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks", call);
    return st;
}

int64_t engine_text_value(const char *text)
{
    uint64_t h = engine_hash(ENGINE_HASH_SEED, text ? text : "", text ? strlen(text) : 0);
    return (int64_t)(h >> 2) + (text == NULL);
}

/* The value as the message shows it. */
static void show_value(const engine_arg_t *a, int64_t value, char *out, size_t len)
{
    if (a->show != NULL)
        snprintf(out, len, "%s", a->show(value));
    else
        snprintf(out, len, "%lld", (long long)value);
}

/* The lowest rank holding the smallest and the largest value of each argument, then of
 * each list item (MINLOC over the values and their negations): which one differs, and
 * where. Every rank computes the same answer. */
typedef struct {
    long value;
    int rank;
} long_int_t;
typedef struct {
    double value;
    int rank;
} double_int_t;

static mal_status_t name_argument(MPI_Comm comm, const engine_arg_t *args, int nargs,
                                  const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    long_int_t *v = malloc((size_t)(2 * nargs + 1) * sizeof *v);
    if (v == NULL)
        return engine_fail(MAL_ERR_NOMEM, "%s: arguments differ between ranks", call);
    for (int i = 0; i < nargs; i++) {
        v[2 * i] = (long_int_t){(long)args[i].value, rank};
        v[2 * i + 1] = (long_int_t){-(long)args[i].value, rank};
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, 2 * nargs, MPI_LONG_INT, MPI_MINLOC, comm);
    for (int i = 0; i < nargs; i++) {
        long_int_t lo = v[2 * i], hi = {-v[2 * i + 1].value, v[2 * i + 1].rank};
        if (lo.value == hi.value)
            continue;
        free(v);
        if (args[i].text)
            return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s "
                               "differs between rank %d and rank %d", call, args[i].name,
                               lo.rank, hi.rank);
        char a[64], b[64];
        show_value(&args[i], lo.value, a, sizeof a);
        show_value(&args[i], hi.value, b, sizeof b);
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s is %s "
                           "on rank %d, %s on rank %d", call, args[i].name, a, lo.rank, b,
                           hi.rank);
    }
    free(v);
    return MAL_OK;
}

static mal_status_t name_item(MPI_Comm comm, const char *list_name, const double *list,
                              int count, const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    double_int_t *v = malloc((size_t)(2 * count + 1) * sizeof *v);
    if (v == NULL)
        return engine_fail(MAL_ERR_NOMEM, "%s: arguments differ between ranks", call);
    for (int i = 0; i < count; i++) {
        v[2 * i] = (double_int_t){list[i], rank};
        v[2 * i + 1] = (double_int_t){-list[i], rank};
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, 2 * count, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    for (int i = 0; i < count; i++) {
        double lo = v[2 * i].value, hi = -v[2 * i + 1].value;
        if (lo == hi)
            continue;
        int lo_rank = v[2 * i].rank, hi_rank = v[2 * i + 1].rank;
        free(v);
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s[%d] is "
                           "%g on rank %d, %g on rank %d", call, list_name, i, lo, lo_rank,
                           hi, hi_rank);
    }
    free(v);
    return MAL_OK;
}

mal_status_t engine_agree_args(MPI_Comm comm, mal_status_t local, const engine_arg_t *args,
                               int nargs, const char *list_name, const double *list,
                               int count, const char *call)
{
    uint64_t fp = ENGINE_HASH_SEED;
    for (int i = 0; i < nargs; i++)
        fp = engine_hash(fp, &args[i].value, sizeof args[i].value);
    if (list != NULL)
        fp = engine_hash(fp, list, (size_t)count * sizeof *list);
    bool differs = false;
    mal_status_t st = agree_outcome(comm, local, local ? 0 : fp, call, &differs);
    if (!differs)
        return st;
    /* Every rank got here: the arguments are named over the same communicator. */
    st = name_argument(comm, args, nargs, call);
    if (!st && list != NULL)
        st = name_item(comm, list_name, list, count, call);
    return st ? st : engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks", call);
}
