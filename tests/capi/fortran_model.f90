! The inference-only model from Fortran: a 2-stage trainer (2 ranks) trains two steps and saves; each rank then
! loads the checkpoint with sluice_model_load and its predictions (batch 3, not a multiple of the 2 micro-batches,
! and batch 8) equal sluice_predict's exactly, and so do those of a model-only export (sluice_export_model) loaded
! the same way. Arrays of the wrong shape are refused by the wrapper naming them. The device-array wrappers
! (sluice_model_predict_device, sluice_predict_device) refuse host addresses on every rank.
! Built against the installed tree and run with 2 ranks by fortran_program_test.sh.
program fortran_model
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_loc
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: features = 3, outputs = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 3' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: linear, outputs: 5}' // new_line('a') // &
      '    - {type: tanh}' // new_line('a') // &
      '    - {type: linear, outputs: 2}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 2}' // new_line('a') // &
      'optimizer: {type: adamw, lr: 0.05}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: trainer
  type(sluice_model) :: model, shipped
  real(c_float), allocatable, target :: inputs(:, :), targets(:, :), pipelined(:, :), alone(:, :), wrong(:, :), &
                                         from_export(:, :)
  character(len=:), allocatable :: path, dir, exported
  integer(c_int64_t) :: n_in, n_out
  integer :: rank, i, step, rows
  integer :: dir_length

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  call get_environment_variable('SLUICE_TEST_DIR', length=dir_length)
  allocate (character(len=dir_length) :: dir)
  call get_environment_variable('SLUICE_TEST_DIR', dir)
  if (rank == 0) call execute_command_line('mkdir -p ' // dir)
  call MPI_Barrier(MPI_COMM_WORLD)
  path = dir // '/model.h5'
  exported = dir // '/export.h5'

  allocate (inputs(features, batch), targets(outputs, batch))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')
  do step = 1, 2
    inputs = reshape([(sin(0.3 * i + step), i = 1, features * batch)], shape(inputs))
    call expect_ok(sluice_train_step(trainer, inputs, targets, batch=batch), 'sluice_train_step')
  end do
  call expect_ok(sluice_save_checkpoint(trainer, path), 'sluice_save_checkpoint')
  call expect_ok(sluice_export_model(trainer, exported), 'sluice_export_model')
  call expect_ok(sluice_model_load(exported, shipped), 'sluice_model_load (export)')

  call expect_ok(sluice_model_load(path, model), 'sluice_model_load')
  call expect_ok(sluice_model_features(model, n_in, n_out), 'sluice_model_features')
  if (n_in /= features .or. n_out /= outputs) call fail('sluice_model_features gave wrong counts')
  do rows = 3, batch, batch - 3
    deallocate (inputs)
    allocate (inputs(features, rows), pipelined(outputs, rows), alone(outputs, rows), from_export(outputs, rows))
    inputs = reshape([(sin(0.11 * i), i = 1, features * rows)], shape(inputs))
    call expect_ok(sluice_predict(trainer, inputs, pipelined), 'sluice_predict')
    call expect_ok(sluice_model_predict(model, inputs, alone), 'sluice_model_predict')
    if (any(pipelined /= alone)) call fail('sluice_model_predict differs from sluice_predict')
    call expect_ok(sluice_model_predict(shipped, inputs, from_export), 'sluice_model_predict (export)')
    if (any(from_export /= alone)) call fail('the export predicts differently from the full checkpoint')
    deallocate (pipelined, alone, from_export)
  end do
  allocate (wrong(outputs + 1, 3))
  if (sluice_model_predict(model, inputs, wrong) /= SLUICE_ERROR_INVALID_ARGUMENT) then
    call fail('outputs with a wrong first extent were accepted')
  else if (index(sluice_last_error(), 'sluice_model_predict: outputs') == 0) then
    call fail('the wrong outputs were not named: ' // sluice_last_error())
  end if
  ! Host addresses where device addresses belong (the local call, then the collective one on every rank).
  call expect_device_refusal(sluice_model_predict_device(model, c_loc(inputs), c_loc(wrong), 3_c_int64_t), &
                             'sluice_model_predict_device')
  call expect_device_refusal(sluice_predict_device(trainer, c_loc(inputs), c_loc(wrong), 3_c_int64_t), &
                             'sluice_predict_device')
  allocate (alone(outputs, batch))
  call expect_ok(sluice_predict(trainer, inputs, alone), 'sluice_predict after the refusal')
  call sluice_model_destroy(model)
  call sluice_model_destroy(shipped)
  call sluice_trainer_destroy(trainer)

  call checks_finish('PASS: the model predicts as sluice_predict')

contains

  ! A build without CUDA refuses every device-array call (UNSUPPORTED, naming it); a CUDA build refuses host
  ! memory (INVALID_ARGUMENT, "is host memory") or, on a machine without a GPU, cannot ask CUDA (SLUICE_ERROR_CUDA).
  subroutine expect_device_refusal(status, call_name)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: call_name
    character(len=:), allocatable :: message
    message = sluice_last_error()
    select case (status)
    case (SLUICE_ERROR_UNSUPPORTED)
      if (index(message, call_name // ': this library was built without CUDA') == 0) then
        call fail(call_name // ': the refusal does not say why: ' // message)
      end if
    case (SLUICE_ERROR_INVALID_ARGUMENT)
      if (index(message, 'is host memory') == 0) call fail(call_name // ': host memory not named: ' // message)
    case (SLUICE_ERROR_CUDA)
    case default
      call fail(call_name // ' accepted host addresses or failed otherwise: ' // message)
    end select
  end subroutine expect_device_refusal
end program fortran_model
