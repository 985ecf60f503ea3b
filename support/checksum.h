/* checksum: the 64-bit FNV-1a hash of a buffer, which the examples print so that two
 * runs can be compared byte for byte (a malleable run against a static or serial one). */
#ifndef MAL_SUPPORT_CHECKSUM_H
#define MAL_SUPPORT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t checksum_fnv1a64(const void *data, size_t bytes)
{
    const unsigned char *p = data;
    uint64_t hash = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < bytes; i++) {
        hash ^= p[i];
        hash *= UINT64_C(0x100000001b3);
    }
    return hash;
}

#endif
