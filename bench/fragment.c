/* The fragmenting helper (fragment.h). Each refresh maps the free memory beyond the
 * reserve as small pages (MADV_NOHUGEPAGE), faults every page in, then gives back every
 * other page with MADV_DONTNEED: the pages given back are single 4 KiB holes between
 * pages the helper still holds, so the kernel cannot merge them into a huge page
 * without migrating the helper's pages (compaction). A run that freed memory leaves
 * larger free blocks again; the next refresh takes them the same way. */
#define _GNU_SOURCE
#include "fragment.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096LL

/* MemFree in MiB (what the allocator has now, not what it could reclaim). */
static long long mem_free_mib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemFree: %lld kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

/* One checkerboard of `mib` MiB: held half of it, the rest freed page by page. */
static bool checkerboard(long long mib)
{
    size_t bytes = (size_t)mib << 20;
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    madvise(p, bytes, MADV_NOHUGEPAGE);
    for (size_t off = 0; off < bytes; off += PAGE)
        p[off] = 1;
    for (size_t off = 0; off < bytes; off += 2 * PAGE)
        madvise(p + off, PAGE, MADV_DONTNEED);
    return true; /* kept mapped until the helper exits */
}

/* The helper's loop: a request byte, a refresh, the answer "held free" in MiB. The
 * holes of earlier refreshes are free but unusable for a huge page: not counted again. */
static void helper(int in, int out, long long keep_mib)
{
    long long held = 0, holes = 0;
    char c;
    while (read(in, &c, 1) == 1) {
        long long spare = mem_free_mib() - keep_mib - holes;
        if (spare > 64 && checkerboard(spare)) {
            held += spare / 2;
            holes += spare - spare / 2;
        }
        char answer[64];
        int n = snprintf(answer, sizeof answer, "%lld %lld\n", held, mem_free_mib());
        if (write(out, answer, (size_t)n) != n)
            break;
    }
    _exit(0);
}

bool fragmenter_start(fragmenter_t *f, long long keep_mib)
{
    int down[2], up[2];
    *f = (fragmenter_t){0};
    if (pipe(down) != 0 || pipe(up) != 0) {
        perror("mal_bench_redist: pipe (fragmenter)");
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("mal_bench_redist: fork (fragmenter)");
        return false;
    }
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        helper(down[0], up[1], keep_mib);
    }
    close(down[0]);
    close(up[1]);
    *f = (fragmenter_t){.pid = pid, .to_helper = down[1], .from_helper = up[0]};
    return true;
}

bool fragmenter_refresh(fragmenter_t *f)
{
    char buf[64];
    ssize_t n = 0;
    if (f->pid == 0 || write(f->to_helper, "r", 1) != 1)
        return false;
    while (n < (ssize_t)sizeof buf - 1) { /* one line */
        ssize_t k = read(f->from_helper, buf + n, 1);
        if (k <= 0)
            return false;
        if (buf[n++] == '\n')
            break;
    }
    buf[n] = '\0';
    return sscanf(buf, "%lld %lld", &f->held_mib, &f->free_mib) == 2;
}

void fragmenter_stop(fragmenter_t *f)
{
    if (f->pid == 0)
        return;
    close(f->to_helper);
    close(f->from_helper);
    kill(f->pid, SIGTERM);
    waitpid(f->pid, NULL, 0);
    f->pid = 0;
}
