# CMake package for Sluice's C API (find_package(Sluice REQUIRED)).
#
# Imported targets:
#   Sluice::sluice          libsluice.so, with sluice.h's include directory and MPI::MPI_C
#   Sluice::sluice_static   libsluice.a plus the system libraries it calls (link MPI, HDF5, ... dynamically)
#   Sluice::sluice_fortran  libsluice_fortran.so + sluice.mod (only when the project enables Fortran)
# The prefix is derived from this file's location (PREFIX/lib/cmake/Sluice), so the tree can be moved.
include(CMakeFindDependencyMacro)

get_filename_component(_sluice_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

# sluice.h includes mpi.h, so MPI is part of the public interface.
get_property(_sluice_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
set(_sluice_mpi_components C)
if("Fortran" IN_LIST _sluice_languages)
  list(APPEND _sluice_mpi_components Fortran)
endif()
find_dependency(MPI COMPONENTS ${_sluice_mpi_components})

if(NOT TARGET Sluice::sluice)
  add_library(Sluice::sluice SHARED IMPORTED)
  set_target_properties(Sluice::sluice PROPERTIES
    IMPORTED_LOCATION "${_sluice_prefix}/lib/libsluice.so"
    IMPORTED_SONAME "libsluice.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_sluice_prefix}/include"
    INTERFACE_LINK_LIBRARIES "MPI::MPI_C")

  add_library(Sluice::sluice_static STATIC IMPORTED)
  set_target_properties(Sluice::sluice_static PROPERTIES
    IMPORTED_LOCATION "${_sluice_prefix}/lib/libsluice.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "CXX"
    INTERFACE_INCLUDE_DIRECTORIES "${_sluice_prefix}/include"
    INTERFACE_LINK_LIBRARIES "MPI::MPI_C;hdf5_openmpi;yaml-cpp;openblas;deflate;stdc++;m;pthread")
endif()

if("Fortran" IN_LIST _sluice_languages AND NOT TARGET Sluice::sluice_fortran)
  add_library(Sluice::sluice_fortran SHARED IMPORTED)
  set_target_properties(Sluice::sluice_fortran PROPERTIES
    IMPORTED_LOCATION "${_sluice_prefix}/lib/libsluice_fortran.so"
    IMPORTED_SONAME "libsluice_fortran.so"
    # sluice.mod sits next to sluice.h; it refers to mpi_f08.mod, which MPI::MPI_Fortran puts on the path.
    INTERFACE_INCLUDE_DIRECTORIES "${_sluice_prefix}/include/sluice"
    INTERFACE_LINK_LIBRARIES "Sluice::sluice;MPI::MPI_Fortran")
endif()

set(Sluice_INCLUDE_DIR "${_sluice_prefix}/include")
unset(_sluice_prefix)
unset(_sluice_languages)
unset(_sluice_mpi_components)
