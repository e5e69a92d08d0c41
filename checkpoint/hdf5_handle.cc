#include "checkpoint/hdf5_handle.h"

#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/common/hdf5_lock.h"

namespace sluice::checkpoint {

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

bool Hdf5Handle::close() {
  if (id_ < 0 || closer_ == nullptr) return true;
  const Hdf5Lock lock;  // handles may be closed from a destructor, outside the locked reader or writer call
  const herr_t status = closer_(id_);
  id_ = -1;
  return status >= 0;
}

void silence_hdf5_error_printing() {
  const Hdf5Lock lock;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

namespace {

herr_t keep_innermost(unsigned depth, const H5E_error2_t* error, void* text) {
  // Walking H5E_WALK_UPWARD visits the innermost (most specific) error first.
  if (depth == 0 && error->desc != nullptr) *static_cast<std::string*>(text) = error->desc;
  return 0;
}

}  // namespace

std::string take_hdf5_error_text() {
  const Hdf5Lock lock;
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &text);
  H5Eclear2(H5E_DEFAULT);
  // HDF5's text can quote the file name whole (a path of megabytes).
  return text.empty() ? "HDF5 gave no reason" : shorten_for_message(text, 200);
}

std::string checkpoint_message(const std::string& file, const std::string& object, const std::string& problem) {
  return "checkpoint '" + shorten_for_message(file) + "', " + object + ": " + problem;
}

hid_t check_hdf5(hid_t id, const std::string& file, const std::string& object, const std::string& action) {
  if (id < 0) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, action + " failed: " + take_hdf5_error_text()));
  }
  return id;
}

herr_t check_hdf5(herr_t status, const std::string& file, const std::string& object, const std::string& action) {
  if (status < 0) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, action + " failed: " + take_hdf5_error_text()));
  }
  return status;
}

}  // namespace sluice::checkpoint
