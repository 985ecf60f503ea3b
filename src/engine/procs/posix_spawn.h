/* The C library's <spawn.h> (posix_spawn), which procs/spawn.h hides: the engine's folders
 * are on the include path, so `#include <spawn.h>` finds the project's header. Include
 * this one as <posix_spawn.h>, found through the include path in procs/: #include_next
 * (a GCC and Clang extension) then goes on past this folder and reaches the system's. */
#ifndef MAL_PROCS_POSIX_SPAWN_H
#define MAL_PROCS_POSIX_SPAWN_H

#include_next <spawn.h>

#endif
