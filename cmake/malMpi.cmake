# Which MPI libmal is built for: MAL_MPI = openmpi or mpich (Debian 12: Open MPI 4.1 from
# libopenmpi-dev, MPICH 4.0 from libmpich-dev, side by side). Default: the family of the
# `mpicc` on the PATH (Debian's alternatives pick it). The family's own compiler wrapper
# and launcher are used, never the alternatives', so one machine builds both:
#   Open MPI: mpicc.openmpi, mpiexec.openmpi     MPICH: mpicc.mpich, mpiexec.mpich (Hydra)
# Sets MAL_MPI (cache), MAL_MPIEXEC, and the hints FindMPI reads (MPI_C_COMPILER,
# MPIEXEC_EXECUTABLE) unless the caller gave them.
set(MAL_MPI "" CACHE STRING "MPI family to build for: openmpi or mpich (default: that of mpicc)")
set_property(CACHE MAL_MPI PROPERTY STRINGS openmpi mpich)

# The family a compiler wrapper belongs to, from the file it resolves to (Open MPI's
# wrappers are links to opal_wrapper; MPICH's are scripts named *.mpich), else "".
function(mal_mpi_family_of wrapper out)
  get_filename_component(real "${wrapper}" REALPATH)
  get_filename_component(name "${real}" NAME)
  set(family "")
  if(name MATCHES "opal_wrapper|openmpi")
    set(family openmpi)
  elseif(name MATCHES "mpich")
    set(family mpich)
  endif()
  set(${out} "${family}" PARENT_SCOPE)
endfunction()

if(NOT MAL_MPI)
  find_program(MAL_DEFAULT_MPICC mpicc)
  if(NOT MAL_DEFAULT_MPICC)
    message(FATAL_ERROR "no mpicc on the PATH: install libopenmpi-dev or libmpich-dev, or "
      "configure with -DMAL_MPI=openmpi or -DMAL_MPI=mpich")
  endif()
  mal_mpi_family_of("${MAL_DEFAULT_MPICC}" detected)
  if(NOT detected)
    message(FATAL_ERROR "cannot tell which MPI ${MAL_DEFAULT_MPICC} is: configure with "
      "-DMAL_MPI=openmpi or -DMAL_MPI=mpich")
  endif()
  set(MAL_MPI ${detected} CACHE STRING "MPI family to build for: openmpi or mpich" FORCE)
endif()
if(NOT MAL_MPI MATCHES "^(openmpi|mpich)$")
  message(FATAL_ERROR "MAL_MPI='${MAL_MPI}': libmal builds for openmpi or mpich")
endif()

set(_mal_mpi_package_openmpi "libopenmpi-dev and openmpi-bin")
set(_mal_mpi_package_mpich "libmpich-dev and mpich")
# The family's own `tool` (mpicc, mpiexec) into the cache variable `var`, unless given.
function(mal_mpi_tool var tool doc)
  if(${var})
    return()
  endif()
  find_program(MAL_${tool}_FOUND ${tool}.${MAL_MPI})
  if(NOT MAL_${tool}_FOUND)
    message(FATAL_ERROR "MAL_MPI=${MAL_MPI}: no ${tool}.${MAL_MPI}; install "
      "${_mal_mpi_package_${MAL_MPI}}")
  endif()
  set(${var} ${MAL_${tool}_FOUND} CACHE FILEPATH "${doc}")
endfunction()
if(MPI_C_COMPILER)
  mal_mpi_family_of("${MPI_C_COMPILER}" given)
  if(given AND NOT given STREQUAL MAL_MPI)
    message(FATAL_ERROR "MAL_MPI=${MAL_MPI} but MPI_C_COMPILER=${MPI_C_COMPILER} is "
      "${given}'s: use a separate build directory for each MPI")
  endif()
endif()
mal_mpi_tool(MPI_C_COMPILER mpicc "MPI C compiler wrapper")
mal_mpi_tool(MPIEXEC_EXECUTABLE mpiexec "MPI launcher")
set(MAL_MPIEXEC ${MPIEXEC_EXECUTABLE})

# After find_package(MPI): the library found must be the family's (a stale cache from
# another family's build is the usual cause).
include(${CMAKE_CURRENT_LIST_DIR}/malMpiFamily.cmake)
function(mal_mpi_check_found)
  mal_mpi_family_found(found)
  if(NOT found STREQUAL MAL_MPI)
    message(FATAL_ERROR "MAL_MPI=${MAL_MPI}, but the mpi.h found (${MPI_C_INCLUDE_DIRS}) is "
      "'${found}''s: use a separate build directory for each MPI")
  endif()
endfunction()
