! The application's loop in Fortran: periodic checkpoints (every: 2, keep: 2), sluice_trainer_resume (0 on an empty
! directory, the saved step after a stop), and sluice_stop_requested agreeing on a SIGUSR1 raised on ONE rank with
! the checkpoint written before it returns. Built against the installed tree and run with 2 ranks by
! fortran_run_control_test.sh, which sets SLUICE_TEST_DIR to a directory both ranks see.
! Application state (sluice_register_state) travels in the same checkpoints: a replicated real64 2-D field and a
! per-rank int64 counter are restored by the requeued job's resume, bit for bit.
! Prints "FAIL rank R: ..." for every failed check and exits non-zero on every rank if any rank failed.
program fortran_run_control
  use, intrinsic :: iso_c_binding, only: c_int, c_float
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use mpi_f08
  use sluice
  use fortran_checks
  implicit none

  interface
    integer(c_int) function c_raise(signal_number) bind(C, name="raise")
      import :: c_int
      integer(c_int), value :: signal_number
    end function c_raise
  end interface
  integer(c_int), parameter :: sigusr1 = 10  ! Linux

  integer, parameter :: features = 4, outputs = 2, batch = 8
  type(sluice_trainer) :: trainer
  real(c_float), allocatable, target :: inputs(:, :), targets(:, :)
  character(len=512) :: dir
  character(len=:), allocatable :: config
  integer :: rank, ranks, i, step, length
  logical :: stop, exists
  real(c_float) :: loss
  real(real64), allocatable, target :: field(:, :)
  integer(int64), target :: counter(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call checks_start(rank)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks)
  call get_environment_variable('SLUICE_TEST_DIR', dir, length)
  if (length == 0) call fail('SLUICE_TEST_DIR is not set')
  config = 'model:' // new_line('a') // &
           '  inputs: 4' // new_line('a') // &
           '  layers:' // new_line('a') // &
           '    - {type: linear, outputs: 4}' // new_line('a') // &
           '    - {type: linear, outputs: 2}' // new_line('a') // &
           'pipeline: {stages: 2, schedule: 1f1b, microbatches: 4, split: [1, 1]}' // new_line('a') // &
           'optimizer: {type: sgd, lr: 0.1}' // new_line('a') // &
           'data: {type: external, batch: 8}' // new_line('a') // &
           'checkpoint: {dir: ' // trim(dir) // ', every: 2, keep: 2}' // new_line('a')

  allocate (inputs(features, batch), targets(outputs, batch))
  inputs = reshape([(sin(0.3 * i), i = 1, features * batch)], shape(inputs))
  targets = reshape([(cos(0.7 * i), i = 1, outputs * batch)], shape(targets))

  allocate (field(3, 5))
  field = 0
  counter = 0

  ! The first job: a time loop that polls for preemption after every step; rank 1 is signalled after step 3.
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create')
  call expect_ok(sluice_register_state(trainer, 'field', field, SLUICE_STATE_REPLICATED), 'sluice_register_state field')
  call expect_ok(sluice_register_state(trainer, 'counter', counter, SLUICE_STATE_PER_RANK), &
                 'sluice_register_state counter')
  if (sluice_register_state(trainer, 'strided', field(1, :), SLUICE_STATE_PER_RANK) /= SLUICE_ERROR_INVALID_ARGUMENT) &
    call fail('a non-contiguous array section was accepted')
  call expect_ok(sluice_install_signal_handlers(trainer), 'sluice_install_signal_handlers')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start')
  call expect_ok(sluice_trainer_resume(trainer, step), 'sluice_trainer_resume (fresh)')
  if (step /= 0) call fail('resume on an empty checkpoint.dir did not return step 0')
  stop = .false.
  do while (.not. stop .and. step < 10)
    call simulate(step + 1)
    call expect_ok(sluice_train_step(trainer, inputs, targets, loss), 'sluice_train_step')
    step = step + 1
    if (step == 3 .and. rank == ranks - 1) then
      if (c_raise(sigusr1) /= 0) call fail('raise(SIGUSR1) failed')
    end if
    call expect_ok(sluice_stop_requested(trainer, stop), 'sluice_stop_requested')
  end do
  if (.not. stop .or. step /= 3) call fail('the loop did not stop at step 3 on this rank')
  call sluice_trainer_destroy(trainer)
  inquire (file=trim(dir) // '/ckpt_00000002.h5', exist=exists)
  if (.not. exists) call fail('no periodic checkpoint of step 2')
  inquire (file=trim(dir) // '/ckpt_00000003.h5', exist=exists)
  if (.not. exists) call fail('no preemption checkpoint of step 3')

  ! The requeued job continues from the preemption checkpoint (by directory, and by file).
  field = -1
  counter = -1
  call expect_ok(sluice_trainer_create(MPI_COMM_WORLD, config, trainer), 'sluice_trainer_create (requeued)')
  call expect_ok(sluice_register_state(trainer, 'field', field, SLUICE_STATE_REPLICATED), 'register field (requeued)')
  call expect_ok(sluice_trainer_start(trainer), 'sluice_trainer_start (requeued)')
  call expect_ok(sluice_register_state(trainer, 'counter', counter, SLUICE_STATE_PER_RANK), 'register counter (requeued)')
  call expect_ok(sluice_trainer_resume(trainer, step), 'sluice_trainer_resume (requeued)')
  if (step /= 3) call fail('the requeued job did not resume at step 3')
  call check_state(3)
  call expect_ok(sluice_trainer_resume(trainer, step, trim(dir) // '/ckpt_00000002.h5'), 'sluice_trainer_resume file')
  if (step /= 2) call fail('resuming from the file of step 2 did not return 2')
  call check_state(2)
  call sluice_trainer_destroy(trainer)

  call checks_finish('PASS: stopped together, checkpointed and resumed')

contains

  ! The simulation's own state at time step `n`.
  subroutine simulate(n)
    integer, intent(in) :: n
    integer :: a, b
    do b = 1, size(field, 2)
      do a = 1, size(field, 1)
        field(a, b) = sin(0.1_real64 * a * n) / (b + 1.0_real64 / n)
      end do
    end do
    counter = [int(n, int64) * 100 + rank, int(rank, int64)]
  end subroutine simulate

  subroutine check_state(n)
    integer, intent(in) :: n
    real(real64) :: saved_field(3, 5)
    integer(int64) :: saved_counter(2)
    saved_field = field
    saved_counter = counter
    call simulate(n)
    if (any(transfer(saved_field, 0_int64, 15) /= transfer(field, 0_int64, 15))) &
      call fail('the field was not restored bit for bit at step ' // achar(48 + n))
    if (any(saved_counter /= counter)) call fail('the per-rank counter was not restored at step ' // achar(48 + n))
  end subroutine check_state
end program fortran_run_control
