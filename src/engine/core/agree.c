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

/* What every rank contributes to an agreement: its status, a fingerprint of its
 * arguments, and the shape of the call (0 for engine_agree_in; for engine_agree_args a
 * hash of the call, the argument count and the list's length): the arguments are named
 * only when every rank is in a call of the same shape, and has the memory to name them,
 * so that every rank makes the same further collective calls. */
typedef struct {
    mal_status_t local;
    uint64_t fingerprint;
    int64_t shape;
    bool short_of_memory;
} agree_input_t;

typedef struct {
    mal_status_t status;
    bool differs;   /* every rank went through and the fingerprints differ */
    bool nameable;  /* ... and every rank can name its arguments, alike          */
} agree_outcome_t;

/* One MAX-allreduce carries: worst status, a failing rank, the fingerprint's max and min
 * (as max of its negation; 62 bits keep the negation in range), the shape's, and whether
 * a rank lacks memory. */
static agree_outcome_t agree_outcome(MPI_Comm comm, const agree_input_t *in, const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    int64_t fp = (int64_t)(in->fingerprint >> 2);
    int64_t v[7] = {-(int64_t)in->local, in->local ? rank : -1, fp, -fp, in->shape,
                    -in->shape, in->short_of_memory};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_INT64_T, MPI_MAX, comm);
    agree_outcome_t out = {MAL_OK, false, false};
    if (in->local)
        out.status = in->local;
    else if (rc != MPI_SUCCESS)
        out.status = engine_mpi_check(rc, call);
    else if (v[0] != 0)
        out.status = engine_fail(MAL_ERR_REMOTE, "%s: rank %lld failed: %s", call,
                                 (long long)v[1], engine_strerror((mal_status_t)-v[0]));
    else
        out.differs = v[2] != -v[3];
    out.nameable = out.differs && v[4] == -v[5] && v[4] != 0 && v[6] == 0;
    return out;
}

static mal_status_t differ(const char *call)
{
    return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks", call);
}

mal_status_t engine_agree_in(MPI_Comm comm, mal_status_t local, uint64_t fingerprint,
                             const char *call)
{
    agree_input_t in = {local, fingerprint, 0, false};
    agree_outcome_t out = agree_outcome(comm, &in, call);
    return out.differs ? differ(call) : out.status;
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
                                  long_int_t *v, const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < nargs; i++) {
        v[2 * i] = (long_int_t){(long)args[i].value, rank};
        v[2 * i + 1] = (long_int_t){-(long)args[i].value, rank};
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, 2 * nargs, MPI_LONG_INT, MPI_MINLOC, comm);
    for (int i = 0; i < nargs; i++) {
        long_int_t lo = v[2 * i], hi = {-v[2 * i + 1].value, v[2 * i + 1].rank};
        if (lo.value == hi.value)
            continue;
        if (args[i].text)
            return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s "
                               "differs between rank %d and rank %d", call, args[i].name,
                               lo.rank < hi.rank ? lo.rank : hi.rank,
                               lo.rank < hi.rank ? hi.rank : lo.rank);
        char a[64], b[64];
        show_value(&args[i], lo.value, a, sizeof a);
        show_value(&args[i], hi.value, b, sizeof b);
        return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s is %s "
                           "on rank %d, %s on rank %d", call, args[i].name, a, lo.rank, b,
                           hi.rank);
    }
    return MAL_OK;
}

static mal_status_t name_item(MPI_Comm comm, const char *list_name, const double *list,
                              int count, double_int_t *v, const char *call)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < count; i++) {
        v[2 * i] = (double_int_t){list[i], rank};
        v[2 * i + 1] = (double_int_t){-list[i], rank};
    }
    PMPI_Allreduce(MPI_IN_PLACE, v, 2 * count, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    for (int i = 0; i < count; i++) {
        double lo = v[2 * i].value, hi = -v[2 * i + 1].value;
        if (lo != hi)
            return engine_fail(MAL_ERR_MISMATCH, "%s: arguments differ between ranks: %s[%d] "
                               "is %g on rank %d, %g on rank %d", call, list_name, i, lo,
                               v[2 * i].rank, hi, v[2 * i + 1].rank);
    }
    return MAL_OK;
}

/* The call's shape: never 0 (engine_agree_in's). */
static int64_t call_shape(const char *call, int nargs, int count)
{
    int head[2] = {nargs, count};
    uint64_t h = engine_hash(ENGINE_HASH_SEED, call, strlen(call));
    return (int64_t)(engine_hash(h, head, sizeof head) >> 2) | 1;
}

mal_status_t engine_agree_args(MPI_Comm comm, mal_status_t local, const engine_arg_t *args,
                               int nargs, const char *list_name, const double *list,
                               int count, const char *call)
{
    int items = list != NULL && !local ? count : 0;
    agree_input_t in = {local, ENGINE_HASH_SEED, call_shape(call, nargs, items), false};
    /* A rank that failed already hashes nothing: its arguments may be anything. */
    for (int i = 0; !local && i < nargs; i++)
        in.fingerprint = engine_hash(in.fingerprint, &args[i].value, sizeof args[i].value);
    if (items > 0)
        in.fingerprint = engine_hash(in.fingerprint, list, (size_t)items * sizeof *list);
    /* The memory to name them, before the agreement: a rank without it says so there. */
    long_int_t *named = malloc((size_t)(2 * nargs + 1) * sizeof *named);
    double_int_t *listed = malloc((size_t)(2 * items + 1) * sizeof *listed);
    in.short_of_memory = named == NULL || listed == NULL;
    agree_outcome_t out = agree_outcome(comm, &in, call);
    mal_status_t st = out.status;
    if (out.nameable) /* every rank is here, in a call of this shape */
        st = name_argument(comm, args, nargs, named, call);
    if (out.nameable && !st && items > 0)
        st = name_item(comm, list_name, list, items, listed, call);
    free(named);
    free(listed);
    return out.differs && !st ? differ(call) : st;
}
