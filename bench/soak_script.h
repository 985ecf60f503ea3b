/* mal_soak's actions, drawn (mal_soak.c) or read from a fixed script (soak_script.c).
 *
 * A script is a comma-separated list, one reconfiguration per cycle:
 *   +N   expand by N processes, one spawn per process (+Np) or batched (+Nb)
 *   r    rebalance to the even split; rskew to the weights 1, 2, 3, 4, 1, 2, ...
 *   -N   shrink by N: the highest ranks; -N@H1:H2 releases every process on the hosts
 *        H1, H2 (MPI_Get_processor_name) first, then the rest taken in turn from the
 *        other hosts, each host's highest rank first.
 * The anchor (mal_soak.c) is never released; a shrink that would need it fails. */
#ifndef MAL_BENCH_SOAK_SCRIPT_H
#define MAL_BENCH_SOAK_SCRIPT_H

#include "mal.h"

#include <stddef.h>

/* The most processes a soak may have. */
#define SOAK_MAX_PROCS 64

typedef struct {
    mal_action_t kind;
    int count;                      /* processes added or released */
    int ranks[SOAK_MAX_PROCS];      /* released ranks */
    mal_spawn_mode_t mode;
    int nweights;                   /* weights of the set after it; 0: NULL (even split) */
    double weights[SOAK_MAX_PROCS];
    int fault_rank;                 /* this rank's direct transfers fail
                                     * (MAL_FAULT_DIRECT), -1 for none */
} soak_action_t;

typedef struct soak_script soak_script_t;

/* The script in `text`, or NULL with the reason in err. */
soak_script_t *soak_script_parse(const char *text, char *err, size_t len);
void soak_script_free(soak_script_t *s);
int soak_script_length(const soak_script_t *s);

/* Collective over mal_comm(): the action of step `step` (0-based) for the current set,
 * `anchor` never released. Returns 0, or -1 with the reason in err on every rank. */
int soak_script_action(const soak_script_t *s, int step, int anchor, soak_action_t *a,
                       char *err, size_t len);

/* Collective over mal_comm(): the processes per host in `buf` ("malA 8, malB 4"), hosts
 * in the order of their first rank. Returns 0, or -1 when an MPI call failed. */
int soak_hosts_text(char *buf, size_t len);

#endif /* MAL_BENCH_SOAK_SCRIPT_H */
