# The family of the MPI that find_package(MPI) found, from its mpi.h: OPEN_MPI is defined
# by Open MPI's, MPICH_VERSION by MPICH's (and its derivatives': Intel MPI, MVAPICH, Cray
# MPICH). Used by libmal's build and, installed beside malConfig.cmake, by a consumer's
# find_package(mal), which refuses an MPI of the other family.
include(CheckSymbolExists)
include(CMakePushCheckState)

# out: openmpi, mpich or "" (neither macro: an MPI libmal has not been built for).
function(mal_mpi_family_found out)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_QUIET ON)
  unset(MAL_MPI_HAS_OPEN_MPI CACHE) # asked again each time: the MPI may have changed
  unset(MAL_MPI_HAS_MPICH CACHE)
  check_symbol_exists(OPEN_MPI mpi.h MAL_MPI_HAS_OPEN_MPI)
  check_symbol_exists(MPICH_VERSION mpi.h MAL_MPI_HAS_MPICH)
  cmake_pop_check_state()
  set(family "")
  if(MAL_MPI_HAS_OPEN_MPI)
    set(family openmpi)
  elseif(MAL_MPI_HAS_MPICH)
    set(family mpich)
  endif()
  set(${out} "${family}" PARENT_SCOPE)
endfunction()
