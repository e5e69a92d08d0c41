! The Fortran binding of `loss: custom` (sluice_loss_ops, sluice_trainer_register_loss): a bind(C) MSE callback
! with the built-in's arithmetic trains like `loss: mse` (the same reported loss, bit for bit, every step, and the
! same predictions after training), and a callback returning non-zero ends the step on every rank with
! SLUICE_ERROR_CALLBACK; sluice_get/set_layer_params move a layer between trainers. Built against the installed tree and run with 2 ranks by fortran_program_test.sh.
module custom_loss_callbacks
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double, c_float, c_ptr, c_f_pointer
  implicit none
  integer :: fail_next = 0
contains
  integer(c_int) function mse_loss(user_data, prediction, targets, rows, cols, global_batch, loss_sum, &
                                   grad_prediction) bind(C) result(status)
    type(c_ptr), value :: user_data, prediction, targets, grad_prediction
    integer(c_int64_t), value :: rows, cols, global_batch
    real(c_double), intent(out) :: loss_sum
    real(c_float), pointer :: p(:), t(:), g(:)
    real(c_float) :: scale, diff
    integer(c_int64_t) :: i
    loss_sum = 0
    status = fail_next
    if (fail_next /= 0) return
    call c_f_pointer(prediction, p, [rows * cols])
    call c_f_pointer(targets, t, [rows * cols])
    call c_f_pointer(grad_prediction, g, [rows * cols])
    ! The built-in mse's operations in its order (kernels/cpu/cpu_loss.cc).
    scale = real(1.0_c_double / (real(global_batch, c_double) * real(cols, c_double)), c_float)
    do i = 1, rows * cols
      diff = p(i) - t(i)
      loss_sum = loss_sum + real(diff, c_double) * real(diff, c_double)
      g(i) = scale * 2.0_c_float * diff
    end do
    loss_sum = loss_sum / real(cols, c_double)
  end function mse_loss
end module custom_loss_callbacks

program fortran_custom_loss
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_double, c_funloc
  use mpi_f08
  use sluice
  use fortran_checks
  use custom_loss_callbacks
  implicit none

  integer, parameter :: features = 4, outputs = 2, batch = 8, steps = 3
  type(sluice_trainer) :: builtin, custom
  type(sluice_loss_ops) :: ops
  real(c_float), allocatable :: inputs(:, :), targets(:, :), out_builtin(:, :), out_custom(:, :)
  real(c_float) :: loss_builtin, loss_custom
  real(c_float), allocatable :: params(:), expected(:)
  integer(c_int64_t) :: count
  real(c_double) :: lr
  integer :: rank, i, step

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  allocate (inputs(features, batch), targets(outputs, batch), out_builtin(outputs, batch), out_custom(outputs, batch))
  inputs = reshape([(sin(0.3 * i), i = 1, features * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))

  call expect(sluice_trainer_create(MPI_COMM_WORLD, config('mse'), builtin), SLUICE_OK, 'create mse')
  call expect(sluice_trainer_start(builtin), SLUICE_OK, 'start mse')
  call expect(sluice_trainer_create(MPI_COMM_WORLD, config('custom'), custom), SLUICE_OK, 'create custom')
  ops%loss = c_funloc(mse_loss)
  call expect(sluice_trainer_register_loss(custom, ops), SLUICE_OK, 'sluice_trainer_register_loss')
  call expect(sluice_trainer_start(custom), SLUICE_OK, 'start custom')
  do step = 1, steps
    call expect(sluice_train_step(builtin, inputs, targets, loss_builtin), SLUICE_OK, 'train mse')
    call expect(sluice_train_step(custom, inputs, targets, loss_custom), SLUICE_OK, 'train custom')
    if (loss_builtin /= loss_custom) call fail('the custom MSE loss differs from mse')
  end do
  call expect(sluice_predict(builtin, inputs, out_builtin), SLUICE_OK, 'predict mse')
  call expect(sluice_predict(custom, inputs, out_custom), SLUICE_OK, 'predict custom')
  if (any(out_builtin /= out_custom)) call fail('predictions after training differ')

  ! Parameters by layer: layer 2 (linear 4 -> 2: 8 weights + 2 biases) is copied from one trainer to the other.
  call expect(sluice_layer_param_count(custom, 2, count), SLUICE_OK, 'sluice_layer_param_count')
  if (count /= 10) call fail('layer 2 should have 10 parameters')
  allocate (params(count))
  call expect(sluice_get_layer_params(builtin, 2, params), SLUICE_OK, 'sluice_get_layer_params')
  expected = 2 * params
  call expect(sluice_set_layer_params(custom, 2, expected), SLUICE_OK, 'sluice_set_layer_params')
  params = 0
  call expect(sluice_get_layer_params(custom, 2, params), SLUICE_OK, 'sluice_get_layer_params after set')
  if (any(params /= expected)) call fail('get after set did not return the values set')
  call expect(sluice_get_layer_params(builtin, 2, params(1:9)), SLUICE_ERROR_INVALID_ARGUMENT, 'a short array')

  ! Learning rate: an override replaces the config's lr and 0 hands back to it.
  call expect(sluice_set_learning_rate(custom, 0.003_c_double), SLUICE_OK, 'sluice_set_learning_rate')
  call expect(sluice_get_learning_rate(custom, lr), SLUICE_OK, 'sluice_get_learning_rate')
  if (lr /= 0.003_c_double) call fail('the learning rate override was not taken')
  call expect(sluice_set_learning_rate(custom, 0.0_c_double), SLUICE_OK, 'sluice_set_learning_rate 0')
  call expect(sluice_get_learning_rate(custom, lr), SLUICE_OK, 'sluice_get_learning_rate')
  if (lr /= 0.01_c_double) call fail('lr 0 did not return to the config''s lr')

  fail_next = 7  ! every rank's step fails, also the ranks whose callback is not called
  call expect(sluice_train_step(custom, inputs, targets, loss_custom), SLUICE_ERROR_CALLBACK, 'failing callback')
  fail_next = 0
  call expect(sluice_train_step(custom, inputs, targets, loss_custom), SLUICE_OK, 'train after the failure')

  call sluice_trainer_destroy(builtin)
  call sluice_trainer_destroy(custom)
  call checks_finish('PASS: a Fortran loss callback trains like mse')

contains

  function config(loss) result(text)
    character(len=*), intent(in) :: loss
    character(len=:), allocatable :: text
    text = 'model:' // new_line('a') // '  inputs: 4' // new_line('a') // '  layers:' // new_line('a') // &
           '    - {type: linear, outputs: 4}' // new_line('a') // '    - {type: tanh}' // new_line('a') // &
           '    - {type: linear, outputs: 2}' // new_line('a') // &
           'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4}' // new_line('a') // &
           'loss: ' // loss // new_line('a') // 'optimizer: {type: adamw, lr: 0.01}' // new_line('a') // &
           'data: {type: external, batch: 8}' // new_line('a')
  end function config

  subroutine expect(status, wanted, what)
    integer(c_int), intent(in) :: status, wanted
    character(len=*), intent(in) :: what
    if (status /= wanted) call fail(what // ': ' // sluice_last_error())
  end subroutine expect
end program fortran_custom_loss
