/* selfpath: files a program finds relative to its own executable (Linux, /proc/self/exe),
 * so that an installed program finds its data and its launcher wherever the prefix was
 * installed or moved to, and no path of the build machine is compiled in. */
#ifndef MAL_SUPPORT_SELFPATH_H
#define MAL_SUPPORT_SELFPATH_H

#include <stdbool.h>
#include <stddef.h>

/* The first of DIR/rel[0], DIR/rel[1], ... (nrel of them) that access(2) grants `mode`
 * (R_OK, X_OK), DIR being the running executable's directory: written to out, true.
 * False with out empty when none is, or the executable's path is unknown or too long. */
bool self_find(const char *const rel[], size_t nrel, int mode, char *out, size_t outlen);

#endif
