! Compile test of the Fortran module's generics (issue 26, item 4): every public generic that takes a count, a batch,
! a loss or a float array is called here with default-integer (int32) and integer(int64) counts, literals included
! (`batch=32`), and with real32 and real64 arrays of rank 2 to 5 (batch last). Compiled, not run, with
! `-std=f2018 -Wall -Wextra -Werror` (tests/capi:fortran_generics_compile_test): a missing kind fails the build.
program fortran_generics_compile
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use sluice
  implicit none
  type(sluice_trainer) :: t
  type(sluice_model) :: m
  integer :: s, n
  integer(int32) :: n32, a32, b32
  integer(int64) :: n64, a64, b64
  real(real32) :: loss32, lr32, p32(10)
  real(real64) :: loss64, lr64, p64(10)
  real(real32), allocatable :: x32_2(:, :), y32_2(:, :)
  real(real32), allocatable :: x32_3(:, :, :), y32_3(:, :, :)
  real(real32), allocatable :: x32_4(:, :, :, :), y32_4(:, :, :, :)
  real(real32), allocatable :: x32_5(:, :, :, :, :), y32_5(:, :, :, :, :)
  real(real64), allocatable :: x64_2(:, :), y64_2(:, :)
  real(real64), allocatable :: x64_3(:, :, :), y64_3(:, :, :)
  real(real64), allocatable :: x64_4(:, :, :, :), y64_4(:, :, :, :)
  real(real64), allocatable :: x64_5(:, :, :, :, :), y64_5(:, :, :, :, :)
  s = 0
  n = 32
  n32 = 32_int32
  n64 = 32_int64
  p32 = 0
  p64 = 0
  lr32 = 0.1_real32
  lr64 = 0.1_real64
  allocate (x32_2(4, 8), y32_2(4, 8))
  x32_2 = 0
  y32_2 = 0
  allocate (x32_3(2, 2, 8), y32_3(2, 2, 8))
  x32_3 = 0
  y32_3 = 0
  allocate (x32_4(2, 1, 2, 8), y32_4(2, 1, 2, 8))
  x32_4 = 0
  y32_4 = 0
  allocate (x32_5(1, 2, 1, 2, 8), y32_5(1, 2, 1, 2, 8))
  x32_5 = 0
  y32_5 = 0
  allocate (x64_2(4, 8), y64_2(4, 8))
  x64_2 = 0
  y64_2 = 0
  allocate (x64_3(2, 2, 8), y64_3(2, 2, 8))
  x64_3 = 0
  y64_3 = 0
  allocate (x64_4(2, 1, 2, 8), y64_4(2, 1, 2, 8))
  x64_4 = 0
  y64_4 = 0
  allocate (x64_5(1, 2, 1, 2, 8), y64_5(1, 2, 1, 2, 8))
  x64_5 = 0
  y64_5 = 0

  ! Samples in each call, the batch given or taken from the arrays, int32 and int64, float32 and float64.
  s = s + sluice_train_step(t, x32_2, y32_2, loss32)
  s = s + sluice_train_step(t, x32_2, y32_2, loss32, 32)
  s = s + sluice_train_step(t, x32_2, y32_2, loss32, n32)
  s = s + sluice_train_step(t, x32_2, y32_2, loss32, n64)
  s = s + sluice_train_step(t, x32_2, y32_2, loss32, batch=32_int64)
  s = s + sluice_evaluate(t, x32_2, y32_2, loss32)
  s = s + sluice_evaluate(t, x32_2, y32_2, loss32, 32)
  s = s + sluice_evaluate(t, x32_2, y32_2, loss32, n32)
  s = s + sluice_evaluate(t, x32_2, y32_2, loss32, n64)
  s = s + sluice_evaluate(t, x32_2, y32_2, loss32, batch=32_int64)
  s = s + sluice_predict(t, x32_2, y32_2)
  s = s + sluice_predict(t, x32_2, y32_2, n32)
  s = s + sluice_predict(t, x32_2, y32_2, batch=n64)
  s = s + sluice_submit_samples(t, x32_2, y32_2)
  s = s + sluice_model_predict(m, x32_2, y32_2)
  s = s + sluice_train_step(t, x32_3, y32_3, loss32)
  s = s + sluice_train_step(t, x32_3, y32_3, loss32, 32)
  s = s + sluice_train_step(t, x32_3, y32_3, loss32, n32)
  s = s + sluice_train_step(t, x32_3, y32_3, loss32, n64)
  s = s + sluice_train_step(t, x32_3, y32_3, loss32, batch=32_int64)
  s = s + sluice_evaluate(t, x32_3, y32_3, loss32)
  s = s + sluice_evaluate(t, x32_3, y32_3, loss32, 32)
  s = s + sluice_evaluate(t, x32_3, y32_3, loss32, n32)
  s = s + sluice_evaluate(t, x32_3, y32_3, loss32, n64)
  s = s + sluice_evaluate(t, x32_3, y32_3, loss32, batch=32_int64)
  s = s + sluice_predict(t, x32_3, y32_3)
  s = s + sluice_predict(t, x32_3, y32_3, n32)
  s = s + sluice_predict(t, x32_3, y32_3, batch=n64)
  s = s + sluice_submit_samples(t, x32_3, y32_3)
  s = s + sluice_model_predict(m, x32_3, y32_3)
  s = s + sluice_train_step(t, x32_4, y32_4, loss32)
  s = s + sluice_train_step(t, x32_4, y32_4, loss32, 32)
  s = s + sluice_train_step(t, x32_4, y32_4, loss32, n32)
  s = s + sluice_train_step(t, x32_4, y32_4, loss32, n64)
  s = s + sluice_train_step(t, x32_4, y32_4, loss32, batch=32_int64)
  s = s + sluice_evaluate(t, x32_4, y32_4, loss32)
  s = s + sluice_evaluate(t, x32_4, y32_4, loss32, 32)
  s = s + sluice_evaluate(t, x32_4, y32_4, loss32, n32)
  s = s + sluice_evaluate(t, x32_4, y32_4, loss32, n64)
  s = s + sluice_evaluate(t, x32_4, y32_4, loss32, batch=32_int64)
  s = s + sluice_predict(t, x32_4, y32_4)
  s = s + sluice_predict(t, x32_4, y32_4, n32)
  s = s + sluice_predict(t, x32_4, y32_4, batch=n64)
  s = s + sluice_submit_samples(t, x32_4, y32_4)
  s = s + sluice_model_predict(m, x32_4, y32_4)
  s = s + sluice_train_step(t, x32_5, y32_5, loss32)
  s = s + sluice_train_step(t, x32_5, y32_5, loss32, 32)
  s = s + sluice_train_step(t, x32_5, y32_5, loss32, n32)
  s = s + sluice_train_step(t, x32_5, y32_5, loss32, n64)
  s = s + sluice_train_step(t, x32_5, y32_5, loss32, batch=32_int64)
  s = s + sluice_evaluate(t, x32_5, y32_5, loss32)
  s = s + sluice_evaluate(t, x32_5, y32_5, loss32, 32)
  s = s + sluice_evaluate(t, x32_5, y32_5, loss32, n32)
  s = s + sluice_evaluate(t, x32_5, y32_5, loss32, n64)
  s = s + sluice_evaluate(t, x32_5, y32_5, loss32, batch=32_int64)
  s = s + sluice_predict(t, x32_5, y32_5)
  s = s + sluice_predict(t, x32_5, y32_5, n32)
  s = s + sluice_predict(t, x32_5, y32_5, batch=n64)
  s = s + sluice_submit_samples(t, x32_5, y32_5)
  s = s + sluice_model_predict(m, x32_5, y32_5)
  s = s + sluice_train_step(t, x64_2, y64_2, loss64)
  s = s + sluice_train_step(t, x64_2, y64_2, loss64, 32)
  s = s + sluice_train_step(t, x64_2, y64_2, loss64, n32)
  s = s + sluice_train_step(t, x64_2, y64_2, loss64, n64)
  s = s + sluice_train_step(t, x64_2, y64_2, loss64, batch=32_int64)
  s = s + sluice_evaluate(t, x64_2, y64_2, loss64)
  s = s + sluice_evaluate(t, x64_2, y64_2, loss64, 32)
  s = s + sluice_evaluate(t, x64_2, y64_2, loss64, n32)
  s = s + sluice_evaluate(t, x64_2, y64_2, loss64, n64)
  s = s + sluice_evaluate(t, x64_2, y64_2, loss64, batch=32_int64)
  s = s + sluice_predict(t, x64_2, y64_2)
  s = s + sluice_predict(t, x64_2, y64_2, n32)
  s = s + sluice_predict(t, x64_2, y64_2, batch=n64)
  s = s + sluice_submit_samples(t, x64_2, y64_2)
  s = s + sluice_model_predict(m, x64_2, y64_2)
  s = s + sluice_train_step(t, x64_3, y64_3, loss64)
  s = s + sluice_train_step(t, x64_3, y64_3, loss64, 32)
  s = s + sluice_train_step(t, x64_3, y64_3, loss64, n32)
  s = s + sluice_train_step(t, x64_3, y64_3, loss64, n64)
  s = s + sluice_train_step(t, x64_3, y64_3, loss64, batch=32_int64)
  s = s + sluice_evaluate(t, x64_3, y64_3, loss64)
  s = s + sluice_evaluate(t, x64_3, y64_3, loss64, 32)
  s = s + sluice_evaluate(t, x64_3, y64_3, loss64, n32)
  s = s + sluice_evaluate(t, x64_3, y64_3, loss64, n64)
  s = s + sluice_evaluate(t, x64_3, y64_3, loss64, batch=32_int64)
  s = s + sluice_predict(t, x64_3, y64_3)
  s = s + sluice_predict(t, x64_3, y64_3, n32)
  s = s + sluice_predict(t, x64_3, y64_3, batch=n64)
  s = s + sluice_submit_samples(t, x64_3, y64_3)
  s = s + sluice_model_predict(m, x64_3, y64_3)
  s = s + sluice_train_step(t, x64_4, y64_4, loss64)
  s = s + sluice_train_step(t, x64_4, y64_4, loss64, 32)
  s = s + sluice_train_step(t, x64_4, y64_4, loss64, n32)
  s = s + sluice_train_step(t, x64_4, y64_4, loss64, n64)
  s = s + sluice_train_step(t, x64_4, y64_4, loss64, batch=32_int64)
  s = s + sluice_evaluate(t, x64_4, y64_4, loss64)
  s = s + sluice_evaluate(t, x64_4, y64_4, loss64, 32)
  s = s + sluice_evaluate(t, x64_4, y64_4, loss64, n32)
  s = s + sluice_evaluate(t, x64_4, y64_4, loss64, n64)
  s = s + sluice_evaluate(t, x64_4, y64_4, loss64, batch=32_int64)
  s = s + sluice_predict(t, x64_4, y64_4)
  s = s + sluice_predict(t, x64_4, y64_4, n32)
  s = s + sluice_predict(t, x64_4, y64_4, batch=n64)
  s = s + sluice_submit_samples(t, x64_4, y64_4)
  s = s + sluice_model_predict(m, x64_4, y64_4)
  s = s + sluice_train_step(t, x64_5, y64_5, loss64)
  s = s + sluice_train_step(t, x64_5, y64_5, loss64, 32)
  s = s + sluice_train_step(t, x64_5, y64_5, loss64, n32)
  s = s + sluice_train_step(t, x64_5, y64_5, loss64, n64)
  s = s + sluice_train_step(t, x64_5, y64_5, loss64, batch=32_int64)
  s = s + sluice_evaluate(t, x64_5, y64_5, loss64)
  s = s + sluice_evaluate(t, x64_5, y64_5, loss64, 32)
  s = s + sluice_evaluate(t, x64_5, y64_5, loss64, n32)
  s = s + sluice_evaluate(t, x64_5, y64_5, loss64, n64)
  s = s + sluice_evaluate(t, x64_5, y64_5, loss64, batch=32_int64)
  s = s + sluice_predict(t, x64_5, y64_5)
  s = s + sluice_predict(t, x64_5, y64_5, n32)
  s = s + sluice_predict(t, x64_5, y64_5, batch=n64)
  s = s + sluice_submit_samples(t, x64_5, y64_5)
  s = s + sluice_model_predict(m, x64_5, y64_5)

  ! A rank that holds neither array (a middle stage): the loss and the batch only, in either kind.
  s = s + sluice_train_step(t, loss=loss32, batch=32)
  s = s + sluice_train_step(t, loss=loss32, batch=n64)
  s = s + sluice_evaluate(t, loss=loss32, batch=32)
  s = s + sluice_evaluate(t, loss=loss32, batch=n64)
  s = s + sluice_predict(t, outputs=y32_2, batch=n32)
  s = s + sluice_train_step(t, loss=loss64, batch=32)
  s = s + sluice_train_step(t, loss=loss64, batch=n64)
  s = s + sluice_evaluate(t, loss=loss64, batch=32)
  s = s + sluice_evaluate(t, loss=loss64, batch=n64)
  s = s + sluice_predict(t, outputs=y64_2, batch=n32)
  s = s + sluice_train_step(t, batch=n32)
  s = s + sluice_train_step(t, batch=n64)

  ! Submitted samples: the batch and the count in either integer kind, the loss in either real kind.
  s = s + sluice_train_submitted(t, loss32, batch=32)
  s = s + sluice_train_submitted(t, loss32, batch=32_int64)
  s = s + sluice_train_submitted(t, loss32, n32)
  s = s + sluice_train_submitted(t, loss32, n64)
  s = s + sluice_train_submitted(t, loss32)
  s = s + sluice_train_submitted(t, loss64, batch=32)
  s = s + sluice_train_submitted(t, loss64, batch=32_int64)
  s = s + sluice_train_submitted(t, loss64, n32)
  s = s + sluice_train_submitted(t, loss64, n64)
  s = s + sluice_train_submitted(t, loss64)
  s = s + sluice_train_submitted(t, batch=n)
  s = s + sluice_train_submitted(t, batch=n64)
  s = s + sluice_train_submitted(t)
  s = s + sluice_submitted_count(t, n32)
  s = s + sluice_submitted_count(t, n64)

  ! Counts, features, steps and shares returned in either integer kind.
  s = s + sluice_trainer_features(t, a32, b32)
  s = s + sluice_trainer_features(t, a64, b64)
  s = s + sluice_model_features(m, a32, b32)
  s = s + sluice_model_features(m, a64, b64)
  s = s + sluice_layer_param_count(t, 0, n32)
  s = s + sluice_layer_param_count(t, 0, n64)
  s = s + sluice_layer_param_count(t, 0_int64, n64)
  s = s + sluice_trainer_resume(t, n32)
  s = s + sluice_trainer_resume(t, n64, 'checkpoints')
  s = s + sluice_trainer_batch_share(t, 32, a32, b32)
  s = s + sluice_trainer_batch_share(t, n64, a64, b64)

  ! The host's block in the array's own order, default integers (literals too) or integer(int64).
  s = s + sluice_trainer_set_domain(t, [12, 16], [0, 8], [12, 8])
  s = s + sluice_trainer_set_domain(t, [12_int64, 16_int64], [0_int64, 8_int64], [12_int64, 8_int64])

  ! Parameters and the learning rate in either real kind.
  s = s + sluice_get_layer_params(t, 0, p32)
  s = s + sluice_set_layer_params(t, 0, p32)
  s = s + sluice_get_layer_params(t, 0_int64, p32)
  s = s + sluice_set_layer_params(t, 0_int64, p32)
  s = s + sluice_set_learning_rate(t, lr32)
  s = s + sluice_get_learning_rate(t, lr32)
  s = s + sluice_get_layer_params(t, 0, p64)
  s = s + sluice_set_layer_params(t, 0, p64)
  s = s + sluice_get_layer_params(t, 0_int64, p64)
  s = s + sluice_set_layer_params(t, 0_int64, p64)
  s = s + sluice_set_learning_rate(t, lr64)
  s = s + sluice_get_learning_rate(t, lr64)

  ! Fields in, rows out (a conv model ending in flatten/linear) and rows in, fields out: the ranks may differ.
  s = s + sluice_train_step(t, x32_4, y32_2, loss32)
  s = s + sluice_train_step(t, x32_5, y32_2, loss64, 32)
  s = s + sluice_train_step(t, x64_4, y64_2, loss64, n32)
  s = s + sluice_evaluate(t, x32_3, y32_5, loss32, n64)
  s = s + sluice_evaluate(t, x64_5, y64_3, loss64)
  s = s + sluice_predict(t, x32_4, y32_2)
  s = s + sluice_predict(t, x64_2, y64_4, n32)
  s = s + sluice_submit_samples(t, x32_4, y32_2)
  s = s + sluice_submit_samples(t, x64_5, y64_2)
  s = s + sluice_model_predict(m, x32_4, y32_2)
  s = s + sluice_model_predict(m, x64_3, y64_5)

  ! Application state of every kind and rank (the dtype comes from the array).
  s = s + sluice_register_state(t, 'x32_2', x32_2, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x32_3', x32_3, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x32_4', x32_4, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x32_5', x32_5, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x64_2', x64_2, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x64_3', x64_3, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x64_4', x64_4, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'x64_5', x64_5, SLUICE_STATE_PER_RANK)
  s = s + sluice_register_state(t, 'n32', n32, SLUICE_STATE_REPLICATED)
  s = s + sluice_register_state(t, 'n64', n64, SLUICE_STATE_REPLICATED)
  ! A model-only export, with the application arrays left out (the default) or kept.
  s = s + sluice_export_model(t, 'model.h5')
  s = s + sluice_export_model(t, 'model.h5', with_application_state=.true.)

  print '(i0, 1x, i0, 1x, i0, 2(1x, g0), 2(1x, i0), 4(1x, g0))', s, n, n32, loss32, loss64, a32 + b32, a64 + b64, &
      lr32, lr64, sum(p32), sum(p64)
end program fortran_generics_compile
