/* The library's notices: see core.h. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>

static void add(engine_notice_t *n, const char *fmt, va_list ap)
{
    if (n->used >= sizeof n->text - 1)
        return;
    int wrote = vsnprintf(n->text + n->used, sizeof n->text - n->used, fmt, ap);
    if (wrote > 0)
        n->used += (size_t)wrote < sizeof n->text - n->used ? (size_t)wrote
                                                            : sizeof n->text - 1 - n->used;
}

void engine_notice_add(engine_notice_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(n, fmt, ap);
    va_end(ap);
}

/* stderr is unbuffered: one fwrite is one write(2) of the whole notice. */
void engine_notice_write(const engine_notice_t *n)
{
    fwrite(n->text, 1, n->used, stderr);
    fflush(stderr);
}

void engine_notice(const char *fmt, ...)
{
    engine_notice_t n = {.used = 0};
    va_list ap;
    va_start(ap, fmt);
    add(&n, fmt, ap);
    va_end(ap);
    engine_notice_write(&n);
}
