! A 1-D heat-equation code that trains a surrogate of itself with Sluice, and survives preemption.
!
! The simulation steps u(t+1) = stencil(u(t)) with the explicit 3-point diffusion stencil (r, 1-2r, r) on a
! periodic grid. It hands that very computation -- apply_stencil, with the three stencil coefficients as
! learnable parameters -- to the pipeline as a custom layer ("diffusion"), written here as bind(C) callbacks.
! Four such layers, one per pipeline stage, learn to map the state at t to the state at t+4 from trajectories
! the simulation produces; the exact answer is the true stencil in every layer.
!
! The program owns its time loop (docs/APPLICATION_LOOP.md): every time step is one sluice_train_step, and with
! optimizer.accumulate: 4 the optimizer steps on every 4th one (an accumulation window). The simulation's own
! state -- the ensemble of fields and the time-step counter -- is registered with sluice_register_state, so every
! checkpoint holds model, optimizer, the window's partial gradient sums and the simulation together. On SIGUSR1 or
! SIGTERM (a Slurm preemption) sluice_stop_requested writes that checkpoint, in the middle of a window if need
! be, and the program exits with SLUICE_EXIT_PREEMPTED (75); the requeued job's sluice_trainer_resume continues
! bit for bit where it stopped.
!
! Run:  mpirun -np 4 ./heat_surrogate [time_steps [hold_at]]
!       sluice submit --program ./heat_surrogate --config YOUR.yaml --nodes 1 -- [time_steps [hold_at]]
!       (YOUR.yaml: a config with the built-in one's model, a checkpoint.dir, and data: {type: external})
! The config is the file named by SLUICE_CONFIG when set (`sluice submit --program` sets it), else the one
! built in below. hold_at (a demonstration and test hook, 0 = off): after that time step, wait up to 120 s for a
! preemption signal, polling sluice_stop_requested, so that a signal lands at a known place in the window.
! Rank 0 prints "heat_surrogate: first time step N", "step N loss L" per time step, "heat_surrogate: holding
! after time step N" when holding, and at the end either "heat_surrogate: preempted after time step N
! (checkpoint written)" or the surrogate's error against the simulation.
module heat_model
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_ptr, c_f_pointer
  implicit none
  private
  public :: grid_points, true_stencil, apply_stencil, diffusion_forward, diffusion_backward_input, &
            diffusion_backward_weight

  integer, parameter :: grid_points = 16
  ! r = 0.2 keeps the explicit scheme stable (r <= 0.5).
  real(c_float), parameter :: true_stencil(3) = [0.2_c_float, 0.6_c_float, 0.2_c_float]

contains

  ! y(i) = c(1) x(i-1) + c(2) x(i) + c(3) x(i+1) on a periodic grid: one time step of the simulation.
  pure subroutine apply_stencil(c, x, y)
    real(c_float), intent(in) :: c(3), x(:)
    real(c_float), intent(out) :: y(:)
    integer :: i, n
    n = size(x)
    do i = 1, n
      y(i) = c(1) * x(modulo(i - 2, n) + 1) + c(2) * x(i) + c(3) * x(modulo(i, n) + 1)
    end do
  end subroutine apply_stencil

  ! --- the custom layer's callbacks: x(grid_points, batch) in, y(grid_points, batch) out, params = c(3) ---

  integer(c_int) function diffusion_forward(user_data, params, x, y, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, y
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: c(:), xs(:, :), ys(:, :)
    integer :: sample
    call c_f_pointer(params, c, [3])
    call c_f_pointer(x, xs, [int(grid_points, c_int64_t), batch])
    call c_f_pointer(y, ys, [int(grid_points, c_int64_t), batch])
    do sample = 1, int(batch)
      call apply_stencil(c, xs(:, sample), ys(:, sample))
    end do
    diffusion_forward = 0
  end function diffusion_forward

  ! The stencil's transpose: dx(i) = c(1) dy(i+1) + c(2) dy(i) + c(3) dy(i-1), i.e. the mirrored stencil.
  integer(c_int) function diffusion_backward_input(user_data, params, x, dy, dx, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, dy, dx
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: c(:), dys(:, :), dxs(:, :)
    integer :: sample
    call c_f_pointer(params, c, [3])
    call c_f_pointer(dy, dys, [int(grid_points, c_int64_t), batch])
    call c_f_pointer(dx, dxs, [int(grid_points, c_int64_t), batch])
    do sample = 1, int(batch)
      call apply_stencil([c(3), c(2), c(1)], dys(:, sample), dxs(:, sample))
    end do
    diffusion_backward_input = 0
  end function diffusion_backward_input

  ! grads(k) += sum over samples and points of dy(i) * (the x value coefficient k multiplies at i).
  integer(c_int) function diffusion_backward_weight(user_data, params, x, dy, grads, batch) bind(C)
    type(c_ptr), value :: user_data, params, x, dy, grads
    integer(c_int64_t), value :: batch
    real(c_float), pointer :: g(:), xs(:, :), dys(:, :)
    call c_f_pointer(grads, g, [3])
    call c_f_pointer(x, xs, [int(grid_points, c_int64_t), batch])
    call c_f_pointer(dy, dys, [int(grid_points, c_int64_t), batch])
    g(1) = g(1) + sum(cshift(xs, -1, dim=1) * dys)
    g(2) = g(2) + sum(xs * dys)
    g(3) = g(3) + sum(cshift(xs, 1, dim=1) * dys)
    diffusion_backward_weight = 0
  end function diffusion_backward_weight

end module heat_model

program heat_surrogate
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_funloc, c_loc
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use sluice
  use heat_model
  implicit none

  integer, parameter :: batch = 32, lead_steps = 4, default_time_steps = 120
  ! Used when SLUICE_CONFIG is not set. every: 0 -- only a preemption writes a checkpoint.
  character(len=*), parameter :: builtin_config = &
      'model:' // new_line('a') // &
      '  inputs: 16' // new_line('a') // &
      '  layers:' // new_line('a') // &
      '    - {type: custom, name: diffusion}' // new_line('a') // &
      '    - {type: custom, name: diffusion}' // new_line('a') // &
      '    - {type: custom, name: diffusion}' // new_line('a') // &
      '    - {type: custom, name: diffusion}' // new_line('a') // &
      'pipeline: {stages: 4, schedule: 1f1b, microbatches: 4, split: [1, 1, 1, 1]}' // new_line('a') // &
      'loss: mse' // new_line('a') // &
      'optimizer: {type: adamw, lr: 0.01, accumulate: 4}' // new_line('a') // &
      'data: {type: external, batch: 32}' // new_line('a') // &
      'checkpoint: {dir: heat_surrogate_checkpoints, every: 0, keep: 2}' // new_line('a')

  type(sluice_trainer) :: trainer
  type(sluice_layer_ops) :: ops
  type(sluice_stats) :: stats
  ! Start every layer as a too-weak diffusion: the surrogate has to learn the rate.
  real(c_float), target :: initial_stencil(3) = [0.05_c_float, 0.9_c_float, 0.05_c_float]
  ! The simulation's state, checkpointed with the model: the ensemble and the time steps done.
  real(c_float), allocatable, target :: states(:, :)
  integer(c_int64_t), target :: time_step
  real(c_float), allocatable, target :: inputs(:, :), future(:, :), predicted(:, :)
  real(c_float) :: loss
  integer :: rank, time_steps, hold_at, optimizer_steps
  logical :: preempted

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  time_steps = integer_argument(1, default_time_steps)
  hold_at = integer_argument(2, 0)
  if (sluice_version() /= SLUICE_MODULE_VERSION) then
    if (rank == 0) print '(a, i0, a, i0)', 'libsluice is version ', sluice_version(), &
        ' but the sluice module is ', SLUICE_MODULE_VERSION
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if

  call create_trainer()
  allocate (states(grid_points, batch), inputs(grid_points, batch), future(grid_points, batch), &
            predicted(grid_points, batch))
  ! A fresh start's state; a resume overwrites both from the checkpoint, together with the model.
  call initial_fields(states, seed=1)
  time_step = 0
  call check(sluice_register_state(trainer, 'heat.states', states, SLUICE_STATE_REPLICATED), 'sluice_register_state')
  call check(sluice_register_state(trainer, 'heat.time_step', time_step, SLUICE_STATE_REPLICATED), &
             'sluice_register_state')
  call check(sluice_install_signal_handlers(trainer), 'sluice_install_signal_handlers')
  call check(sluice_trainer_start(trainer), 'sluice_trainer_start')
  ! optimizer_steps counts optimizer steps (windows of 4 time steps), not time steps: the loop runs on the
  ! restored heat.time_step instead, which also knows where in a window the stopped job was.
  call check(sluice_trainer_resume(trainer, optimizer_steps), 'sluice_trainer_resume')
  if (rank == 0) print '(a, i0)', 'heat_surrogate: first time step ', time_step + 1

  preempted = .false.
  do while (time_step < time_steps .and. .not. preempted)
    ! This step's training pair (the states now and lead_steps later), then the simulation advances. The
    ! counter and the ensemble are updated BEFORE sluice_train_step, which may write a periodic checkpoint:
    ! every checkpoint then holds the state after this time step, together with the model that trained on it.
    call simulate(states, lead_steps, future)
    inputs = states
    call advance_ensemble(states, int(time_step) + 1)
    time_step = time_step + 1
    call check(sluice_train_step(trainer, inputs, future, loss), 'sluice_train_step')
    if (rank == 0) print '(a, i0, a, es14.6)', 'step ', time_step, ' loss ', loss
    flush (output_unit)  ! under srun stdout is a pipe: show progress as it happens
    call check(sluice_stop_requested(trainer, preempted), 'sluice_stop_requested')
    if (time_step == hold_at .and. .not. preempted) call hold_for_signal(preempted)
  end do

  if (preempted) then
    if (rank == 0) print '(a, i0, a)', 'heat_surrogate: preempted after time step ', time_step, ' (checkpoint written)'
  else
    call report_surrogate()
  end if
  call sluice_trainer_destroy(trainer)
  call MPI_Finalize()
  if (preempted) stop SLUICE_EXIT_PREEMPTED

contains

  integer function integer_argument(position, default)
    integer, intent(in) :: position, default
    character(len=32) :: text
    integer_argument = default
    if (command_argument_count() < position) return
    call get_command_argument(position, text)
    read (text, *) integer_argument
  end function integer_argument

  ! The config file named by SLUICE_CONFIG (set by `sluice submit --program`), else the built-in one; then the
  ! diffusion layer every stage uses.
  subroutine create_trainer()
    character(len=4096) :: path
    integer :: length
    call get_environment_variable('SLUICE_CONFIG', path, length)
    if (length > 0) then
      call check(sluice_trainer_create(MPI_COMM_WORLD, trim(path), trainer), 'sluice_trainer_create')
    else
      call check(sluice_trainer_create(MPI_COMM_WORLD, builtin_config, trainer), 'sluice_trainer_create')
    end if
    ops%in_features = grid_points
    ops%out_features = grid_points
    ops%num_params = 3
    ops%initial_params = c_loc(initial_stencil)
    ops%forward = c_funloc(diffusion_forward)
    ops%backward_input = c_funloc(diffusion_backward_input)
    ops%backward_weight = c_funloc(diffusion_backward_weight)
    call check(sluice_trainer_register_layer(trainer, 'diffusion', ops), 'sluice_trainer_register_layer')
  end subroutine create_trainer

  ! Waits (up to 120 s) for a preemption signal at this point of the time loop. Asking again is harmless:
  ! sluice_stop_requested is an agreement at a step boundary, and nothing trains in between.
  subroutine hold_for_signal(stop)
    logical, intent(inout) :: stop
    integer :: tries
    if (rank == 0) print '(a, i0)', 'heat_surrogate: holding after time step ', time_step
    flush (output_unit)
    do tries = 1, 1200
      call check(sluice_stop_requested(trainer, stop), 'sluice_stop_requested')
      if (stop) return
      call sleep_tenth_second()
    end do
  end subroutine hold_for_signal

  subroutine sleep_tenth_second()
    interface
      integer(c_int) function usleep(microseconds) bind(C, name='usleep')
        import :: c_int
        integer(c_int), value :: microseconds
      end function usleep
    end interface
    if (usleep(100000_c_int) /= 0) continue  ! an interrupted sleep (the signal itself) just ends early
  end subroutine sleep_tenth_second

  ! How well does the surrogate replace lead_steps simulation steps on fields it has not seen?
  subroutine report_surrogate()
    call initial_fields(inputs, seed=99)
    call simulate(inputs, lead_steps, future)
    call check(sluice_predict(trainer, inputs, predicted), 'sluice_predict')
    call check(sluice_trainer_stats(trainer, stats), 'sluice_trainer_stats')
    if (rank == 0) then
      print '(a, es14.6)', 'final loss ', stats%last_loss
      print '(a, es14.6)', 'surrogate max error on new fields ', maxval(abs(predicted - future))
    end if
  end subroutine report_surrogate

  subroutine check(status, call_name)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: call_name
    if (status == SLUICE_OK) return
    write (0, '(a, i0, 5a)') 'rank ', rank, ': ', call_name, ' failed: ', sluice_status_string(status), &
        ' (' // sluice_last_error() // ')'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine check

  ! Smooth random fields: a few Fourier modes with amplitudes from a fixed-seed generator, the same on
  ! every rank (every rank passes the same batch; Sluice reads it where it needs it).
  subroutine initial_fields(u, seed)
    real(c_float), intent(out) :: u(:, :)
    integer, intent(in) :: seed
    integer :: sample
    do sample = 1, size(u, 2)
      call one_field(u(:, sample), seed * 1000 + sample)
    end do
  end subroutine initial_fields

  subroutine one_field(u, seed)
    real(c_float), intent(out) :: u(:)
    integer, intent(in) :: seed
    real(c_float), parameter :: two_pi = 6.2831853_c_float
    integer :: i, mode
    integer(c_int64_t) :: state
    real(c_float) :: amplitude, phase
    state = int(seed, c_int64_t) * 2654435761_c_int64_t
    u = 0
    do mode = 1, 3
      amplitude = next_uniform(state) / mode
      phase = two_pi * next_uniform(state)
      do i = 1, size(u)
        u(i) = u(i) + amplitude * sin(two_pi * mode * (i - 1) / size(u) + phase)
      end do
    end do
  end subroutine one_field

  ! Uniform in [0, 1) from a 64-bit LCG: portable and identical on every rank (unlike random_number's seed).
  real(c_float) function next_uniform(state)
    integer(c_int64_t), intent(inout) :: state
    state = iand(state * 6364136223846793005_c_int64_t + 1442695040888963407_c_int64_t, huge(state))
    next_uniform = real(ishft(state, -40), c_float) / 2.0_c_float**23
  end function next_uniform

  subroutine simulate(u, steps, result)
    real(c_float), intent(in) :: u(:, :)
    integer, intent(in) :: steps
    real(c_float), intent(out) :: result(:, :)
    real(c_float) :: work(size(u, 1))
    integer :: sample, t
    do sample = 1, size(u, 2)
      result(:, sample) = u(:, sample)
      do t = 1, steps
        call apply_stencil(true_stencil, result(:, sample), work)
        result(:, sample) = work
      end do
    end do
  end subroutine simulate

  subroutine advance_ensemble(u, step)
    real(c_float), intent(inout) :: u(:, :)
    integer, intent(in) :: step
    real(c_float) :: next(size(u, 1), size(u, 2))
    integer :: sample
    call simulate(u, 1, next)
    u = next
    ! Diffusion flattens every field; a flat field teaches nothing, so start a fresh one in its place.
    do sample = 1, size(u, 2)
      if (maxval(abs(u(:, sample))) < 0.05_c_float) call one_field(u(:, sample), 7919 * step + sample)
    end do
  end subroutine advance_ensemble

end program heat_surrogate
