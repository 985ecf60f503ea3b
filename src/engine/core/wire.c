/* The wire format of libmal's messages (wire.h). */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

void engine_wire_put(engine_wire_t *w, const void *src, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = 2 * (w->cap + n);
        unsigned char *bigger = realloc(w->data, cap);
        if (bigger == NULL) {
            w->failed = true;
            return;
        }
        w->data = bigger;
        w->cap = cap;
    }
    memcpy(w->data + w->len, src, n);
    w->len += n;
}

void engine_wire_put_i64(engine_wire_t *w, int64_t v)
{
    engine_wire_put(w, &v, sizeof v);
}

void engine_wire_put_str(engine_wire_t *w, const char *s)
{
    engine_wire_put_i64(w, s ? (int64_t)strlen(s) : -1);
    if (s)
        engine_wire_put(w, s, strlen(s));
}

void engine_wire_get(engine_wire_reader_t *r, void *dst, size_t n)
{
    if (r->failed || r->len - r->pos < n) {
        r->failed = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->data + r->pos, n);
    r->pos += n;
}

int64_t engine_wire_get_i64(engine_wire_reader_t *r)
{
    int64_t v;
    engine_wire_get(r, &v, sizeof v);
    return v;
}

char *engine_wire_get_str(engine_wire_reader_t *r)
{
    int64_t n = engine_wire_get_i64(r);
    if (n < 0 || r->failed || (size_t)n > r->len - r->pos)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s == NULL) {
        r->failed = true;
        return NULL;
    }
    engine_wire_get(r, s, (size_t)n);
    s[n] = '\0';
    return s;
}
