/* What a job may grow into: the hosts of its allocation and the processes (slots) each
 * takes, from a resource manager's description or a hostfile, and where new processes
 * go. Pure: text in, tables out, no MPI and no environment (the engine reads the
 * variables and files and hands the text here). Private to libmal (never installed).
 *
 * Slurm describes an allocation in two variables:
 *   SLURM_JOB_NODELIST      "node[01-03,7],login2"   node names, bracketed ranges expand
 *                                                    with the lower bound's zero padding
 *   SLURM_JOB_CPUS_PER_NODE "4(x3),2"                one count per node, "(xN)" repeats
 *   (SLURM_TASKS_PER_NODE has the second syntax too.)
 * Open MPI's hostfile, one host a line: "name [slots=N] [max_slots=M]"; '#' starts a
 * comment, blank lines are ignored; "slot", "cpu" and "count" are read as "slots" and
 * "max-slots" as "max_slots", as Open MPI reads them; max_slots alone sets the slots; a
 * host with neither takes the caller's default (Open MPI counts that host's cores); a
 * host listed again adds its slots to its first line, as Open MPI adds them up. */
#ifndef MAL_ALLOCATION_H
#define MAL_ALLOCATION_H

#include "mal_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ALLOC_HOST_MAX 256
/* Nodes one list may expand to: a typo such as "n[1-100000000]" is refused, not
 * allocated. */
#define ALLOC_MAX_HOSTS 65536
#define ALLOC_MAX_SLOTS 1000000

typedef struct {
    char name[ALLOC_HOST_MAX];
    int slots;
} alloc_host_t;

typedef struct {
    alloc_host_t *hosts;    /* in the order given                                    */
    int nhosts;
    int64_t slots;          /* sum over hosts                                        */
} alloc_t;

/* Expand a Slurm node list into out->hosts (slots 0). On error returns MAL_ERR_ARG,
 * leaves *out as {0} and writes to err a message naming the problem, e.g.
 *   "node list 'n[3-1]': range 3-1 decreases", "node list 'n[1': '[' not closed",
 *   "node list '': empty", "node list 'a,,b': empty name", "node list 'n[1,]': bad
 *   range '1,' (...)";
 * MAL_ERR_NOMEM when out of memory. */
mal_status_t alloc_parse_nodelist(const char *list, alloc_t *out, char *err, size_t errlen);

/* Read a Slurm count list ("2(x3),1") into counts[0..n-1]: it must give exactly n
 * counts, each in 1..ALLOC_MAX_SLOTS. MAL_ERR_ARG with a message otherwise, e.g.
 *   "count list '2(x3)': 3 counts for 4 nodes", "count list '2(x0)': repeat 0". */
mal_status_t alloc_parse_counts(const char *spec, int *counts, int n, char *err,
                                size_t errlen);

/* A Slurm allocation: the node list with the CPUs per node (SLURM_JOB_CPUS_PER_NODE, or
 * SLURM_TASKS_PER_NODE) divided by the CPUs per task (>= 1): a process per task. A node
 * with fewer CPUs than one task takes one process. Errors as above. */
mal_status_t alloc_from_slurm(const char *nodelist, const char *cpus_per_node,
                              int cpus_per_task, alloc_t *out, char *err, size_t errlen);

/* What divides a Slurm count list: SLURM_CPUS_PER_TASK's value (`cpus_per_task`, NULL
 * when unset; 1 when not a positive integer) for CPU counts (SLURM_JOB_CPUS_PER_NODE),
 * 1 for task counts (SLURM_TASKS_PER_NODE), which Slurm already gives per task. */
int alloc_slurm_divisor(bool counts_are_tasks, const char *cpus_per_task);

/* Whether Open MPI's mapping policy ("core:NOOVERSUBSCRIBE,PE=2") has the modifier
 * OVERSUBSCRIBE: its tokens between ':' and ',' compared whole, ignoring case (so
 * NOOVERSUBSCRIBE is not it). False for NULL. */
bool alloc_mapping_oversubscribes(const char *policy);

/* Read an Open MPI hostfile from `f` (`name` is for messages); a host line without a
 * slot count takes `default_slots`. Errors name the file and line:
 *   "FILE:3: slots 'x' is not an integer in 1..1000000",
 *   "FILE:4: unknown field 'foo=1' (slots=N, max_slots=N)",
 *   "FILE:2: slots 8 above max_slots 4", "FILE:7: line longer than 4094 characters",
 *   "FILE: no host listed"; alloc_read_hostfile opens the file first
 *   ("FILE: cannot open: No such file or directory"). */
mal_status_t alloc_parse_hostfile(FILE *f, const char *name, int default_slots,
                                  alloc_t *out, char *err, size_t errlen);
mal_status_t alloc_read_hostfile(const char *path, int default_slots, alloc_t *out,
                                 char *err, size_t errlen);

void alloc_free(alloc_t *a);

/* The hosts h of `a` with pick[h] as a Slurm node list, in the order of `a`, ranges
 * folded as Slurm writes them: hosts in a row whose names differ only in their trailing
 * number share one bracket, and numbers in a row written alike one range ("n01,n02,n03,
 * n07,login2" -> "n[01-03,07],login2"; "n9,n10" -> "n[9-10]"; "n01,n2" -> "n[01,2]").
 * alloc_parse_nodelist reads it back to the same names in the same order. malloc'd;
 * "" when no host is picked; NULL without memory. */
char *alloc_format_nodelist(const alloc_t *a, const bool *pick);

/* Remove the hosts h with drop[h] from `a`, keeping the others' order and slots; the
 * slots are summed again. Returns how many were removed. */
int alloc_drop_hosts(alloc_t *a, const bool *drop);

/* The host of `a` named `name`; -1 when none. The same name first; else names compared
 * up to their first '.' ("n1" and "n1.cluster"), except IPv4 addresses (10.0.0.1 is not
 * 10.0.0.2); else, when `name` is `local` (the host the caller takes for "this host",
 * NULL for none) or itself localhost/127.*, the first localhost or 127.* entry. */
int alloc_find_host(const alloc_t *a, const char *name, const char *local);

/* Where `count` new processes go: the first hosts with free slots (slots minus
 * running[h]), each filled before the next, in the order of `a`. Writes host indexes to
 * place[0..count-1] and returns how many were placed (fewer than count when the free
 * slots run out). */
int alloc_place(const alloc_t *a, const int *running, int count, int *place);

#endif /* MAL_ALLOCATION_H */
