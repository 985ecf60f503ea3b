/* Debug mode's stale memory (memory.h, MAL_DEBUG): after a reconfiguration commits, the
 * memory the application's pointers from before it lead into (a structure's old buffer,
 * kept as its spare) is made inaccessible until the next reconfiguration begins, so that
 * a pointer not read again faults at its first use instead of reading rows that are no
 * longer this process's, or that the next move writes. A fault there prints the line
 * prepared for it and aborts; any other fault goes to the handler that was there before
 * (the MPI library's or UCX's backtrace, or the default action).
 *
 * The ranges are a fact of this process's memory, not of one mal_init, and a signal
 * handler reaches only static data: hence the file-static list. The handler calls only
 * async-signal-safe functions (write, abort, sigaction), so its line is written when
 * the range is protected. The list is changed only by the thread that calls libmal,
 * and a range is published before its memory is protected. */
#define _GNU_SOURCE
#include "memory.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct stale_range {
    char *base;
    size_t bytes;
    _Atomic(struct stale_range *) next;
    size_t len;                 /* of text, which ends in a newline */
    char text[];
} stale_range_t;

static _Atomic(stale_range_t *) ranges;
/* The handlers of SIGSEGV and SIGBUS before this file's, which it hands other faults. */
static struct sigaction previous[2];
static bool installed;

static const stale_range_t *range_of(const char *addr)
{
    for (const stale_range_t *r = atomic_load(&ranges); r != NULL; r = atomic_load(&r->next))
        if (addr >= r->base && addr < r->base + r->bytes)
            return r;
    return NULL;
}

/* A fault that is not a stale access: to the previous handler; with none, the default
 * action, taken when the faulting access runs again on return (ignoring a fault would
 * only repeat it). */
static void chain(int sig, siginfo_t *info, void *context)
{
    const struct sigaction *prev = &previous[sig == SIGBUS];
    if (prev->sa_flags & SA_SIGINFO) {
        prev->sa_sigaction(sig, info, context);
        return;
    }
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    /* si_code > 0: raised by the kernel for an access, so si_addr is the address. */
    const stale_range_t *r = info->si_code > 0 ? range_of(info->si_addr) : NULL;
    if (r == NULL) {
        chain(sig, info, context);
        return;
    }
    ssize_t written = write(STDERR_FILENO, r->text, r->len);
    (void)written; /* nothing better to do on a failed write: abort says the rest */
    abort();
}

static bool install(void)
{
    if (installed)
        return true;
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous[0]) != 0)
        return false;
    if (sigaction(SIGBUS, &sa, &previous[1]) != 0) {
        sigaction(SIGSEGV, &previous[0], NULL);
        return false;
    }
    installed = true;
    return true;
}

/* Only memory libmal mapped is libmal's to protect: direct memory, a window's over it,
 * memory kept from them. MPI's windows and SHMEM's blocks are their libraries'. */
static bool libmal_memory(const engine_buffer_t *b)
{
    return b->base != NULL && b->mapped > 0 && !b->borrowed &&
           (b->peers != NULL || b->own || b->pending);
}

bool engine_stale_protect(const engine_buffer_t *b, const char *text)
{
    if (!libmal_memory(b) || !install())
        return false;
    size_t len = strlen(text);
    stale_range_t *r = malloc(sizeof *r + len + 1);
    if (r == NULL)
        return false;
    *r = (stale_range_t){.base = b->base, .bytes = b->mapped, .len = len,
                         .next = atomic_load(&ranges)};
    memcpy(r->text, text, len + 1);
    atomic_store(&ranges, r);
    if (mprotect(r->base, r->bytes, PROT_NONE) == 0)
        return true;
    atomic_store(&ranges, atomic_load(&r->next));
    free(r);
    return false;
}

void engine_stale_release_all(void)
{
    stale_range_t *r = atomic_exchange(&ranges, NULL);
    while (r != NULL) {
        stale_range_t *next = atomic_load(&r->next);
        mprotect(r->base, r->bytes, PROT_READ | PROT_WRITE);
        free(r);
        r = next;
    }
}

void engine_stale_release(const char *base, size_t bytes)
{
    if (base == NULL || bytes == 0)
        return;
    _Atomic(stale_range_t *) *link = &ranges;
    stale_range_t *r;
    while ((r = atomic_load(link)) != NULL) {
        if (r->base < base + bytes && base < r->base + r->bytes) {
            atomic_store(link, atomic_load(&r->next));
            mprotect(r->base, r->bytes, PROT_READ | PROT_WRITE);
            free(r);
        } else {
            link = &r->next;
        }
    }
}
