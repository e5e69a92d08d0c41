"""system_library(): a C/C++ library installed on the machine, whose location can be set without editing WORKSPACE.

Clusters bring their own MPI, HDF5 and BLAS (modules, Spack, vendor installs). Each library has two settings,
read from the environment of the repository rule (set them with --repo_env, e.g. in a user .bazelrc):
  <PREFIX>_INCLUDE    one directory holding the library's headers (mpi.h, hdf5.h, cblas.h, oneapi/dnnl/dnnl.h, fftw3.h)
  <PREFIX>_LINKOPTS   the link flags, space-separated (e.g. "-L/opt/mpich/lib -lmpi -Wl,-rpath,/opt/mpich/lib")
Unset, they default to Debian 12's packages (docs/BUILD_SETTINGS.md lists every setting and the defaults).
A change of either re-creates the repository (`environ` below), so nothing built against the old one is reused
by mistake; each --config that changes them also has its own --platform_suffix, so switching configurations
rebuilds nothing that is already built.
"""

# Already searched by the compiler; naming them again with -isystem would move them ahead of libstdc++'s own
# directories and break its #include_next chains.
_COMPILER_DEFAULT_DIRS = ["/usr/include", "/usr/include/x86_64-linux-gnu"]

def _system_library_impl(rctx):
    prefix = rctx.attr.env_prefix
    include = rctx.os.environ.get(prefix + "_INCLUDE", rctx.attr.default_include)
    linkopts = rctx.os.environ.get(prefix + "_LINKOPTS", rctx.attr.default_linkopts).split(" ")
    linkopts = [flag for flag in linkopts if flag]
    if not rctx.path(include).exists:
        fail("%s_INCLUDE: directory %s does not exist (the headers of %s)" % (prefix, include, rctx.name))
    rctx.symlink(include, "include")
    rctx.template(
        "BUILD",
        rctx.attr.build_file,
        substitutions = {
            "%{linkopts}": repr(linkopts),
            "%{includes}": repr([] if include in _COMPILER_DEFAULT_DIRS else ["include"]),
        },
        executable = False,
    )
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)

system_library = repository_rule(
    implementation = _system_library_impl,
    attrs = {
        "env_prefix": attr.string(mandatory = True, doc = "SLUICE_MPI, SLUICE_HDF5, SLUICE_BLAS, SLUICE_DNNL, SLUICE_FFTW"),
        "default_include": attr.string(mandatory = True),
        "default_linkopts": attr.string(mandatory = True),
        "build_file": attr.label(mandatory = True, allow_single_file = True),
    },
    environ = [
        "SLUICE_MPI_INCLUDE",
        "SLUICE_MPI_LINKOPTS",
        "SLUICE_HDF5_INCLUDE",
        "SLUICE_HDF5_LINKOPTS",
        "SLUICE_BLAS_INCLUDE",
        "SLUICE_BLAS_LINKOPTS",
        "SLUICE_DNNL_INCLUDE",
        "SLUICE_DNNL_LINKOPTS",
        "SLUICE_FFTW_INCLUDE",
        "SLUICE_FFTW_LINKOPTS",
    ],
    local = True,
)
