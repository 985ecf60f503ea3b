/* Benchmarks that measure in fresh processes launch themselves again: a driver (a
 * plain process, not an MPI job) starts one MPI job per measurement through the
 * project's launcher and reads back what it wrote. No MPI here. */
#ifndef BENCH_LAUNCH_H
#define BENCH_LAUNCH_H

#include <stdbool.h>

/* Whether this process was started by an MPI launcher (it is then a rank, not a
 * driver: a launcher started from inside a job inherits the job's runtime and fails). */
bool bench_under_launcher(void);

/* Run `args` (NULL-terminated, args[0] the program) as an MPI job of `nranks`
 * processes: $MAL_LAUNCHER (default: the malrun installed beside the program, else
 * "mpiexec") -n nranks args... Returns its exit
 * status, 124 when it ran past $MAL_BENCH_TIMEOUT seconds (default 600) and was ended,
 * or -1 when it could not be started (message on stderr). */
int bench_launch(int nranks, char *const args[]);

/* This program's own path, for a driver that launches itself (static storage). */
const char *bench_self_path(void);

#endif /* BENCH_LAUNCH_H */
