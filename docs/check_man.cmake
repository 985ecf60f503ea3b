# A man page cannot rot or drift from its program (ctest docs.man.<page>):
# - it renders without a single groff warning (-ww: all warnings; -z: no output);
# - with -DPROGRAM: every long option the program's --help prints is in the page;
# - with -DENVFILE and -DLAUNCHER (malrun): every variable the launcher's settings file
#   defaults (": "${NAME:=...}") or the launcher itself reads (${NAME...}) is in the page.
# Without groff it prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION).
# Arguments: -DGROFF=<groff or empty> -DPAGE=<page.1> [-DPROGRAM=<exe>]
#            [-DENVFILE=<mal-env.sh> -DLAUNCHER=<malrun>]
cmake_minimum_required(VERSION 3.20)
if(NOT GROFF OR NOT EXISTS "${GROFF}")
  message("SKIPPED: groff not found (Debian package groff-base)")
  return()
endif()
execute_process(COMMAND ${GROFF} -man -ww -z -Tutf8 ${PAGE} RESULT_VARIABLE rc
  OUTPUT_QUIET ERROR_VARIABLE complaints)
if(NOT rc EQUAL 0 OR NOT complaints STREQUAL "")
  message(FATAL_ERROR "${PAGE} does not render cleanly (groff status ${rc}):\n${complaints}")
endif()

# The page's text as a reader sees the words: roff escapes for '-' and fonts removed.
file(READ ${PAGE} text)
string(REPLACE "\\-" "-" text "${text}")
string(REGEX REPLACE "\\\\f[BIRP]" "" text "${text}")
string(REGEX REPLACE "\\\\f\\(..|\\\\f\\[[A-Z]*\\]" "" text "${text}")

include(${CMAKE_CURRENT_LIST_DIR}/fail_on.cmake)

# Appends to `missing` each of `names` that the page's text lacks as a whole word (a
# word being a run of the characters `word`).
function(require_in_text names word why)
  foreach(name IN LISTS names)
    if(NOT text MATCHES "(^|[^${word}])${name}([^${word}]|$)")
      list(APPEND missing "${name} (${why})")
    endif()
  endforeach()
  set(missing "${missing}" PARENT_SCOPE)
endfunction()

set(missing "")
if(PROGRAM)
  execute_process(COMMAND ${PROGRAM} --help RESULT_VARIABLE rc OUTPUT_VARIABLE help
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} --help failed (${rc}):\n${help}${err}")
  endif()
  string(REGEX MATCHALL "--[a-z][a-z0-9-]*" options "${help}")
  list(REMOVE_DUPLICATES options)
  if(NOT options)
    message(FATAL_ERROR "${PROGRAM} --help prints no long option:\n${help}")
  endif()
  require_in_text("${options}" "a-z0-9-" "printed by --help")
endif()

if(ENVFILE)
  file(STRINGS ${ENVFILE} defaults REGEX "^ *: \"\\$\\{[A-Za-z_0-9]+:=")
  file(STRINGS ${LAUNCHER} reads REGEX "\\$\\{[A-Za-z_0-9]+")
  set(variables "")
  foreach(line IN LISTS defaults reads)
    string(REGEX MATCHALL "\\$\\{[A-Za-z_0-9]+" names "${line}")
    foreach(name IN LISTS names)
      string(SUBSTRING "${name}" 2 -1 name)
      list(APPEND variables ${name})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES variables)
  list(LENGTH variables nvariables)
  if(nvariables LESS 10)
    message(FATAL_ERROR "found only ${nvariables} variables in ${ENVFILE} and ${LAUNCHER}")
  endif()
  require_in_text("${variables}" "A-Za-z_0-9" "set by ${ENVFILE} or read by ${LAUNCHER}")
endif()

fail_on("${missing}" "${PAGE} is out of step with its program")
message(STATUS "${PAGE}: renders cleanly and documents every option")
