/* selfpath: see selfpath.h. */
#include "selfpath.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool self_find(const char *const rel[], size_t nrel, int mode, char *out, size_t outlen)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (outlen > 0)
        out[0] = '\0';
    if (n <= 0 || (size_t)n >= sizeof exe - 1)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return false;
    *slash = '\0';
    for (size_t i = 0; i < nrel; i++) {
        int len = snprintf(out, outlen, "%s/%s", exe, rel[i]);
        if (len > 0 && (size_t)len < outlen && access(out, mode) == 0)
            return true;
    }
    if (outlen > 0)
        out[0] = '\0';
    return false;
}
