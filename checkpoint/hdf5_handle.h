// RAII ownership of HDF5 identifiers plus the error plumbing every HDF5 call site needs: HDF5 reports failure as a
// negative return and keeps the reason on its own error stack, which we turn into a sluice::Error message.
#pragma once

#include <hdf5.h>

#include <string>

namespace sluice::checkpoint {

// Owns one hid_t and closes it with the matching H5?close when it goes out of scope.
class Hdf5Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hdf5Handle() { reset(); }
  Hdf5Handle(Hdf5Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;

  hid_t get() const { return id_; }
  // Closes now and reports whether HDF5 accepted the close (a failed file close means unflushed data).
  bool close();
  void reset() { close(); }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Turns off HDF5's habit of printing its error stack to stderr; we report errors through sluice::Error instead.
void silence_hdf5_error_printing();

// The most specific message on HDF5's error stack (e.g. "truncated file: eof = 100, ..."), then clears the stack.
std::string take_hdf5_error_text();

// Builds the one message format every checkpoint error uses: "checkpoint 'FILE', OBJECT: PROBLEM".
std::string checkpoint_message(const std::string& file, const std::string& object, const std::string& problem);

// Throws Error(kCheckpoint) naming file and object, with HDF5's own reason appended, when id/status is negative.
hid_t check_hdf5(hid_t id, const std::string& file, const std::string& object, const std::string& action);
herr_t check_hdf5(herr_t status, const std::string& file, const std::string& object, const std::string& action);

}  // namespace sluice::checkpoint
