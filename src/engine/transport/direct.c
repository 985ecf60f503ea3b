/* Direct memory: the buffers of a structure whose ranks all run on one node.
 *
 * Why not an MPI window there: on these machines a reconfiguration is paid cold, and
 * the cold cost of a window is the kernel mapping its memory page by page. Every first
 * access to a 4 KiB page costs 6-11 us here (a VM), so a rank's first MPI_Get from a
 * peer's window (osc ucx maps the peer's SysV segment; osc sm maps a /dev/shm file)
 * ran at 0.2-0.5 GB/s against 13 GB/s when repeated, and shared memory cannot have
 * transparent huge pages without root (shmem_enabled = never). Private anonymous
 * memory can (THP = madvise), and cross-memory attach (process_vm_readv/writev) copies
 * between two processes' private memory without mapping anything in the caller: the
 * kernel walks the peer's page tables, which its owner populated when it allocated.
 * Measured (docs/design.md, "Cold transfers"): a peer's 128 MiB pulled cold in 11 ms,
 * the same as warm.
 *
 * The buffer stays one-sided: the destination pulls (or the source pushes) with no
 * action of the peer, inside the same agreements that order the MPI path. A buffer is
 * direct only when every rank of its communicator agrees that it can read every other
 * rank's memory this way (same host, cross-memory attach permitted and proven on a
 * cookie); otherwise the caller allocates an MPI window. */
#define _GNU_SOURCE
#include "core.h"
#include "memory.h"
#include "transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/* What a rank tells the others about itself before a direct allocation. */
typedef struct {
    int64_t wants;     /* direct allowed here (setting, platform)      */
    int64_t pid;
    uint64_t host;     /* hash of the host name                        */
    uint64_t cookie;   /* value at cookie_at: proves the pid is this one */
    uint64_t cookie_at;
} identity_t;

/* A random value at a known address of this process: a peer that reads it back
 * through process_vm_readv has reached this process and no other (a pid alone could
 * name another process in another PID namespace on a host of the same name). */
static volatile uint64_t cookie;

static uint64_t own_cookie(void)
{
    if (cookie == 0) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t seed = (uint64_t)getpid() ^ (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 32);
        cookie = engine_hash(ENGINE_HASH_SEED, &seed, sizeof seed) | 1;
    }
    return cookie;
}

/* Whether this process reaches `peer`'s memory by cross-memory attach. */
static bool reaches(const identity_t *peer)
{
    uint64_t seen = 0;
    struct iovec local = {&seen, sizeof seen};
    struct iovec remote = {(void *)(uintptr_t)peer->cookie_at, sizeof seen};
    ssize_t n = process_vm_readv((pid_t)peer->pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)sizeof seen && seen == peer->cookie;
}

/* Collective over `comm`: whether every rank can reach every other one directly. */
static bool all_reach(MPI_Comm comm, bool wants, identity_t *ids, int rank, int size)
{
    identity_t me = {.wants = wants, .pid = getpid(), .host = engine_host_id(),
                     .cookie = own_cookie(), .cookie_at = (uint64_t)(uintptr_t)&cookie};
    int ok = PMPI_Allgather(&me, (int)sizeof me, MPI_BYTE, ids, (int)sizeof me, MPI_BYTE,
                            comm) == MPI_SUCCESS;
    for (int r = 0; r < size && ok; r++)
        ok = ids[r].wants && ids[r].host == me.host && (r == rank || reaches(&ids[r]));
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all == 1;
}

/* Private memory for `bytes`: huge-page aligned and advised when it spans at least one
 * huge page, every page faulted in now, so the owner's first touch is the allocation's
 * cost, not a transfer's. NULL when the memory cannot be had. */
char *engine_private_map(size_t bytes, size_t *mapped)
{
    bool huge = bytes >= HUGE_PAGE_BYTES;
    size_t page = huge ? HUGE_PAGE_BYTES : (size_t)sysconf(_SC_PAGESIZE);
    size_t len = bytes == 0 ? page : (bytes + page - 1) / page * page;
    size_t extra = huge ? HUGE_PAGE_BYTES : 0;
    char *raw = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    /* Trim to a huge-page boundary so the kernel can back it with huge pages. */
    char *base = raw;
    if (huge) {
        uintptr_t a = ((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
        base = (char *)a;
        if (base > raw)
            munmap(raw, (size_t)(base - raw));
        if (raw + len + extra > base + len)
            munmap(base + len, (size_t)(raw + len + extra - (base + len)));
        madvise(base, len, MADV_HUGEPAGE);
    }
    /* One system call instead of a fault per page where the kernel has it (5.14+:
     * EINVAL before). Any other failure is memory the system cannot give: touching it
     * would bring the OOM killer, so the allocation fails instead. */
    if (madvise(base, len, MADV_POPULATE_WRITE) != 0) {
        if (errno != EINVAL) {
            munmap(base, len);
            return NULL;
        }
        memset(base, 0, len);
    }
    *mapped = len;
    return base;
}

/* Private memory of 4 KiB pages, none populated: what a move writes into it is faulted
 * in while the data arrive (why: engine_private_map_or_borrow in memory.h). */
static char *map_lazily(size_t bytes, size_t *mapped)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = bytes == 0 ? page : (bytes + page - 1) / page * page;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    madvise(base, len, MADV_NOHUGEPAGE); /* even where THP is "always" */
    *mapped = len;
    return base;
}

bool engine_private_lends(const engine_buffer_t *donor, size_t bytes)
{
    return donor != NULL && donor->base != NULL && (donor->peers != NULL || donor->pending) &&
           donor->mapped >= bytes;
}

char *engine_private_map_or_borrow(size_t bytes, const engine_buffer_t *donor, bool lazy,
                                   size_t *mapped, bool *borrowed)
{
    *borrowed = engine_private_lends(donor, bytes);
    if (*borrowed) {
        *mapped = donor->mapped;
        return donor->base;
    }
    return lazy ? map_lazily(bytes, mapped) : engine_private_map(bytes, mapped);
}

/* Once every rank's local outcome `st` is agreed: every rank's `bytes` at `mine` into
 * `all` (agreed too). */
static mal_status_t gather_agreed(MPI_Comm comm, mal_status_t st, const void *mine, int bytes,
                                  void *all)
{
    st = engine_agree_in(comm, st, 0, "buffer addresses");
    if (st)
        return st;
    int rc = PMPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm);
    return engine_agree_in(comm, engine_mpi_check(rc, "MPI_Allgather (buffer addresses)"), 0,
                           "buffer addresses");
}

/* Every rank's process and base, after each has its memory (or failed to get it). */
static mal_status_t publish(MPI_Comm comm, int size, char *base, size_t mapped, int64_t bytes,
                            bool borrowed, engine_buffer_t *b)
{
    engine_peer_mem_t *peers = malloc((size_t)size * sizeof *peers);
    engine_peer_mem_t mine = {.pid = getpid(), .base = (uint64_t)(uintptr_t)base,
                              .size = (uint64_t)bytes};
    mal_status_t st = base == NULL || peers == NULL
                          ? engine_fail(MAL_ERR_NOMEM, "no memory for a buffer of %lld bytes",
                                        (long long)bytes)
                          : MAL_OK;
    st = gather_agreed(comm, st, &mine, (int)sizeof mine, peers);
    if (st) {
        if (base != NULL && !borrowed)
            munmap(base, mapped);
        free(peers);
        return st;
    }
    b->base = base;
    b->peers = peers;
    b->mapped = mapped;
    b->borrowed = borrowed;
    return MAL_OK;
}

/* mremap(base, mapped, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst), made as the system
 * call. An MPI library may interpose mremap to watch the address space: UCX's memory
 * hooks (libucm, loaded by MPICH's ch4:ucx) take four arguments before UCX 1.14, drop
 * `dst`, and the kernel then moves the pages wherever the fifth register points (Debian
 * 12, UCX 1.13: the grown part stayed PROT_NONE, and rebalances failed with EFAULT and
 * SIGSEGV). Such hooks are then told that the old range is gone, as the interposed call
 * would have told them: it is mapped again through libc, only where nothing has taken
 * it meanwhile (MAP_FIXED_NOREPLACE: another thread's new mapping is never replaced),
 * and unmapped through libc. Where another thread took part of it first, the hooks
 * never hear that the old pages left: a registration cache may keep them (rare: two
 * system calls apart). */
#ifndef MAP_FIXED_NOREPLACE /* glibc before 2.28; the kernel's value */
#define MAP_FIXED_NOREPLACE 0x100000
#endif
static void *move_mapping(char *base, size_t mapped, size_t len, char *dst)
{
    void *moved = (void *)syscall(SYS_mremap, base, mapped, len,
                                  MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    if (moved == MAP_FAILED)
        return moved;
    void *hole = mmap(base, mapped, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (hole != MAP_FAILED) /* elsewhere on a kernel without NOREPLACE: still ours */
        munmap(hole, mapped);
    return moved;
}

/* This rank's mapping grown to `bytes`, keeping the pages it has: mremap moves them to
 * a huge-page aligned range whose new tail is not populated here. A rebalance writes
 * only the rows that land there, and the transfer that writes them faults in just those
 * pages. Mapping the whole grown capacity anew instead (what this did until the cold
 * benchmark's fragmented condition showed the cost) took fresh pages for all of it on
 * the reconfiguration's critical path: in these VMs a page the hypervisor no longer
 * backs costs up to 30x one it does (docs/design.md, "Fresh pages on the critical
 * path"), and a spare grown from 192 to 307 MiB asked for more fresh pages than the
 * plain MPI_Alltoallv baseline allocates for the whole part. NULL when the address
 * space cannot be had. */
char *engine_private_extend(char *base, size_t mapped, size_t bytes, size_t *out)
{
    size_t len = (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, len + HUGE_PAGE_BYTES, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
    char *dst = (char *)a;
    if (dst > raw)
        munmap(raw, (size_t)(dst - raw));
    if (raw + len + HUGE_PAGE_BYTES > dst + len)
        munmap(dst + len, (size_t)(raw + len + HUGE_PAGE_BYTES - (dst + len)));
    void *moved = move_mapping(base, mapped, len, dst);
    if (moved == MAP_FAILED) {
        munmap(dst, len);
        return NULL;
    }
    /* The pages kept stay huge; the tail gets 4 KiB pages, faulted in by the move that
     * writes them. Huge pages there come from free 2 MiB blocks the host may no longer
     * back: 2 ranks, 256 MiB, all-to-one (one part doubles), 5 cold runs in each memory
     * condition: 65-252 ms (fresh) and 13-164 ms (fragmented) with huge pages, 26-32 and
     * 26-54 ms with 4 KiB pages; the rebalances after it read those pages by cross-memory
     * attach at half speed (warm 9.9 ms instead of 5.4). */
    madvise(dst, mapped, MADV_HUGEPAGE);
    madvise(dst + mapped, len - mapped, MADV_NOHUGEPAGE);
    *out = len;
    return dst;
}

mal_status_t engine_direct_regrow(MPI_Comm comm, engine_buffer_t *b, int64_t bytes)
{
    int size;
    MPI_Comm_size(comm, &size);
    size_t mapped = b->mapped;
    char *base = b->base;
    if ((size_t)bytes > mapped) { /* only ranks whose part outgrew their memory grow */
        char *grown = engine_private_extend(base, mapped, (size_t)bytes, &mapped);
        if (grown == NULL) { /* the old pages stay where they were: give them back */
            munmap(base, b->mapped);
            base = engine_private_map((size_t)bytes, &mapped);
        } else
            base = grown;
    }
    free(b->peers);
    b->peers = NULL;
    b->base = NULL;
    return publish(comm, size, base, mapped, bytes, false, b);
}

mal_status_t engine_direct_alloc(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                                 bool allowed, const engine_buffer_t *donor, bool lazy,
                                 bool *used)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    *used = false;
    identity_t *ids = malloc((size_t)size * sizeof *ids);
    int have = ids != NULL, all_have = 0;
    PMPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm);
    if (!all_have) {
        free(ids);
        return have ? engine_fail(MAL_ERR_REMOTE, "another rank ran out of memory")
                    : engine_fail(MAL_ERR_NOMEM, "no memory for %d peer addresses", size);
    }
    if (!all_reach(comm, allowed, ids, rank, size)) {
        free(ids);
        return MAL_OK; /* the caller allocates a window */
    }
    free(ids);
    size_t mapped = 0;
    bool borrowed = false;
    char *base = engine_private_map_or_borrow((size_t)bytes, donor, lazy, &mapped, &borrowed);
    mal_status_t st = publish(comm, size, base, mapped, bytes, borrowed, b);
    *used = st == MAL_OK;
    return st;
}

/* What a rank tells the others about a window buffer it may share with its host. */
typedef struct {
    identity_t id;
    engine_peer_mem_t mem;
} near_identity_t;

/* The ranks of this host that this rank reaches, from `all` (every other entry zero:
 * pid 0). *missed: some rank of this host is not reached. */
static engine_peer_mem_t *near_of(const near_identity_t *all, int rank, int size,
                                  int *found, bool *missed)
{
    engine_peer_mem_t *near = calloc((size_t)size, sizeof *near);
    *found = 0;
    *missed = false;
    for (int r = 0; r < size && near != NULL; r++) {
        if (all[r].id.host != all[rank].id.host)
            continue;
        if (all[r].id.wants && all[rank].id.wants && (r == rank || reaches(&all[r].id))) {
            near[r] = all[r].mem;
            *found += r != rank;
        } else
            *missed = true;
    }
    return near;
}

mal_status_t engine_direct_near(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                                bool allowed, bool *all_near)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    near_identity_t me = {
        .id = {.wants = allowed, .pid = getpid(), .host = engine_host_id(),
               .cookie = own_cookie(), .cookie_at = (uint64_t)(uintptr_t)&cookie},
        .mem = {.pid = getpid(), .base = (uint64_t)(uintptr_t)b->base,
                .size = (uint64_t)bytes}};
    near_identity_t *all = malloc((size_t)size * sizeof *all);
    mal_status_t st = all != NULL ? MAL_OK
                      : engine_fail(MAL_ERR_NOMEM, "no memory for %d peer addresses", size);
    st = gather_agreed(comm, st, &me, (int)sizeof me, all);
    int found = 0;
    bool missed = true;
    b->near = st ? NULL : near_of(all, rank, size, &found, &missed);
    free(all);
    /* Every rank's verdict: a window over libmal's memory needs them all near. */
    int mine = !st && b->near != NULL && !missed, every = 0;
    PMPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, comm);
    *all_near = every == 1;
    if (!st && b->near == NULL)
        st = engine_fail(MAL_ERR_NOMEM, "no memory for %d peer addresses", size);
    if (!st && found == 0) { /* nobody to copy directly: no table */
        free(b->near);
        b->near = NULL;
    }
    return engine_agree_in(comm, st, 0, "buffer addresses");
}

bool engine_remote_near(const engine_remote_t *at, int peer)
{
    return at->peers != NULL || (at->near != NULL && at->near[peer].pid != 0);
}

bool engine_direct_reserve(int64_t bytes, engine_buffer_t *kept)
{
    size_t mapped = 0;
    char *base = engine_private_map((size_t)bytes, &mapped);
    *kept = (engine_buffer_t){.win = MPI_WIN_NULL, .base = base, .mapped = mapped,
                              .pending = base != NULL};
    return base != NULL;
}

void engine_direct_free(engine_buffer_t *b)
{
    if (!b->borrowed && !b->lent)
        munmap(b->base, b->mapped);
    free(b->peers);
}

mal_status_t engine_direct_transfer(const engine_peer_mem_t *peers, bool put, char *buf,
                                    int64_t bytes, int peer, int64_t disp)
{
    /* Testing knob: a transfer that fails half-way through a reconfiguration. */
    if (getenv("MAL_FAULT_DIRECT") != NULL && bytes > 0)
        return engine_fail(MAL_ERR_MPI, "%s of %lld bytes %s rank %d failed: injected "
                           "fault (MAL_FAULT_DIRECT)", put ? "process_vm_writev" :
                           "process_vm_readv", (long long)bytes, put ? "to" : "from", peer);
    if (disp < 0 || (uint64_t)disp + (uint64_t)bytes > peers[peer].size)
        return engine_fail(MAL_ERR_MPI, "a transfer of %lld bytes at %lld %s rank %d passes "
                           "the end of its %llu-byte buffer", (long long)bytes,
                           (long long)disp, put ? "into" : "from", peer,
                           (unsigned long long)peers[peer].size);
    pid_t pid = (pid_t)peers[peer].pid;
    char *remote = (char *)(uintptr_t)peers[peer].base + disp;
    int64_t done = 0;
    while (done < bytes) {
        struct iovec l = {buf + done, (size_t)(bytes - done)};
        struct iovec r = {remote + done, (size_t)(bytes - done)};
        ssize_t n = put ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                        : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return engine_fail(MAL_ERR_MPI, "%s of %lld bytes %s rank %d failed: %s",
                               put ? "process_vm_writev" : "process_vm_readv",
                               (long long)(bytes - done), put ? "to" : "from", peer,
                               n < 0 ? strerror(errno) : "nothing copied");
        done += n;
    }
    return MAL_OK;
}

bool engine_direct_huge_pages(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f == NULL)
        return false;
    bool ok = fgets(line, sizeof line, f) != NULL &&
              (strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL);
    fclose(f);
    return ok;
}
