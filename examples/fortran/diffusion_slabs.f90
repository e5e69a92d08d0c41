! A heat-diffusion code that already splits its field trains a surrogate on its own slabs, with no gather: no rank
! ever holds, sends or receives a whole field (docs/DOMAIN.md, "The host's layout").
!
! The solver steps an ensemble of fields u(nx, ny) on a periodic 32 x 32 grid with the explicit 5-point stencil.
! Each of the P ranks owns a slab of rows, u(nx, first_row : first_row + rows - 1) (ny cut evenly, the first
! ny mod P slabs one row taller), plus one halo row on each side that it fills by exchanging its edge rows with the
! ranks above and below (periodic in y; x is whole on every rank and wraps locally). That is all the communication
! the solver does.
!
! The surrogate (a small periodic conv net with a residual stencil) learns one solver step, u(t) -> u(t + 1). The
! program declares its slab to the trainer (sluice_trainer_set_domain, in the array's own order: global [nx, ny],
! offset [0, first_row], extent [nx, rows]) and the config splits the field into the same slabs: a Fortran field
! u(nx, ny) is model.inputs [1, ny, nx] in C order, so P slabs of rows are pipeline.domain [P, 1]. Each time step
! every rank passes its own slab of every field of the ensemble as the inputs and its slab of the next time step
! as the targets of sluice_train_step; the trainer exchanges its own halos between the layers. The result is the
! undecomposed run's bit for bit: `mpirun -np 1` (one slab, the whole field, pipeline.domain [1, 1]) trains the same
! parameters (tests/examples:diffusion_slabs_test).
!
! Run:  mpirun -np 4 ./diffusion_slabs [TIME_STEPS [PARAMETERS_FILE]]   (P must leave slabs of whole tiles: 1, 2, 4)
! Rank 0 prints the loss every 10 steps and the mean loss of the first and the last 10; with PARAMETERS_FILE it
! writes the trained parameters there (every layer's, in order, raw float32).
module diffusion_slabs_solver
  use, intrinsic :: iso_c_binding, only: c_float, c_int64_t
  use mpi_f08
  implicit none
  private
  public :: nx, ny, slab_t, make_slab, diffusion_step, fill_field

  integer, parameter :: nx = 32, ny = 32
  ! r = 0.15: the explicit scheme is stable for r <= 0.25 in 2-D.
  real(c_float), parameter :: r = 0.15_c_float

  ! This rank's rows of the field and its neighbours in y.
  type :: slab_t
    type(MPI_Comm) :: comm
    integer :: rank, ranks
    integer :: first_row  ! 0-based global row of the slab's first row
    integer :: rows
    integer :: below, above  ! ranks holding the rows just before and just after the slab (periodic)
  end type slab_t

contains

  type(slab_t) function make_slab(comm) result(s)
    type(MPI_Comm), intent(in) :: comm
    integer :: extra
    s%comm = comm
    call MPI_Comm_rank(comm, s%rank)
    call MPI_Comm_size(comm, s%ranks)
    extra = mod(ny, s%ranks)
    s%rows = ny / s%ranks + merge(1, 0, s%rank < extra)
    s%first_row = s%rank * (ny / s%ranks) + min(s%rank, extra)
    s%below = modulo(s%rank - 1, s%ranks)
    s%above = modulo(s%rank + 1, s%ranks)
  end function make_slab

  ! Fills u(:, 0, :) and u(:, rows + 1, :), the halo rows, with the neighbours' edge rows (on one rank: its own,
  ! the periodic wrap).
  subroutine exchange_halos(s, u)
    type(slab_t), intent(in) :: s
    real(c_float), intent(inout) :: u(:, 0:, :)
    real(c_float) :: send(nx, size(u, 3)), received(nx, size(u, 3))
    integer :: count
    count = nx * size(u, 3)
    send = u(:, s%rows, :)  ! my last row is the row above's halo below it
    call MPI_Sendrecv(send, count, MPI_REAL, s%above, 1, received, count, MPI_REAL, s%below, 1, s%comm, &
                      MPI_STATUS_IGNORE)
    u(:, 0, :) = received
    send = u(:, 1, :)
    call MPI_Sendrecv(send, count, MPI_REAL, s%below, 2, received, count, MPI_REAL, s%above, 2, s%comm, &
                      MPI_STATUS_IGNORE)
    u(:, s%rows + 1, :) = received
  end subroutine exchange_halos

  ! One solver step of every field of the ensemble u(nx, 0:rows+1, fields) (interior rows 1..rows). Each point
  ! is the same expression of the same values on any number of slabs, so the fields do not depend on P.
  subroutine diffusion_step(s, u)
    type(slab_t), intent(in) :: s
    real(c_float), intent(inout) :: u(:, 0:, :)
    real(c_float) :: next(nx, s%rows)
    integer :: field, i, j, west, east
    call exchange_halos(s, u)
    do field = 1, size(u, 3)
      do j = 1, s%rows
        do i = 1, nx
          west = modulo(i - 2, nx) + 1
          east = modulo(i, nx) + 1
          next(i, j) = (1 - 4 * r) * u(i, j, field) + r * (u(west, j, field) + u(east, j, field)) + &
                       r * (u(i, j - 1, field) + u(i, j + 1, field))
        end do
      end do
      u(:, 1:s%rows, field) = next
    end do
  end subroutine diffusion_step

  ! The slab's rows of a smooth random field (u(:, 1:rows)): Fourier modes up to wavenumber 3 and a hot spot, a
  ! function of (seed, global point) alone, so every rank computes its own rows of the same field.
  subroutine fill_field(s, u, seed)
    type(slab_t), intent(in) :: s
    real(c_float), intent(out) :: u(:, :)
    integer, intent(in) :: seed
    real(c_float), parameter :: two_pi = 6.2831853_c_float
    integer(c_int64_t) :: state
    real(c_float) :: amplitude(3), phase(3), cx, cy, dx, dy
    integer :: kx(3), ky(3), mode, i, j, row
    state = int(seed, c_int64_t) * 2654435761_c_int64_t
    do mode = 1, 3
      kx(mode) = 1 + int(3 * next_uniform(state))
      ky(mode) = int(4 * next_uniform(state))
      amplitude(mode) = (next_uniform(state) - 0.5_c_float) / mode
      phase(mode) = two_pi * next_uniform(state)
    end do
    cx = nx * next_uniform(state)
    cy = ny * next_uniform(state)
    do j = 1, s%rows
      row = s%first_row + j - 1
      do i = 1, nx
        dx = periodic_distance(real(i - 1, c_float) - cx, nx)
        dy = periodic_distance(real(row, c_float) - cy, ny)
        u(i, j) = exp(-(dx * dx + dy * dy) / 6.0_c_float)
        do mode = 1, 3
          u(i, j) = u(i, j) + amplitude(mode) * sin(two_pi * (kx(mode) * (i - 1)) / nx + &
                                                    two_pi * (ky(mode) * row) / ny + phase(mode))
        end do
      end do
    end do
  end subroutine fill_field

  pure real(c_float) function periodic_distance(d, n)
    real(c_float), intent(in) :: d
    integer, intent(in) :: n
    periodic_distance = d - n * anint(d / n)
  end function periodic_distance

  ! Uniform in [0, 1) from a 64-bit LCG: the same on every rank.
  real(c_float) function next_uniform(state)
    integer(c_int64_t), intent(inout) :: state
    state = iand(state * 6364136223846793005_c_int64_t + 1442695040888963407_c_int64_t, huge(state))
    next_uniform = real(ishft(state, -40), c_float) / 2.0_c_float**23
  end function next_uniform

end module diffusion_slabs_solver

program diffusion_slabs
  use, intrinsic :: iso_c_binding, only: c_int, c_float
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use sluice
  use diffusion_slabs_solver, only: nx, ny, slab_t, make_slab, diffusion_step, fill_field
  implicit none

  ! fields: the ensemble, one training batch (data.batch); layers: the config's model.layers.
  integer, parameter :: fields = 8, layers = 5, window = 10
  type(slab_t) :: s
  type(sluice_trainer) :: trainer
  real(c_float), allocatable :: u(:, :, :), inputs(:, :, :, :), targets(:, :, :, :), losses(:)
  character(len=256) :: parameters_file
  integer :: time_steps, step, field

  call MPI_Init()
  s = make_slab(MPI_COMM_WORLD)
  time_steps = integer_argument(1, 60)
  parameters_file = ''
  if (command_argument_count() >= 2) call get_command_argument(2, parameters_file)

  call check(sluice_trainer_create(MPI_COMM_WORLD, config_text(s%ranks), trainer), 'sluice_trainer_create')
  ! This rank's slab, in the array's own order u(nx, ny): all of x, rows first_row .. first_row + rows - 1.
  call check(sluice_trainer_set_domain(trainer, [nx, ny], [0, s%first_row], [nx, s%rows]), &
             'sluice_trainer_set_domain')
  call check(sluice_trainer_start(trainer), 'sluice_trainer_start')

  ! The trainer's arrays are the rank's slab of every field, u(nx, rows, channel, field): after start on a domain
  ! the module checks them against the block (sluice_trainer_input_shape: [1, rows, nx]).
  allocate (u(nx, 0:s%rows + 1, fields), inputs(nx, s%rows, 1, fields), targets(nx, s%rows, 1, fields))
  allocate (losses(time_steps))
  do field = 1, fields
    call fill_field(s, u(:, 1:s%rows, field), seed=field)
  end do
  do step = 1, time_steps
    ! The slab now and one solver step later (without the halo rows).
    inputs(:, :, 1, :) = u(:, 1:s%rows, :)
    call diffusion_step(s, u)
    targets(:, :, 1, :) = u(:, 1:s%rows, :)
    call check(sluice_train_step(trainer, inputs, targets, losses(step)), 'sluice_train_step')
    if (s%rank == 0 .and. mod(step, 10) == 0) print '(a, i0, a, es14.6)', 'step ', step, ' loss ', losses(step)
    ! Diffusion flattens the fields: one of them starts afresh each step, so the ensemble stays sharp.
    call fill_field(s, u(:, 1:s%rows, mod(step, fields) + 1), seed=fields + step)
  end do
  if (s%rank == 0 .and. time_steps >= window) then
    print '(a, i0, a, es14.6, a, es14.6)', 'diffusion_slabs: ', s%ranks, ' slabs, mean loss of the first 10 steps ', &
        sum(losses(1:window)) / window, ', of the last 10 ', sum(losses(time_steps - window + 1:)) / window
  end if
  if (len_trim(parameters_file) > 0) call write_parameters(trim(parameters_file))
  call sluice_trainer_destroy(trainer)
  call MPI_Finalize()

contains

  ! The config: the solver's slabs are pipeline.domain [P, 1] (C order: rows are spatial dimension 1). The reduction
  ! tile [8, 8] is coarse (fewer per-tile partial sums) and every slab of 8 or 16 rows is made of whole tiles.
  function config_text(ranks) result(text)
    integer, intent(in) :: ranks
    character(len=:), allocatable :: text
    character(len=16) :: p
    character(len=*), parameter :: nl = new_line('a')
    write (p, '(i0)') ranks
    text = 'model:' // nl // &
           '  inputs: [1, 32, 32]' // nl // &
           '  layers:' // nl // &
           '    - {type: conv, channels: 1, kernel: 3, padding: periodic, name: base}' // nl // &
           '    - {type: conv, channels: 4, kernel: 3, padding: periodic}' // nl // &
           '    - {type: gelu}' // nl // &
           '    - {type: conv, channels: 1, kernel: 3, padding: periodic}' // nl // &
           '    - {type: add, from: base}' // nl // &
           'pipeline: {stages: 1, microbatches: 2, domain: [' // trim(p) // ', 1], domain_tile: [8, 8]}' // nl // &
           'loss: mse' // nl // &
           'optimizer: {type: adamw, lr: 1.0e-2}' // nl // &
           'data: {type: external, batch: 8}' // nl // &
           'seed: 7' // nl
  end function config_text

  ! Every layer's parameters (collective), written by rank 0 as raw float32 in layer order.
  subroutine write_parameters(path)
    character(len=*), intent(in) :: path
    real(c_float), allocatable :: values(:)
    integer :: layer, count, unit
    if (s%rank == 0) open (newunit=unit, file=path, access='stream', form='unformatted', status='replace')
    do layer = 0, layers - 1
      call check(sluice_layer_param_count(trainer, layer, count), 'sluice_layer_param_count')
      if (count == 0) cycle  ! an activation or the add
      allocate (values(count))
      call check(sluice_get_layer_params(trainer, layer, values), 'sluice_get_layer_params')
      if (s%rank == 0) write (unit) values
      deallocate (values)
    end do
    if (s%rank == 0) close (unit)
  end subroutine write_parameters

  integer function integer_argument(position, default)
    integer, intent(in) :: position, default
    character(len=32) :: text
    integer_argument = default
    if (command_argument_count() < position) return
    call get_command_argument(position, text)
    read (text, *) integer_argument
  end function integer_argument

  subroutine check(status, call_name)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: call_name
    if (status == SLUICE_OK) return
    write (0, '(a, i0, 5a)') 'rank ', s%rank, ': ', call_name, ' failed: ', sluice_status_string(status), &
        ' (' // sluice_last_error() // ')'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine check

end program diffusion_slabs
