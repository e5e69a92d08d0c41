! The Fortran wrappers' own error messages are per thread, like the library's (issue 28: they were kept in one
! module variable, so one thread's failure replaced another thread's message). Two OpenMP threads each provoke
! a wrapper failure of their own (a non-contiguous array for sluice_register_state, caught before any library
! call), one after the other, and each must then read back its own message with sluice_last_error(); a third
! step checks that a library call on one thread leaves the other thread's wrapper message alone.
! Built against the installed tree with -fopenmp and run with 2 ranks by fortran_program_test.sh.
program fortran_thread_errors
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  character(len=*), parameter :: names(0:1) = ['alpha_state', 'beta_state ']
  type(sluice_trainer) :: trainer  ! never created: the wrapper refuses the array before using the handle
  real :: data(8, 0:1)
  integer(c_int) :: statuses(0:1)
  character(len=512) :: seen(0:1), seen_after_library_call(0:1)
  integer :: rank, me, t

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  data = 1.0
  seen = ''
  seen_after_library_call = ''
  !$omp parallel num_threads(2) private(me)
  me = omp_thread()
  !$omp barrier
  ! One thread after the other: thread 1's failure comes after thread 0's and must not replace it.
  do t = 0, 1
    if (t == me) statuses(me) = sluice_register_state(trainer, trim(names(me)), data(1:8:2, me), &
                                                              SLUICE_STATE_PER_RANK)
    !$omp barrier
  end do
  seen(me) = sluice_last_error()
  !$omp barrier
  ! Thread 1 makes a library call (a NULL handle: its own error); thread 0's message must stay.
  if (me == 1) statuses(me) = sluice_unregister_state(trainer, 'gamma')
  !$omp barrier
  if (me == 0) seen_after_library_call(me) = sluice_last_error()
  !$omp end parallel

  if (statuses(0) /= SLUICE_ERROR_INVALID_ARGUMENT) call fail('the non-contiguous array was not refused')
  if (statuses(1) == SLUICE_OK) call fail('thread 1''s library call with a NULL trainer succeeded')
  do t = 0, 1
    if (index(seen(t), "application state '" // trim(names(t)) // "' is not contiguous") == 0) then
      call fail('thread ' // achar(48 + t) // ' reads another message: ' // trim(seen(t)))
    end if
  end do
  if (index(seen_after_library_call(0), "'" // trim(names(0)) // "'") == 0) then
    call fail('a library call on thread 1 replaced thread 0''s message: ' // trim(seen_after_library_call(0)))
  end if
  call checks_finish('PASS: each thread reads its own error')

contains

  ! omp_get_thread_num without `use omp_lib` in the declarations above (0 when built without OpenMP).
  integer function omp_thread()
    !$ use omp_lib, only: omp_get_thread_num
    omp_thread = 0
    !$ omp_thread = omp_get_thread_num()
  end function omp_thread
end program fortran_thread_errors
