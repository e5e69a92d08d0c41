! Fields as a simulation code holds them (issue 27, item 1): a periodic conv model on `inputs: [2, 8, 8]` trained
! from rank-4 arrays u(nx, ny, nc, batch) on 2 ranks (2 stages). The shapes read back in C order; training lowers
! the loss; the same data as rank-2 rows (nx*ny*nc, batch) evaluates to the same loss bit for bit; an array whose
! extents are not the field reversed (u(nc, nx, ny, batch), or targets with 4 channels) is refused on every rank
! with SLUICE_ERROR_INVALID_ARGUMENT and a message naming the array and the extents the model takes; the inference
! model predicts rank-4 outputs like sluice_predict and refuses a wrong-extent one. Built against the installed
! tree by fortran_program_test.sh. Prints "FAIL rank R: ..." for every failed check.
program fortran_field_arrays
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: nx = 8, ny = 8, nc = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: [2, 8, 8]' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: conv, channels: 4, kernel: 3, padding: periodic}' // new_line('a') // &
      '    - {type: tanh}' // new_line('a') // &
      '    - {type: conv, channels: 2, kernel: 3, padding: periodic}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 2, split: [2, 1]}' // new_line('a') // &
      'optimizer: {type: adamw, lr: 0.01, weight_decay: 0}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: trainer
  real(c_float), allocatable, target :: u(:, :, :, :), v(:, :, :, :), p(:, :, :, :), swapped(:, :, :, :), &
      wide(:, :, :, :)
  real(c_float) :: loss, first_loss, eval_field, eval_rows
  integer(c_int64_t) :: dims(SLUICE_MAX_SAMPLE_DIMS)
  integer(c_int) :: dims_rank
  integer :: rank, i, j, c, b, step

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  allocate (u(nx, ny, nc, batch), v(nx, ny, nc, batch), p(nx, ny, nc, batch))
  do b = 1, batch
    do c = 1, nc
      do j = 1, ny
        do i = 1, nx
          u(i, j, c, b) = sin(0.7 * i + 1.3 * j * c + 0.5 * b)
        end do
      end do
    end do
  end do
  ! The target: each channel shifted by one cell in x, periodically (a conv with periodic padding can learn it).
  v = cshift(u, 1, dim=1)

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')
  call expect_ok(sluice_trainer_input_shape(trainer, dims, dims_rank), 'sluice_trainer_input_shape')
  if (dims_rank /= 3 .or. any(dims(1:3) /= [2, 8, 8])) call fail('sluice_trainer_input_shape is not [2, 8, 8]')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')
  call expect_ok(sluice_trainer_output_shape(trainer, dims, dims_rank), 'sluice_trainer_output_shape')
  if (dims_rank /= 3 .or. any(dims(1:3) /= [2, 8, 8])) call fail('sluice_trainer_output_shape is not [2, 8, 8]')

  do step = 1, 40
    call expect_ok(sluice_train_step(trainer, u, v, loss), 'sluice_train_step, rank-4 fields')
    if (step == 1) first_loss = loss
  end do
  if (.not. (loss < 0.5 * first_loss)) call fail('training on rank-4 fields did not lower the loss by half')

  ! The same memory as rows: rank 2 (nx*ny*nc, batch) evaluates alike, bit for bit.
  call expect_ok(sluice_evaluate(trainer, u, v, eval_field), 'sluice_evaluate, rank 4')
  call expect_ok(sluice_evaluate(trainer, reshape(u, [nx * ny * nc, batch]), reshape(v, [nx * ny * nc, batch]), &
      eval_rows), 'sluice_evaluate, rank 2')
  if (eval_rows /= eval_field) call fail('rank-2 rows evaluate to another loss than the rank-4 fields')

  ! Extents that are not the field reversed are refused on every rank, naming the array.
  swapped = reshape(u, [nc, nx, ny, batch])
  call expect_rejected(sluice_train_step(trainer, swapped, v, loss), 'inputs (nc, nx, ny, batch)', &
      'sluice_train_step: inputs has extents (2, 8, 8, 8); the model takes fields [2, 8, 8], ' // &
      'i.e. an array (8, 8, 2, batch)')
  allocate (wide(nx, ny, 2 * nc, batch))
  wide = 0
  call expect_rejected(sluice_evaluate(trainer, u, wide, loss), 'targets with 4 channels', &
      'sluice_evaluate: targets has extents (8, 8, 4, 8); the model gives fields [2, 8, 8]')
  call expect_rejected(sluice_predict(trainer, u, wide), 'outputs with 4 channels', &
      'sluice_predict: outputs has extents (8, 8, 4, 8)')
  call expect_rejected(sluice_submit_samples(trainer, swapped, v), 'submitted inputs (nc, nx, ny, batch)', &
      'sluice_submit_samples: inputs has extents (2, 8, 8, 8)')
  ! The refused calls changed nothing.
  call expect_ok(sluice_evaluate(trainer, u, v, loss), 'sluice_evaluate after the refused calls')
  if (loss /= eval_field) call fail('the refused calls changed the model')

  call expect_model_predict()
  call sluice_trainer_destroy(trainer)
  call checks_finish('PASS: fields as rank-4 arrays train, and wrong extents are refused by name')

contains

  subroutine expect_rejected(status, what, fragment)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what, fragment
    character(len=:), allocatable :: message
    message = sluice_last_error()
    if (status /= SLUICE_ERROR_INVALID_ARGUMENT) then
      call fail(what // ': expected SLUICE_ERROR_INVALID_ARGUMENT, got ' // sluice_status_string(status))
    end if
    if (index(message, fragment) == 0) then
      call fail(what // ': message "' // message // '" does not say "' // fragment // '"')
    end if
  end subroutine expect_rejected

  ! The inference-only model takes the same rank-4 arrays and checks them the same way.
  subroutine expect_model_predict()
    type(sluice_model) :: model
    character(len=:), allocatable :: dir
    integer :: dir_length
    real(c_float), allocatable :: model_out(:, :, :, :)
    call expect_ok(sluice_predict(trainer, u, p), 'sluice_predict, rank-4 fields')
    call get_environment_variable('SLUICE_TEST_DIR', length=dir_length)
    allocate (character(len=dir_length) :: dir)
    call get_environment_variable('SLUICE_TEST_DIR', dir)
    if (rank == 0) call execute_command_line('mkdir -p ' // dir)
    call MPI_Barrier(MPI_COMM_WORLD)
    call expect_ok(sluice_save_checkpoint(trainer, dir // '/fields.h5'), 'sluice_save_checkpoint')
    if (rank /= 0) return
    call expect_ok(sluice_model_load(dir // '/fields.h5', model), 'sluice_model_load')
    call expect_ok(sluice_model_output_shape(model, dims, dims_rank), 'sluice_model_output_shape')
    if (dims_rank /= 3 .or. any(dims(1:3) /= [2, 8, 8])) call fail('sluice_model_output_shape is not [2, 8, 8]')
    allocate (model_out(nx, ny, nc, batch))
    model_out = -999
    call expect_ok(sluice_model_predict(model, u, model_out), 'sluice_model_predict, rank-4 fields')
    if (any(model_out /= p)) call fail('sluice_model_predict on rank-4 fields differs from sluice_predict')
    call expect_rejected(sluice_model_predict(model, u, wide), 'model outputs with 4 channels', &
        'sluice_model_predict: outputs has extents (8, 8, 4, 8); the model gives fields [2, 8, 8], ' // &
        'i.e. an array (8, 8, 2, batch)')
    call sluice_model_destroy(model)
  end subroutine expect_model_predict
end program fortran_field_arrays
