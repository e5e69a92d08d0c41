"""fortran_program_test: a Fortran test program of tests/capi built outside Bazel against the installed tree."""

def fortran_program_test(name, program, pass_line, size = "medium", fflags = ""):
    """Builds `program` (a .f90 file in this package) with gfortran + pkg-config against a fresh install, together
    with fortran_checks.f90, runs it on 2 ranks and passes when it printed `pass_line` (fortran_program_test.sh).

    Tagged mpi (mpirun), no_asan and no_mpich: the installed tree is built outside Bazel with the system mpif90.
    """
    native.sh_test(
        name = name,
        size = size,
        srcs = ["fortran_program_test.sh"],
        args = [
            "$(location //capi/packaging:install.sh)",
            "$(location //capi:install_tree)",
            "$(location //tests:mpi_test_runner.sh)",
            "$(location fortran_checks.f90)",
            "$(location %s)" % program,
            "'%s'" % pass_line,  # args are split like a shell line
        ] + (["'%s'" % fflags] if fflags else []),
        data = [
            program,
            "fortran_checks.f90",
            "//capi:install_tree",
            "//capi/packaging:install.sh",
            "//tests:mpi_test_runner.sh",
        ],
        tags = ["mpi", "no_asan", "no_mpich"],
    )
