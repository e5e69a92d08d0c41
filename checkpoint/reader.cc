#include "checkpoint/reader.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "checkpoint/byte_exchange.h"
#include "checkpoint/checksum.h"
#include "checkpoint/dataset_chunks.h"
#include "core/comm/agreement.h"
#include "checkpoint/directory.h"
#include "checkpoint/file_structure.h"
#include "checkpoint/format.h"
#include "checkpoint/hdf5_attributes.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/value_ranges.h"
#include "core/common/checked_math.h"
#include "core/common/error.h"
#include "core/common/hdf5_lock.h"

namespace sluice::checkpoint {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

bool is_float_group(const std::string& top) {
  return "/" + top == kModelGroup || "/" + top == kOptimizerGroup || "/" + top == kAccumulationGroup ||
         "/" + top == kSamplesGroup || "/" + top == kNormalizationGroup;
}

void require_type(hid_t dataset, H5T_class_t expected_class, size_t expected_size, const char* expected_name,
                  const std::string& file, const std::string& object) {
  Hdf5Handle type(check_hdf5(H5Dget_type(dataset), file, object, "reading type"), H5Tclose);
  if (H5Tget_class(type.get()) != expected_class || H5Tget_size(type.get()) != expected_size) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, std::string("is not ") + expected_name));
  }
}

// `header` is what the crc32 covers before the bytes: the dataset's manifest line in a version-2 file (the checksum
// is bound to path, type and shape), nothing in a version-1 file.
// `computed` is the crc32 of the header followed by every byte of the dataset.
void require_crc(hid_t dataset, bool has_header, uint32_t computed, const std::string& file,
                 const std::string& object) {
  const uint32_t stored = read_uint32_attribute(dataset, kChecksumAttribute, file, object);
  if (stored != computed) {
    char detail[192];
    std::snprintf(detail, sizeof(detail), "checksum mismatch (stored crc32 %08x, data has %08x): %s", stored, computed,
                  has_header ? "the data is corrupted or does not belong to this path, type and shape"
                             : "file is corrupted");
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file, object, detail));
  }
}

void require_checksum(hid_t dataset, const std::string& header, const void* bytes, size_t size,
                      const std::string& file, const std::string& object) {
  require_crc(dataset, !header.empty(), crc32_continue(crc32_of(header.data(), header.size()), bytes, size), file,
              object);
}

// Reads dataset `path` (stored with `stored_dims`) whole into `destination`, which has room for `count` values of
// `value_bytes` each, as `native` type: the count must match, `check_type` may refuse the opened dataset, and the
// data must match its stored checksum. Every refusal is kCheckpoint naming file and dataset.
void read_checked(hid_t file_handle, const std::string& file, const std::string& path, const std::string& header,
                  const std::vector<int64_t>& stored_dims, hid_t native, size_t value_bytes, void* destination,
                  size_t count, const std::function<void(hid_t)>& check_type) {
  const Hdf5Lock lock;  // every dataset read of the Reader comes through here
  const std::string object = "dataset " + path;
  int64_t stored_count = 1;
  // The dims come from the file: a crafted one must not wrap into a small count (and a buffer overrun).
  for (int64_t dim : stored_dims) {
    stored_count = checked_mul(stored_count, dim, "checkpoint dataset element count", ErrorCode::kCheckpoint);
  }
  if (static_cast<int64_t>(count) != stored_count) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file, object, "holds " + std::to_string(stored_count) +
                                                     " values but the destination has room for " +
                                                     std::to_string(count)));
  }
  Hdf5Handle dataset(check_hdf5(H5Dopen2(file_handle, path.c_str(), H5P_DEFAULT), file, object, "opening"),
                     H5Dclose);
  check_type(dataset.get());
  if (count > 0) {
    check_hdf5(H5Dread(dataset.get(), native, H5S_ALL, H5S_ALL, H5P_DEFAULT, destination), file, object,
               "reading data");
  }
  require_checksum(dataset.get(), header, destination, count * value_bytes, file, object);
}

hid_t native_type(DataType type) {
  switch (type) {
    case DataType::kFloat64: return H5T_NATIVE_DOUBLE;
    case DataType::kInt32: return H5T_NATIVE_INT32;
    case DataType::kInt64: return H5T_NATIVE_INT64;
    case DataType::kFloat32: break;
  }
  return H5T_NATIVE_FLOAT;
}

}  // namespace

std::string resolve_checkpoint_path(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 alone picks the file so that a save finishing meanwhile cannot make ranks open different checkpoints.
  std::string resolved;
  comm::agree_or_throw(comm, "finding the checkpoint to read", comm::capture_failure([&] {
                         if (rank == 0) resolved = resolve_checkpoint_path(path);
                       }));
  std::string file;
  comm::agree_or_throw(comm, "sharing the checkpoint path", comm::capture_failure([&] {
                         file = broadcast_bytes(comm, resolved, 0);
                       }));
  return file;
}

Reader::Reader(MPI_Comm comm, const std::string& path) : file_(resolve_checkpoint_path(comm, path)) {
  comm::agree_or_throw(comm, "opening the checkpoint", comm::capture_failure([&] { open_and_index(); }));
}

Reader::Reader(const std::string& path) : file_(resolve_checkpoint_path(path)) { open_and_index(); }

void Reader::open_and_index() {
  const Hdf5Lock lock;  // HDF5 is not thread-safe (core/common/hdf5_lock.h)
  silence_hdf5_error_printing();
  // Before any open: opening a FIFO for reading would block until someone writes to it.
  const std::string kind = non_regular_kind(file_);
  if (!kind.empty()) throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "file", "is " + kind + ", not a checkpoint file"));
  handle_ = Hdf5Handle(check_hdf5(H5Fopen(file_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), file_, "file",
                                  "opening (missing, truncated or not HDF5?)"),
                       H5Fclose);
  if (!has_attribute(handle_.get(), kFormatVersionAttribute)) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file_, "root attribute format_version", "missing: not a Sluice checkpoint"));
  }
  format_version_ = read_int64_attribute(handle_.get(), kFormatVersionAttribute, file_, "root");
  if (format_version_ < kOldestReadableFormatVersion || format_version_ > kFormatVersion) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file_, "root attribute format_version",
                                   "unsupported version " + std::to_string(format_version_) +
                                       " (this build reads versions " + std::to_string(kOldestReadableFormatVersion) +
                                       " to " + std::to_string(kFormatVersion) + ")"));
  }
  attributes_ = read_string_attributes(handle_.get(), file_, "root");
  for (const char* group : {kModelGroup, kOptimizerGroup, kAccumulationGroup, kTrainGroup}) {
    if (H5Lexists(handle_.get(), group, H5P_DEFAULT) <= 0) {
      throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, std::string("group ") + group, "missing"));
    }
  }
  const FileObjects objects = list_objects(handle_.get(), file_);
  if (format_version_ >= kFirstManifestFormatVersion) {
    const Manifest manifest = read_manifest(handle_.get(), file_);
    verify_structure(handle_.get(), file_, objects, manifest.datasets);
    verify_attributes(handle_.get(), file_, objects, manifest);
    manifest_ = manifest.datasets;
  } else if (H5Lexists(handle_.get(), kManifestDataset, H5P_DEFAULT) > 0) {
    // Only version 2 writes /manifest: a version-2 file whose format_version was changed to 1 would otherwise be
    // read with the version-1 rules, which check no attribute.
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file_, "root attribute format_version",
                                   "says version " + std::to_string(format_version_) + " but the file holds " +
                                       kManifestDataset + " (written by version 2 and later): it is corrupted"));
  }
  index_datasets(objects.datasets);
}

std::string Reader::checksum_header(const std::string& path) const {
  if (!manifest_) return "";  // version 1: the crc32 covers the bytes alone
  return manifest_line(manifest_->at(path));
}

void Reader::index_datasets(const std::vector<std::string>& datasets) {
  for (const std::string& path : datasets) {
    const std::string object = "dataset " + path;
    const std::string top = "/" + path.substr(1, path.find('/', 1) - 1);
    if (top == kManifestDataset) continue;
    // Version 2: every dataset is listed (verify_structure), so any group a later format adds is indexed as state
    // without a change here. Version 1: only the groups that version had.
    if (!manifest_ && !is_float_group(top.substr(1)) && top != kTrainGroup && top != kApplicationGroup) continue;
    Hdf5Handle dataset(check_hdf5(H5Dopen2(handle_.get(), path.c_str(), H5P_DEFAULT), file_, object, "opening"),
                       H5Dclose);
    if (top == kTrainGroup) {
      index_train_value(dataset.get(), path);
    } else if (top == kApplicationGroup) {
      const std::optional<DataType> type = stored_data_type(dataset.get(), file_, object);
      if (!type) {
        throw Error(ErrorCode::kCheckpoint,
                    checkpoint_message(file_, object, "is not float32, float64, int32 or int64"));
      }
      application_types_[path] = *type;
      application_dims_[path] = dataset_dims(dataset.get(), file_, object);
    } else {
      dims_[path] = dataset_dims(dataset.get(), file_, object);
    }
  }
}

// A /train value: a checksum-verified int64 scalar inside its allowed range (value_ranges.h).
void Reader::index_train_value(hid_t dataset, const std::string& path) {
  const std::string object = "dataset " + path;
  require_type(dataset, H5T_INTEGER, sizeof(int64_t), "a 64-bit integer", file_, object);
  const std::vector<int64_t> dims = dataset_dims(dataset, file_, object);
  if (!dims.empty() && !(dims.size() == 1 && dims[0] == 1)) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, object, "is not a single value"));
  }
  int64_t value = 0;
  check_hdf5(H5Dread(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), file_, object, "reading");
  require_checksum(dataset, checksum_header(path), &value, sizeof(value), file_, object);
  const std::string name = path.substr(std::string(kTrainGroup).size() + 1);
  if (const std::optional<ValueRange> range = train_value_range(name)) {
    require_in_range(value, *range, file_, object);
  }
  train_ints_[name] = value;
}

std::vector<std::string> Reader::application_paths() const {
  std::vector<std::string> result;
  for (const auto& [path, type] : application_types_) result.push_back(path);
  return result;
}

DataType Reader::application_type(const std::string& path) const {
  const auto found = application_types_.find(path);
  if (found == application_types_.end()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "dataset " + path, "missing"));
  }
  return found->second;
}

const std::vector<int64_t>& Reader::application_dims(const std::string& path) const {
  application_type(path);
  return application_dims_.at(path);
}

void Reader::read_application(const std::string& path, DataType type, void* destination, size_t count) const {
  const std::string object = "dataset " + path;
  const DataType stored = application_type(path);
  if (stored != type) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, object, std::string("is ") + data_type_name(stored) +
                                                                              ", expected " + data_type_name(type)));
  }
  // The stored type was checked above, from the index.
  read_checked(handle_.get(), file_, path, checksum_header(path), application_dims(path), native_type(type),
               data_type_size(type), destination, count, [](hid_t) {});
}

int64_t Reader::train_int(const std::string& name) const {
  const auto found = train_ints_.find(name);
  if (found == train_ints_.end()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "dataset " + train_path(name), "missing"));
  }
  return found->second;
}

std::vector<std::string> Reader::paths() const {
  std::vector<std::string> result;
  for (const auto& [path, dims] : dims_) result.push_back(path);
  return result;
}

const std::vector<int64_t>& Reader::dims(const std::string& path) const {
  const auto found = dims_.find(path);
  if (found == dims_.end()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "dataset " + path, "missing"));
  }
  return found->second;
}

std::vector<int> Reader::layer_indices() const {
  std::set<int> layers;
  for (const auto& [path, dims] : dims_) {
    if (path.compare(0, std::string(kModelGroup).size() + 1, std::string(kModelGroup) + "/") != 0) continue;
    if (auto layer = layer_index_of(path)) layers.insert(*layer);
  }
  return std::vector<int>(layers.begin(), layers.end());
}

std::vector<std::string> Reader::paths_of_layer(int layer) const {
  std::vector<std::string> result;
  for (const auto& [path, dims] : dims_) {
    if (layer_index_of(path) == layer) result.push_back(path);
  }
  return result;
}

namespace {

// The dims come from the file: a damaged or crafted header must not make the reader allocate (and zero) more
// memory than the file could hold, which ends in an OOM kill rather than an error. Sluice writes every dataset
// uncompressed, so a dataset's data is never larger than its file (found by //tests/fuzz:checkpoint_inspect_fuzzer).
void require_fits_in_file(const std::string& file, const std::string& object, int64_t count, size_t element_size) {
  const int64_t bytes =
      checked_mul(count, static_cast<int64_t>(element_size), "checkpoint dataset byte count", ErrorCode::kCheckpoint);
  std::error_code error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(file, error);
  if (!error && static_cast<std::uintmax_t>(bytes) > file_bytes) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file, object,
                                   "its dims claim " + std::to_string(bytes) + " bytes, more than the file's " +
                                       std::to_string(file_bytes) + " (damaged or not written by Sluice)"));
  }
}

}  // namespace

Entry Reader::read(const std::string& path) const {
  Entry entry{path, dims(path), {}};
  int64_t count = 1;
  for (int64_t dim : entry.dims) count = checked_mul(count, dim, "checkpoint dataset element count", ErrorCode::kCheckpoint);
  require_fits_in_file(file_, "dataset " + path, count, sizeof(float));
  entry.data.resize(static_cast<size_t>(count));
  read_into(path, entry.data.data(), entry.data.size());
  return entry;
}

void Reader::read_into(const std::string& path, float* destination, size_t count) const {
  auto float32_only = [&](hid_t dataset) {
    require_type(dataset, H5T_FLOAT, sizeof(float), "float32", file_, "dataset " + path);
  };
  read_checked(handle_.get(), file_, path, checksum_header(path), dims(path), H5T_NATIVE_FLOAT, sizeof(float),
               destination, count, float32_only);
}

namespace {

Hdf5Handle simple_dataspace(const std::vector<hsize_t>& dims, const std::string& file, const std::string& object) {
  return Hdf5Handle(check_hdf5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), file, object,
                               "making a dataspace"),
                    H5Sclose);
}

// Reads the hyperslab [start, start + count) of `dataset` (stored with `dims`) into `destination`, row-major.
void read_hyperslab(hid_t dataset, const std::vector<int64_t>& dims, const std::vector<hsize_t>& start,
                    const std::vector<hsize_t>& count, float* destination, const std::string& file,
                    const std::string& object) {
  Hdf5Handle in_file = simple_dataspace(std::vector<hsize_t>(dims.begin(), dims.end()), file, object);
  check_hdf5(H5Sselect_hyperslab(in_file.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file,
             object, "selecting a hyperslab");
  Hdf5Handle in_memory = simple_dataspace(count, file, object);
  check_hdf5(H5Dread(dataset, H5T_NATIVE_FLOAT, in_memory.get(), in_file.get(), H5P_DEFAULT, destination), file,
             object, "reading data");
}

}  // namespace

void Reader::verify(const std::string& path, size_t slab_bytes) const {
  const Hdf5Lock lock;
  const std::string object = "dataset " + path;
  const std::vector<int64_t>& stored = dims(path);
  int64_t count = 1;
  for (int64_t dim : stored) count = checked_mul(count, dim, "checkpoint dataset element count", ErrorCode::kCheckpoint);
  // A crafted header must not make the walk read (fill values) far past what the file holds.
  require_fits_in_file(file_, object, count, sizeof(float));
  Hdf5Handle dataset(check_hdf5(H5Dopen2(handle_.get(), path.c_str(), H5P_DEFAULT), file_, object, "opening"),
                     H5Dclose);
  require_type(dataset.get(), H5T_FLOAT, sizeof(float), "float32", file_, object);
  const std::string header = checksum_header(path);
  uint32_t crc = crc32_of(header.data(), header.size());
  // The slabs are contiguous runs of the row-major values in order, so the crc32 carried over them is the whole
  // dataset's.
  const ChunkPlan plan(stored, sizeof(float), std::max(slab_bytes, sizeof(float)));
  std::vector<float> slab;
  for (const DatasetChunk& chunk : plan.chunks()) {
    slab.resize(static_cast<size_t>(chunk.elements));
    if (stored.empty()) {
      check_hdf5(H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, slab.data()), file_, object,
                 "reading data");
    } else {
      const Hyperslab box = plan.hyperslab(chunk);
      read_hyperslab(dataset.get(), stored, std::vector<hsize_t>(box.start.begin(), box.start.end()),
                     std::vector<hsize_t>(box.count.begin(), box.count.end()), slab.data(), file_, object);
    }
    crc = crc32_continue(crc, slab.data(), slab.size() * sizeof(float));
  }
  require_crc(dataset.get(), !header.empty(), crc, file_, object);
}

void Reader::read_box_into(const std::string& path, const std::vector<int64_t>& offset,
                           const std::vector<int64_t>& extent, float* destination, size_t count) const {
  const Hdf5Lock lock;
  const std::string object = "dataset " + path;
  const std::vector<int64_t>& stored = dims(path);
  if (offset.size() != stored.size() || extent.size() != stored.size()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, object, "has " + std::to_string(stored.size()) +
                                                                              " dimensions " + dims_text(stored) +
                                                                              ", the box to read " +
                                                                              std::to_string(extent.size())));
  }
  int64_t values = 1;
  for (size_t d = 0; d < stored.size(); ++d) {
    if (offset[d] < 0 || extent[d] < 0 || offset[d] > stored[d] - extent[d]) {
      throw Error(ErrorCode::kCheckpoint,
                  checkpoint_message(file_, object, "the box offset " + dims_text(offset) + " extent " +
                                                        dims_text(extent) + " leaves its shape " + dims_text(stored)));
    }
    values = checked_mul(values, extent[d], "checkpoint box element count", ErrorCode::kCheckpoint);
  }
  if (static_cast<int64_t>(count) != values) {
    throw Error(ErrorCode::kCheckpoint,
                checkpoint_message(file_, object, "the box holds " + std::to_string(values) +
                                                      " values but the destination has room for " +
                                                      std::to_string(count)));
  }
  Hdf5Handle dataset(check_hdf5(H5Dopen2(handle_.get(), path.c_str(), H5P_DEFAULT), file_, object, "opening"),
                     H5Dclose);
  require_type(dataset.get(), H5T_FLOAT, sizeof(float), "float32", file_, object);
  if (values == 0) return;
  read_hyperslab(dataset.get(), stored, std::vector<hsize_t>(offset.begin(), offset.end()),
                 std::vector<hsize_t>(extent.begin(), extent.end()), destination, file_, object);
}

Entry Reader::read(const std::string& path, const std::vector<int64_t>& expected_dims) const {
  if (dims(path) != expected_dims) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "dataset " + path,
                                                           "shape mismatch: file has " + dims_text(dims(path)) +
                                                               ", expected " + dims_text(expected_dims)));
  }
  return read(path);
}

namespace {

// Reads one application array into scratch memory: verify_all's check of its checksum.
void verify_application(const Reader& reader, const std::string& path) {
  int64_t count = 1;
  for (int64_t dim : reader.application_dims(path)) {
    count = checked_mul(count, dim, "checkpoint application array element count", ErrorCode::kCheckpoint);
  }
  const DataType type = reader.application_type(path);
  require_fits_in_file(reader.file(), "dataset " + path, count, data_type_size(type));
  std::vector<unsigned char> scratch(static_cast<size_t>(count) * data_type_size(type));
  reader.read_application(path, type, scratch.data(), static_cast<size_t>(count));
}

}  // namespace

void Reader::verify_all() const {
  for (const auto& [path, dims] : dims_) verify(path);
  for (const auto& [path, type] : application_types_) verify_application(*this, path);
}

void verify_all(MPI_Comm comm, const std::string& path) {
  const Reader reader(comm, path);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  comm::agree_or_throw(comm, "verifying the checkpoint", comm::capture_failure([&] {
                   const std::vector<std::string> paths = reader.paths();
                   for (size_t i = static_cast<size_t>(rank); i < paths.size(); i += static_cast<size_t>(size)) {
                     reader.verify(paths[i]);
                   }
                   const std::vector<std::string> arrays = reader.application_paths();
                   for (size_t i = static_cast<size_t>(rank); i < arrays.size(); i += static_cast<size_t>(size)) {
                     verify_application(reader, arrays[i]);
                   }
                 }));
}

}  // namespace sluice::checkpoint
