/* Facts of the host this process runs on, for the monitor and the policy's resource
 * view. */
#include "engine.h"

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
