# Tests that ignore the caller's environment. Every MAL_ variable that libmal, its
# programs or the project's scripts read is unset for each test, except the ones the
# test sets itself (its ENVIRONMENT property, which ctest applies before
# ENVIRONMENT_MODIFICATION). A user who exported MAL_QUIET=1 or MAL_REDIST=p2p runs the
# same suite as CI does (test env.hostile proves it).
#
# The names are read from the sources at configure time, so a new setting needs no line
# here: every "MAL_..." string literal of the C sources (getenv's arguments and the
# settings table's) and every MAL_ word of the project's scripts.

function(mal_environment_names out)
  file(GLOB_RECURSE c_sources LIST_DIRECTORIES false
    ${PROJECT_SOURCE_DIR}/src/*.c ${PROJECT_SOURCE_DIR}/src/*.h
    ${PROJECT_SOURCE_DIR}/apps/*.c ${PROJECT_SOURCE_DIR}/bench/*.c
    ${PROJECT_SOURCE_DIR}/examples/*.c ${PROJECT_SOURCE_DIR}/support/*.c)
  file(GLOB_RECURSE scripts LIST_DIRECTORIES false ${PROJECT_SOURCE_DIR}/tools/*
    ${PROJECT_SOURCE_DIR}/bench/*.sh ${PROJECT_SOURCE_DIR}/ctest/*.sh)
  set(names "")
  foreach(file IN LISTS c_sources scripts)
    file(STRINGS ${file} lines REGEX "MAL_[A-Z]")
    if(file IN_LIST c_sources)
      string(REGEX MATCHALL "\"MAL_[A-Z][A-Z0-9_]*\"" found "${lines}")
      string(REPLACE "\"" "" found "${found}")
    else()
      string(REGEX MATCHALL "MAL_[A-Z][A-Z0-9_]*" found "${lines}")
    endif()
    list(APPEND names ${found})
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# Called at the end of a directory that adds tests (cmake_language(DEFER)): each of its
# tests unsets every name it does not set itself.
function(mal_pin_test_environment)
  mal_environment_names(names)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} ENVIRONMENT env)
    set(own "")
    foreach(assignment IN LISTS env)
      if(assignment MATCHES "^([A-Za-z_][A-Za-z0-9_]*)=")
        list(APPEND own ${CMAKE_MATCH_1})
      endif()
    endforeach()
    set(unset "")
    foreach(name IN LISTS names)
      if(name STREQUAL "MAL_MPI" AND NOT name IN_LIST own)
        list(APPEND unset "MAL_MPI=set:${MAL_MPI}") # the launcher starts this build's MPI
      elseif(NOT name IN_LIST own)
        list(APPEND unset "${name}=unset:")
      endif()
    endforeach()
    set_tests_properties(${test} PROPERTIES ENVIRONMENT_MODIFICATION "${unset}")
  endforeach()
endfunction()

# Tests a build's MPI family cannot run, named by regular expressions over test names and
# labelled with why; where they do not apply they do not run (DISABLED: ctest lists them
# as "Not Run (Disabled)", and tools/test.sh says how many and why).
#   needs-spawn   they start processes, which MPICH 4.0's ch4:ucx device cannot (Debian
#                 12's MPICH; docs/design.md, "Two MPI families"): not run for MAL_MPI=
#                 mpich. What libmal does there instead, refuse the expansion and go on,
#                 is tested by mpi.platform.spawn.
#   openmpi-only  they use Open MPI's launcher or runtime by name (its Slurm launch,
#                 plain mpiexec's options): not run for another family. The emulated
#                 hosts' tests run on both (ctest/multihost/mhrun speaks to each launcher).
function(mal_tests_need label)
  set_property(GLOBAL APPEND PROPERTY MAL_TESTS_NEED_${label} ${ARGN})
endfunction()

# MPICH's progress never yields the core (its ch4 device busy-polls): at 3 ranks on 2
# cores the chunked rebalance took 219-311 s (3.7 s with Open MPI's yield_when_idle) and
# the window one 88 s. Every time limit is 5x there; a hang still ends.
set(MAL_MPICH_TIMEOUT_FACTOR 5)

function(mal_apply_test_needs)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    get_test_property(${test} TIMEOUT limit)
    if(MAL_MPI STREQUAL "mpich" AND limit)
      math(EXPR limit "${limit} * ${MAL_MPICH_TIMEOUT_FACTOR}")
      set_tests_properties(${test} PROPERTIES TIMEOUT ${limit})
    endif()
  endforeach()
  foreach(label needs-spawn openmpi-only)
    get_property(patterns GLOBAL PROPERTY MAL_TESTS_NEED_${label})
    set(skip OFF)
    if((label STREQUAL "needs-spawn" AND MAL_MPI STREQUAL "mpich") OR
       (label STREQUAL "openmpi-only" AND NOT MAL_MPI STREQUAL "openmpi"))
      set(skip ON)
    endif()
    foreach(test IN LISTS tests)
      foreach(pattern IN LISTS patterns)
        if(test MATCHES "${pattern}")
          set_property(TEST ${test} APPEND PROPERTY LABELS ${label})
          if(skip)
            set_tests_properties(${test} PROPERTIES DISABLED TRUE)
          endif()
          break()
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()
