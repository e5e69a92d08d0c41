! Fortran 2018 bindings of Sluice's C API (capi/include/sluice/sluice.h): `use sluice`.
!
! - A trainer is a `type(sluice_trainer)`; every function returns an integer(c_int) status (SLUICE_OK = 0) and
!   sluice_last_error() explains a failure as a Fortran string.
! - The communicator is an mpi_f08 `type(MPI_Comm)` or an old-style integer handle (`use mpi`): the generic
!   sluice_trainer_create takes either.
! - Arrays are Fortran arrays x(features, batch): column-major x(features, batch) has exactly the memory layout of
!   the C API's row-major [batch][features], so no copy is made.
! - A simulation code hands one of its computations to the pipeline by filling a `type(sluice_layer_ops)` with
!   c_funloc() of bind(C) procedures matching the abstract interfaces below.
!
! The wrappers check what only Fortran knows (array extents against the model's feature counts) and report it
! through sluice_last_error() like the library's own errors. A collective wrapper that finds such a problem on
! one rank joins the other ranks' call through sluice_join_with_error (the library's one failure agreement),
! so every rank fails together with this rank's message: no rank is left waiting for the one with the bad array.
module sluice
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_float, c_double, c_char, c_ptr, c_funptr, &
                                         c_null_ptr, c_null_funptr, c_null_char, c_loc, c_f_pointer, &
                                         c_associated
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  ! Status codes (enum sluice_status).
  integer(c_int), parameter, public :: SLUICE_OK = 0
  integer(c_int), parameter, public :: SLUICE_ERROR_INVALID_ARGUMENT = 1
  integer(c_int), parameter, public :: SLUICE_ERROR_CONFIG = 2
  integer(c_int), parameter, public :: SLUICE_ERROR_STATE = 3
  integer(c_int), parameter, public :: SLUICE_ERROR_UNSUPPORTED = 4
  integer(c_int), parameter, public :: SLUICE_ERROR_COMM = 5
  integer(c_int), parameter, public :: SLUICE_ERROR_CUDA = 6
  integer(c_int), parameter, public :: SLUICE_ERROR_IO = 7
  integer(c_int), parameter, public :: SLUICE_ERROR_CHECKPOINT = 8
  integer(c_int), parameter, public :: SLUICE_ERROR_TIMEOUT = 9
  integer(c_int), parameter, public :: SLUICE_ERROR_CALLBACK = 10
  integer(c_int), parameter, public :: SLUICE_ERROR_INTERNAL = 11

  ! The header's version this module was compiled against (compare with sluice_version()). The header's
  ! SLUICE_VERSION is SLUICE_MODULE_VERSION here: Fortran names ignore case, and sluice_version is the function.
  integer(c_int), parameter, public :: SLUICE_VERSION_MAJOR = 0
  integer(c_int), parameter, public :: SLUICE_VERSION_MINOR = 1
  integer(c_int), parameter, public :: SLUICE_VERSION_PATCH = 0
  integer(c_int), parameter, public :: SLUICE_MODULE_VERSION = &
      SLUICE_VERSION_MAJOR * 10000 + SLUICE_VERSION_MINOR * 100 + SLUICE_VERSION_PATCH

  ! An opaque trainer handle. A derived type rather than a bare c_ptr, so that a trainer cannot be passed where
  ! another C pointer is expected.
  type, public :: sluice_trainer
    type(c_ptr) :: handle = c_null_ptr
  end type sluice_trainer

  ! struct sluice_stats
  type, bind(C), public :: sluice_stats
    integer(c_int64_t) :: steps = 0
    real(c_double) :: last_loss = 0
    real(c_double) :: last_step_seconds = 0
    real(c_double) :: bubble_fraction = 0
    integer(c_int64_t) :: peak_stash_bytes = 0
  end type sluice_stats

  ! struct sluice_layer_ops: sizes, optional initial parameters (c_loc of a `target` array, copied at start)
  ! and c_funloc() of bind(C) procedures with the interfaces below. Unused callbacks stay c_null_funptr.
  type, bind(C), public :: sluice_layer_ops
    integer(c_int64_t) :: in_features = 0
    integer(c_int64_t) :: out_features = 0
    integer(c_int64_t) :: num_params = 0
    type(c_ptr) :: initial_params = c_null_ptr
    type(c_funptr) :: forward = c_null_funptr
    type(c_funptr) :: backward_input = c_null_funptr
    type(c_funptr) :: backward_weight = c_null_funptr
    type(c_funptr) :: backward = c_null_funptr
  end type sluice_layer_ops

  ! What a layer callback looks like. Arrays arrive as C pointers because their extents depend on the layer:
  ! c_f_pointer(x, x_array, [in_features, batch]) views them as Fortran arrays. Return 0 on success.
  abstract interface
    integer(c_int) function sluice_forward_callback(user_data, params, x, y, batch) bind(C)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: user_data, params, x, y
      integer(c_int64_t), value :: batch
    end function sluice_forward_callback

    integer(c_int) function sluice_backward_input_callback(user_data, params, x, dy, dx, batch) bind(C)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: user_data, params, x, dy, dx
      integer(c_int64_t), value :: batch
    end function sluice_backward_input_callback

    ! grads must be ACCUMULATED into (grads = grads + ...).
    integer(c_int) function sluice_backward_weight_callback(user_data, params, x, dy, grads, batch) bind(C)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: user_data, params, x, dy, grads
      integer(c_int64_t), value :: batch
    end function sluice_backward_weight_callback

    integer(c_int) function sluice_backward_callback(user_data, params, x, dy, dx, grads, batch) bind(C)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: user_data, params, x, dy, dx, grads
      integer(c_int64_t), value :: batch
    end function sluice_backward_callback
  end interface
  public :: sluice_forward_callback, sluice_backward_input_callback, sluice_backward_weight_callback, &
            sluice_backward_callback

  ! The C entry points, one interface each. Private: the wrappers below are the Fortran API.
  interface
    function c_status_string(status) bind(C, name="sluice_status_string") result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: text
    end function c_status_string

    function c_last_error() bind(C, name="sluice_last_error") result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function c_last_error

    function c_version() bind(C, name="sluice_version") result(version)
      import :: c_int
      integer(c_int) :: version
    end function c_version

    ! Only the MPI_Fint flavour: a C MPI_Comm is not a Fortran type.
    function c_trainer_create_f(comm, config, out) bind(C, name="sluice_trainer_create_f") result(status)
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), dimension(*), intent(in) :: config
      type(c_ptr), intent(out) :: out
      integer(c_int) :: status
    end function c_trainer_create_f

    function c_trainer_register_layer(t, name, ops, user_data) bind(C, name="sluice_trainer_register_layer") &
        result(status)
      import :: c_int, c_char, c_ptr, sluice_layer_ops
      type(c_ptr), value :: t
      character(kind=c_char), dimension(*), intent(in) :: name
      type(sluice_layer_ops), intent(in) :: ops
      type(c_ptr), value :: user_data
      integer(c_int) :: status
    end function c_trainer_register_layer

    function c_trainer_start(t) bind(C, name="sluice_trainer_start") result(status)
      import :: c_int, c_ptr
      type(c_ptr), value :: t
      integer(c_int) :: status
    end function c_trainer_start

    function c_train_step(t, inputs, targets, batch, loss) bind(C, name="sluice_train_step") result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: t, inputs, targets, loss
      integer(c_int64_t), value :: batch
      integer(c_int) :: status
    end function c_train_step

    function c_predict(t, inputs, outputs, batch) bind(C, name="sluice_predict") result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: t, inputs, outputs
      integer(c_int64_t), value :: batch
      integer(c_int) :: status
    end function c_predict

    function c_join_with_error(t, function_name, status_in, message) bind(C, name="sluice_join_with_error") &
        result(status)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: t
      character(kind=c_char), dimension(*), intent(in) :: function_name, message
      integer(c_int), value :: status_in
      integer(c_int) :: status
    end function c_join_with_error

    function c_save_checkpoint(t, path) bind(C, name="sluice_save_checkpoint") result(status)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: t
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_int) :: status
    end function c_save_checkpoint

    function c_load_checkpoint(t, path) bind(C, name="sluice_load_checkpoint") result(status)
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: t
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_int) :: status
    end function c_load_checkpoint

    function c_trainer_stats(t, out) bind(C, name="sluice_trainer_stats") result(status)
      import :: c_int, c_ptr, sluice_stats
      type(c_ptr), value :: t
      type(sluice_stats), intent(out) :: out
      integer(c_int) :: status
    end function c_trainer_stats

    function c_trainer_features(t, input_features, output_features) bind(C, name="sluice_trainer_features") &
        result(status)
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: t
      integer(c_int64_t), intent(out) :: input_features, output_features
      integer(c_int) :: status
    end function c_trainer_features

    subroutine c_trainer_destroy(t) bind(C, name="sluice_trainer_destroy")
      import :: c_ptr
      type(c_ptr), value :: t
    end subroutine c_trainer_destroy

    function c_strlen(text) bind(C, name="strlen") result(length)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: text
      integer(c_int64_t) :: length
    end function c_strlen
  end interface

  ! sluice_trainer_create(comm, config, trainer): comm is type(MPI_Comm) or an integer handle.
  interface sluice_trainer_create
    module procedure trainer_create_f08, trainer_create_fint
  end interface sluice_trainer_create

  public :: sluice_trainer_create, sluice_trainer_register_layer, sluice_trainer_start, sluice_train_step, &
            sluice_predict, sluice_save_checkpoint, sluice_load_checkpoint, sluice_trainer_stats, &
            sluice_trainer_features, sluice_trainer_destroy, sluice_last_error, sluice_status_string, &
            sluice_version

  ! A problem the Fortran wrappers found themselves (e.g. an array extent); reported by sluice_last_error()
  ! until the next wrapper call, exactly like the library's own message. Unlike the library's message it is
  ! shared by all threads: call the wrappers of one trainer from one thread (the C API asks that anyway).
  character(len=:), allocatable :: wrapper_error

contains

  ! --- strings -------------------------------------------------------------------------------------------

  ! A C string borrowed from the library, copied into a Fortran string.
  function from_c_string(text) result(copy)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable :: copy
    character(kind=c_char), pointer :: chars(:)
    integer :: i, length
    if (.not. c_associated(text)) then
      copy = ''
      return
    end if
    length = int(c_strlen(text))
    call c_f_pointer(text, chars, [length])
    allocate (character(len=length) :: copy)
    do i = 1, length
      copy(i:i) = chars(i)
    end do
  end function from_c_string

  ! Trailing blanks are dropped: fixed-length Fortran strings are blank-padded, and a padded path would
  ! name a different file.
  pure function to_c_string(text) result(c_text)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len_trim(text) + 1) :: c_text
    c_text = trim(text) // c_null_char
  end function to_c_string

  ! A status for a problem found here; the message names the wrapper like the library's messages do.
  function wrapper_failure(status, message) result(same_status)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: message
    integer(c_int) :: same_status
    wrapper_error = message
    same_status = status
  end function wrapper_failure

  function itoa(value) result(text)
    integer(c_int64_t), intent(in) :: value
    character(len=:), allocatable :: text
    character(len=24) :: buffer
    write (buffer, '(i0)') value
    text = trim(buffer)
  end function itoa

  ! Detail of the last failure on this thread ('' if none).
  function sluice_last_error() result(message)
    character(len=:), allocatable :: message
    if (allocated(wrapper_error)) then
      if (len(wrapper_error) > 0) then
        message = wrapper_error
        return
      end if
    end if
    message = from_c_string(c_last_error())
  end function sluice_last_error

  ! Name and short meaning of a status ("SLUICE_ERROR_CONFIG: ...").
  function sluice_status_string(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c_string(c_status_string(status))
  end function sluice_status_string

  ! SLUICE_VERSION of the linked library.
  integer(c_int) function sluice_version()
    sluice_version = c_version()
  end function sluice_version

  ! --- lifecycle -----------------------------------------------------------------------------------------

  ! Collective over comm. config: YAML text or the path of a YAML file.
  integer(c_int) function trainer_create_f08(comm, config, trainer) result(status)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: config
    type(sluice_trainer), intent(out) :: trainer
    status = trainer_create_fint(comm%MPI_VAL, config, trainer)
  end function trainer_create_f08

  integer(c_int) function trainer_create_fint(comm, config, trainer) result(status)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: config
    type(sluice_trainer), intent(out) :: trainer
    wrapper_error = ''
    status = c_trainer_create_f(int(comm, c_int), to_c_string(config), trainer%handle)
  end function trainer_create_fint

  ! Local, before sluice_trainer_start. user_data (optional) is passed back to every callback and must
  ! outlive the trainer.
  integer(c_int) function sluice_trainer_register_layer(trainer, name, ops, user_data) result(status)
    type(sluice_trainer), intent(in) :: trainer
    character(len=*), intent(in) :: name
    type(sluice_layer_ops), intent(in) :: ops
    type(c_ptr), intent(in), optional :: user_data
    type(c_ptr) :: data
    wrapper_error = ''
    data = c_null_ptr
    if (present(user_data)) data = user_data
    status = c_trainer_register_layer(trainer%handle, to_c_string(name), ops, data)
  end function sluice_trainer_register_layer

  ! Collective.
  integer(c_int) function sluice_trainer_start(trainer) result(status)
    type(sluice_trainer), intent(in) :: trainer
    wrapper_error = ''
    status = c_trainer_start(trainer%handle)
  end function sluice_trainer_start

  ! Releases the trainer (local) and clears the handle, so a second destroy or a later call is caught.
  subroutine sluice_trainer_destroy(trainer)
    type(sluice_trainer), intent(inout) :: trainer
    wrapper_error = ''
    call c_trainer_destroy(trainer%handle)
    trainer%handle = c_null_ptr
  end subroutine sluice_trainer_destroy

  ! --- training ------------------------------------------------------------------------------------------

  ! Checks an array's leading extent against the model's feature count (the C API cannot see extents).
  function check_rows(what, rows, features) result(status)
    character(len=*), intent(in) :: what
    integer(c_int64_t), intent(in) :: rows, features
    integer(c_int) :: status
    status = SLUICE_OK
    if (rows /= features) then
      status = wrapper_failure(SLUICE_ERROR_INVALID_ARGUMENT, what // ' has ' // itoa(rows) // &
          ' rows (first extent) but the model has ' // itoa(features) // ' features there')
    end if
  end function check_rows

  ! Checks that every array given has the same batch (second extent); returns it in batch.
  function common_batch(where, first_name, first_batch, second_name, second_batch, batch) result(status)
    character(len=*), intent(in) :: where, first_name, second_name
    integer(c_int64_t), intent(in) :: first_batch, second_batch
    integer(c_int64_t), intent(inout) :: batch
    integer(c_int) :: status
    status = SLUICE_OK
    if (first_batch >= 0) batch = first_batch
    if (second_batch >= 0) then
      if (first_batch >= 0 .and. first_batch /= second_batch) then
        status = wrapper_failure(SLUICE_ERROR_INVALID_ARGUMENT, where // ': ' // first_name // ' has ' // &
            itoa(first_batch) // ' columns (batch) but ' // second_name // ' has ' // itoa(second_batch))
        return  ! local only: the caller still joins the collective
      end if
      batch = second_batch
    end if
  end function common_batch

  ! Collective. One optimizer step. inputs(input_features, batch) is needed on the first stage's ranks and
  ! targets(output_features, batch) on the last stage's; other ranks may omit them, but a rank that passes
  ! neither must give batch. loss receives the global mean loss on every rank.
  integer(c_int) function sluice_train_step(trainer, inputs, targets, loss, batch) result(status)
    type(sluice_trainer), intent(in) :: trainer
    real(c_float), intent(in), contiguous, target, optional :: inputs(:, :)
    real(c_float), intent(in), contiguous, target, optional :: targets(:, :)
    real(c_float), intent(out), target, optional :: loss
    integer(c_int64_t), intent(in), optional :: batch
    type(c_ptr) :: inputs_ptr, targets_ptr, loss_ptr
    integer(c_int64_t) :: rows, input_features, output_features, inputs_batch, targets_batch
    wrapper_error = ''
    inputs_ptr = c_null_ptr
    targets_ptr = c_null_ptr
    loss_ptr = c_null_ptr
    inputs_batch = -1
    targets_batch = -1
    rows = 0
    if (present(batch)) rows = batch
    ! Without a valid handle there is nothing to check against: let the library name that problem.
    if (c_trainer_features(trainer%handle, input_features, output_features) /= SLUICE_OK) then
      status = c_train_step(trainer%handle, inputs_ptr, targets_ptr, rows, loss_ptr)
      return
    end if
    ! The checks run in order and stop at the first problem, but never return before the collective call below.
    status = SLUICE_OK
    if (present(inputs)) then
      status = check_rows('sluice_train_step: inputs', size(inputs, 1, c_int64_t), input_features)
      inputs_batch = size(inputs, 2, c_int64_t)
      if (inputs_batch > 0) inputs_ptr = c_loc(inputs)
    end if
    if (present(targets) .and. status == SLUICE_OK) then
      status = check_rows('sluice_train_step: targets', size(targets, 1, c_int64_t), output_features)
      targets_batch = size(targets, 2, c_int64_t)
      if (targets_batch > 0) targets_ptr = c_loc(targets)
    end if
    if (status == SLUICE_OK) then
      status = common_batch('sluice_train_step', 'inputs', inputs_batch, 'targets', targets_batch, rows)
    end if
    if (status == SLUICE_OK .and. present(batch)) then
      if (batch /= rows) then
        status = wrapper_failure(SLUICE_ERROR_INVALID_ARGUMENT, 'sluice_train_step: batch = ' // itoa(batch) // &
            ' but the arrays have ' // itoa(rows) // ' columns')
      end if
    end if
    if (status /= SLUICE_OK) then
      ! The other ranks are already in (or on their way to) the collective step: join its argument agreement
      ! with this rank's problem, so that every rank fails with it.
      call join_with_error(trainer, 'sluice_train_step', status)
      return
    end if
    if (present(loss)) loss_ptr = c_loc(loss)
    status = c_train_step(trainer%handle, inputs_ptr, targets_ptr, rows, loss_ptr)
  end function sluice_train_step

  ! Collective. Forward pass only: outputs(output_features, batch) is filled on every rank; inputs
  ! (input_features, batch) is needed on the first stage's ranks.
  integer(c_int) function sluice_predict(trainer, outputs, inputs) result(status)
    type(sluice_trainer), intent(in) :: trainer
    real(c_float), intent(inout), contiguous, target :: outputs(:, :)
    real(c_float), intent(in), contiguous, target, optional :: inputs(:, :)
    type(c_ptr) :: inputs_ptr, outputs_ptr
    integer(c_int64_t) :: rows, input_features, output_features, inputs_batch
    wrapper_error = ''
    inputs_ptr = c_null_ptr
    outputs_ptr = c_null_ptr
    inputs_batch = -1
    rows = 0
    if (c_trainer_features(trainer%handle, input_features, output_features) /= SLUICE_OK) then
      status = c_predict(trainer%handle, inputs_ptr, c_loc(outputs), size(outputs, 2, c_int64_t))
      return
    end if
    ! As in sluice_train_step: a problem found here still takes part in the collective call before returning.
    status = check_rows('sluice_predict: outputs', size(outputs, 1, c_int64_t), output_features)
    if (present(inputs) .and. status == SLUICE_OK) then
      status = check_rows('sluice_predict: inputs', size(inputs, 1, c_int64_t), input_features)
      inputs_batch = size(inputs, 2, c_int64_t)
      if (inputs_batch > 0) inputs_ptr = c_loc(inputs)
    end if
    if (status == SLUICE_OK) then
      status = common_batch('sluice_predict', 'inputs', inputs_batch, 'outputs', size(outputs, 2, c_int64_t), rows)
    end if
    if (status /= SLUICE_OK) then
      call join_with_error(trainer, 'sluice_predict', status)
      return
    end if
    if (rows > 0) outputs_ptr = c_loc(outputs)
    status = c_predict(trainer%handle, inputs_ptr, outputs_ptr, rows)
  end function sluice_predict

  ! A rank whose arguments the wrapper rejected still takes part in the collective call, through
  ! sluice_join_with_error: the library's failure agreement tells every rank this rank's problem (its status
  ! and wrapper_error), so the other ranks fail with it instead of waiting. The library's status is dropped:
  ! wrapper_error names this rank's problem and takes precedence in sluice_last_error().
  subroutine join_with_error(trainer, function_name, status)
    type(sluice_trainer), intent(in) :: trainer
    character(len=*), intent(in) :: function_name
    integer(c_int), intent(in) :: status
    integer(c_int) :: ignored
    ignored = c_join_with_error(trainer%handle, to_c_string(function_name), status, to_c_string(wrapper_error))
  end subroutine join_with_error

  ! --- checkpoints and statistics ------------------------------------------------------------------------

  ! Collective. One HDF5 file for the whole pipeline, written atomically.
  integer(c_int) function sluice_save_checkpoint(trainer, path) result(status)
    type(sluice_trainer), intent(in) :: trainer
    character(len=*), intent(in) :: path
    wrapper_error = ''
    status = c_save_checkpoint(trainer%handle, to_c_string(path))
  end function sluice_save_checkpoint

  ! Collective. Accepts a checkpoint written with any pipeline layout of the same model.
  integer(c_int) function sluice_load_checkpoint(trainer, path) result(status)
    type(sluice_trainer), intent(in) :: trainer
    character(len=*), intent(in) :: path
    wrapper_error = ''
    status = c_load_checkpoint(trainer%handle, to_c_string(path))
  end function sluice_load_checkpoint

  ! Local. This rank's statistics of the last step.
  integer(c_int) function sluice_trainer_stats(trainer, stats) result(status)
    type(sluice_trainer), intent(in) :: trainer
    type(sluice_stats), intent(out) :: stats
    wrapper_error = ''
    status = c_trainer_stats(trainer%handle, stats)
  end function sluice_trainer_stats

  ! Local. Rows of the model's inputs and outputs (the first extents of the arrays it takes).
  integer(c_int) function sluice_trainer_features(trainer, input_features, output_features) result(status)
    type(sluice_trainer), intent(in) :: trainer
    integer(c_int64_t), intent(out) :: input_features, output_features
    wrapper_error = ''
    status = c_trainer_features(trainer%handle, input_features, output_features)
  end function sluice_trainer_features

end module sluice
