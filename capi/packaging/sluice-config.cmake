# CMake package for Sluice's C and Fortran API: find_package(sluice REQUIRED) (or find_package(Sluice ...): CMake
# finds this sluice-config.cmake under either spelling). Works in C, C++ and Fortran-only projects
# (`project(x LANGUAGES Fortran)`).
#
# Imported targets:
#   Sluice::sluice          libsluice.so with sluice.h's include directory (and MPI::MPI_C when C is enabled)
#   Sluice::sluice_static   libsluice.a plus the system libraries it calls (C or C++ projects)
#   Sluice::sluice_fortran  the Fortran module `sluice` (only when the project enables Fortran): built here, in the
#                           user's project, from PREFIX/share/sluice/fortran/sluice.f90 with the project's own
#                           Fortran compiler (a .mod file only works with the compiler that wrote it), linked to
#                           Sluice::sluice and MPI::MPI_Fortran (the module uses mpi_f08).
# The prefix is derived from this file's location (PREFIX/lib/cmake/sluice), so the tree can be moved.
include(CMakeFindDependencyMacro)

get_filename_component(_sluice_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

# sluice.h includes mpi.h, so MPI is part of the public interface: ask FindMPI for the enabled languages only
# (a Fortran-only project has no C compiler to find MPI_C with).
get_property(_sluice_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
set(_sluice_mpi_components)
foreach(_sluice_language C CXX Fortran)
  if(_sluice_language IN_LIST _sluice_languages)
    list(APPEND _sluice_mpi_components ${_sluice_language})
  endif()
endforeach()
if(NOT _sluice_mpi_components)
  set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
  set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
      "Sluice needs C, C++ or Fortran enabled in the project (project(x LANGUAGES C) or Fortran)")
  return()
endif()
find_dependency(MPI COMPONENTS ${_sluice_mpi_components})

if(NOT TARGET Sluice::sluice)
  add_library(Sluice::sluice SHARED IMPORTED)
  set_target_properties(Sluice::sluice PROPERTIES
    IMPORTED_LOCATION "${_sluice_prefix}/lib/libsluice.so"
    IMPORTED_SONAME "libsluice.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_sluice_prefix}/include")
  if("C" IN_LIST _sluice_languages)
    set_target_properties(Sluice::sluice PROPERTIES INTERFACE_LINK_LIBRARIES "MPI::MPI_C")
  endif()
endif()

if(NOT TARGET Sluice::sluice_static AND ("C" IN_LIST _sluice_languages OR "CXX" IN_LIST _sluice_languages))
  if("C" IN_LIST _sluice_languages)
    set(_sluice_mpi_target MPI::MPI_C)
  else()
    set(_sluice_mpi_target MPI::MPI_CXX)
  endif()
  add_library(Sluice::sluice_static STATIC IMPORTED)
  set_target_properties(Sluice::sluice_static PROPERTIES
    IMPORTED_LOCATION "${_sluice_prefix}/lib/libsluice.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "CXX"
    INTERFACE_INCLUDE_DIRECTORIES "${_sluice_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_sluice_mpi_target};hdf5_openmpi;yaml-cpp;openblas;dnnl;gomp;deflate;stdc++;m;pthread")
  unset(_sluice_mpi_target)
endif()

# The module from source, once per project (find_package may run in several directories; targets are global).
if("Fortran" IN_LIST _sluice_languages AND NOT TARGET Sluice::sluice_fortran)
  set(_sluice_module_dir "${CMAKE_BINARY_DIR}/sluice_fortran_module")
  add_library(sluice_fortran_module STATIC "${_sluice_prefix}/share/sluice/fortran/sluice.f90")
  set_target_properties(sluice_fortran_module PROPERTIES
    Fortran_MODULE_DIRECTORY "${_sluice_module_dir}"
    POSITION_INDEPENDENT_CODE ON)
  target_include_directories(sluice_fortran_module PUBLIC "${_sluice_module_dir}")
  target_link_libraries(sluice_fortran_module PUBLIC Sluice::sluice MPI::MPI_Fortran)
  add_library(Sluice::sluice_fortran ALIAS sluice_fortran_module)
  unset(_sluice_module_dir)
endif()

set(Sluice_INCLUDE_DIR "${_sluice_prefix}/include")
set(sluice_INCLUDE_DIR "${_sluice_prefix}/include")
unset(_sluice_prefix)
unset(_sluice_languages)
unset(_sluice_language)
unset(_sluice_mpi_components)
