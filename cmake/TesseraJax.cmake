# The C side of the JAX binding: XLA FFI handlers (python/ffi/) compiled against the XLA FFI C
# API header that jaxlib ships (jax.ffi.include_dir()), as the library libtessera_jax that
# python/tessera/_native.py loads. TESSERA_JAX_INCLUDE_DIR names the header's folder directly
# (for a build without jax installed); else python3 is asked.
#
# Targets: tessera_jax_core (object library: rendezvous, state, handlers; the ffi tests link
# it), tessera_jax (the shared library). Sets TESSERA_HAVE_JAX.
set(TESSERA_HAVE_JAX OFF)
if(TESSERA_JAX STREQUAL "OFF")
  return()
elseif(NOT TESSERA_JAX MATCHES "^(AUTO|ON)$")
  message(FATAL_ERROR "TESSERA_JAX must be AUTO, ON or OFF (got ${TESSERA_JAX})")
endif()

if(NOT TESSERA_JAX_INCLUDE_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c "import jax.ffi; print(jax.ffi.include_dir())"
      OUTPUT_VARIABLE _tsr_xla_inc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
      RESULT_VARIABLE _tsr_xla_rc)
    if(_tsr_xla_rc EQUAL 0 AND EXISTS "${_tsr_xla_inc}/xla/ffi/api/c_api.h")
      set(TESSERA_JAX_INCLUDE_DIR "${_tsr_xla_inc}" CACHE PATH "folder holding xla/ffi/api/c_api.h")
    endif()
  endif()
endif()
if(NOT TESSERA_JAX_INCLUDE_DIR OR NOT EXISTS "${TESSERA_JAX_INCLUDE_DIR}/xla/ffi/api/c_api.h")
  if(TESSERA_JAX STREQUAL "ON")
    message(FATAL_ERROR "tessera: the JAX binding needs the XLA FFI header: install jax "
                        "(pip install jax) or set TESSERA_JAX_INCLUDE_DIR")
  endif()
  message(STATUS "tessera: jax not found; the JAX binding is not built")
  return()
endif()
set(TESSERA_HAVE_JAX ON)

file(GLOB _tsr_jax_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/python/ffi/*.c")
add_library(tessera_jax_core OBJECT ${_tsr_jax_sources})
target_include_directories(tessera_jax_core PUBLIC "${PROJECT_SOURCE_DIR}/python/ffi"
                           SYSTEM PUBLIC "${TESSERA_JAX_INCLUDE_DIR}")
target_link_libraries(tessera_jax_core PUBLIC tessera Threads::Threads)
set_target_properties(tessera_jax_core PROPERTIES POSITION_INDEPENDENT_CODE ON
                                                  C_VISIBILITY_PRESET hidden)
if(TESSERA_HAVE_CUDA)
  target_compile_definitions(tessera_jax_core PRIVATE TESSERA_HAVE_CUDA)
endif()

add_library(tessera_jax SHARED $<TARGET_OBJECTS:tessera_jax_core>)
tessera_export_only(tessera_jax "tessera_jax_*")
target_link_libraries(tessera_jax PRIVATE tessera Threads::Threads)
# Next to libtessera in a wheel, and in the build tree where the tests load it.
set_target_properties(tessera_jax PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/python"
  C_VISIBILITY_PRESET hidden
  INSTALL_RPATH "$ORIGIN" BUILD_RPATH "$<TARGET_FILE_DIR:tessera>")

# Installation ---------------------------------------------------------------------------------
if(SKBUILD)
  # A wheel (`pip install ./python`, scikit-build-core; python/pyproject.toml installs only the
  # component tessera_python): libtessera_jax and libtessera in the package folder tessera/,
  # where _native.py loads libtessera_jax and its RUNPATH $ORIGIN finds libtessera. A wheel is a
  # zip and keeps no symlinks, so libtessera is built under its SONAME alone (libtessera.so.0,
  # no libtessera.so.0.1.0 beside it) and installed without its namelink: one copy.
  set_target_properties(tessera PROPERTIES VERSION ${PROJECT_VERSION_MAJOR})
  install(TARGETS tessera tessera_jax
          LIBRARY DESTINATION tessera COMPONENT tessera_python NAMELINK_SKIP)
else()
  # Beside libtessera in the library folder (RUNPATH $ORIGIN), for a Python package that uses
  # an installed tessera: TESSERA_JAX_LIBRARY=<prefix>/<libdir>/libtessera_jax.so. A plugin
  # loaded with ctypes, not linked: no header, not part of the CMake package's export.
  install(TARGETS tessera_jax LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()
