# Installation of tessera: headers, the shared library, the CLI, a pkg-config file (tessera.pc)
# and a CMake package (tesseraConfig.cmake, tesseraConfigVersion.cmake, tesseraTargets.cmake)
# exporting tessera::tessera. Installed files find each other through relative paths, so
# `cmake --install build --prefix DIR` gives a working tree under any DIR. libtessera_jax, where
# the JAX binding is built, is installed beside libtessera by cmake/TesseraJax.cmake. In a wheel
# build (SKBUILD) none of this is installed: cmake/TesseraJax.cmake installs the wheel's files.
include(CMakePackageConfigHelpers)

set(TESSERA_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tessera")
set(TESSERA_PKGCONFIG_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# Installed programs and the library find their third-party libraries (CUDA's, OpenBLAS in its
# own folder) where they were linked, and the CLI finds libtessera next to it.
set_target_properties(tessera PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
if(SKBUILD)
  # A wheel (python/pyproject.toml) holds the Python package and its two libraries only, which
  # cmake/TesseraJax.cmake installs: no headers, CLI, pkg-config file or CMake package.
  return()
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tessera"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" FILES_MATCHING PATTERN "*.h")
install(TARGETS tessera EXPORT tesseraTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
if(TARGET tessera_cli)
  file(RELATIVE_PATH _tsr_bin_to_lib "/prefix/${CMAKE_INSTALL_BINDIR}"
       "/prefix/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(tessera_cli PROPERTIES
    INSTALL_RPATH "$ORIGIN/${_tsr_bin_to_lib}" INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS tessera_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

# CMake package --------------------------------------------------------------------------------
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION "${TESSERA_CMAKE_DIR}")
configure_package_config_file(cmake/tesseraConfig.cmake.in
  "${PROJECT_BINARY_DIR}/tesseraConfig.cmake" INSTALL_DESTINATION "${TESSERA_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/tesseraConfig.cmake"
              "${PROJECT_BINARY_DIR}/tesseraConfigVersion.cmake"
        DESTINATION "${TESSERA_CMAKE_DIR}")

# pkg-config -----------------------------------------------------------------------------------
# The prefix is found from the .pc file's own place (${pcfiledir}); absolute install dirs are
# written as they are.
file(RELATIVE_PATH TESSERA_PC_TO_PREFIX "/prefix/${TESSERA_PKGCONFIG_DIR}" "/prefix")
string(REGEX REPLACE "/$" "" TESSERA_PC_TO_PREFIX "${TESSERA_PC_TO_PREFIX}")
foreach(_dir IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(TESSERA_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(TESSERA_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
# Libraries a static link would need, in pkg-config terms.
set(TESSERA_PC_REQUIRES_PRIVATE "")
set(_tsr_pc_dirs "")
set(_tsr_pc_names "")
set(_tsr_pc_libs ${_tsr_linalg_libs})
if(TESSERA_HAVE_CUDA)
  list(APPEND _tsr_pc_libs ${CUDA_cudart_LIBRARY} ${CUDA_cublas_LIBRARY} ${CUDA_cusolver_LIBRARY})
endif()
foreach(_lib IN LISTS _tsr_pc_libs)
  if(_lib STREQUAL "PkgConfig::OPENBLAS")
    set(TESSERA_PC_REQUIRES_PRIVATE "openblas")
  else()
    get_filename_component(_dir "${_lib}" DIRECTORY)
    get_filename_component(_name "${_lib}" NAME_WE)
    string(REGEX REPLACE "^lib" "" _name "${_name}")
    list(APPEND _tsr_pc_dirs "-L${_dir}")
    list(APPEND _tsr_pc_names "-l${_name}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _tsr_pc_dirs)
list(APPEND _tsr_pc_names -pthread -lm)
list(JOIN _tsr_pc_dirs " " _tsr_pc_dirs)
list(JOIN _tsr_pc_names " " _tsr_pc_names)
string(STRIP "${_tsr_pc_dirs} ${_tsr_pc_names}" TESSERA_PC_LIBS_PRIVATE)
configure_file(cmake/tessera.pc.in "${PROJECT_BINARY_DIR}/tessera.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tessera.pc" DESTINATION "${TESSERA_PKGCONFIG_DIR}")
