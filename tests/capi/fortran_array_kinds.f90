! Arrays as a simulation code holds them: the data entry points take float32 or float64 arrays of rank 2 or more
! whose LAST extent is the batch (features = the product of the others). Two trainers of the same model see the
! same values (multiples of 1/8: exact in float32), one as float32 x(12, batch), the other as float64 x(3, 4, batch)
! with rank-3 targets: after three steps their losses and every parameter are equal bit for bit, and sluice_predict
! fills a float64 output with the float32 prediction. Rank-4 and strided float32 arrays evaluate like the packed
! matrix; float64 samples are submitted; sluice_model_predict takes float64 arrays. Wrong feature counts, a rank-1
! array, disagreeing batches and a bad array on ONE rank are refused on every rank with SLUICE_ERROR_INVALID_ARGUMENT
! naming the array, and the trainers stay usable. Built against the installed tree and run with 2 ranks by
! fortran_program_test.sh. Prints "FAIL rank R: ..." for every failed check and exits non-zero if any rank failed.
program fortran_array_kinds
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_double
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  integer, parameter :: nx = 3, ny = 4, features = nx * ny, outputs = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 12' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: linear, outputs: 6}' // new_line('a') // &
      '    - {type: linear, outputs: 2}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4, split: [1, 1]}' // new_line('a') // &
      'optimizer: {type: sgd, lr: 0.05}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: single, double
  real(c_float), allocatable, target :: x32(:, :), y32(:, :), p32(:, :), x4(:, :, :, :), wide(:, :)
  real(c_double), allocatable, target :: x64(:, :, :), y64(:, :, :), p64(:, :, :), bad64(:, :, :), flat64(:)
  real(c_float) :: loss32, eval_packed, eval_rank4, eval_strided
  real(c_double) :: loss64
  integer :: rank, i, step
  integer(c_int64_t) :: held

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  allocate (x32(features, batch), y32(outputs, batch), p32(outputs, batch))
  x32 = reshape([(real(mod(i * 5, 17) - 8, c_float) / 8, i = 1, features * batch)], shape(x32))
  y32 = reshape([(real(mod(i * 3, 11) - 5, c_float) / 8, i = 1, outputs * batch)], shape(y32))
  x64 = reshape(real(x32, c_double), [nx, ny, batch])
  y64 = reshape(real(y32, c_double), [outputs, 1, batch])

  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, single), 'sluice_trainer_create (float32)')
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, double), 'sluice_trainer_create (float64)')
  call expect_ok(sluice_trainer_start(single), 'sluice_trainer_start (float32)')
  call expect_ok(sluice_trainer_start(double), 'sluice_trainer_start (float64)')

  do step = 1, 3
    call expect_ok(sluice_train_step(single, x32, y32, loss32), 'sluice_train_step, float32 rank 2')
    call expect_ok(sluice_train_step(double, x64, y64, loss64), 'sluice_train_step, float64 rank 3')
    if (loss64 /= real(loss32, c_double)) call fail('the float64 rank-3 step gave another loss than float32 rank 2')
  end do
  call expect_same_parameters()

  ! predict: float64 rank-3 outputs are written with the float32 prediction.
  allocate (p64(outputs, 1, batch))
  p64 = -999
  call expect_ok(sluice_predict(single, x32, p32), 'sluice_predict, float32')
  call expect_ok(sluice_predict(double, x64, p64), 'sluice_predict, float64 rank 3')
  if (any(p64 == -999)) call fail('sluice_predict left float64 outputs unfilled')
  if (any(reshape(p64, [outputs, batch]) /= real(p32, c_double))) call fail('float64 predictions differ from float32')

  ! Rank 4 and a strided section evaluate like the packed matrix.
  x4 = reshape(x32, [nx, 2, 2, batch])
  allocate (wide(features, 2 * batch))
  wide = 0
  wide(:, 1:2 * batch:2) = x32
  call expect_ok(sluice_evaluate(single, x32, y32, eval_packed), 'sluice_evaluate, rank 2')
  call expect_ok(sluice_evaluate(single, x4, reshape(y32, [1, outputs, batch]), eval_rank4), 'sluice_evaluate, rank 4')
  call expect_ok(sluice_evaluate(single, wide(:, 1:2 * batch:2), y32, eval_strided), 'sluice_evaluate, strided')
  if (eval_rank4 /= eval_packed) call fail('a rank-4 evaluation gave another loss than rank 2')
  if (eval_strided /= eval_packed) call fail('a strided evaluation gave another loss than the packed array')

  call expect_shape_errors()
  ! Refused calls changed nothing: both trainers still train alike.
  call expect_ok(sluice_train_step(single, x32, y32, loss32), 'sluice_train_step after the refused calls')
  call expect_ok(sluice_train_step(double, x64, y64, loss64), 'float64 sluice_train_step after the refused calls')
  if (loss64 /= real(loss32, c_double)) call fail('after the refused calls the losses differ')
  call expect_same_parameters()

  ! float64 samples from every rank.
  call expect_ok(sluice_submit_samples(double, x64, y64), 'sluice_submit_samples, float64 rank 3')
  call expect_ok(sluice_submitted_count(double, held), 'sluice_submitted_count')
  if (held /= 2 * batch) call fail('sluice_submitted_count does not hold both ranks'' float64 samples')

  call expect_model_predict()
  call sluice_trainer_destroy(single)
  call sluice_trainer_destroy(double)
  call checks_finish('PASS: float64 and rank-N arrays train like float32 matrices')

contains

  ! On the rank that had the bad array the message names it; the other ranks' names that rank.
  subroutine expect_rejected(status, what, fragments, bad_rank)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    character(len=*), intent(in) :: fragments(:)
    integer, intent(in), optional :: bad_rank
    character(len=:), allocatable :: message
    integer :: k
    message = sluice_last_error()
    if (status /= SLUICE_ERROR_INVALID_ARGUMENT) then
      call fail(what // ': expected SLUICE_ERROR_INVALID_ARGUMENT, got ' // sluice_status_string(status))
    end if
    if (present(bad_rank)) then
      if (rank /= bad_rank) return
    end if
    do k = 1, size(fragments)
      if (index(message, trim(fragments(k))) == 0) then
        call fail(what // ': message "' // message // '" does not mention "' // trim(fragments(k)) // '"')
      end if
    end do
  end subroutine expect_rejected

  subroutine expect_same_parameters()
    integer :: layer
    integer(c_int64_t) :: count
    real(c_float), allocatable :: a(:), b(:)
    do layer = 0, 1
      call expect_ok(sluice_layer_param_count(single, layer, count), 'sluice_layer_param_count')
      allocate (a(count), b(count))
      call expect_ok(sluice_get_layer_params(single, layer, a), 'sluice_get_layer_params (float32)')
      call expect_ok(sluice_get_layer_params(double, layer, b), 'sluice_get_layer_params (float64)')
      if (any(a /= b)) call fail('float64 rank-3 training gave other parameters than float32 rank 2')
      deallocate (a, b)
    end do
  end subroutine expect_same_parameters

  subroutine expect_shape_errors()
    real(c_float), allocatable :: short_batch(:, :, :)
    allocate (bad64(nx, nx, batch), short_batch(outputs, 1, batch / 2), flat64(features * batch))
    bad64 = 0
    short_batch = 0
    flat64 = 0
    call expect_rejected(sluice_train_step(double, bad64, y64, loss64), 'float64 inputs with 9 features', &
        [character(len=40) :: 'sluice_train_step: inputs', 'has 9 rows', 'has 12 features'])
    call expect_rejected(sluice_predict(double, x64, bad64), 'float64 outputs with 9 features', &
        [character(len=40) :: 'sluice_predict: outputs', 'has 9 rows', 'has 2 features'])
    call expect_rejected(sluice_evaluate(double, flat64, y64, loss64), 'a rank-1 float64 array', &
        [character(len=40) :: 'sluice_evaluate: inputs', 'has rank 1'])
    call expect_rejected(sluice_train_step(single, x4, short_batch, loss32), 'targets with half the batch', &
        [character(len=40) :: 'sluice_train_step', 'has 8 columns (batch)', 'targets has 4'])
    call expect_rejected(sluice_submit_samples(double, bad64, y64), 'float64 samples with 9 features', &
        [character(len=40) :: 'sluice_submit_samples: inputs', 'has 9 rows'])
    ! Only rank 1 has the wrong array: rank 0 fails too, told by the agreement, and neither waits.
    if (rank == 1) then
      call expect_rejected(sluice_train_step(double, bad64, y64, loss64), 'a bad array on rank 1', &
          [character(len=40) :: 'has 9 rows'], bad_rank=1)
    else
      call expect_rejected(sluice_train_step(double, x64, y64, loss64), 'a bad array on rank 1 (seen on rank 0)', &
          [character(len=40) :: 'rank 1'], bad_rank=0)
    end if
  end subroutine expect_shape_errors

  ! The inference-only model on float64 arrays: the trainer's float32 prediction, converted.
  subroutine expect_model_predict()
    type(sluice_model) :: model
    character(len=:), allocatable :: dir
    integer :: dir_length
    real(c_double), allocatable :: model_out(:, :, :)
    call expect_ok(sluice_predict(single, x32, p32), 'sluice_predict before the checkpoint')
    call get_environment_variable('SLUICE_TEST_DIR', length=dir_length)
    allocate (character(len=dir_length) :: dir)
    call get_environment_variable('SLUICE_TEST_DIR', dir)
    if (rank == 0) call execute_command_line('mkdir -p ' // dir)
    call MPI_Barrier(MPI_COMM_WORLD)
    call expect_ok(sluice_save_checkpoint(single, dir // '/kinds.h5'), 'sluice_save_checkpoint')
    if (rank /= 0) return
    call expect_ok(sluice_model_load(dir // '/kinds.h5', model), 'sluice_model_load')
    allocate (model_out(1, outputs, batch))
    model_out = -999
    call expect_ok(sluice_model_predict(model, x64, model_out), 'sluice_model_predict, float64 rank 3')
    if (any(reshape(model_out, [outputs, batch]) /= real(p32, c_double))) then
      call fail('sluice_model_predict on float64 arrays differs from the trainer''s float32 prediction')
    end if
    call expect_rejected(sluice_model_predict(model, x64, bad64), 'model outputs with 9 features', &
        [character(len=40) :: 'sluice_model_predict: outputs', 'has 9 rows'])
    call sluice_model_destroy(model)
  end subroutine expect_model_predict
end program fortran_array_kinds
