/* Open MPI's side (Open MPI 4.1.4 of Debian 12 with its external PMIx 4.2; the names
 * Open MPI 5 renames are read under both). */
#include "platform.h"

/* Open MPI spawns through its runtime (ORTE, PRRTE in 5): always there. */
static bool open_mpi_can_spawn(const char *version, char *why, size_t len)
{
    (void)version;
    (void)why;
    (void)len;
    return true;
}

const engine_mpi_side_t engine_mpi_open_mpi = {
    .name = "Open MPI",
    .can_spawn = open_mpi_can_spawn,
};
