/* spawn_loop: the smallest reproduction of the spawn hang (docs/design.md, "The spawn
 * hang"), without libmal. The parents spawn one child per cycle and the child leaves
 * again, the way a libmal expansion by one and the release of that process do:
 *
 *   parents: MPI_Comm_spawn (over MPI_COMM_SELF from rank 0, or over MPI_COMM_WORLD
 *            with --collective), MPI_Intercomm_merge, a small MPI_Bcast over the merged
 *            communicator, MPI_Comm_free of it, MPI_Comm_disconnect of the
 *            intercommunicator (from rank 0's pair when spawned over MPI_COMM_SELF);
 *   child:   the same from its side, then MPI_Finalize.
 *
 * It prints one line per cycle with its time, so a hang shows as the last cycle that
 * completed, and at the end the resident memory each parent gained per cycle after the
 * first min(50, N/10) cycles (VmRSS of /proc/self/status): what Open MPI itself keeps
 * per spawn, merge and disconnect, the baseline for libmal's figure (docs/design.md,
 * "Memory per reconfiguration cycle"). Usage: tools/malrun -n 2 build/bench/spawn_loop
 * [--cycles N] [--collective] [--quiet] (run it under `timeout`: a hang is the finding). */
#define _POSIX_C_SOURCE 200809L /* readlink */
#include <mpi.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long resident_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0 && sscanf(line + 6, "%ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* Every parent's growth per cycle from cycle `base` to the last, printed by rank 0. */
static void print_growth(long base_kb, int base, int cycles)
{
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double mine = (double)(resident_kb() - base_kb) / (cycles - base), all[64];
    MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int r = 0; me == 0 && r < n && r < 64; r++)
        printf("spawn_loop: rank %d rss %+.1f kB/cycle over cycles %d..%d\n", r, all[r],
               base, cycles);
}

static void child(MPI_Comm parent)
{
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    int cycle = 0;
    MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&parent);
}

/* One cycle on the parents' side; the root spawns alone unless `collective`. */
static void cycle_once(const char *self, int cycle, int collective)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *argv[] = {"--child", collective ? "--collective" : NULL, NULL};
    MPI_Comm inter = MPI_COMM_NULL, merged;
    if (collective) {
        MPI_Comm_spawn(self, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        MPI_Intercomm_merge(inter, 0, &merged);
    } else {
        /* as libmal: rank 0 spawns over MPI_COMM_SELF and brings the others in by
         * creating an intercommunicator between MPI_COMM_WORLD and the child */
        MPI_Comm pair = MPI_COMM_NULL, world_side;
        if (me == 0) {
            MPI_Comm_spawn(self, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                           MPI_ERRCODES_IGNORE);
            MPI_Intercomm_merge(inter, 0, &pair);
        }
        /* the child joins through pair: merge with rank 0, then rank 0 bridges */
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, pair, 1, 77, &world_side);
        MPI_Intercomm_merge(world_side, 0, &merged);
        MPI_Comm_free(&world_side);
        if (pair != MPI_COMM_NULL)
            MPI_Comm_free(&pair);
    }
    MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
    MPI_Comm_free(&merged);
    if (inter != MPI_COMM_NULL)
        MPI_Comm_disconnect(&inter);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int cycles = 100, collective = 0;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
            cycles = atoi(argv[++i]);
        else if (strcmp(argv[i], "--collective") == 0)
            collective = 1;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = true;
    }
    if (parent != MPI_COMM_NULL) {
        /* spawned over MPI_COMM_SELF the child first merges with rank 0 (pair), then
         * is bridged to everybody; spawned collectively it merges once */
        if (collective) {
            child(parent);
        } else {
            MPI_Comm pair, world_side, merged;
            MPI_Intercomm_merge(parent, 1, &pair);
            MPI_Intercomm_create(MPI_COMM_SELF, 0, pair, 0, 77, &world_side);
            MPI_Intercomm_merge(world_side, 1, &merged);
            int cycle;
            MPI_Bcast(&cycle, 1, MPI_INT, 0, merged);
            MPI_Comm_free(&merged);
            MPI_Comm_free(&world_side);
            MPI_Comm_free(&pair);
            MPI_Comm_disconnect(&parent);
        }
        MPI_Finalize();
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    int me, base = cycles / 10 < 50 ? cycles / 10 : 50;
    long base_kb = resident_kb();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int c = 1; c <= cycles; c++) {
        double t0 = MPI_Wtime();
        cycle_once(self, c, collective);
        if (me == 0 && (!quiet || c % 100 == 0)) {
            printf("spawn_loop: cycle %d %.3f s\n", c, MPI_Wtime() - t0);
            fflush(stdout);
        }
        if (c == base)
            base_kb = resident_kb();
    }
    print_growth(base_kb, base, cycles);
    if (me == 0)
        printf("spawn_loop: PASS %d cycles\n", cycles);
    MPI_Finalize();
    return 0;
}
