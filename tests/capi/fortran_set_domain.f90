! sluice_trainer_set_domain from Fortran: a field u(nx, ny) (nx fastest) is model.inputs [1, ny, nx], and the
! wrapper takes the extents, 0-based offsets and block extents in the array's own order (nx, ny), reversing them
! for the C API: the messages of refused declarations name the C order, which shows the reversal. Arrays of
! different sizes are refused by the wrapper, a declaration after start by the library (STATE). 2 ranks, installed
! tree (fortran_program_test.sh). Prints "FAIL rank R: ..." for every failed check.
program fortran_set_domain
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: nx = 12, ny = 16
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: [1, 16, 12]' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: conv, channels: 2, kernel: 3, padding: periodic}' // new_line('a') // &
      '    - {type: pool, kernel: 2, mode: max}' // new_line('a') // &
      '    - {type: upsample, factor: 2}' // new_line('a') // &
      '    - {type: conv, channels: 1, kernel: 1}' // new_line('a') // &
      'pipeline: {stages: 2, microbatches: 2, domain: [1, 1]}' // new_line('a') // &
      'data: {type: external, batch: 2}' // new_line('a')

  type(sluice_trainer) :: trainer
  integer :: rank

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')

  ! The whole field, and the upper half in y (ny rows 8..15, 0-based), default integers and int64.
  call expect_ok(sluice_trainer_set_domain(trainer, [nx, ny], [0, 0], [nx, ny]), 'set_domain, whole field')
  call expect_ok(sluice_trainer_set_domain(trainer, [int(nx, c_int64_t), int(ny, c_int64_t)], &
      [0_c_int64_t, 8_c_int64_t], [int(nx, c_int64_t), 8_c_int64_t]), 'set_domain, int64, upper half in y')

  ! In C order the field is [ny, nx] = [16, 12]: (ny, nx) given in Fortran order reads as [12, 16].
  call expect_rejected(sluice_trainer_set_domain(trainer, [ny, nx], [0, 0], [ny, nx]), 'extents in C order', &
      SLUICE_ERROR_INVALID_ARGUMENT, "global_extent [12, 16] is not the model's input field [16, 12]")
  ! An x offset of 4 with the whole x extent reaches past the field in C's spatial dimension 2 (x).
  call expect_rejected(sluice_trainer_set_domain(trainer, [nx, ny], [4, 0], [nx, ny]), 'x block past the edge', &
      SLUICE_ERROR_INVALID_ARGUMENT, "block_offset 4 + block_extent 12 in spatial dimension 2 reaches past")
  call expect_rejected(sluice_trainer_set_domain(trainer, [nx, ny], [0], [nx, ny]), 'offsets of another size', &
      SLUICE_ERROR_INVALID_ARGUMENT, 'sluice_trainer_set_domain: global_extent has 2 entries, block_offset 1 ' // &
      'and block_extent 2')

  ! Start gathers the declarations: one block (pipeline.domain [1, 1]) is the whole field, on both stages' ranks.
  call expect_ok(sluice_trainer_set_domain(trainer, [nx, ny], [0, 0], [nx, ny]), 'set_domain, whole field again')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')
  call expect_rejected(sluice_trainer_set_domain(trainer, [nx, ny], [0, 0], [nx, ny]), 'after start', &
      SLUICE_ERROR_STATE, 'declare the domain before sluice_trainer_start')
  call sluice_trainer_destroy(trainer)
  call checks_finish('PASS: blocks declared in Fortran order, reversed, refused by name')

contains

  subroutine expect_rejected(status, what, expected, fragment)
    integer(c_int), intent(in) :: status, expected
    character(len=*), intent(in) :: what, fragment
    character(len=:), allocatable :: message
    message = sluice_last_error()
    if (status /= expected) then
      call fail(what // ': expected ' // sluice_status_string(expected) // ', got ' // sluice_status_string(status))
    end if
    if (index(message, fragment) == 0) then
      call fail(what // ': message "' // message // '" does not say "' // fragment // '"')
    end if
  end subroutine expect_rejected
end program fortran_set_domain
