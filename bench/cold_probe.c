/* cold_probe: how much the first crossing of memory between two processes costs, by
 * mechanism, outside libmal (plain MPI and Linux calls). Each of 2 ranks holds BYTES and
 * reads its peer's BYTES once (cold), then again (warm); the alloc column is creating
 * and touching the memory. The evidence behind direct memory (docs/design.md, "Cold
 * transfers"). Run each mode in fresh processes:
 *
 *   tools/malrun -n 2 build/bench/cold_probe MODE [BYTES]   (--help: the usage)
 *   MODE: win (MPI_Win_allocate + MPI_Get), winsm (the same over osc sm: run with
 *   OMPI_MCA_osc=sm,ucx), shared (MPI_Win_allocate_shared + memcpy; needs osc sm),
 *   a2a (MPI_Alltoallv between malloc'd buffers), cma (process_vm_readv from 4 KiB
 *   pages), cmathp (process_vm_readv from transparent huge pages). */
#define _GNU_SOURCE
#include "cli.h"
#include "mal_version.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

typedef struct {
    double alloc, cold, warm;
    long faults;
} probe_t;

static double max_time(double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int check(const char *dst, size_t bytes, int peer)
{
    return dst[0] == (char)(peer + 1) && dst[bytes - 1] == (char)(peer + 1);
}

/* A window of 2 x bytes: the first half this rank's data, the second what it reads. */
static int probe_window(size_t bytes, int shared, probe_t *p)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    char *base, *peer_base = NULL;
    MPI_Win win;
    double t0 = MPI_Wtime();
    if (shared) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        MPI_Win_allocate_shared((MPI_Aint)(2 * bytes), 1, info, MPI_COMM_WORLD, &base, &win);
        MPI_Info_free(&info);
        MPI_Aint size;
        int unit;
        MPI_Win_shared_query(win, peer, &size, &unit, &peer_base);
    } else {
        MPI_Win_allocate((MPI_Aint)(2 * bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    memset(base, me + 1, bytes);
    memset(base + bytes, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    p->alloc = max_time(MPI_Wtime() - t0);
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        long f0 = minor_faults();
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer_base != NULL)
            memcpy(base + bytes, peer_base, bytes);
        else
            MPI_Get(base + bytes, (int)bytes, MPI_BYTE, peer, 0, (int)bytes, MPI_BYTE, win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = max_time(MPI_Wtime() - t0);
        *(round ? &p->warm : &p->cold) = t;
        if (!round)
            p->faults = minor_faults() - f0;
        ok &= check(base + bytes, bytes, peer);
    }
    MPI_Win_free(&win);
    return ok;
}

static int probe_alltoallv(size_t bytes, probe_t *p)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    double t0 = MPI_Wtime();
    char *src = malloc(bytes), *dst = malloc(bytes);
    memset(src, me + 1, bytes);
    memset(dst, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    p->alloc = max_time(MPI_Wtime() - t0);
    MPI_Datatype mib;
    MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
    MPI_Type_commit(&mib);
    int c[2] = {0, 0}, d[2] = {0, 0};
    c[peer] = (int)(bytes >> 20);
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        long f0 = minor_faults();
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Alltoallv(src, c, d, mib, dst, c, d, mib, MPI_COMM_WORLD);
        double t = max_time(MPI_Wtime() - t0);
        *(round ? &p->warm : &p->cold) = t;
        if (!round)
            p->faults = minor_faults() - f0;
        ok &= check(dst, bytes, peer);
    }
    MPI_Type_free(&mib);
    free(src);
    free(dst);
    return ok;
}

static int probe_cma(size_t bytes, int huge, probe_t *p)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int peer = 1 - me;
    size_t align = (size_t)2 << 20, len = (2 * bytes + align - 1) / align * align;
    double t0 = MPI_Wtime();
    char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    char *base = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (huge)
        madvise(base, len, MADV_HUGEPAGE);
    memset(base, me + 1, bytes);
    memset(base + bytes, 0, bytes);
    long mine[2] = {getpid(), (long)(uintptr_t)base}, all[4];
    MPI_Allgather(mine, 2, MPI_LONG, all, 2, MPI_LONG, MPI_COMM_WORLD);
    p->alloc = max_time(MPI_Wtime() - t0);
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        long f0 = minor_faults();
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (size_t done = 0; done < bytes;) {
            struct iovec l = {base + bytes + done, bytes - done};
            struct iovec r = {(char *)(uintptr_t)all[2 * peer + 1] + done, bytes - done};
            ssize_t n = process_vm_readv((pid_t)all[2 * peer], &l, 1, &r, 1, 0);
            if (n <= 0) {
                perror("cold_probe: process_vm_readv");
                ok = 0;
                break;
            }
            done += (size_t)n;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t = max_time(MPI_Wtime() - t0);
        *(round ? &p->warm : &p->cold) = t;
        if (!round)
            p->faults = minor_faults() - f0;
        ok &= check(base + bytes, bytes, peer);
    }
    munmap(raw, len + align);
    return ok;
}

enum { MODE_WIN, MODE_WINSM, MODE_SHARED, MODE_A2A, MODE_CMA, MODE_CMATHP, NMODES };
static const char *const mode_names[NMODES] = {"win", "winsm", "shared", "a2a", "cma",
                                               "cmathp"};

#define MIB ((long long)1 << 20)

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tools/malrun -n 2 cold_probe MODE [BYTES]\n"
            "       cold_probe --help | --version\n"
            "Each of the 2 ranks holds BYTES (default 128 MiB; 1 MiB to 1 GiB, rounded down\n"
            "to whole MiB) and reads its peer's twice, the first time cold. MODE:\n"
            "  win     MPI_Win_allocate + MPI_Get\n"
            "  winsm   the same over osc sm (run with OMPI_MCA_osc=sm,ucx)\n"
            "  shared  MPI_Win_allocate_shared + memcpy (needs osc sm)\n"
            "  a2a     MPI_Alltoallv between malloc'd buffers\n"
            "  cma     process_vm_readv from 4 KiB pages\n"
            "  cmathp  process_vm_readv from transparent huge pages\n" CLI_STANDARD_USAGE
            "Exit status: 0, 1 when the data read are wrong or a read fails, 2 for a usage\n"
            "error (also when not run on exactly 2 processes).\n");
}

static const char *version(void)
{
    return MAL_VERSION; /* the headers it was built with: cold_probe links no libmal */
}

static const cli_t cli = {"cold_probe", version, usage};

typedef struct {
    int mode;
    size_t bytes;
} options_t;

/* MODE [BYTES]: operands, so read as mal-sim reads its scenario: an option first
 * (--help, --version, or a usage error), then whatever follows the operands (--help
 * again, or a usage error: an unknown option, a third operand), then the operands. */
static options_t parse_options(int argc, char **argv)
{
    static const struct option standard[] = {CLI_STANDARD_OPTIONS, {0}};
    if (argc > 1 && argv[1][0] == '-')
        cli_next(&cli, argc, argv, "", standard);
    if (argc < 2)
        cli_usage_error(&cli, "missing MODE");
    bool has_bytes = argc > 2 && argv[2][0] != '-';
    optind = has_bytes ? 3 : 2;
    cli_next(&cli, argc, argv, "", standard);
    options_t o = {cli_choice(&cli, "MODE", argv[1], mode_names, NMODES, false),
                   (size_t)128 << 20};
    if (has_bytes)
        o.bytes = (size_t)cli_integer(&cli, "BYTES", argv[2], MIB, 1024 * MIB) >> 20 << 20;
    return o;
}

static int probe(const options_t *o, probe_t *p)
{
    switch (o->mode) {
    case MODE_WIN:
    case MODE_WINSM:
        return probe_window(o->bytes, 0, p);
    case MODE_SHARED:
        return probe_window(o->bytes, 1, p);
    case MODE_A2A:
        return probe_alltoallv(o->bytes, p);
    default:
        return probe_cma(o->bytes, o->mode == MODE_CMATHP, p);
    }
}

int main(int argc, char **argv)
{
    options_t o = parse_options(argc, argv);
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        MPI_Finalize(); /* every rank, before rank 0 exits with the usage error */
        if (me == 0)
            cli_usage_error(&cli, "needs exactly 2 processes, not %d", size);
        return CLI_EXIT_USAGE;
    }
    probe_t p = {0};
    int ok = probe(&o, &p);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (me == 0)
        printf("cold_probe %-6s %4zu MiB: alloc %7.1f ms  first read %7.1f ms (%ld faults on "
               "rank 0)  again %6.1f ms  %s\n", mode_names[o.mode], o.bytes >> 20,
               p.alloc * 1e3, p.cold * 1e3, p.faults, p.warm * 1e3,
               ok ? "data ok" : "WRONG DATA");
    MPI_Finalize();
    return ok ? 0 : CLI_EXIT_FAILURE;
}
