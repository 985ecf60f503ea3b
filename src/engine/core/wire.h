/* The wire format of libmal's messages between processes (the join message, the
 * settings in it): a growing byte buffer written in order and read back in the same
 * order. Integers are int64_t, strings their length (-1 for NULL) and bytes; a write
 * that finds no memory, or a read past the end, sets `failed` and does nothing more, so
 * a message is checked once at its end. Only processes of one build exchange them. */
#ifndef MAL_WIRE_H
#define MAL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *data;        /* malloc'd; the caller frees it                    */
    size_t len, cap;
    bool failed;
} engine_wire_t;

typedef struct {
    const unsigned char *data;
    size_t len, pos;
    bool failed;
} engine_wire_reader_t;

void engine_wire_put(engine_wire_t *w, const void *src, size_t n);
void engine_wire_put_i64(engine_wire_t *w, int64_t v);
void engine_wire_put_str(engine_wire_t *w, const char *s);

/* Reads n bytes into dst (zeros past the end). */
void engine_wire_get(engine_wire_reader_t *r, void *dst, size_t n);
int64_t engine_wire_get_i64(engine_wire_reader_t *r);
/* A malloc'd copy, NULL for a NULL string or a failed read. */
char *engine_wire_get_str(engine_wire_reader_t *r);

#endif /* MAL_WIRE_H */
