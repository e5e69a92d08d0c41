! Deployment: the trained surrogate stands in for `lead` solver steps on fields it has never seen, and is judged
! against the solver and against persistence (the forecast "the field does not change", the baseline any
! surrogate has to beat), with a one-line verdict and the picture (diffusion2d_picture.f90).
!
! SWITCH TO sluice_model_* ONCE AVAILABLE. Today the surrogate is loaded into a trainer (the same config, the
! stencil layer registered, sluice_trainer_start, then sluice_trainer_resume from the saved file) and run with
! the trainer's sluice_predict: a collective call on the pipeline's ranks. The inference-only model API replaces
! exactly load_surrogate, predict and unload_surrogate below:
!     sluice_model_create / sluice_model_register_layer('stencil', stencil_layer_ops()) /
!     sluice_model_load_checkpoint(model, surrogate_file)   (or sluice_model_load(surrogate_file, model)),
!     sluice_model_predict(model, inputs, outputs, batch), sluice_model_destroy.
! Nothing else in the demo needs to change.
module diffusion2d_deploy
  use, intrinsic :: iso_c_binding, only: c_int, c_float
  use mpi_f08, only: MPI_Comm, MPI_Comm_rank, MPI_Abort, MPI_COMM_WORLD
  use sluice
  use diffusion2d_solver, only: grid_size, grid_cells, simulate, random_fields
  use diffusion2d_layer, only: stencil_layer_ops
  use diffusion2d_picture, only: write_picture
  implicit none
  private
  public :: deploy_surrogate

  ! Test fields come from a seed no training field used.
  integer, parameter :: test_seed = 99

contains

  ! Collective (today: every rank of comm takes part in the prediction). Rank 0 prints the verdict and
  ! writes the picture.
  subroutine deploy_surrogate(comm, config, surrogate_file, lead, batch, loss_csv, picture)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: config, surrogate_file, loss_csv, picture
    integer, intent(in) :: lead, batch
    type(sluice_trainer) :: surrogate
    real(c_float) :: start(grid_cells, batch), solver(grid_cells, batch), predicted(grid_cells, batch)
    real(c_float) :: surrogate_error, persistence_error
    character(len=160) :: verdict
    integer :: rank
    call MPI_Comm_rank(comm, rank)
    call load_surrogate(comm, config, surrogate_file, surrogate)
    call random_fields(start, test_seed)
    call simulate(start, lead, solver)
    call predict(surrogate, start, predicted)
    call unload_surrogate(surrogate)
    surrogate_error = rms(predicted - solver)
    persistence_error = rms(start - solver)
    verdict = verdict_line(surrogate_error, persistence_error)
    if (rank /= 0) return
    print '(a)', trim(verdict)
    call write_picture(picture, reshape(solver(:, 1), [grid_size, grid_size]), &
                       reshape(predicted(:, 1), [grid_size, grid_size]), &
                       reshape(start(:, 1), [grid_size, grid_size]), loss_csv, trim(verdict))
    print '(2a)', 'diffusion2d: picture written to ', picture
  end subroutine deploy_surrogate

  ! --- the part sluice_model_* replaces -------------------------------------------------------------------

  subroutine load_surrogate(comm, config, surrogate_file, surrogate)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: config, surrogate_file
    type(sluice_trainer), intent(out) :: surrogate
    integer :: step
    call check(sluice_trainer_create(comm, config, surrogate), 'sluice_trainer_create')
    call check(sluice_trainer_register_layer(surrogate, 'stencil', stencil_layer_ops()), &
               'sluice_trainer_register_layer')
    call check(sluice_trainer_start(surrogate), 'sluice_trainer_start')
    ! A named file: the surrogate the training run saved, not whatever the checkpoint rotation holds.
    call check(sluice_trainer_resume(surrogate, step, surrogate_file), 'sluice_trainer_resume')
  end subroutine load_surrogate

  subroutine predict(surrogate, inputs, outputs)
    type(sluice_trainer), intent(in) :: surrogate
    real(c_float), intent(in), contiguous, target :: inputs(:, :)
    real(c_float), intent(inout), contiguous, target :: outputs(:, :)
    call check(sluice_predict(surrogate, inputs, outputs), 'sluice_predict')
  end subroutine predict

  subroutine unload_surrogate(surrogate)
    type(sluice_trainer), intent(inout) :: surrogate
    call sluice_trainer_destroy(surrogate)
  end subroutine unload_surrogate

  ! ---------------------------------------------------------------------------------------------------------

  pure real(c_float) function rms(error)
    real(c_float), intent(in) :: error(:, :)
    rms = sqrt(sum(error**2) / size(error))
  end function rms

  ! "surrogate error X vs persistence Y (Z× better)" (or "worse": the verdict says what happened).
  function verdict_line(surrogate_error, persistence_error) result(line)
    real(c_float), intent(in) :: surrogate_error, persistence_error
    character(len=160) :: line
    character(len=*), parameter :: times = char(195) // char(151)  ! U+00D7 in UTF-8
    character(len=16) :: x, y, z
    real(c_float) :: ratio
    write (x, '(es10.3)') surrogate_error
    write (y, '(es10.3)') persistence_error
    if (surrogate_error <= persistence_error) then
      ratio = persistence_error / max(surrogate_error, tiny(ratio))
      write (z, '(f0.1)') ratio
      z = trim(z) // times // ' better'
    else
      ratio = surrogate_error / max(persistence_error, tiny(ratio))
      write (z, '(f0.1)') ratio
      z = trim(z) // times // ' worse'
    end if
    line = 'verdict: surrogate error ' // trim(adjustl(x)) // ' vs persistence ' // trim(adjustl(y)) // &
           ' (' // trim(z) // ')'
  end function verdict_line

  subroutine check(status, call_name)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: call_name
    if (status == SLUICE_OK) return
    write (0, '(5a)') 'diffusion2d deploy: ', call_name, ' failed: ', sluice_status_string(status), &
        ' (' // sluice_last_error() // ')'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine check

end module diffusion2d_deploy
