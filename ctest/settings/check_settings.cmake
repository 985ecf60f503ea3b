# The settings reference cannot drift from the code (run by the test settings.reference):
# - docs/guide/library.md's section between <!-- settings:begin --> and <!-- settings:end --> is what
#   settings_table --markdown prints (with -DWRITE=ON this script rewrites it instead:
#   cmake --build build --target settings-reference);
# - every member of mal_config_t in include/mal.h is a row of the table;
# - every getenv("MAL_...") in src/ names a variable of the table.
# Arguments: -DTABLE=<settings_table> -DSOURCE=<project source dir> [-DWRITE=ON]
cmake_minimum_required(VERSION 3.13)
set(begin_mark "<!-- settings:begin -->\n")
set(end_mark "<!-- settings:end -->")

execute_process(COMMAND ${TABLE} --markdown OUTPUT_VARIABLE markdown RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "settings_table --markdown failed (${rc})")
endif()
set(page docs/guide/library.md)
file(READ ${SOURCE}/${page} readme)
string(FIND "${readme}" "${begin_mark}" begin)
string(FIND "${readme}" "${end_mark}" end)
if(begin LESS 0 OR end LESS begin)
  message(FATAL_ERROR "${page} has no ${begin_mark} ... ${end_mark} section")
endif()
string(LENGTH "${begin_mark}" mark_len)
math(EXPR body_start "${begin} + ${mark_len}")
math(EXPR body_len "${end} - ${body_start}")
string(SUBSTRING "${readme}" ${body_start} ${body_len} documented)
if(NOT documented STREQUAL markdown)
  if(WRITE)
    string(SUBSTRING "${readme}" 0 ${body_start} head)
    string(SUBSTRING "${readme}" ${end} -1 tail)
    file(WRITE ${SOURCE}/${page} "${head}${markdown}${tail}")
    message(STATUS "${page}: settings reference rewritten from the table")
  else()
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/settings_reference.md "${markdown}")
    message(FATAL_ERROR "${page}'s settings reference differs from the table in "
      "src/engine/core/settings.c; the table prints:\n${markdown}\n"
      "Update it with: cmake --build <build> --target settings-reference")
  endif()
endif()

# mal_config_t's members: the struct body without comments, one declaration a line.
execute_process(COMMAND ${TABLE} --fields OUTPUT_VARIABLE fields)
string(REPLACE "\n" ";" fields "${fields}")
file(READ ${SOURCE}/include/mal.h header)
string(FIND "${header}" "} mal_config_t;" struct_end)
string(SUBSTRING "${header}" 0 ${struct_end} header)
string(FIND "${header}" "typedef struct {" struct_begin REVERSE)
string(SUBSTRING "${header}" ${struct_begin} -1 body)
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" body "${body}")
string(REGEX REPLACE "//[^\n]*" "" body "${body}")
string(REPLACE ";" "#" body "${body}") # a list separator in CMake
string(REGEX MATCHALL "[A-Za-z_][A-Za-z_0-9]*[ \t]*#" members "${body}")
set(missing "")
foreach(m IN LISTS members)
  string(REGEX REPLACE "[ \t]*#" "" m "${m}")
  if(NOT m IN_LIST fields AND NOT m STREQUAL "size") # size: the structure's, not a setting
    list(APPEND missing ${m})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "mal_config_t fields missing from the settings table: ${missing}")
endif()
list(LENGTH members nmembers)
if(nmembers LESS 10)
  message(FATAL_ERROR "found only ${nmembers} members of mal_config_t in include/mal.h")
endif()

# Environment variables read by src/.
execute_process(COMMAND ${TABLE} --env OUTPUT_VARIABLE variables)
string(REPLACE "\n" ";" variables "${variables}")
file(GLOB_RECURSE sources ${SOURCE}/src/*.c ${SOURCE}/src/*.h)
set(unknown "")
foreach(f IN LISTS sources)
  file(STRINGS ${f} calls REGEX "getenv\\(\"MAL_[A-Z_0-9]+\"\\)")
  foreach(c IN LISTS calls)
    string(REGEX MATCHALL "getenv\\(\"MAL_[A-Z_0-9]+\"\\)" names "${c}")
    foreach(n IN LISTS names)
      string(REGEX REPLACE "getenv\\(\"(MAL_[A-Z_0-9]+)\"\\)" "\\1" n "${n}")
      if(NOT n IN_LIST variables)
        list(APPEND unknown "${n} (${f})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(unknown)
  message(FATAL_ERROR "environment variables read but not in the settings table: ${unknown}")
endif()
message(STATUS "settings: ${page} matches the table; ${nmembers} mal_config_t fields and every "
  "MAL_* variable of src/ are in it")
