! The program of the Fortran-only CMake project: the module it uses was compiled in this project, it links the
! installed libsluice.so, and one float64 rank-3 training step runs on every rank.
program fortran_only
  use, intrinsic :: iso_c_binding, only: c_int, c_double
  use mpi_f08
  use sluice
  implicit none
  character(len=*), parameter :: config = &
      'model:' // new_line('a') // &
      '  inputs: 6' // new_line('a') // &
      '  layers: [{type: linear, outputs: 1}]' // new_line('a') // &
      'pipeline: {stages: 1, microbatches: 2}' // new_line('a') // &
      'optimizer: {type: sgd, lr: 0.1}' // new_line('a') // &
      'data: {type: external, batch: 4}' // new_line('a')
  type(sluice_trainer) :: trainer
  real(c_double) :: field(2, 3, 4), target_values(1, 4), loss
  integer(c_int) :: status
  integer :: rank, replicas, i

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, replicas)
  if (sluice_version() /= SLUICE_MODULE_VERSION) error stop 'the library is not the module''s version'
  field = reshape([(0.01d0 * i, i = 1, size(field))], shape(field))
  target_values = 1
  status = sluice_trainer_create(MPI_COMM_WORLD, config, trainer)
  if (status == SLUICE_OK) status = sluice_trainer_start(trainer)
  if (status == SLUICE_OK) status = sluice_train_step(trainer, field(:, :, 1:4 / replicas), &
                                                      target_values(:, 1:4 / replicas), loss)
  if (status /= SLUICE_OK) then
    write (0, '(a)') 'FAIL: ' // sluice_status_string(status) // ' ' // sluice_last_error()
    error stop 1
  end if
  call sluice_trainer_destroy(trainer)
  if (rank == 0) print '(a, es12.5)', 'fortran-only project trained: loss ', loss
  call MPI_Finalize()
end program fortran_only
