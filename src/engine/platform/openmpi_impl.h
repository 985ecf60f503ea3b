/* Open MPI's side, the parts split over files of this folder (openmpi.c, openmpi_mpit.c).
 * Private to platform/. */
#ifndef MAL_OPENMPI_IMPL_H
#define MAL_OPENMPI_IMPL_H

#include "platform.h"

#include <stddef.h>

/* What Open MPI selected, read through MPI_T (openmpi_mpit.c). */
void engine_open_mpi_probe(engine_mpi_selection_t *out, int thread_level);

/* The job's mapping policy as the launcher's PMIx server gives it ("BYCORE:OVERSUBSCRIBE"),
 * copied into buf; NULL when unknown or libmal was built without PMIx (openmpi_pmix.c). */
#ifdef MAL_HAVE_PMIX
const char *engine_open_mpi_mapping(char *buf, size_t len);
#else
static inline const char *engine_open_mpi_mapping(char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return NULL;
}
#endif

#endif /* MAL_OPENMPI_IMPL_H */
