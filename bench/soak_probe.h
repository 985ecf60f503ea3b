/* What mal_soak watches in each process for leaks: resident memory, open file
 * descriptors, and the MPI windows, communicators, info objects, datatypes and groups
 * alive.
 *
 * These MPI objects are counted by interposition through the MPI profiling
 * interface: soak_probe.c defines the MPI calls that create and free them and forwards
 * each to its PMPI_ entry point. libmal calls these by their MPI_ names (src/engine:
 * the registry, the transports, procs/ and api/init.c; the wrapper library libmal-pmpi,
 * src/pmpi, defines only communication calls, so both link into mal_soak), so defined in
 * the executable they see libmal's objects as well as the
 * program's. Open MPI's internal objects (created inside libmpi without these entry
 * points) are not counted: they show in the resident memory instead. */
#ifndef MAL_BENCH_SOAK_PROBE_H
#define MAL_BENCH_SOAK_PROBE_H

typedef struct {
    long rss_kb;  /* VmRSS of /proc/self/status, -1 if unreadable */
    long fds;     /* entries of /proc/self/fd (the directory's own descriptor excluded) */
    long windows; /* windows created and not yet freed */
    long comms;   /* communicators created and not yet freed or disconnected */
    long infos;   /* MPI_Info objects created and not yet freed */
    long types;   /* derived datatypes created and not yet freed */
    long groups;  /* groups created and not yet freed */
} soak_probe_t;

void soak_probe_read(soak_probe_t *p);

#endif /* MAL_BENCH_SOAK_PROBE_H */
