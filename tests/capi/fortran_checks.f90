! What every Fortran test program in tests/capi shares: failed checks are counted per rank and printed as
! "FAIL rank R: ...", and the program ends with one verdict for all ranks (the PASS line that
! fortran_program_test.sh looks for, or `error stop 1` on every rank). fortran_program_test.sh compiles this
! module before the program, against the installed `sluice` module.
module fortran_checks
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi_f08
  use sluice
  implicit none
  private
  public :: checks_start, fail, expect_ok, checks_finish

  integer :: failures = 0
  integer :: my_rank = -1

contains

  ! Call once after MPI_Init: the rank goes into every FAIL line.
  subroutine checks_start(rank)
    integer, intent(in) :: rank
    my_rank = rank
    failures = 0
  end subroutine checks_start

  subroutine fail(message)
    character(len=*), intent(in) :: message
    write (0, '(a, i0, 2a)') 'FAIL rank ', my_rank, ': ', message
    failures = failures + 1
  end subroutine fail

  ! The call returned SLUICE_OK; otherwise its status and the library's last error go into the FAIL line.
  subroutine expect_ok(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SLUICE_OK) call fail(what // ': ' // sluice_status_string(status) // ' (' // sluice_last_error() // ')')
  end subroutine expect_ok

  ! Sums the failures of every rank, prints pass_line on rank 0 when there are none, finalizes MPI and stops
  ! every rank with a non-zero status when any rank failed (so mpirun reports the failure whichever rank it was).
  subroutine checks_finish(pass_line)
    character(len=*), intent(in) :: pass_line
    integer :: total_failures
    call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (my_rank == 0 .and. total_failures == 0) print '(a)', pass_line
    call MPI_Finalize()
    if (total_failures /= 0) error stop 1
  end subroutine checks_finish
end module fortran_checks
