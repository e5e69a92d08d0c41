! The Fortran wrappers with a bad array on ONE rank: every rank must get an error back (no rank left waiting in
! the collective step), the bad rank's message must name the array and both sizes, and the trainer must still
! train afterwards. Built against the installed tree and run with 2 ranks by fortran_one_bad_rank_test.sh.
! Prints "FAIL rank R: ..." for every failed check and exits non-zero on every rank if any rank failed.
program fortran_one_bad_rank
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
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

  type(sluice_trainer) :: trainer
  real(c_float), allocatable, target :: inputs(:, :), targets(:, :), predicted(:, :)
  real(c_float), allocatable, target :: wide_inputs(:, :), wide_targets(:, :), wide_outputs(:, :), half_targets(:, :)
  integer :: rank, ranks, i
  integer(c_int64_t) :: good_steps

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  if (ranks /= 2) call fail('run with 2 ranks, got a different count')

  allocate (inputs(features, batch), targets(outputs, batch), predicted(outputs, batch))
  allocate (wide_inputs(features + 1, batch), wide_targets(outputs + 1, batch), wide_outputs(outputs + 1, batch))
  allocate (half_targets(outputs, batch / 2))
  inputs = reshape([(sin(0.3 * i), i = 1, features * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))
  wide_inputs = 0
  wide_targets = 0
  wide_outputs = 0
  half_targets = 0

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')
  good_steps = 0

  ! 1. Rank 0 (the first stage, which reads the inputs) passes inputs with 5 rows for a 4-feature model.
  if (rank == 0) then
    call expect_rejected(sluice_train_step(trainer, wide_inputs, targets), 'wrong inputs rows on rank 0', &
        [character(len=40) :: 'sluice_train_step: inputs', 'has 5 rows', 'has 4 features'])
  else
    call expect_rejected(sluice_train_step(trainer, inputs, targets), 'wrong inputs rows on rank 0', &
        [character(len=40) :: 'has 5 rows', '(on rank 0'])
  end if
  call expect_next_step_trains()

  ! 2. Rank 1 (the last stage, which reads the targets) passes targets with 3 rows for 2 outputs.
  if (rank == 1) then
    call expect_rejected(sluice_train_step(trainer, inputs, wide_targets), 'wrong targets rows on rank 1', &
        [character(len=40) :: 'sluice_train_step: targets', 'has 3 rows', 'has 2 features'])
  else
    call expect_rejected(sluice_train_step(trainer, inputs, targets), 'wrong targets rows on rank 1', &
        [character(len=40) :: 'has 3 rows', '(on rank 1'])
  end if
  call expect_next_step_trains()

  ! 3. Rank 0's inputs and targets disagree on the batch (8 and 4 columns).
  if (rank == 0) then
    call expect_rejected(sluice_train_step(trainer, inputs, half_targets), 'batch mismatch on rank 0', &
        [character(len=40) :: 'inputs has 8 columns', 'targets has 4'])
  else
    call expect_rejected(sluice_train_step(trainer, inputs, targets), 'batch mismatch on rank 0', &
        [character(len=40) :: 'inputs has 8 columns', '(on rank 0'])
  end if
  call expect_next_step_trains()

  ! 4. Prediction: rank 1's outputs array has 3 rows for 2 outputs.
  if (rank == 1) then
    call expect_rejected(sluice_predict(trainer, inputs, wide_outputs), 'wrong outputs rows on rank 1', &
        [character(len=40) :: 'sluice_predict: outputs', 'has 3 rows', 'has 2 features'])
  else
    call expect_rejected(sluice_predict(trainer, inputs, predicted), 'wrong outputs rows on rank 1', &
        [character(len=40) :: 'has 3 rows', '(on rank 1'])
  end if
  predicted = -1
  call expect_ok(sluice_predict(trainer, inputs, predicted), 'sluice_predict after the rejected one')
  if (any(ieee_is_nan(predicted)) .or. all(predicted == -1)) call fail('the good prediction filled no outputs')

  call sluice_trainer_destroy(trainer)
  call checks_finish('PASS: every rank got the error, none hung')

contains

  ! The call failed with INVALID_ARGUMENT on this rank and its message holds every fragment.
  subroutine expect_rejected(status, what, fragments)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    character(len=*), intent(in) :: fragments(:)
    character(len=:), allocatable :: message
    integer :: k
    message = sluice_last_error()
    if (status /= SLUICE_ERROR_INVALID_ARGUMENT) then
      call fail(what // ': expected SLUICE_ERROR_INVALID_ARGUMENT, got ' // sluice_status_string(status))
    end if
    do k = 1, size(fragments)
      if (index(message, trim(fragments(k))) == 0) then
        call fail(what // ': message "' // message // '" does not mention "' // trim(fragments(k)) // '"')
      end if
    end do
  end subroutine expect_rejected

  ! A rejected step applies nothing; the next good one trains and is counted.
  subroutine expect_next_step_trains()
    type(sluice_stats) :: stats
    real(c_float) :: loss
    call expect_ok(sluice_trainer_stats(trainer, stats), 'sluice_trainer_stats')
    if (stats%steps /= good_steps) call fail('a rejected step was counted')
    loss = -1
    call expect_ok(sluice_train_step(trainer, inputs, targets, loss), 'sluice_train_step after the rejected one')
    good_steps = good_steps + 1
    if (.not. (loss >= 0)) call fail('the good step after a rejected one gave no loss')
    call expect_ok(sluice_trainer_stats(trainer, stats), 'sluice_trainer_stats')
    if (stats%steps /= good_steps) call fail('the good step after a rejected one was not counted')
  end subroutine expect_next_step_trains
end program fortran_one_bad_rank
