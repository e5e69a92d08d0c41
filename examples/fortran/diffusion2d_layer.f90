! The solver's own operator as a pipeline layer. The callbacks below are what Sluice calls for a
! `{type: custom, name: stencil}` layer of the YAML config: they apply diffusion2d_solver's apply_stencil, with
! the five stencil coefficients as the layer's learnable parameters, to a batch of fields
! x(grid_cells, batch) (column-major (features, batch) is the C API's row-major [batch][features]).
!
! Backpropagation through a stencil needs two more things, both stencils themselves:
!  - backward_input: the transpose of the operator. Moving a coefficient's neighbour to the opposite side
!    transposes a periodic stencil, so dx = apply_stencil(mirrored c, dy).
!  - backward_weight: dL/dc(k) = sum over samples and cells of dy * (the neighbour that c(k) multiplies).
! Each callback asks Sluice for the shapes of its call (sluice_layer_call_info: features, the micro-batch's rows,
! the parameter count) instead of rebuilding them from module constants or user_data.
module diffusion2d_layer
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_ptr, c_f_pointer, c_loc, c_funloc
  use sluice, only: sluice_layer_ops, sluice_layer_call, sluice_layer_call_info, SLUICE_OK
  use diffusion2d_solver, only: grid_size, grid_cells, apply_stencil
  implicit none
  private
  public :: stencil_layer_ops

  integer, parameter :: stencil_params = 5
  ! Every stencil layer starts as a too-weak diffusion (r = 0.025 instead of the solver's 0.15): training has to
  ! find the physics. A `target` so that c_loc can hand it to Sluice, which copies it at start.
  real(c_float), target, save :: initial_stencil(stencil_params) = &
      [0.9_c_float, 0.025_c_float, 0.025_c_float, 0.025_c_float, 0.025_c_float]

contains

  ! The sluice_layer_ops to register under the config's layer name.
  function stencil_layer_ops() result(ops)
    type(sluice_layer_ops) :: ops
    ops%in_features = grid_cells
    ops%out_features = grid_cells
    ops%num_params = stencil_params
    ops%initial_params = c_loc(initial_stencil)
    ops%forward = c_funloc(stencil_forward)
    ops%backward_input = c_funloc(stencil_backward_input)
    ops%backward_weight = c_funloc(stencil_backward_weight)
  end function stencil_layer_ops

  integer(c_int) function stencil_forward(user_data, params, x, y, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, y
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: c(:), xs(:, :), ys(:, :)
    integer :: sample
    stencil_forward = 1
    if (sluice_layer_call_info(info) /= SLUICE_OK) return
    call c_f_pointer(params, c, [info%num_params])
    call c_f_pointer(x, xs, [info%in_features, info%rows])
    call c_f_pointer(y, ys, [info%out_features, info%rows])
    do sample = 1, int(info%rows)
      call apply_stencil(c, xs(:, sample), ys(:, sample))
    end do
    stencil_forward = 0
  end function stencil_forward

  integer(c_int) function stencil_backward_input(user_data, params, x, dy, dx, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, dy, dx
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: c(:), dys(:, :), dxs(:, :)
    integer :: sample
    stencil_backward_input = 1
    if (sluice_layer_call_info(info) /= SLUICE_OK) return
    call c_f_pointer(params, c, [info%num_params])
    call c_f_pointer(dy, dys, [info%out_features, info%rows])
    call c_f_pointer(dx, dxs, [info%in_features, info%rows])
    do sample = 1, int(info%rows)
      ! west <-> east, south <-> north
      call apply_stencil([c(1), c(3), c(2), c(5), c(4)], dys(:, sample), dxs(:, sample))
    end do
    stencil_backward_input = 0
  end function stencil_backward_input

  ! Gradients accumulate (+=): Sluice sums them over micro-batches.
  integer(c_int) function stencil_backward_weight(user_data, params, x, dy, grads, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, dy, grads
    integer(c_int64_t), value :: batch
    type(sluice_layer_call) :: info
    real(c_float), pointer :: g(:), xs(:, :, :), dys(:, :, :)
    stencil_backward_weight = 1
    if (sluice_layer_call_info(info) /= SLUICE_OK) return
    ! The grid is the solver's (square, grid_size x grid_size = info%in_features cells); the rest is Sluice's.
    call c_f_pointer(grads, g, [info%num_params])
    call c_f_pointer(x, xs, [int(grid_size, c_int64_t), int(grid_size, c_int64_t), info%rows])
    call c_f_pointer(dy, dys, [int(grid_size, c_int64_t), int(grid_size, c_int64_t), info%rows])
    g(1) = g(1) + sum(xs * dys)
    g(2) = g(2) + sum(cshift(xs, -1, 1) * dys)
    g(3) = g(3) + sum(cshift(xs, 1, 1) * dys)
    g(4) = g(4) + sum(cshift(xs, -1, 2) * dys)
    g(5) = g(5) + sum(cshift(xs, 1, 2) * dys)
    stencil_backward_weight = 0
  end function stencil_backward_weight

end module diffusion2d_layer
