# Debian packages with CPack: one package per install component.
#
#   zeus          (cli)     zeus, zeus-emulated-train, the NVML emulator, example
#                           scenarios, zeus-exporter.service, the Grafana dashboard
#   zeusd         (zeusd)   the daemon, its unit, the system user and group zeusd
#   libzeus-dev   (dev)     headers, static libraries, the CMake package
#   python3-zeus  (python)  the Python package zeus for Debian's python3
#
# Only the components this build has (ZEUS_HAVE_*) become packages. Build them
# with `cmake --build <dir> --target package` (or scripts/build-packages) from a
# tree configured with -DCMAKE_INSTALL_PREFIX=/usr: the units name the
# programs' installed paths, and GNUInstallDirs chooses Debian's multiarch
# libdir only for /usr. The packages land in ZEUS_PACKAGE_OUTPUT_DIR
# (default dist/deb/ in the source tree). scripts/test-packages installs,
# runs, lints and purges them.
#
# Requires add_subdirectory(deploy) first: it names the packages
# (ZEUS_DEB_PACKAGE_<component>), lists the components (ZEUS_DEB_COMPONENTS),
# and configures the maintainer scripts into <build>/deploy/debian/<package>/.

if(NOT DEFINED ZEUS_DEB_COMPONENTS)
  message(FATAL_ERROR "ZeusPackaging: add_subdirectory(deploy) must come before include(ZeusPackaging)")
endif()

set(ZEUS_PACKAGE_OUTPUT_DIR "${PROJECT_SOURCE_DIR}/dist/deb" CACHE PATH "Where `package` writes the .deb files")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zeus)
set(CPACK_PACKAGE_VENDOR "The Zeus C++ Authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${ZEUS_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_HOMEPAGE_URL "${ZEUS_PACKAGE_HOMEPAGE}")
# Each package's description below starts with its own synopsis. CPack's DEB
# generator prepends CPACK_PACKAGE_DESCRIPTION_SUMMARY (the project's
# DESCRIPTION by default) to every one unless it is CPack's own default
# summary, so it is set to exactly that: it then appears nowhere.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX "${ZEUS_PACKAGE_OUTPUT_DIR}")
set(CPACK_STRIP_FILES ON)
set(CPACK_SOURCE_GENERATOR "")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${ZEUS_DEB_COMPONENTS})
set(CPACK_COMPONENTS_GROUPING IGNORE)  # one package per component

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <package>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE "${ZEUS_DEB_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${ZEUS_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${ZEUS_PACKAGE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: on the shared libraries the binaries link, from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Control files (and maintainer scripts) with the modes dpkg expects: 0644,
# scripts 0755 (lintian: control-file-has-bad-permissions).
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(_zeus_deb_control ${PROJECT_BINARY_DIR}/deploy/debian)

# A description: a synopsis line, then the extended description; CPack
# indents it and turns blank lines into " ." for the control file.
set(_zeus_about "Zeus measures and optimizes the energy of deep-learning training on NVIDIA
GPUs (NSDI '23). This is its C++ implementation: NVML is loaded at run time,
CPU and DRAM energy are read through Linux RAPL, and an NVML emulator runs
everything without a GPU.")

# --- zeus (cli)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME "${ZEUS_DEB_PACKAGE_cli}")
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
set(CPACK_DEBIAN_CLI_DESCRIPTION "GPU energy measurement and optimization for deep learning
${_zeus_about}

This package provides the command zeus: zeus info, zeus monitor (the energy
of any command), zeus simulate and zeus reproduce (the paper's trace-driven
results), zeus bso-server (the batch-size optimizer as a service, where
built) and zeus exporter (Prometheus metrics, with its systemd unit, not
enabled, and a Grafana dashboard); zeus-emulated-train and the NVML emulator
with example scenarios.")
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "${ZEUS_DEB_PACKAGE_zeusd}, ${ZEUS_DEB_PACKAGE_python}")
if(EXISTS ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_cli}/postinst)
  set(CPACK_DEBIAN_CLI_PACKAGE_CONTROL_EXTRA
      ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_cli}/postinst
      ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_cli}/prerm
      ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_cli}/postrm)
endif()

# --- zeusd: needs nothing of zeus. adduser: its postinst creates the user.
set(CPACK_DEBIAN_ZEUSD_PACKAGE_NAME "${ZEUS_DEB_PACKAGE_zeusd}")
set(CPACK_DEBIAN_ZEUSD_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_ZEUSD_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_ZEUSD_DESCRIPTION "Zeus daemon: GPU power limits and CPU energy for unprivileged users
${_zeus_about}

This package provides zeusd, the daemon that changes GPU settings (power
limits, persistence mode, clocks) and reads RAPL energy on behalf of
unprivileged training jobs, over a Unix socket or TCP, with optional tokens.
Its systemd unit runs it as the system user zeusd, created at installation,
with only CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH. The unit is not enabled or
started: see /usr/share/doc/zeusd/README.Debian.")
set(CPACK_DEBIAN_ZEUSD_PACKAGE_CONTROL_EXTRA
    ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_zeusd}/postinst
    ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_zeusd}/prerm
    ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_zeusd}/postrm)

# --- libzeus-dev: the core of the CMake package needs these headers (its
# zeusConfig.cmake finds them); the optional components need more.
set(CPACK_DEBIAN_DEV_PACKAGE_NAME "${ZEUS_DEB_PACKAGE_dev}")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libexpected-dev, libfmt-dev, nlohmann-json3-dev, libboost-dev")
set(_zeus_dev_suggests cmake)
if(ZEUS_HAVE_EXPORTER)
  list(APPEND _zeus_dev_suggests prometheus-cpp-dev)
endif()
if(ZEUS_HAVE_BSO_SERVER)
  list(APPEND _zeus_dev_suggests libsqlite3-dev libspdlog-dev libpqxx-dev pkg-config)
endif()
if(ZEUS_HAVE_MPI)
  list(APPEND _zeus_dev_suggests libopenmpi-dev)
endif()
list(JOIN _zeus_dev_suggests ", " CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS)
set(CPACK_DEBIAN_DEV_DESCRIPTION "GPU energy measurement and optimization for deep learning - development files
${_zeus_about}

This package provides the C++20 headers, the static libraries and the CMake
package: find_package(zeus CONFIG REQUIRED COMPONENTS monitor ...) gives the
imported targets zeus::<component> (device, monitor, optimizer, simulator,
runtime, the batch-size client and, where built, its server, the exporter and
the zeusd client).")

# --- python3-zeus: Debian's python3 (the extension module is built for its
# minor version), and the zeus package for its emulator and CLI.
if(ZEUS_HAVE_PYTHON)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME "${ZEUS_DEB_PACKAGE_python}")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  if(Python3_VERSION_MAJOR AND Python3_VERSION_MINOR)
    math(EXPR _zeus_next_minor "${Python3_VERSION_MINOR} + 1")
    set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
        "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${_zeus_next_minor})")
  else()
    set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3")
  endif()
  set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "${ZEUS_DEB_PACKAGE_cli}")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-torch")
  set(CPACK_DEBIAN_PYTHON_DESCRIPTION "GPU energy measurement and optimization for deep learning - Python 3
${_zeus_about}

This package provides the Python 3 package zeus, with the API of Zeus's
Python package (zeus.monitor.ZeusMonitor, the power-limit and batch-size
optimizers, zeus.device) over the native C++ engine.")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
      ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_python}/postinst
      ${_zeus_deb_control}/${ZEUS_DEB_PACKAGE_python}/prerm)
endif()

# The units name /usr/bin/zeus and /usr/sbin/zeusd, and the libraries belong
# in Debian's multiarch libdir: a tree configured for another prefix cannot
# make correct packages, so cpack refuses it (`make install` is unaffected).
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_zeus_cpack_check ${PROJECT_BINARY_DIR}/ZeusCPackCheck.cmake)
  file(WRITE ${_zeus_cpack_check}
       "message(FATAL_ERROR \"Debian packages need a tree configured with -DCMAKE_INSTALL_PREFIX=/usr \"\n"
       "        \"(this one has ${CMAKE_INSTALL_PREFIX}); scripts/build-packages configures one\")\n")
  set(CPACK_PROJECT_CONFIG_FILE ${_zeus_cpack_check})
endif()

include(CPack)
