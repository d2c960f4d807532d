# Project-wide compile settings and helpers for the zeus targets.

# zeus_set_warnings(<target>): the project's warning set, errors under ZEUS_WERROR.
function(zeus_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
                                           -Wformat=2 -Werror=unused-result)
  if(ZEUS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CMAKE_UNITY_BUILD)
    # In a unity batch every source is an included file, and GCC then warns
    # about each class with a member of an anonymous-namespace type (a Pimpl's
    # Impl); without unity the same code is silent, and it is correct.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(ZEUS_SANITIZE)
    # GCC's flow analysis misreads the sanitizers' instrumentation (false
    # "may be used uninitialized" inside <regex> and std::function at -O1);
    # the unsanitized release tree keeps the warning as an error.
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
endfunction()

if(ZEUS_SANITIZE)
  add_compile_options(-fsanitize=${ZEUS_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ZEUS_SANITIZE})
  if(ZEUS_SANITIZE MATCHES "undefined" AND ZEUS_SANITIZE MATCHES "address")
    # UBSan without its null and alignment checks, which instrument every
    # pointer use: they were 21-35% of an object's compile time beside ASan
    # (apps/zeus/info_command.cc 45.8 s -> 29.8 s, http_server_stream.cc
    # 56.5 -> 43.8), and ASan already reports a null dereference (SEGV, with
    # its stack). Misaligned access would need a cast of a byte buffer, which
    # the code does not do (its reinterpret_casts are dlsym and sockaddr).
    add_compile_options(-fno-sanitize=alignment,null)
    add_link_options(-fno-sanitize=alignment,null)
  endif()
endif()

# zeus_add_test(<name> SOURCES ... LIBS ... [LABELS ...] [ENVIRONMENT ...]):
# one GoogleTest binary, its tests registered with CTest one by one.
function(zeus_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  zeus_set_warnings(${name})
  if(ZEUS_SANITIZE)
    # The test's own sources (not the code under test, which keeps the
    # preset's -O1) compile at -O0 under the sanitizers: still instrumented,
    # and about half the compile time of GoogleTest's and GoogleMock's
    # templates at -O1, which dominated the ASan stage of `make test`.
    target_compile_options(${name} PRIVATE -O0)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "${ARG_ENVIRONMENT}")
endfunction()

# zeus_install_library(<target> <export-set>): installs a library of the
# public CMake package (component `dev`) as zeus::<name>, <name> being the
# target's name without its `zeus_` prefix, in the export set
# zeus-<export-set>-targets (one per find_package component group, so that a
# consumer finds only the dependencies of the components it asks for).
function(zeus_install_library target export_set)
  string(REGEX REPLACE "^zeus_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name} OUTPUT_NAME ${target})
  install(TARGETS ${target} EXPORT zeus-${export_set}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY ZEUS_EXPORT_SETS ${export_set})
endfunction()

# zeus_private_headers(<target> <folder>): a private library (not in the CMake
# package) shows the targets that link it the headers of its own folder only,
# src/<folder>, still included as "<folder>/x.h", and not the rest of src/:
# the public include directory is a per-target root in the build tree that
# holds one link, <folder> -> src/<folder>. The library's own sources see src/.
function(zeus_private_headers target folder)
  set(root ${CMAKE_BINARY_DIR}/private-include/${target})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT IS_SYMLINK ${root}/${folder})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${root}/${folder} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}> PRIVATE ${PROJECT_SOURCE_DIR}/src)
endfunction()

# zeus_add_library(<target> <export-set> SOURCES ...): a library of the public
# CMake package: zeus::<name> (the target's name without `zeus_`), the public
# headers under include/, its own private headers under src/, the project's
# warnings, and install rules (zeus_install_library). Link libraries are the
# caller's.
function(zeus_add_library target export_set)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} ${ARG_SOURCES})
  string(REGEX REPLACE "^zeus_" "" short ${target})
  add_library(zeus::${short} ALIAS ${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                       PRIVATE ${PROJECT_SOURCE_DIR}/src)
  zeus_set_warnings(${target})
  zeus_install_library(${target} ${export_set})
endfunction()
