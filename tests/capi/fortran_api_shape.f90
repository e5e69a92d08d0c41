! The Fortran module's argument order and kinds: sluice_predict takes (trainer, inputs, outputs[, batch]) like the
! C call and sluice_train_step (3 input features but 2 outputs, so a swapped call is refused, and inputs are not
! written); batch and feature counts may be default integers; sluice_stats comes back size-tagged with the
! accumulation window (optimizer.accumulate: 2). Built against the installed tree and run with 2 ranks by
! fortran_program_test.sh. Prints "FAIL rank R: ..." for every failed check and exits non-zero if any rank failed.
program fortran_api_shape
  use, intrinsic :: iso_c_binding, only: c_int, c_float, c_sizeof
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: features = 3, outputs = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 3' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: linear, outputs: 4}' // new_line('a') // &
      '    - {type: linear, outputs: 2}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4, split: [1, 1]}' // new_line('a') // &
      'optimizer: {type: sgd, lr: 0.1, accumulate: 2}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: trainer
  real(c_float), allocatable, target :: inputs(:, :), inputs_copy(:, :), targets(:, :), predicted(:, :), again(:, :)
  real(c_float) :: loss, validation
  integer :: rank, i, n_in, n_out

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  allocate (inputs(features, batch), targets(outputs, batch), predicted(outputs, batch), again(outputs, batch))
  inputs = reshape([(sin(0.3 * i), i = 1, features * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))
  inputs_copy = inputs

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_features(trainer, n_in, n_out), 'sluice_trainer_features (default integers)')
  if (n_in /= features .or. n_out /= outputs) call fail('sluice_trainer_features gave wrong counts')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')

  ! The C order: inputs, then outputs. The inputs stay as they were.
  predicted = -999
  call expect_ok(sluice_predict(trainer, inputs, predicted), 'sluice_predict(trainer, inputs, outputs)')
  if (any(inputs /= inputs_copy)) call fail('sluice_predict wrote into its inputs')
  if (any(predicted == -999)) call fail('sluice_predict left outputs unfilled')
  ! The same with a default-integer batch, and on the second stage's rank without inputs.
  again = -999
  if (rank == 0) then
    call expect_ok(sluice_predict(trainer, inputs, again, batch), 'sluice_predict with a default-integer batch')
  else
    call expect_ok(sluice_predict(trainer, outputs=again, batch=batch), 'sluice_predict without inputs')
  end if
  if (any(again /= predicted)) call fail('a repeated prediction differs')

  ! The swapped (outputs-first) call is refused on every rank, naming the array; nothing is written.
  call expect_rejected(sluice_predict(trainer, predicted, inputs), 'swapped sluice_predict', &
      [character(len=40) :: 'sluice_predict: inputs', 'has 2 rows', 'has 3 features'])
  if (any(inputs /= inputs_copy)) call fail('the refused swapped sluice_predict wrote into inputs')
  call expect_rejected(sluice_predict(trainer, inputs, predicted, batch / 2), 'batch disagreeing with the arrays', &
      [character(len=40) :: 'sluice_predict: batch = 4', 'have 8 columns'])

  ! Training with a default-integer batch; the stats report the accumulation window. sluice_evaluate first gives
  ! the loss the step then reports (no dropout here), and changes nothing.
  call expect_ok(sluice_evaluate(trainer, inputs, targets, validation, batch), 'sluice_evaluate')
  call expect_ok(sluice_train_step(trainer, inputs, targets, loss, batch), 'sluice_train_step, call 1 of 2')
  if (loss /= validation) call fail('sluice_evaluate gave another loss than the train step')
  call expect_stats(steps=0, pending=1)
  call expect_ok(sluice_train_step(trainer, inputs, targets, loss, batch), 'sluice_train_step, call 2 of 2')
  call expect_stats(steps=1, pending=0)
  if (any(inputs /= inputs_copy)) call fail('sluice_train_step wrote into its inputs')

  call expect_layout()

  call sluice_trainer_destroy(trainer)
  call checks_finish('PASS: C argument order, default integers, sized stats, layout')

contains

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

  subroutine expect_stats(steps, pending)
    integer, intent(in) :: steps, pending
    type(sluice_stats) :: stats
    call expect_ok(sluice_trainer_stats(trainer, stats), 'sluice_trainer_stats')
    if (stats%struct_size /= c_sizeof(stats)) call fail('sluice_stats%struct_size is not the full size')
    if (stats%accumulate /= 2) call fail('sluice_stats%accumulate is not 2')
    if (stats%steps /= steps) call fail('sluice_stats%steps is wrong')
    if (stats%pending_calls /= pending) call fail('sluice_stats%pending_calls is wrong')
  end subroutine expect_stats

  ! 2 ranks, 2 stages, 1 replica: rank 0 reads inputs, rank 1 targets, both the whole batch.
  subroutine expect_layout()
    type(sluice_layout) :: layout
    integer :: first, count
    call expect_ok(sluice_trainer_layout(trainer, layout), 'sluice_trainer_layout')
    if (layout%stage /= rank .or. layout%replica /= 0 .or. layout%stages /= 2 .or. layout%replicas /= 1) then
      call fail('sluice_trainer_layout: wrong stage, replica or counts')
    end if
    if (layout%needs_inputs /= merge(1, 0, rank == 0) .or. layout%needs_targets /= merge(1, 0, rank == 1)) then
      call fail('sluice_trainer_layout: wrong needs_inputs / needs_targets')
    end if
    if (layout%batch /= batch .or. layout%first_sample /= 0) call fail('sluice_trainer_layout: wrong batch share')
    call expect_ok(sluice_trainer_batch_share(trainer, 16, first, count), 'sluice_trainer_batch_share')
    if (first /= 0 .or. count /= 16) call fail('sluice_trainer_batch_share: wrong share')
  end subroutine expect_layout
end program fortran_api_shape
