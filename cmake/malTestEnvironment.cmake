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
