! Sluice's showcase: a 2-D heat-diffusion code trains a surrogate of itself on a 4-rank pipeline, survives an
! interruption, and deploys the surrogate.
!
! The solver (diffusion2d_solver.f90) steps an ensemble of fields on a periodic 32 x 32 grid with the explicit
! 5-point stencil. The surrogate learns to jump `lead` solver steps at once: u(t) -> u(t + lead). Its model
! (diffusion2d.yaml) is the solver's OWN operator as a custom layer -- apply_stencil with the five stencil
! coefficients as learnable parameters (diffusion2d_layer.f90) -- once on each of the 4 pipeline stages, and on
! the last stage beside it a built-in residual_mlp that learns what the stencils miss.
!
! The program owns its time loop (docs/APPLICATION_LOOP.md): each time step, the solver produces a training pair
! from its ensemble, advances the ensemble one step, and calls sluice_train_step. The ensemble and the time step
! are registered with sluice_register_state, so every checkpoint (checkpoint: {dir, every, keep}) holds the
! simulation together with the model and the optimizer. A SIGUSR1/SIGTERM (a Slurm preemption) makes
! sluice_stop_requested write that checkpoint on every rank; the program then exits with SLUICE_EXIT_PREEMPTED
! (75), and the next run's sluice_trainer_resume continues where it stopped.
!
! Run (tools/run_main.sh does all three):
!   mpirun -np 4 ./diffusion2d train diffusion2d.yaml 1500 500  # phase 1: stops after time step 500 (exit 75)
!   mpirun -np 4 ./diffusion2d train diffusion2d.yaml 1500      # phase 2: resumes, trains to 1500, saves
!   mpirun -np 4 ./diffusion2d deploy diffusion2d.yaml          # phase 3: verdict + diffusion2d.svg
! STOP_AT (a demonstration hook) plays the scheduler: after that time step, rank 0 sends itself SIGUSR1, and the
! stop goes through exactly the path a real preemption takes.
! Files, in the current directory: the config's checkpoint dir, loss.csv (rank 0 appends "time_step,loss"),
! surrogate.h5 (the trained surrogate, a model-only export written at the end of training), diffusion2d.svg (the picture).
program diffusion2d
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use sluice
  use diffusion2d_solver, only: grid_cells, simulate, advance_ensemble, random_fields
  use diffusion2d_layer, only: stencil_layer_ops
  use diffusion2d_deploy, only: deploy_surrogate
  implicit none

  ! lead: how many solver steps one surrogate evaluation replaces. batch: fields per training step (the config's
  ! data.batch).
  integer, parameter :: lead = 4, batch = 32
  character(len=*), parameter :: loss_csv = 'loss.csv', surrogate_file = 'surrogate.h5', &
                                 picture = 'diffusion2d.svg'
  integer, parameter :: sigusr1 = 10  ! Linux

  character(len=16) :: mode
  character(len=4096) :: config
  integer :: rank

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  if (sluice_version() /= SLUICE_MODULE_VERSION) then
    if (rank == 0) print '(a)', 'diffusion2d: libsluice and the sluice module are different versions'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call get_command_argument(1, mode)
  call get_command_argument(2, config)
  select case (mode)
  case ('train')
    call train(integer_argument(3, 1500), integer_argument(4, 0))
  case ('deploy')
    call deploy_surrogate(MPI_COMM_WORLD, surrogate_file, lead, batch, loss_csv, picture)
  case default
    if (rank == 0) print '(a)', 'usage: diffusion2d train CONFIG [TIME_STEPS [STOP_AT]] | diffusion2d deploy CONFIG'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end select
  call MPI_Finalize()

contains

  subroutine train(time_steps, stop_at)
    integer, intent(in) :: time_steps, stop_at
    type(sluice_trainer) :: trainer
    ! The simulation's state, checkpointed with the model: the ensemble and the time steps done.
    real(c_float), allocatable, target :: states(:, :)
    integer(c_int64_t), target :: time_step
    integer :: optimizer_steps
    logical :: preempted

    call check(sluice_trainer_create(MPI_COMM_WORLD, trim(config), trainer), 'sluice_trainer_create')
    call check(sluice_trainer_register_layer(trainer, 'stencil', stencil_layer_ops()), &
               'sluice_trainer_register_layer')
    allocate (states(grid_cells, batch))
    ! A fresh start's state; a resume overwrites both from the checkpoint, together with the model.
    call random_fields(states, seed=1)
    time_step = 0
    call check(sluice_register_state(trainer, 'diffusion.states', states, SLUICE_STATE_REPLICATED), &
               'sluice_register_state')
    call check(sluice_register_state(trainer, 'diffusion.time_step', time_step, SLUICE_STATE_REPLICATED), &
               'sluice_register_state')
    call check(sluice_install_signal_handlers(trainer), 'sluice_install_signal_handlers')
    call check(sluice_trainer_start(trainer), 'sluice_trainer_start')
    call check(sluice_trainer_resume(trainer, optimizer_steps), 'sluice_trainer_resume')
    call announce_start(time_step, optimizer_steps)

    call time_loop(trainer, states, time_step, time_steps, stop_at, preempted)

    if (preempted) then
      if (rank == 0) print '(a, i0, a)', 'diffusion2d: preempted after time step ', time_step, &
          ' (checkpoint written); run again to resume'
    else
      ! The file to ship: the model, its normalization and config, without the optimizer state, the replay buffer
      ! and the solver's registered arrays, which only a restart of training needs (those stay in checkpoints/).
      call check(sluice_export_model(trainer, surrogate_file), 'sluice_export_model')
      if (rank == 0) print '(a, i0, 2a)', 'diffusion2d: trained to time step ', time_step, ', surrogate exported to ', &
          surrogate_file
    end if
    call sluice_trainer_destroy(trainer)
    if (preempted) then
      call MPI_Finalize()
      stop SLUICE_EXIT_PREEMPTED, quiet=.true.
    end if
  end subroutine train

  ! The coupled loop: simulate, train, and at each step boundary ask whether the job must stop.
  subroutine time_loop(trainer, states, time_step, time_steps, stop_at, preempted)
    type(sluice_trainer), intent(in) :: trainer
    real(c_float), intent(inout) :: states(:, :)
    integer(c_int64_t), intent(inout) :: time_step
    integer, intent(in) :: time_steps, stop_at
    logical, intent(out) :: preempted
    real(c_float), allocatable :: inputs(:, :), future(:, :)
    real(c_float) :: loss
    allocate (inputs(grid_cells, batch), future(grid_cells, batch))
    preempted = .false.
    do while (time_step < time_steps .and. .not. preempted)
      ! This step's training pair (the fields now and `lead` steps later), then the solver advances. The
      ! registered state is updated BEFORE sluice_train_step, which may write a periodic checkpoint: every
      ! checkpoint then holds the state after this time step together with the model that trained on it.
      inputs = states
      call simulate(inputs, lead, future)
      call advance_ensemble(states, int(time_step) + 1)
      time_step = time_step + 1
      call check(sluice_train_step(trainer, inputs, future, loss), 'sluice_train_step')
      call record_loss(time_step, loss)
      if (time_step == stop_at .and. rank == 0) call send_preemption_signal(time_step)
      call check(sluice_stop_requested(trainer, preempted), 'sluice_stop_requested')
    end do
  end subroutine time_loop

  subroutine announce_start(time_step, optimizer_steps)
    integer(c_int64_t), intent(in) :: time_step
    integer, intent(in) :: optimizer_steps
    integer :: unit
    if (rank /= 0) return
    if (time_step == 0) then
      print '(a)', 'diffusion2d: fresh start (no checkpoint yet)'
      open (newunit=unit, file=loss_csv, status='replace', action='write')
      write (unit, '(a)') 'time_step,loss'
    else
      print '(a, i0, a, i0, a)', 'diffusion2d: resumed from checkpoint at time step ', time_step, &
          ' (optimizer step ', optimizer_steps, ')'
      open (newunit=unit, file=loss_csv, position='append', action='write')
      write (unit, '(a, i0)') '# resumed at time step ', time_step
    end if
    close (unit)
    flush (output_unit)
  end subroutine announce_start

  ! Rank 0 prints every 50th step and appends every step to loss.csv (the picture's loss curve).
  subroutine record_loss(time_step, loss)
    integer(c_int64_t), intent(in) :: time_step
    real(c_float), intent(in) :: loss
    integer :: unit
    if (rank /= 0) return
    if (mod(time_step, 50_c_int64_t) == 0 .or. time_step == 1) then
      print '(a, i0, a, es14.6)', 'step ', time_step, ' loss ', loss
      flush (output_unit)  ! under srun stdout is a pipe: show progress as it happens
    end if
    open (newunit=unit, file=loss_csv, position='append', action='write')
    write (unit, '(i0, a, es14.6)') time_step, ',', loss
    close (unit)
  end subroutine record_loss

  ! What a scheduler's preemption does (scancel --signal=USR1), done by the program itself for the demo.
  subroutine send_preemption_signal(time_step)
    integer(c_int64_t), intent(in) :: time_step
    interface
      integer(c_int) function c_raise(signal) bind(C, name='raise')
        import :: c_int
        integer(c_int), value :: signal
      end function c_raise
    end interface
    print '(a, i0)', 'diffusion2d: simulated preemption (SIGUSR1) after time step ', time_step
    if (c_raise(int(sigusr1, c_int)) /= 0) call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine send_preemption_signal

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
    write (0, '(a, i0, 5a)') 'rank ', rank, ': ', call_name, ' failed: ', sluice_status_string(status), &
        ' (' // sluice_last_error() // ')'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine check

end program diffusion2d
