! sluice_layer_call_info from Fortran: a custom layer y = p * x whose bind(C) callbacks view their C pointers as
! arrays with the shapes the library gives them (in/out features, the micro-batch's rows, the parameter count)
! trains and predicts bit for bit like the same layer whose callbacks know the width by hand, and every call was
! told its layer's name and index and rows equal to its batch argument. Outside a callback the call is a
! SLUICE_ERROR_STATE. Built against the installed tree and run with 2 ranks (2 stages) by fortran_program_test.sh.
module layer_call_callbacks
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_ptr, c_f_pointer
  use sluice
  implicit none
  integer, parameter :: width = 4
  integer :: calls_seen = 0, mismatches = 0
contains
  ! The current call's shapes, checked against what the callback knows itself (its batch argument, the model).
  logical function shapes(batch, info) result(ok)
    integer(c_int64_t), intent(in) :: batch
    type(sluice_layer_call), intent(out) :: info
    ok = sluice_layer_call_info(info) == SLUICE_OK
    calls_seen = calls_seen + 1
    if (.not. ok) then
      mismatches = mismatches + 1
      return
    end if
    if (info%rows /= batch .or. info%in_features /= width .or. info%out_features /= width .or. &
        info%num_params /= 1 .or. info%layer /= 0 .or. sluice_layer_call_name(info) /= 'scale') then
      mismatches = mismatches + 1
    end if
  end function shapes

  integer(c_int) function asked_forward(user_data, params, x, y, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, y
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: p(:), xa(:, :), ya(:, :)
    status = 1
    if (.not. shapes(batch, info)) return
    call c_f_pointer(params, p, [info%num_params])
    call c_f_pointer(x, xa, [info%in_features, info%rows])
    call c_f_pointer(y, ya, [info%out_features, info%rows])
    ya = p(1) * xa
    status = 0
  end function asked_forward

  integer(c_int) function asked_backward_input(user_data, params, x, dy, dx, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, dy, dx
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: p(:), dya(:, :), dxa(:, :)
    status = 1
    if (.not. shapes(batch, info)) return
    call c_f_pointer(params, p, [info%num_params])
    call c_f_pointer(dy, dya, [info%out_features, info%rows])
    call c_f_pointer(dx, dxa, [info%in_features, info%rows])
    dxa = p(1) * dya
    status = 0
  end function asked_backward_input

  integer(c_int) function asked_backward_weight(user_data, params, x, dy, grads, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, dy, grads
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: g(:), xa(:, :), dya(:, :)
    status = 1
    if (.not. shapes(batch, info)) return
    call c_f_pointer(grads, g, [info%num_params])
    call c_f_pointer(x, xa, [info%in_features, info%rows])
    call c_f_pointer(dy, dya, [info%out_features, info%rows])
    g(1) = g(1) + sum(xa * dya)
    status = 0
  end function asked_backward_weight

  ! The same layer with the width written in by hand (what callbacks had to do before).
  integer(c_int) function fixed_forward(user_data, params, x, y, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, y
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: p(:), xa(:, :), ya(:, :)
    call c_f_pointer(params, p, [1])
    call c_f_pointer(x, xa, [int(width, c_int64_t), batch])
    call c_f_pointer(y, ya, [int(width, c_int64_t), batch])
    ya = p(1) * xa
    status = 0
  end function fixed_forward

  integer(c_int) function fixed_backward_input(user_data, params, x, dy, dx, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, dy, dx
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: p(:), dya(:, :), dxa(:, :)
    call c_f_pointer(params, p, [1])
    call c_f_pointer(dy, dya, [int(width, c_int64_t), batch])
    call c_f_pointer(dx, dxa, [int(width, c_int64_t), batch])
    dxa = p(1) * dya
    status = 0
  end function fixed_backward_input

  integer(c_int) function fixed_backward_weight(user_data, params, x, dy, grads, batch) bind(C) result(status)
    type(c_ptr), value :: user_data, params, x, dy, grads
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: g(:), xa(:, :), dya(:, :)
    call c_f_pointer(grads, g, [1])
    call c_f_pointer(x, xa, [int(width, c_int64_t), batch])
    call c_f_pointer(dy, dya, [int(width, c_int64_t), batch])
    g(1) = g(1) + sum(xa * dya)
    status = 0
  end function fixed_backward_weight
end module layer_call_callbacks

program fortran_layer_call
  use, intrinsic :: iso_c_binding, only: c_int, c_float, c_funloc, c_loc
  use mpi_f08
  use sluice
  use fortran_checks
  use layer_call_callbacks
  implicit none

  integer, parameter :: outputs = 2, batch = 8
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 4' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: custom, name: scale}' // new_line('a') // &
      '    - {type: linear, outputs: 2}' // new_line('a') // &
      'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4, split: [1, 1]}' // new_line('a') // &
      'optimizer: {type: sgd, lr: 0.1}' // new_line('a') // &
      'data: {type: external, batch: 8}' // new_line('a')

  type(sluice_trainer) :: asked, fixed
  type(sluice_layer_ops) :: ops
  type(sluice_layer_call) :: outside
  real(c_float), target :: initial_scale(1) = [0.5]
  real(c_float), allocatable :: inputs(:, :), targets(:, :), out_asked(:, :), out_fixed(:, :)
  real(c_float) :: loss_asked, loss_fixed
  integer :: rank, i, step

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  allocate (inputs(width, batch), targets(outputs, batch), out_asked(outputs, batch), out_fixed(outputs, batch))
  inputs = reshape([(sin(0.3 * i), i = 1, width * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))

  if (sluice_layer_call_info(outside) /= SLUICE_ERROR_STATE) call fail('outside a callback: expected SLUICE_ERROR_STATE')

  ops%in_features = width
  ops%out_features = width
  ops%num_params = 1
  ops%initial_params = c_loc(initial_scale)
  ops%forward = c_funloc(asked_forward)
  ops%backward_input = c_funloc(asked_backward_input)
  ops%backward_weight = c_funloc(asked_backward_weight)
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, asked), 'create (asked)')
  call expect_ok(sluice_trainer_register_layer(asked, 'scale', ops), 'register (asked)')
  call expect_ok(sluice_trainer_start(asked), 'start (asked)')
  ops%forward = c_funloc(fixed_forward)
  ops%backward_input = c_funloc(fixed_backward_input)
  ops%backward_weight = c_funloc(fixed_backward_weight)
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, fixed), 'create (fixed)')
  call expect_ok(sluice_trainer_register_layer(fixed, 'scale', ops), 'register (fixed)')
  call expect_ok(sluice_trainer_start(fixed), 'start (fixed)')

  do step = 1, 3
    call expect_ok(sluice_train_step(asked, inputs, targets, loss_asked), 'sluice_train_step (asked)')
    call expect_ok(sluice_train_step(fixed, inputs, targets, loss_fixed), 'sluice_train_step (fixed)')
    if (loss_asked /= loss_fixed) call fail('the layer that asks for its shapes trains differently')
  end do
  ! 6 samples, not a multiple of the 4 micro-batches: each call is told its own rows.
  call expect_ok(sluice_predict(asked, inputs(:, 1:6), out_asked(:, 1:6)), 'sluice_predict (asked)')
  call expect_ok(sluice_predict(fixed, inputs(:, 1:6), out_fixed(:, 1:6)), 'sluice_predict (fixed)')
  if (any(out_asked(:, 1:6) /= out_fixed(:, 1:6))) call fail('the layer that asks for its shapes predicts differently')
  if (rank == 0 .and. calls_seen == 0) call fail('the custom layer''s callbacks never ran on rank 0')
  if (mismatches /= 0) call fail('sluice_layer_call_info failed or gave wrong shapes inside a callback')
  if (sluice_layer_call_info(outside) /= SLUICE_ERROR_STATE) call fail('after the steps: expected SLUICE_ERROR_STATE')

  call sluice_trainer_destroy(asked)
  call sluice_trainer_destroy(fixed)
  call checks_finish('PASS: callbacks viewed their arrays with the shapes they were given')
end program fortran_layer_call
