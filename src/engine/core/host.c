/* Facts of the host this process runs on, for the monitor and the policy's resource
 * view. */
#include "core.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

int engine_host_cores(void)
{
    /* A fact of the machine, not of one mal_init: read once per process. */
    static int cores;
    if (cores > 0)
        return cores;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0)
            cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_topology_destroy(topo);
    }
    if (cores < 1) { /* no topology: count what the OS offers */
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        cores = online > 0 ? (int)online : 1;
    }
    return cores;
}

uint64_t engine_host_id(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    return engine_hash(ENGINE_HASH_SEED, name, strlen(name));
}

const char *engine_host_span(const char *hosts, int64_t index, size_t *len)
{
    *len = 0;
    if (hosts == NULL)
        return NULL;
    int64_t count = 1;
    for (const char *c = hosts; *c; c++)
        count += *c == ',';
    const char *start = hosts;
    for (int64_t i = 0; i < index % count; i++)
        start = strchr(start, ',') + 1;
    *len = strcspn(start, ",");
    return start;
}

char *engine_host_at(const char *hosts, int64_t index)
{
    size_t len;
    const char *start = engine_host_span(hosts, index, &len);
    if (start == NULL)
        return NULL;
    char *host = malloc(len + 1);
    if (host != NULL) {
        memcpy(host, start, len);
        host[len] = '\0';
    }
    return host;
}
