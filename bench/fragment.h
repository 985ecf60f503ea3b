/* The fragmented-memory condition of mal_bench_redist --cold: a helper process that
 * holds a checkerboard of 4 KiB pages over nearly all free memory, as a node looks after
 * an application has run on it for a while (free memory in single pages, few free
 * blocks large enough for a huge page). Not MPI: the cold driver runs it beside the jobs
 * it launches. */
#ifndef MAL_BENCH_FRAGMENT_H
#define MAL_BENCH_FRAGMENT_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;      /* the helper, 0 when not started   */
    int to_helper;  /* commands: one byte per request   */
    int from_helper;
    long long held_mib; /* what the helper holds after the last request */
    long long free_mib; /* MemFree after it                             */
} fragmenter_t;

/* Start the helper; false (with a message on stderr) when it cannot be had. */
bool fragmenter_start(fragmenter_t *f, long long keep_mib);
/* Before a run: free memory beyond `keep_mib` (given at start) is taken in 4 KiB pages
 * and every other page given back. Blocks until done; false when the helper failed. */
bool fragmenter_refresh(fragmenter_t *f);
/* End the helper and give its memory back. */
void fragmenter_stop(fragmenter_t *f);

#endif /* MAL_BENCH_FRAGMENT_H */
