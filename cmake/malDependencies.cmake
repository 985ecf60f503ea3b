# How libmal's build handles what it links (included by the top CMakeLists.txt only).

# An optional dependency's switch MAL_WITH_<NAME>: AUTO (use it when found, the default),
# ON (required: configuring fails without it) or OFF (not used even when present).
# Declares the cache entry; call before looking the dependency up.
function(mal_option name description)
  set(MAL_WITH_${name} AUTO CACHE STRING "${description}: AUTO (when found), ON or OFF")
  set_property(CACHE MAL_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# Whether the dependency is wanted at all (MAL_WITH_<NAME> not OFF): skip the lookup if not.
function(mal_option_wanted name out)
  set(value "${MAL_WITH_${name}}")
  if(value STREQUAL "AUTO" OR value STREQUAL "")
    set(${out} ON PARENT_SCOPE)
  elseif(value)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

# Sets MAL_HAVE_<NAME> from the switch and whether the lookup found it; ON without it
# stops the configuration with what to install.
function(mal_option_resolve name found install_hint)
  mal_option_wanted(${name} wanted)
  set(have OFF)
  if(wanted AND found)
    set(have ON)
  elseif(wanted AND NOT MAL_WITH_${name} STREQUAL "AUTO" AND NOT MAL_WITH_${name} STREQUAL "")
    message(FATAL_ERROR "MAL_WITH_${name}=${MAL_WITH_${name}} but ${name} was not found: "
      "${install_hint}, or configure with -DMAL_WITH_${name}=AUTO or OFF")
  endif()
  set(MAL_HAVE_${name} ${have} PARENT_SCOPE)
endfunction()

# A library libmal itself links, as the imported target mal::dep_<lib> (LIBRARY: its path
# here). The exported static library names the target, never the path:
# malConfig.cmake makes the target again on the user's machine (cmake/malConfig.cmake.in),
# and mal.pc lists -l<lib> in Libs.private, both from MAL_LINKED_DEPENDENCIES.
function(mal_dependency lib library)
  add_library(mal::dep_${lib} INTERFACE IMPORTED)
  set_target_properties(mal::dep_${lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${library}")
  set_property(GLOBAL APPEND PROPERTY MAL_LINKED_DEPENDENCIES ${lib})
endfunction()

# One line of the configure summary: whether the optional dependency NAME is used, and
# what that gives (WITH) or what its absence means (WITHOUT).
function(mal_option_summary name label with without)
  mal_option_wanted(${name} wanted)
  if(MAL_HAVE_${name})
    set(state "found: ${with}")
  elseif(wanted)
    set(state "not found: ${without}")
  else()
    set(state "off (MAL_WITH_${name}=OFF): ${without}")
  endif()
  message(STATUS "  ${label}${state}")
endfunction()
