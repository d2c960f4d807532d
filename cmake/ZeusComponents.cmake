# Optional components: each is a cache variable ZEUS_BUILD_<NAME> that is
#   AUTO  (the default) built when its dependencies are found, else left out
#         with the reason in the configure summary;
#   ON    required: a missing dependency is a configure error that names the
#         Debian package to install;
#   OFF   not built, and its dependencies are not looked for.
# After zeus_component_resolve(<NAME> ...), ZEUS_HAVE_<NAME> is ON or OFF.
# zeus_component_summary() prints one line per component at the end.

set_property(GLOBAL PROPERTY ZEUS_COMPONENTS "")

# zeus_component(<NAME> <description>): declares ZEUS_BUILD_<NAME>.
macro(zeus_component name description)
  set(ZEUS_BUILD_${name} AUTO CACHE STRING "Build ${description}: AUTO, ON or OFF")
  set_property(CACHE ZEUS_BUILD_${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${ZEUS_BUILD_${name}}" _zeus_value)
  if(NOT _zeus_value MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "ZEUS_BUILD_${name} is '${ZEUS_BUILD_${name}}'; use AUTO, ON or OFF")
  endif()
  if(_zeus_value MATCHES "^(ON|TRUE|YES|1)$")
    set(ZEUS_WANT_${name} ON)
  elseif(_zeus_value STREQUAL "AUTO")
    set(ZEUS_WANT_${name} AUTO)
  else()
    set(ZEUS_WANT_${name} OFF)
  endif()
  set(ZEUS_HAVE_${name} OFF)
  set_property(GLOBAL APPEND PROPERTY ZEUS_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY ZEUS_COMPONENT_DESCRIPTION_${name} "${description}")
endmacro()

# zeus_component_resolve(<NAME> [NEED <condition-variable> <what is missing> ...]):
# ZEUS_HAVE_<NAME> is ON when every condition variable is true. A false one
# is an error when the component was asked for (ON), else the component is
# left out with that reason. Call it only when ZEUS_WANT_<NAME> is not OFF.
function(zeus_component_resolve name)
  set(missing "")
  set(args ${ARGN})
  list(LENGTH args n)
  set(i 0)
  while(i LESS n)
    list(GET args ${i} keyword)
    math(EXPR j "${i} + 1")
    math(EXPR k "${i} + 2")
    list(GET args ${j} condition)
    list(GET args ${k} what)
    if(NOT keyword STREQUAL "NEED")
      message(FATAL_ERROR "zeus_component_resolve(${name}): expected NEED, got '${keyword}'")
    endif()
    if(NOT ${condition})
      list(APPEND missing "${what}")
    endif()
    math(EXPR i "${i} + 3")
  endwhile()
  if(missing)
    list(JOIN missing "; " reasons)
    if(ZEUS_WANT_${name} STREQUAL "ON")
      message(FATAL_ERROR "ZEUS_BUILD_${name}=ON, but ${reasons}. "
                          "Install it (scripts/install-deps installs every package), or configure with "
                          "-DZEUS_BUILD_${name}=OFF (or AUTO) to leave the component out.")
    endif()
    set(ZEUS_HAVE_${name} OFF PARENT_SCOPE)
    set_property(GLOBAL PROPERTY ZEUS_COMPONENT_REASON_${name} "${reasons}")
  else()
    set(ZEUS_HAVE_${name} ON PARENT_SCOPE)
  endif()
endfunction()

# zeus_component_off(<NAME> <reason>): the component is not built.
function(zeus_component_off name reason)
  if(ZEUS_WANT_${name} STREQUAL "ON")
    message(FATAL_ERROR "ZEUS_BUILD_${name}=ON, but ${reason}.")
  endif()
  set(ZEUS_HAVE_${name} OFF PARENT_SCOPE)
  set_property(GLOBAL PROPERTY ZEUS_COMPONENT_REASON_${name} "${reason}")
endfunction()

function(zeus_component_summary)
  get_property(components GLOBAL PROPERTY ZEUS_COMPONENTS)
  message(STATUS "zeus ${PROJECT_VERSION}: components")
  foreach(name IN LISTS components)
    get_property(description GLOBAL PROPERTY ZEUS_COMPONENT_DESCRIPTION_${name})
    get_property(reason GLOBAL PROPERTY ZEUS_COMPONENT_REASON_${name})
    if(ZEUS_HAVE_${name})
      message(STATUS "  [x] ${name}: ${description}")
    elseif(ZEUS_WANT_${name} STREQUAL "OFF")
      message(STATUS "  [ ] ${name}: ${description} (ZEUS_BUILD_${name}=OFF)")
    else()
      message(STATUS "  [ ] ${name}: ${description} (left out: ${reason}; -DZEUS_BUILD_${name}=ON makes this an error)")
    endif()
  endforeach()
endfunction()

# zeus_require_package(<found-variable> <what> <debian-package>): a core
# dependency; missing is always an error naming the package.
function(zeus_require_package found what package)
  if(NOT ${found})
    message(FATAL_ERROR "zeus needs ${what}: install the Debian package ${package} "
                        "(scripts/install-deps installs every package the build and tests use).")
  endif()
endfunction()
