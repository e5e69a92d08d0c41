"""mpi_test(): runs a test binary under mpirun through //tests:mpi_test_runner.sh (private temp dir per run)."""

def mpi_test(name, binary, np = 2, args = [], data = [], tags = [], **kwargs):
    """Declares an sh_test that runs `binary` with `np` MPI ranks.

    Args:
      name: name of the sh_test.
      binary: label of a cc_binary (usually a gtest linked with //tests:mpi_gtest_main).
      np: number of ranks.
      args: extra arguments for the binary.
      data: extra runtime files.
      tags: extra tags; "mpi" is always added so `bazel test --test_tag_filters=-mpi` can skip MPI tests.
      **kwargs: passed to sh_test (size, timeout, ...).
    """
    native.sh_test(
        name = name,
        srcs = ["//tests:mpi_test_runner.sh"],
        args = [str(np), "$(location %s)" % binary] + args,
        data = [binary] + data,
        tags = tags + ["mpi"],
        **kwargs
    )
