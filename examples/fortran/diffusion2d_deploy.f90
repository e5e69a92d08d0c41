! Deployment: the trained surrogate stands in for `lead` solver steps on fields it has never seen, and is judged
! against the solver and against persistence (the forecast "the field does not change", the baseline any
! surrogate has to beat), with a one-line verdict and the picture (diffusion2d_picture.f90).
!
! The surrogate is deployed as a production code would: an inference-only model (sluice_model_*) loaded from the
! training run's checkpoint on one rank, with the solver's stencil layer registered on it as on the trainer; no
! communicator, no optimizer, no collective call. It predicts exactly what the trainer's sluice_predict would.
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

  ! Called on every rank of comm; only rank 0 deploys (the model needs no other rank), prints the verdict and
  ! writes the picture.
  subroutine deploy_surrogate(comm, surrogate_file, lead, batch, loss_csv, picture)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: surrogate_file, loss_csv, picture
    integer, intent(in) :: lead, batch
    type(sluice_model) :: surrogate
    real(c_float) :: start(grid_cells, batch), solver(grid_cells, batch), predicted(grid_cells, batch)
    real(c_float) :: surrogate_error, persistence_error
    character(len=160) :: verdict
    integer :: rank
    call MPI_Comm_rank(comm, rank)
    if (rank /= 0) return
    call load_surrogate(surrogate_file, surrogate)
    call random_fields(start, test_seed)
    call simulate(start, lead, solver)
    call predict(surrogate, start, predicted)
    call unload_surrogate(surrogate)
    surrogate_error = rms(predicted - solver)
    persistence_error = rms(start - solver)
    verdict = verdict_line(surrogate_error, persistence_error)
    print '(a)', trim(verdict)
    call write_picture(picture, reshape(solver(:, 1), [grid_size, grid_size]), &
                       reshape(predicted(:, 1), [grid_size, grid_size]), &
                       reshape(start(:, 1), [grid_size, grid_size]), loss_csv, trim(verdict))
    print '(2a)', 'diffusion2d: picture written to ', picture
  end subroutine deploy_surrogate

  ! --- the inference-only model (sluice.h: sluice_model_*), local to this rank ------------------------------

  subroutine load_surrogate(surrogate_file, surrogate)
    character(len=*), intent(in) :: surrogate_file
    type(sluice_model), intent(out) :: surrogate
    call check(sluice_model_create(surrogate), 'sluice_model_create')
    ! The checkpoint's config names the custom layer; its code is the solver's, registered as on the trainer.
    call check(sluice_model_register_layer(surrogate, 'stencil', stencil_layer_ops()), 'sluice_model_register_layer')
    call check(sluice_model_load_checkpoint(surrogate, surrogate_file), 'sluice_model_load_checkpoint')
  end subroutine load_surrogate

  subroutine predict(surrogate, inputs, outputs)
    type(sluice_model), intent(in) :: surrogate
    real(c_float), intent(in), contiguous, target :: inputs(:, :)
    real(c_float), intent(inout), contiguous, target :: outputs(:, :)
    call check(sluice_model_predict(surrogate, inputs, outputs), 'sluice_model_predict')
  end subroutine predict

  subroutine unload_surrogate(surrogate)
    type(sluice_model), intent(inout) :: surrogate
    call sluice_model_destroy(surrogate)
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
