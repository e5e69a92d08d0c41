#include "checkpoint/checkpoint_file_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkpoint/checksum.h"
#include "checkpoint/format.h"
#include "checkpoint/hdf5_attributes.h"
#include "checkpoint/layer_paths.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

Hdf5Handle make_property_list(hid_t property_class, const std::string& file) {
  return Hdf5Handle(check_hdf5(H5Pcreate(property_class), file, "property list", "creating"), H5Pclose);
}

Hdf5Handle make_dataspace(const std::vector<hsize_t>& extents, const std::string& file, const std::string& object) {
  if (extents.empty())
    return Hdf5Handle(check_hdf5(H5Screate(H5S_SCALAR), file, object, "creating dataspace"), H5Sclose);
  return Hdf5Handle(check_hdf5(H5Screate_simple(static_cast<int>(extents.size()), extents.data(), nullptr), file,
                               object, "creating dataspace"),
                    H5Sclose);
}

Hdf5Handle make_dataspace(const std::vector<int64_t>& dims, const std::string& file, const std::string& object) {
  return make_dataspace(std::vector<hsize_t>(dims.begin(), dims.end()), file, object);
}

// The little-endian type a dataset of `type` has in the file, and the native one its values have in memory.
hid_t file_type(DataType type) {
  switch (type) {
    case DataType::kFloat64:
      return H5T_IEEE_F64LE;
    case DataType::kInt32:
      return H5T_STD_I32LE;
    case DataType::kInt64:
      return H5T_STD_I64LE;
    case DataType::kFloat32:
      break;
  }
  return H5T_IEEE_F32LE;
}

hid_t memory_type(DataType type) {
  switch (type) {
    case DataType::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case DataType::kInt32:
      return H5T_NATIVE_INT32;
    case DataType::kInt64:
      return H5T_NATIVE_INT64;
    case DataType::kFloat32:
      break;
  }
  return H5T_NATIVE_FLOAT;
}

Hdf5Handle create_file(const std::string& file) {
  Hdf5Handle access = make_property_list(H5P_FILE_ACCESS, file);
  // Aligning big datasets to 1 MiB keeps their writes (and the readers' reads) on whole file-system blocks.
  check_hdf5(H5Pset_alignment(access.get(), 1 << 20, 1 << 20), file, "file", "setting alignment");
  return Hdf5Handle(
      check_hdf5(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), file, "file", "creating"),
      H5Fclose);
}

// Points the descriptor of `file` (HDF5's sec2 driver) at an anonymous in-memory file, so that whatever HDF5
// still writes goes there and succeeds. No error: at worst the descriptor stays as it was.
void redirect_writes_to_memory(hid_t file) {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr) return;
  int discard = memfd_create("sluice-abandoned-checkpoint", MFD_CLOEXEC);
  if (discard < 0) discard = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (discard < 0) return;
  dup2(discard, *static_cast<int*>(handle));
  ::close(discard);
}

}  // namespace

CheckpointFileWriter::CheckpointFileWriter(std::string file, const std::vector<ManifestItem>& all,
                                           const JobMetadata& metadata)
    : file_(std::move(file)), all_(all), handle_(create_file(file_)) {
  try {
    write_root_attributes(metadata);
    for (const char* group : {kModelGroup, kOptimizerGroup, kAccumulationGroup, kTrainGroup, kApplicationGroup,
                              kSamplesGroup, kNormalizationGroup}) {
      Hdf5Handle created(check_hdf5(H5Gcreate2(handle_.get(), group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file_,
                                    std::string("group ") + group, "creating"),
                         H5Gclose);
    }
    write_train_values(metadata.train_ints);
    write_manifest(all, metadata);
    datasets_.reserve(all.size());
    for (const ManifestItem& item : all) datasets_.push_back(create_dataset(item));
  } catch (...) {
    abandon();  // no destructor runs for a constructor that throws
    throw;
  }
}

CheckpointFileWriter::~CheckpointFileWriter() {
  if (handle_.get() >= 0) abandon();
}

void CheckpointFileWriter::abandon() noexcept {
  datasets_.clear();
  redirect_writes_to_memory(handle_.get());
  // HDF5 1.10.8 leaves its metadata cache's skip list enabled after a failed flush, and every later flush then
  // fails ("slist already enabled?"), H5Fclose included. One more flush, now into memory, fails on that but
  // writes the cache out and disables the list, so the close that follows succeeds (measured: a file that
  // failed to flush on a full tmpfs closes, H5close then runs clean). Its result is therefore not checked.
  H5Fflush(handle_.get(), H5F_SCOPE_LOCAL);
  handle_.close();
  H5Eclear2(H5E_DEFAULT);
}

void CheckpointFileWriter::write_chunk(size_t item, const ChunkPlan& plan, const DatasetChunk& chunk,
                                       const void* values) {
  const ManifestItem& entry = all_.at(item);
  const std::string object = "dataset " + entry.path;
  const hid_t dataset = datasets_.at(item).get();
  if (entry.dims.empty()) {
    check_hdf5(H5Dwrite(dataset, memory_type(entry.type), H5S_ALL, H5S_ALL, H5P_DEFAULT, values), file_, object,
               "writing");
    return;
  }
  const Hyperslab slab = plan.hyperslab(chunk);
  const std::vector<hsize_t> start(slab.start.begin(), slab.start.end());
  const std::vector<hsize_t> count(slab.count.begin(), slab.count.end());
  Hdf5Handle in_file = make_dataspace(entry.dims, file_, object);
  check_hdf5(H5Sselect_hyperslab(in_file.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file_,
             object, "selecting a chunk");
  Hdf5Handle in_memory = make_dataspace(count, file_, object);
  check_hdf5(H5Dwrite(dataset, memory_type(entry.type), in_memory.get(), in_file.get(), H5P_DEFAULT, values), file_,
             object, "writing");
  unflushed_bytes_ += static_cast<size_t>(chunk.elements) * data_type_size(entry.type);
  if (unflushed_bytes_ >= kWritebackBytes) start_writeback();
}

void CheckpointFileWriter::write_checksum(size_t item, uint32_t crc32) {
  const std::string object = "dataset " + all_.at(item).path;
  const std::string what = object + " attribute " + kChecksumAttribute;
  Hdf5Handle attribute(check_hdf5(H5Aopen(datasets_.at(item).get(), kChecksumAttribute, H5P_DEFAULT), file_, what,
                                  "opening attribute"),
                       H5Aclose);
  check_hdf5(H5Awrite(attribute.get(), H5T_NATIVE_UINT32, &crc32), file_, what, "writing attribute");
}

// One process writes the whole file now: starting the disk writes of what is written so far lets the disk work
// while the next chunks are copied, instead of leaving all of it to the fsync at the end. Advisory: no error.
void CheckpointFileWriter::start_writeback() {
  unflushed_bytes_ = 0;
#ifdef SYNC_FILE_RANGE_WRITE
  void* handle = nullptr;
  if (H5Fget_vfd_handle(handle_.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) return;
  sync_file_range(*static_cast<int*>(handle), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
}

void CheckpointFileWriter::close() {
  // A dataset's last bytes may still sit in HDF5's sieve buffer, which its H5Dclose writes: a failure there (a full
  // disk) is a failed save like any other write, not a file with a hole that still takes the final name.
  bool datasets_closed = true;
  for (Hdf5Handle& dataset : datasets_) datasets_closed = dataset.close() && datasets_closed;
  datasets_.clear();
  // Everything HDF5 still holds is written here, where a failure (a full disk) leaves the file open and whole
  // for abandon(), rather than inside H5Fclose.
  if (!datasets_closed || H5Fflush(handle_.get(), H5F_SCOPE_LOCAL) < 0) {
    const std::string reason = take_hdf5_error_text();
    abandon();
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "file", "closing failed: " + reason));
  }
  if (!handle_.close()) {
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, "file", "closing failed: " + take_hdf5_error_text()));
  }
}

void CheckpointFileWriter::write_root_attributes(const JobMetadata& metadata) {
  write_int64_attribute(handle_.get(), kFormatVersionAttribute, kFormatVersion, file_, "root");
  for (const auto& [name, value] : metadata.attributes)
    write_string_attribute(handle_.get(), name, value, file_, "root");
}

void CheckpointFileWriter::write_train_values(const std::map<std::string, int64_t>& values) {
  for (const auto& [name, value] : values) {
    const std::string path = train_path(name);
    const std::string object = "dataset " + path;
    Hdf5Handle space = make_dataspace(std::vector<hsize_t>{}, file_, object);
    Hdf5Handle dataset(check_hdf5(H5Dcreate2(handle_.get(), path.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT),
                                  file_, object, "creating"),
                       H5Dclose);
    write_uint32_attribute(dataset.get(), kChecksumAttribute,
                           bound_crc32({path, DataType::kInt64, {}}, &value, sizeof(value)), file_, object);
    check_hdf5(H5Dwrite(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), file_, object,
               "writing");
    close_written(dataset, object);
  }
}

// /manifest: every dataset written above and below, and every root attribute with its checksum, so a reader can
// verify the file's structure and each attribute it trusts. Generic: it lists whatever the Snapshot entries, train
// values and attributes are, so new ones need no change here.
void CheckpointFileWriter::write_manifest(const std::vector<ManifestItem>& all, const JobMetadata& metadata) {
  std::vector<ManifestLine> lines;
  for (const ManifestItem& item : all) lines.push_back({item.path, item.type, item.dims});
  for (const auto& [name, value] : metadata.train_ints) lines.push_back({train_path(name), DataType::kInt64, {}});
  std::vector<AttributeLine> attributes = {{"/", kFormatVersionAttribute, AttributeType::kInt64,
                                            attribute_crc32("/", kFormatVersionAttribute, kFormatVersion)}};
  for (const auto& [name, value] : metadata.attributes) {
    // Up to a NUL, as the reader reads it back (write_string_attribute stores it NUL-terminated).
    attributes.push_back({"/", name, AttributeType::kString, attribute_crc32("/", name, std::string(value.c_str()))});
  }
  const std::string text = manifest_text(std::move(lines), std::move(attributes));
  const std::string object = std::string("dataset ") + kManifestDataset;
  Hdf5Handle type(check_hdf5(H5Tcopy(H5T_C_S1), file_, object, "creating string type"), H5Tclose);
  check_hdf5(H5Tset_size(type.get(), text.size() + 1), file_, object, "sizing string type");
  check_hdf5(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), file_, object, "setting string padding");
  Hdf5Handle space = make_dataspace(std::vector<hsize_t>{}, file_, object);
  Hdf5Handle dataset(check_hdf5(H5Dcreate2(handle_.get(), kManifestDataset, type.get(), space.get(), H5P_DEFAULT,
                                           H5P_DEFAULT, H5P_DEFAULT),
                                file_, object, "creating"),
                     H5Dclose);
  const std::string checked = std::string(kManifestChecksumHeader) + text;
  write_uint32_attribute(dataset.get(), kChecksumAttribute, crc32_of(checked.data(), checked.size()), file_, object);
  check_hdf5(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.c_str()), file_, object,
             "writing");
  close_written(dataset, object);
}

// Closing a written dataset writes what HDF5 buffered for it (see close()): its failure is the write's failure.
void CheckpointFileWriter::close_written(Hdf5Handle& dataset, const std::string& object) {
  if (!dataset.close())
    throw Error(ErrorCode::kCheckpoint, checkpoint_message(file_, object, "writing failed: " + take_hdf5_error_text()));
}

Hdf5Handle CheckpointFileWriter::create_dataset(const ManifestItem& item) {
  const std::string object = "dataset " + item.path;
  Hdf5Handle space = make_dataspace(item.dims, file_, object);
  Hdf5Handle link_properties = make_property_list(H5P_LINK_CREATE, file_);
  check_hdf5(H5Pset_create_intermediate_group(link_properties.get(), 1), file_, object, "configuring");
  Hdf5Handle creation = make_property_list(H5P_DATASET_CREATE, file_);
  // Every byte is written right after, so HDF5's default zero fill would only double the I/O.
  check_hdf5(H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER), file_, object, "configuring");
  Hdf5Handle dataset(check_hdf5(H5Dcreate2(handle_.get(), item.path.c_str(), file_type(item.type), space.get(),
                                           link_properties.get(), creation.get(), H5P_DEFAULT),
                                file_, object, "creating"),
                     H5Dclose);
  write_uint32_attribute(dataset.get(), kChecksumAttribute, item.crc32, file_, object);
  return dataset;
}

}  // namespace sluice::checkpoint
