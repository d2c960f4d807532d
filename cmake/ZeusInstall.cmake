# The public CMake package: `find_package(zeus CONFIG REQUIRED COMPONENTS
# monitor ...)` gives the imported targets zeus::<component>. Installed as
# component `dev`, with the public headers.
#
# One export set per group of components with their own dependencies (the
# core; runtime_mpi; exporter; bso_server), so that a consumer finds only the
# dependencies of what it asks for: asking for `monitor` never needs
# PostgreSQL's client library.

include(CMakePackageConfigHelpers)

set(ZEUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/zeus CACHE STRING
    "Where the CMake package (zeusConfig.cmake) is installed, relative to the prefix")

set(_zeus_header_excludes)
if(NOT ZEUS_HAVE_EXPORTER)
  list(APPEND _zeus_header_excludes PATTERN exporter EXCLUDE)
endif()
if(NOT ZEUS_HAVE_BSO_SERVER)
  list(APPEND _zeus_header_excludes PATTERN server.h EXCLUDE)
endif()
if(NOT ZEUS_HAVE_MPI)
  list(APPEND _zeus_header_excludes PATTERN mpi_communicator.h EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zeus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.h" ${_zeus_header_excludes})

get_property(_zeus_export_sets GLOBAL PROPERTY ZEUS_EXPORT_SETS)
list(REMOVE_DUPLICATES _zeus_export_sets)
foreach(set IN LISTS _zeus_export_sets)
  install(EXPORT zeus-${set}-targets NAMESPACE zeus:: DESTINATION ${ZEUS_INSTALL_CMAKEDIR} COMPONENT dev)
endforeach()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zeusConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/zeusConfig.cmake
                              INSTALL_DESTINATION ${ZEUS_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/zeusConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/zeusConfig.cmake ${PROJECT_BINARY_DIR}/cmake/zeusConfigVersion.cmake
        DESTINATION ${ZEUS_INSTALL_CMAKEDIR} COMPONENT dev)
