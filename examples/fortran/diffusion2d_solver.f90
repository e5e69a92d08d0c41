! The simulation of the 2-D demo (diffusion2d.f90): heat diffusion du/dt = kappa * laplacian(u) on a periodic
! grid_size x grid_size grid, stepped with the explicit 5-point stencil
!     u(i,j) <- (1 - 4r) u(i,j) + r (u(i-1,j) + u(i+1,j) + u(i,j-1) + u(i,j+1)),   r = kappa dt / dx**2.
! apply_stencil is written for any five coefficients because the same routine is also the surrogate's custom
! layer (diffusion2d_layer.f90): the network learns the coefficients, the solver uses the true ones.
!
! A field is a column u(grid_size * grid_size) of an ensemble u(:, sample): the trainer's x(features, batch)
! layout. Routines that need the grid view take it as an explicit-shape u(grid_size, grid_size) dummy, which
! a contiguous column maps onto without a copy (sequence association).
module diffusion2d_solver
  use, intrinsic :: iso_c_binding, only: c_float, c_int64_t
  implicit none
  private
  public :: grid_size, grid_cells, true_stencil, apply_stencil, simulate, advance_ensemble, random_fields

  integer, parameter :: grid_size = 32, grid_cells = grid_size * grid_size
  ! r = 0.15: the explicit scheme is stable for r <= 0.25 in 2-D. Order: centre, west, east, south, north.
  real(c_float), parameter :: r = 0.15_c_float
  real(c_float), parameter :: true_stencil(5) = [1 - 4 * r, r, r, r, r]

contains

  ! y = the 5-point stencil c applied to x, periodic in both directions. cshift(x, -1, dim) holds at (i, j) the
  ! neighbour one cell back along dim, i.e. x(i-1, j) for dim = 1.
  pure subroutine apply_stencil(c, x, y)
    real(c_float), intent(in) :: c(5), x(grid_size, grid_size)
    real(c_float), intent(out) :: y(grid_size, grid_size)
    y = c(1) * x + c(2) * cshift(x, -1, 1) + c(3) * cshift(x, 1, 1) + c(4) * cshift(x, -1, 2) + &
        c(5) * cshift(x, 1, 2)
  end subroutine apply_stencil

  ! result(:, s) = u(:, s) advanced by `steps` solver time steps.
  subroutine simulate(u, steps, result)
    real(c_float), intent(in) :: u(:, :)
    integer, intent(in) :: steps
    real(c_float), intent(out) :: result(:, :)
    real(c_float) :: work(grid_cells)
    integer :: sample, t
    do sample = 1, size(u, 2)
      result(:, sample) = u(:, sample)
      do t = 1, steps
        call apply_stencil(true_stencil, result(:, sample), work)
        result(:, sample) = work
      end do
    end do
  end subroutine simulate

  ! One solver step for the whole ensemble. Diffusion flattens every field, and a flat field teaches the
  ! surrogate nothing: a field whose contrast fell below a threshold is replaced by a fresh one, and so is one
  ! field per step in turn, so that the ensemble always holds young, sharp fields like the ones deployed on.
  subroutine advance_ensemble(u, time_step)
    real(c_float), intent(inout) :: u(:, :)
    integer, intent(in) :: time_step
    real(c_float) :: next(size(u, 1), size(u, 2))
    integer :: sample
    call simulate(u, 1, next)
    u = next
    do sample = 1, size(u, 2)
      if (maxval(u(:, sample)) - minval(u(:, sample)) < 0.5_c_float .or. &
          sample == modulo(time_step, size(u, 2)) + 1) then
        call one_field(u(:, sample), 7919 * time_step + sample)
      end if
    end do
  end subroutine advance_ensemble

  ! An ensemble of fields; the same seed gives the same fields on every rank and in every run.
  subroutine random_fields(u, seed)
    real(c_float), intent(out) :: u(:, :)
    integer, intent(in) :: seed
    integer :: sample
    do sample = 1, size(u, 2)
      call one_field(u(:, sample), seed * 1000 + sample)
    end do
  end subroutine random_fields

  ! A smooth random field: Fourier modes up to wavenumber 4 in each direction with random amplitudes and
  ! phases, plus one hot spot (a Gaussian blob) at a random place: sharp enough to diffuse visibly.
  subroutine one_field(u, seed)
    real(c_float), intent(out) :: u(grid_size, grid_size)
    integer, intent(in) :: seed
    real(c_float), parameter :: two_pi = 6.2831853_c_float
    integer(c_int64_t) :: state
    integer :: i, j, mode
    integer :: kx, ky
    real(c_float) :: amplitude, phase, cx, cy, dx, dy
    state = int(seed, c_int64_t) * 2654435761_c_int64_t
    u = 0
    do mode = 1, 4
      kx = 1 + int(4 * next_uniform(state))
      ky = int(5 * next_uniform(state))
      amplitude = (next_uniform(state) - 0.5_c_float) / mode
      phase = two_pi * next_uniform(state)
      do j = 1, grid_size
        do i = 1, grid_size
          u(i, j) = u(i, j) + amplitude * sin(two_pi * (kx * (i - 1) + ky * (j - 1)) / grid_size + phase)
        end do
      end do
    end do
    cx = grid_size * next_uniform(state)
    cy = grid_size * next_uniform(state)
    do j = 1, grid_size
      do i = 1, grid_size
        dx = periodic_distance(i - cx)
        dy = periodic_distance(j - cy)
        u(i, j) = u(i, j) + exp(-(dx * dx + dy * dy) / 6.0_c_float)
      end do
    end do
  end subroutine one_field

  pure real(c_float) function periodic_distance(d)
    real(c_float), intent(in) :: d
    periodic_distance = d - grid_size * anint(d / grid_size)
  end function periodic_distance

  ! Uniform in [0, 1) from a 64-bit LCG: portable and identical on every rank (unlike random_number's seed).
  real(c_float) function next_uniform(state)
    integer(c_int64_t), intent(inout) :: state
    state = iand(state * 6364136223846793005_c_int64_t + 1442695040888963407_c_int64_t, huge(state))
    next_uniform = real(ishft(state, -40), c_float) / 2.0_c_float**23
  end function next_uniform

end module diffusion2d_solver
