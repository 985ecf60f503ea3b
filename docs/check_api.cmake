# Builds the API reference and fails on any gap in it (target docs, ctest docs.api):
# - doxygen runs with FAIL_ON_WARNINGS (docs/Doxyfile.in): an undocumented function,
#   type, macro, struct member, parameter or return value, or a broken reference, is a
#   warning, and every warning is printed and fails the build;
# - doxygen 1.9.4 does not warn about undocumented enum values, so its XML output is
#   searched for an <enumvalue> without description.
# Without doxygen it prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION), or fails
# with -DREQUIRED=ON (the docs target).
# Arguments: -DDOXYGEN=<doxygen or empty> -DDOXYFILE=<configured Doxyfile> -DOUTPUT=<dir>
#            [-DREQUIRED=ON]
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/fail_on.cmake)
if(NOT DOXYGEN OR NOT EXISTS "${DOXYGEN}")
  set(why "doxygen not found (Debian package doxygen: tools/setup-deps.sh --test)")
  if(REQUIRED) # the docs target: asked for the reference, so no reference is an error
    message(FATAL_ERROR "${why}")
  endif()
  message("SKIPPED: ${why}")
  return()
endif()
file(REMOVE_RECURSE ${OUTPUT}/html ${OUTPUT}/xml)
execute_process(COMMAND ${DOXYGEN} ${DOXYFILE} RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_VARIABLE warnings)
# (with WARN_AS_ERROR doxygen calls its warnings "error:")
string(REGEX MATCHALL ": (warning|error):" found "${warnings}")
list(LENGTH found count)
if(NOT rc EQUAL 0 OR count GREATER 0)
  message(FATAL_ERROR "doxygen: ${count} warning(s), exit status ${rc}:\n${warnings}")
endif()

file(GLOB pages ${OUTPUT}/xml/*.xml)
set(undocumented "")
foreach(page IN LISTS pages)
  file(READ ${page} xml)
  string(FIND "${xml}" "<enumvalue " at)
  while(at GREATER_EQUAL 0)
    string(SUBSTRING "${xml}" ${at} -1 xml)
    string(FIND "${xml}" "</enumvalue>" end)
    string(SUBSTRING "${xml}" 0 ${end} value)
    if(NOT value MATCHES "<para>")
      string(REGEX MATCH "<name>([^<]*)</name>" name "${value}")
      list(APPEND undocumented ${CMAKE_MATCH_1})
    endif()
    string(SUBSTRING "${xml}" ${end} -1 xml)
    string(FIND "${xml}" "<enumvalue " at)
  endwhile()
endforeach()
list(REMOVE_DUPLICATES undocumented)
fail_on("${undocumented}" "enum values without documentation")
list(LENGTH pages npages)
if(npages EQUAL 0)
  message(FATAL_ERROR "doxygen wrote no XML into ${OUTPUT}/xml")
endif()
message(STATUS "API reference: ${OUTPUT}/html/index.html (0 warnings, every enum value documented)")
