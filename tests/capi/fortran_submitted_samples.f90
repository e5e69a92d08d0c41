! The Fortran bindings of samples from every rank (sluice_submit_samples, sluice_train_submitted,
! sluice_submitted_count): each rank submits its own columns (rank 0 three, rank 1 five), the step trains on all
! eight and gives the same loss as sluice_train_step on the same eight in rank-major order; an inputs array with a
! wrong first extent on ONE rank makes every rank fail with that rank's message (join_with_error), and nothing of
! the refused call is kept. Built against the installed tree and run with 2 ranks by fortran_program_test.sh.
program fortran_submitted_samples
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: features = 4, outputs = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 4' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: linear, outputs: 4}' // new_line('a') // &
      '    - {type: linear, outputs: 2}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4, split: [1, 1]}' // new_line('a') // &
      'optimizer: {type: sgd, lr: 0.1}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: direct, routed
  real(c_float), allocatable, target :: inputs(:, :), targets(:, :), wide_inputs(:, :)
  real(c_float) :: direct_loss, routed_loss
  integer :: rank, ranks, i, first, last
  integer(c_int64_t) :: held

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  if (ranks /= 2) call fail('run with 2 ranks, got a different count')
  allocate (inputs(features, batch), targets(outputs, batch), wide_inputs(features + 1, 1))
  inputs = reshape([(sin(0.3 * i), i = 1, features * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))
  wide_inputs = 0

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, direct), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_start(direct), 'sluice_trainer_start')
  call expect_ok(sluice_train_step(direct, inputs, targets, direct_loss), 'sluice_train_step')
  call sluice_trainer_destroy(direct)

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, routed), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_start(routed), 'sluice_trainer_start')
  ! Rank 1 has a problem with its array: every rank's call fails with its message, nothing is kept.
  if (rank == 1) then
    call expect_rejected(sluice_submit_samples(routed, wide_inputs, targets(:, 1:1)), &
        [character(len=40) :: 'sluice_submit_samples: inputs', 'has 5 rows'])
  else
    call expect_rejected(sluice_submit_samples(routed, inputs(:, 1:3), targets(:, 1:3)), &
        [character(len=40) :: 'has 5 rows', '(on rank 1'])
  end if
  call expect_ok(sluice_submitted_count(routed, held), 'sluice_submitted_count')
  if (held /= 0) call fail('a refused submission was kept')
  ! Rank 0 holds columns 1..3 of the global order, rank 1 columns 4..8.
  first = merge(1, 4, rank == 0)
  last = merge(3, 8, rank == 0)
  call expect_ok(sluice_submit_samples(routed, inputs(:, first:last), targets(:, first:last)), 'sluice_submit_samples')
  call expect_ok(sluice_submitted_count(routed, held), 'sluice_submitted_count')
  if (held /= batch) call fail('the trainer does not hold the 8 submitted samples')
  call expect_ok(sluice_train_submitted(routed, routed_loss), 'sluice_train_submitted')
  if (routed_loss /= direct_loss) call fail('the submitted samples trained to another loss than sluice_train_step')
  call expect_ok(sluice_submitted_count(routed, held), 'sluice_submitted_count')
  if (held /= 0) call fail('the step did not consume its batch')
  call sluice_trainer_destroy(routed)

  call checks_finish('PASS: submitted from every rank, trained like train_step')

contains

  subroutine expect_rejected(status, fragments)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: fragments(:)
    character(len=:), allocatable :: message
    integer :: k
    message = sluice_last_error()
    if (status /= SLUICE_ERROR_INVALID_ARGUMENT) then
      call fail('expected SLUICE_ERROR_INVALID_ARGUMENT, got ' // sluice_status_string(status))
    end if
    do k = 1, size(fragments)
      if (index(message, trim(fragments(k))) == 0) then
        call fail('message "' // message // '" does not mention "' // trim(fragments(k)) // '"')
      end if
    end do
  end subroutine expect_rejected
end program fortran_submitted_samples
