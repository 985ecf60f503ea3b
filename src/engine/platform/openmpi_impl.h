/* Open MPI's side, the parts split over files of this folder (openmpi.c, openmpi_mpit.c).
 * Private to platform/. */
#ifndef MAL_OPENMPI_IMPL_H
#define MAL_OPENMPI_IMPL_H

#include "platform.h"

/* What Open MPI selected, read through MPI_T (openmpi_mpit.c). */
void engine_open_mpi_probe(engine_mpi_selection_t *out, int thread_level);

#endif /* MAL_OPENMPI_IMPL_H */
