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
 * and a range is published before its memory is protected. Its nodes are never freed:
 * a released one is marked empty and reused by the next protection, so a fault in
 * another thread that walks the list never reads freed memory. */
#define _GNU_SOURCE
#include "memory.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STALE_TEXT_MAX 512

typedef struct stale_range {
    char *base;
    _Atomic size_t bytes;       /* 0: released, free for the next protection            */
    _Atomic(struct stale_range *) next;
    size_t len;                 /* of text, which ends in a newline */
    char text[STALE_TEXT_MAX];
} stale_range_t;

static _Atomic(stale_range_t *) ranges;
/* The handlers of SIGSEGV and SIGBUS before this file's, which it hands other faults. */
static struct sigaction previous[2];
static bool installed;

static const stale_range_t *range_of(const char *addr)
{
    for (const stale_range_t *r = atomic_load(&ranges); r != NULL; r = atomic_load(&r->next)) {
        size_t bytes = atomic_load(&r->bytes);
        if (bytes > 0 && addr >= r->base && addr < r->base + bytes)
            return r;
    }
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
    /* SA_ONSTACK: a handler before this one may rely on an alternate stack (a stack
     * overflow's SIGSEGV). */
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
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

/* A released node of the list, else a new one linked at its head; NULL without memory. */
static stale_range_t *free_node(void)
{
    for (stale_range_t *r = atomic_load(&ranges); r != NULL; r = atomic_load(&r->next))
        if (atomic_load(&r->bytes) == 0)
            return r;
    stale_range_t *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    atomic_store(&r->next, atomic_load(&ranges));
    atomic_store(&ranges, r);
    return r;
}

/* Accessible again, and the node free for reuse. */
static void release(stale_range_t *r)
{
    size_t bytes = atomic_load(&r->bytes);
    if (bytes == 0)
        return;
    mprotect(r->base, bytes, PROT_READ | PROT_WRITE);
    atomic_store(&r->bytes, 0);
}

bool engine_stale_protect(const engine_buffer_t *b, const char *text)
{
    if (!libmal_memory(b) || !install())
        return false;
    stale_range_t *r = free_node();
    if (r == NULL)
        return false;
    size_t len = strlen(text);
    len = len < STALE_TEXT_MAX ? len : STALE_TEXT_MAX - 1;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    r->len = len;
    r->base = b->base;
    atomic_store(&r->bytes, b->mapped); /* published: the handler may match it now */
    if (mprotect(r->base, b->mapped, PROT_NONE) == 0)
        return true;
    atomic_store(&r->bytes, 0);
    return false;
}

void engine_stale_release_all(void)
{
    for (stale_range_t *r = atomic_load(&ranges); r != NULL; r = atomic_load(&r->next))
        release(r);
}

void engine_stale_release(const char *base, size_t bytes)
{
    if (base == NULL || bytes == 0)
        return;
    for (stale_range_t *r = atomic_load(&ranges); r != NULL; r = atomic_load(&r->next)) {
        size_t held = atomic_load(&r->bytes);
        if (held > 0 && r->base < base + bytes && base < r->base + held)
            release(r);
    }
}
