# Third-party libraries of tessera, gathered into the interface target `tessera_deps`:
#   BLAS    OpenBLAS (pkg-config `openblas`, else libopenblas), else any CBLAS (libcblas, libblas)
#   LAPACKE liblapacke with lapacke.h
#   threads, libm
#   CUDA    cudart when TESSERA_HAVE_CUDA is set (see CMakeLists.txt); cublas and cusolver named
#           for loading at first use, linked by tessera_cuda_libs's programs only
# and cmocka for the tests (TESSERA_CMOCKA_LIBRARY / TESSERA_CMOCKA_INCLUDE_DIR; empty when absent).
#
# After the system paths, a Debian package tree unpacked into .deps/ (dpkg -x pkg.deb .deps) is
# searched: that is how a machine without network access gets cmocka (scripts/fetch-deps.sh).

include(CheckFunctionExists)

set(_tsr_deps_root "${PROJECT_SOURCE_DIR}/.deps")
set(_tsr_lib_paths
    "${_tsr_deps_root}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}" "${_tsr_deps_root}/usr/lib")
set(_tsr_inc_paths "${_tsr_deps_root}/usr/include")

add_library(tessera_deps INTERFACE)

find_package(Threads REQUIRED)
find_package(PkgConfig QUIET)

# LAPACKE --------------------------------------------------------------------------------------
# Linked before BLAS: static archives need that order.
find_library(TESSERA_LAPACKE_LIBRARY lapacke)
find_path(TESSERA_LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES lapacke)
if(NOT TESSERA_LAPACKE_LIBRARY OR NOT TESSERA_LAPACKE_INCLUDE_DIR)
  message(FATAL_ERROR "tessera: LAPACKE not found (liblapacke and lapacke.h); "
                      "run `make setup` or install liblapacke-dev")
endif()
set(_tsr_linalg_libs "${TESSERA_LAPACKE_LIBRARY}")
target_include_directories(tessera_deps INTERFACE "${TESSERA_LAPACKE_INCLUDE_DIR}")

# BLAS -----------------------------------------------------------------------------------------
set(TESSERA_BLAS "")
if(PKG_CONFIG_FOUND)
  pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
  if(OPENBLAS_FOUND)
    list(APPEND _tsr_linalg_libs PkgConfig::OPENBLAS)
    set(TESSERA_BLAS "OpenBLAS ${OPENBLAS_VERSION} (pkg-config)")
  endif()
endif()
if(NOT TESSERA_BLAS)
  find_library(TESSERA_OPENBLAS_LIBRARY openblas PATH_SUFFIXES openblas-pthread openblas)
  find_path(TESSERA_OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread openblas)
  if(TESSERA_OPENBLAS_LIBRARY AND TESSERA_OPENBLAS_INCLUDE_DIR)
    list(APPEND _tsr_linalg_libs "${TESSERA_OPENBLAS_LIBRARY}")
    target_include_directories(tessera_deps INTERFACE "${TESSERA_OPENBLAS_INCLUDE_DIR}")
    set(TESSERA_BLAS "OpenBLAS (${TESSERA_OPENBLAS_LIBRARY})")
  endif()
endif()
if(NOT TESSERA_BLAS)
  # Reference BLAS: Debian's libblas carries the CBLAS symbols; other systems ship libcblas.
  find_library(TESSERA_CBLAS_LIBRARY cblas)
  find_library(TESSERA_REFBLAS_LIBRARY blas)
  find_path(TESSERA_CBLAS_INCLUDE_DIR cblas.h)
  if(NOT (TESSERA_CBLAS_LIBRARY OR TESSERA_REFBLAS_LIBRARY) OR NOT TESSERA_CBLAS_INCLUDE_DIR)
    message(FATAL_ERROR "tessera: no BLAS with cblas.h found (OpenBLAS or a CBLAS); "
                        "run `make setup` or install libopenblas-dev")
  endif()
  set(TESSERA_BLAS "CBLAS")
  foreach(_lib IN ITEMS TESSERA_CBLAS_LIBRARY TESSERA_REFBLAS_LIBRARY)
    if(${_lib})
      list(APPEND _tsr_linalg_libs "${${_lib}}")
      string(APPEND TESSERA_BLAS " ${${_lib}}")
    endif()
  endforeach()
  target_include_directories(tessera_deps INTERFACE "${TESSERA_CBLAS_INCLUDE_DIR}")
endif()
target_link_libraries(tessera_deps INTERFACE ${_tsr_linalg_libs})

# OpenBLAS thread control: present in OpenBLAS, absent from reference BLAS.
set(CMAKE_REQUIRED_QUIET ON)
set(CMAKE_REQUIRED_LIBRARIES ${_tsr_linalg_libs})
check_function_exists(openblas_set_num_threads TESSERA_HAVE_OPENBLAS_THREADS)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
if(TESSERA_HAVE_OPENBLAS_THREADS)
  target_compile_definitions(tessera_deps INTERFACE TESSERA_HAVE_OPENBLAS_THREADS)
endif()

target_link_libraries(tessera_deps INTERFACE Threads::Threads m)

# CUDA -----------------------------------------------------------------------------------------
# cuBLAS, cuSOLVER and NCCL are named, not linked: libtessera loads them when a context first
# gives a GPU work (src/device/library.h), so that a process that never does starts without
# mapping them. tsr_named_library(VAR PATH) defines TSR_<VAR>_PATH (where the build found the
# library) and TSR_<VAR>_SONAME (its name for the loader's search, where it has moved since) on
# every target of tessera_deps. The calls bind at first use: everything is linked -z lazy (a
# toolchain that binds at load time would bind them to nothing). Programs that call the
# libraries themselves (GPU tests, benchmarks) link tessera_cuda_libs.
function(tsr_named_library var path)
  get_filename_component(_real "${path}" REALPATH)
  get_filename_component(_soname "${_real}" NAME)
  if(CMAKE_OBJDUMP)
    execute_process(COMMAND "${CMAKE_OBJDUMP}" -p "${_real}" OUTPUT_VARIABLE _dump ERROR_QUIET)
    if(_dump MATCHES "SONAME +([^ \n]+)")
      set(_soname "${CMAKE_MATCH_1}")
    endif()
  endif()
  target_compile_definitions(tessera_deps INTERFACE "TSR_${var}_PATH=\"${path}\""
                                                    "TSR_${var}_SONAME=\"${_soname}\"")
endfunction()

if(TESSERA_HAVE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(tessera_deps INTERFACE CUDA::cudart ${CMAKE_DL_LIBS})
  target_link_options(tessera_deps INTERFACE "LINKER:-z,lazy")
  target_compile_definitions(tessera_deps INTERFACE TESSERA_HAVE_CUDA)
  tsr_named_library(CUBLAS "${CUDA_cublas_LIBRARY}")
  tsr_named_library(CUSOLVER "${CUDA_cusolver_LIBRARY}")
  add_library(tessera_cuda_libs INTERFACE)
  target_link_libraries(tessera_cuda_libs INTERFACE CUDA::cublas CUDA::cusolver)
endif()

# MPI and NCCL: the communication layer (src/comm/) --------------------------------------------
# MPI carries host buffers and starts the processes; NCCL (with CUDA and MPI) carries device
# buffers. Without MPI the communication API is built as "not available" (TESSERA_MPI=OFF forces
# that; ON makes a missing MPI an error).
set(TESSERA_HAVE_MPI OFF)
set(TESSERA_HAVE_NCCL OFF)
if(NOT TESSERA_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(TESSERA_HAVE_MPI ON)
    target_link_libraries(tessera_deps INTERFACE MPI::MPI_C)
    target_compile_definitions(tessera_deps INTERFACE TESSERA_HAVE_MPI)
  elseif(TESSERA_MPI STREQUAL "ON")
    message(FATAL_ERROR "tessera: TESSERA_MPI=ON but no MPI was found (install libopenmpi-dev)")
  endif()
endif()
# Gloo: a second host transport, for processes no MPI launcher started, bootstrapped through a
# key-value store the caller provides (src/comm/gloo/, C++ behind a C shim). The C++ compiler is
# enabled only when it is built. TESSERA_GLOO=OFF leaves it out; ON makes a missing Gloo an error.
set(TESSERA_HAVE_GLOO OFF)
if(NOT TESSERA_GLOO STREQUAL "OFF")
  find_path(TESSERA_GLOO_INCLUDE_DIR gloo/config.h PATHS ${_tsr_inc_paths})
  find_library(TESSERA_GLOO_LIBRARY gloo PATHS ${_tsr_lib_paths})
  if(TESSERA_GLOO_INCLUDE_DIR AND TESSERA_GLOO_LIBRARY)
    set(TESSERA_HAVE_GLOO ON)
    enable_language(CXX)
    set(CMAKE_CXX_STANDARD 17)
    set(CMAKE_CXX_STANDARD_REQUIRED ON)
    set(CMAKE_CXX_EXTENSIONS OFF)
    # the shim's C++ runtime: the C programs that link tessera's objects need it too
    target_link_libraries(tessera_deps INTERFACE "${TESSERA_GLOO_LIBRARY}" stdc++)
    target_include_directories(tessera_deps SYSTEM INTERFACE "${TESSERA_GLOO_INCLUDE_DIR}")
    target_compile_definitions(tessera_deps INTERFACE TESSERA_HAVE_GLOO)
  elseif(TESSERA_GLOO STREQUAL "ON")
    message(FATAL_ERROR "tessera: TESSERA_GLOO=ON but Gloo was not found (install libgloo-dev)")
  endif()
endif()

if(TESSERA_HAVE_MPI AND TESSERA_HAVE_CUDA)
  find_library(TESSERA_NCCL_LIBRARY nccl HINTS "${CUDAToolkit_LIBRARY_DIR}")
  find_path(TESSERA_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(TESSERA_NCCL_LIBRARY AND TESSERA_NCCL_INCLUDE_DIR)
    set(TESSERA_HAVE_NCCL ON)
    tsr_named_library(NCCL "${TESSERA_NCCL_LIBRARY}")
    target_link_libraries(tessera_cuda_libs INTERFACE "${TESSERA_NCCL_LIBRARY}")
    target_compile_definitions(tessera_deps INTERFACE TESSERA_HAVE_NCCL)
    target_include_directories(tessera_deps INTERFACE "${TESSERA_NCCL_INCLUDE_DIR}")
  endif()
endif()

# cmocka (tests only) --------------------------------------------------------------------------
set(TESSERA_CMOCKA_LIBRARY "")
set(TESSERA_CMOCKA_INCLUDE_DIR "")
if(PKG_CONFIG_FOUND)
  pkg_check_modules(CMOCKA QUIET cmocka)
endif()
find_library(TESSERA_CMOCKA_LIB cmocka HINTS ${CMOCKA_LIBRARY_DIRS} PATHS ${_tsr_lib_paths})
find_path(TESSERA_CMOCKA_INC cmocka.h HINTS ${CMOCKA_INCLUDE_DIRS} PATHS ${_tsr_inc_paths})
if(TESSERA_CMOCKA_LIB AND TESSERA_CMOCKA_INC)
  set(TESSERA_CMOCKA_LIBRARY "${TESSERA_CMOCKA_LIB}")
  set(TESSERA_CMOCKA_INCLUDE_DIR "${TESSERA_CMOCKA_INC}")
endif()
