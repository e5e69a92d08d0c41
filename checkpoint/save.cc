#include "checkpoint/save.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "checkpoint/byte_exchange.h"
#include "checkpoint/checksum.h"
#include "core/comm/agreement.h"
#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/hdf5_attributes.h"
#include "checkpoint/hdf5_handle.h"
#include "checkpoint/mpi_io_name.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/manifest.h"
#include "core/common/error.h"
#include "core/common/message_text.h"
#include "core/common/hdf5_lock.h"

namespace sluice::checkpoint {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int64_t element_count(const std::vector<int64_t>& dims, const std::string& path) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + shorten_for_message(path) + "' has a negative dimension");
    count *= dim;
  }
  return count;
}

// Validates this rank's entries and computes their checksums: the manifest it will share with the other ranks.
std::vector<ManifestItem> describe_entries(const Snapshot& mine) {
  std::vector<ManifestItem> items;
  std::set<std::string> seen;
  for (const Entry& entry : mine.entries) {
    validate_entry_path(entry.path);
    if (!seen.insert(entry.path).second) {
      throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + entry.path + "' appears twice on one rank");
    }
    if (entry.type != DataType::kFloat32 && !is_application_path(entry.path)) {
      throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + entry.path + "' is " +
                                                   data_type_name(entry.type) + "; only /application arrays may be "
                                                   "other than float32");
    }
    const int64_t count = element_count(entry.dims, entry.path);
    const size_t element_size = data_type_size(entry.type);
    if (count * static_cast<int64_t>(element_size) != static_cast<int64_t>(entry.value_bytes())) {
      throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + entry.path + "': dims hold " +
                                                   std::to_string(count) + " values but data has " +
                                                   std::to_string(entry.value_bytes() / element_size));
    }
    // Bound to path, type and shape (format_version 2): the same bytes under another name do not verify.
    ManifestItem item{entry.path, entry.dims,
                      bound_crc32({entry.path, entry.type, entry.dims}, entry.values(), entry.value_bytes())};
    item.type = entry.type;
    items.push_back(item);
  }
  return items;
}

// Every rank's items in path order; deterministic, so every rank detects a clash identically without agreement.
std::vector<ManifestItem> merge_manifests(const std::vector<std::string>& per_rank) {
  std::vector<ManifestItem> all;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) {
    for (ManifestItem& item : deserialize_manifest(per_rank[rank], static_cast<int>(rank))) all.push_back(item);
  }
  std::sort(all.begin(), all.end(), [](const ManifestItem& a, const ManifestItem& b) { return a.path < b.path; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].path == all[i - 1].path) {
      throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + all[i].path + "' is contributed by both rank " +
                                                   std::to_string(all[i - 1].owner_rank) + " and rank " +
                                                   std::to_string(all[i].owner_rank));
    }
  }
  return all;
}

struct JobMetadata {
  std::map<std::string, int64_t> train_ints;
  std::map<std::string, std::string> attributes;
};

void validate_job_metadata(const JobMetadata& metadata) {
  for (const auto& [name, value] : metadata.train_ints) validate_name(name, "train value name");
  for (const auto& [name, value] : metadata.attributes) {
    validate_name(name, "checkpoint attribute name");
    if (name == kFormatVersionAttribute) {
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint attribute 'format_version' is written by checkpoint::save itself; remove it");
    }
  }
}

// Rank 0's train values and attributes, checked against what the other ranks passed (nothing, or the same).
JobMetadata share_job_metadata(MPI_Comm comm, const Snapshot& mine) {
  const bool is_root = rank_of(comm) == 0;
  JobMetadata shared;
  shared.train_ints = deserialize_int_map(broadcast_bytes(comm, is_root ? serialize_int_map(mine.train_ints) : "", 0));
  shared.attributes =
      deserialize_string_map(broadcast_bytes(comm, is_root ? serialize_string_map(mine.attributes) : "", 0));
  comm::agree_or_throw(comm, "checking the checkpoint's job metadata", comm::capture_failure([&] {
                   validate_job_metadata(shared);
                   if (!mine.train_ints.empty() && mine.train_ints != shared.train_ints) {
                     throw Error(ErrorCode::kInvalidArgument,
                                 "checkpoint train_ints differ from rank 0's; pass none or the same on every rank");
                   }
                   if (!mine.attributes.empty() && mine.attributes != shared.attributes) {
                     throw Error(ErrorCode::kInvalidArgument,
                                 "checkpoint attributes differ from rank 0's; pass none or the same on every rank");
                   }
                 }));
  return shared;
}

void check_target_directory(const std::string& path) {
  const std::filesystem::path target(path);
  if (path.empty() || !target.has_filename()) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint path '" + shorten_for_message(path) + "' does not name a file");
  }
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw Error(ErrorCode::kCheckpoint,
                "cannot save checkpoint '" + shorten_for_message(path) + "': directory '" + shorten_for_message(dir.string()) + "' does not exist");
  }
  // The rename at the end would replace whatever has this name: only ever a regular (checkpoint) file.
  const std::string kind = non_regular_kind(path);
  if (!kind.empty()) {
    throw Error(ErrorCode::kCheckpoint, "cannot save checkpoint '" + shorten_for_message(path) + "': it exists and is " +
                                            kind + "; a save only replaces a regular checkpoint file");
  }
}

void fsync_path(const std::string& path, int open_flags) {
  const int fd = ::open(path.c_str(), open_flags);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw Error(ErrorCode::kIo, "cannot fsync '" + shorten_for_message(path) + "': " + reason);
  }
  ::close(fd);
}

Hdf5Handle make_property_list(hid_t property_class, const std::string& file) {
  return Hdf5Handle(check_hdf5(H5Pcreate(property_class), file, "property list", "creating"), H5Pclose);
}

Hdf5Handle make_dataspace(const std::vector<int64_t>& dims, const std::string& file, const std::string& object) {
  if (dims.empty()) return Hdf5Handle(check_hdf5(H5Screate(H5S_SCALAR), file, object, "creating dataspace"), H5Sclose);
  const std::vector<hsize_t> extents(dims.begin(), dims.end());
  return Hdf5Handle(
      check_hdf5(H5Screate_simple(static_cast<int>(extents.size()), extents.data(), nullptr), file, object,
                 "creating dataspace"),
      H5Sclose);
}

// The little-endian type a dataset of `type` has in the file, and the native one its values have in memory.
hid_t file_type(DataType type) {
  switch (type) {
    case DataType::kFloat64: return H5T_IEEE_F64LE;
    case DataType::kInt32: return H5T_STD_I32LE;
    case DataType::kInt64: return H5T_STD_I64LE;
    case DataType::kFloat32: break;
  }
  return H5T_IEEE_F32LE;
}

hid_t memory_type(DataType type) {
  switch (type) {
    case DataType::kFloat64: return H5T_NATIVE_DOUBLE;
    case DataType::kInt32: return H5T_NATIVE_INT32;
    case DataType::kInt64: return H5T_NATIVE_INT64;
    case DataType::kFloat32: break;
  }
  return H5T_NATIVE_FLOAT;
}

// Writes one checkpoint file. Every HDF5 call that creates something is made by all ranks in the same order
// (parallel HDF5 requires it); only the data transfers differ per rank.
class CheckpointFileWriter {
 public:
  CheckpointFileWriter(MPI_Comm comm, std::string file, const SaveOptions& options)
      : comm_(comm), rank_(rank_of(comm)), file_(std::move(file)), options_(options) {}

  // Holds the process-wide HDF5 lock throughout, collectives included (core/common/hdf5_lock.h says when that
  // is safe with several threads).
  void write(const std::vector<ManifestItem>& all, const JobMetadata& metadata, const Snapshot& mine) {
    const Hdf5Lock lock;
    Hdf5Handle access = make_property_list(H5P_FILE_ACCESS, file_);
    check_hdf5(H5Pset_fapl_mpio(access.get(), comm_, MPI_INFO_NULL), file_, "file", "selecting MPI-IO");
    // Aligning big datasets to 1 MiB keeps each rank's writes on whole file-system blocks.
    check_hdf5(H5Pset_alignment(access.get(), 1 << 20, 1 << 20), file_, "file", "setting alignment");
    const MpiIoName name(file_);  // a long path would abort inside Open MPI (mpi_io_name.h)
    Hdf5Handle file(check_hdf5(H5Fcreate(name.get().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), file_,
                               "file", "creating"),
                    H5Fclose);

    write_root_attributes(file.get(), metadata);
    for (const char* group : {kModelGroup, kOptimizerGroup, kAccumulationGroup, kTrainGroup, kApplicationGroup,
                              kSamplesGroup, kNormalizationGroup}) {
      Hdf5Handle created(check_hdf5(H5Gcreate2(file.get(), group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file_,
                                    std::string("group ") + group, "creating"),
                         H5Gclose);
    }
    write_train_values(file.get(), metadata.train_ints);
    write_manifest(file.get(), all, metadata.train_ints);

    std::vector<Hdf5Handle> datasets;
    datasets.reserve(all.size());
    for (const ManifestItem& item : all) datasets.push_back(create_dataset(file.get(), item));

    // A failed transfer on one rank must not skip the collective closes below, or the other ranks would hang.
    std::optional<Error> transfer_failure = comm::capture_failure([&] { write_data(all, datasets, mine); });
    datasets.clear();
    if (!file.close() && !transfer_failure) {
      transfer_failure = Error(ErrorCode::kCheckpoint,
                               checkpoint_message(file_, "file", "closing failed: " + take_hdf5_error_text()));
    }
    if (transfer_failure) throw *transfer_failure;
  }

 private:
  void write_root_attributes(hid_t file, const JobMetadata& metadata) {
    write_int64_attribute(file, kFormatVersionAttribute, kFormatVersion, file_, "root");
    for (const auto& [name, value] : metadata.attributes) write_string_attribute(file, name, value, file_, "root");
  }

  void write_train_values(hid_t file, const std::map<std::string, int64_t>& values) {
    for (const auto& [name, value] : values) {
      const std::string path = train_path(name);
      const std::string object = "dataset " + path;
      Hdf5Handle space = make_dataspace({}, file_, object);
      Hdf5Handle dataset(check_hdf5(H5Dcreate2(file, path.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT,
                                               H5P_DEFAULT, H5P_DEFAULT),
                                    file_, object, "creating"),
                         H5Dclose);
      write_uint32_attribute(dataset.get(), kChecksumAttribute,
                             bound_crc32({path, DataType::kInt64, {}}, &value, sizeof(value)), file_, object);
      if (rank_ == 0) {
        check_hdf5(H5Dwrite(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), file_, object,
                   "writing");
      }
    }
  }

  // /manifest: every dataset written above and below, so a reader can verify the file's structure. Generic: it
  // lists whatever the Snapshot entries and train values are, so new datasets need no change here.
  void write_manifest(hid_t file, const std::vector<ManifestItem>& all, const std::map<std::string, int64_t>& train) {
    std::vector<ManifestLine> lines;
    for (const ManifestItem& item : all) lines.push_back({item.path, item.type, item.dims});
    for (const auto& [name, value] : train) lines.push_back({train_path(name), DataType::kInt64, {}});
    const std::string text = manifest_text(std::move(lines));
    const std::string object = std::string("dataset ") + kManifestDataset;
    Hdf5Handle type(check_hdf5(H5Tcopy(H5T_C_S1), file_, object, "creating string type"), H5Tclose);
    check_hdf5(H5Tset_size(type.get(), text.size() + 1), file_, object, "sizing string type");
    check_hdf5(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), file_, object, "setting string padding");
    Hdf5Handle space = make_dataspace({}, file_, object);
    Hdf5Handle dataset(check_hdf5(H5Dcreate2(file, kManifestDataset, type.get(), space.get(), H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT),
                                  file_, object, "creating"),
                       H5Dclose);
    std::string checked = std::string(kManifestChecksumHeader) + text;
    write_uint32_attribute(dataset.get(), kChecksumAttribute, crc32_of(checked.data(), checked.size()), file_,
                           object);
    if (rank_ == 0) {
      check_hdf5(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.c_str()), file_, object,
                 "writing");
    }
  }

  Hdf5Handle create_dataset(hid_t file, const ManifestItem& item) {
    const std::string object = "dataset " + item.path;
    Hdf5Handle space = make_dataspace(item.dims, file_, object);
    Hdf5Handle link_properties = make_property_list(H5P_LINK_CREATE, file_);
    check_hdf5(H5Pset_create_intermediate_group(link_properties.get(), 1), file_, object, "configuring");
    Hdf5Handle creation = make_property_list(H5P_DATASET_CREATE, file_);
    // Every byte is written by its owner right after, so HDF5's default zero fill would only double the I/O.
    check_hdf5(H5Pset_fill_time(creation.get(), H5D_FILL_TIME_NEVER), file_, object, "configuring");
    Hdf5Handle dataset(check_hdf5(H5Dcreate2(file, item.path.c_str(), file_type(item.type), space.get(),
                                             link_properties.get(), creation.get(), H5P_DEFAULT),
                                  file_, object, "creating"),
                       H5Dclose);
    write_uint32_attribute(dataset.get(), kChecksumAttribute, item.crc32, file_, object);
    return dataset;
  }

  void write_data(const std::vector<ManifestItem>& all, const std::vector<Hdf5Handle>& datasets,
                  const Snapshot& mine) {
    std::map<std::string, const Entry*> my_entries;
    for (const Entry& entry : mine.entries) my_entries[entry.path] = &entry;

    Hdf5Handle transfer = make_property_list(H5P_DATASET_XFER, file_);
    const bool collective = options_.transfer == TransferMode::kCollective;
    check_hdf5(H5Pset_dxpl_mpio(transfer.get(), collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT), file_,
               "file", "configuring transfer");

    for (size_t i = 0; i < all.size(); ++i) {
      const ManifestItem& item = all[i];
      const std::string object = "dataset " + item.path;
      if (item.owner_rank == rank_) {
        const Entry& entry = *my_entries.at(item.path);
        check_hdf5(H5Dwrite(datasets[i].get(), memory_type(item.type), H5S_ALL, H5S_ALL, transfer.get(),
                            entry.values()),
                   file_, object, "writing");
      } else if (collective) {
        // Collective transfers need every rank in every call; the non-owners contribute an empty selection.
        Hdf5Handle nothing = make_dataspace(item.dims, file_, object);
        check_hdf5(H5Sselect_none(nothing.get()), file_, object, "selecting nothing");
        const double unused = 0.0;
        check_hdf5(H5Dwrite(datasets[i].get(), memory_type(item.type), nothing.get(), nothing.get(), transfer.get(),
                            &unused),
                   file_, object, "writing (empty share)");
      }
    }
  }

  MPI_Comm comm_;
  int rank_;
  std::string file_;
  SaveOptions options_;
};

}  // namespace

void save(MPI_Comm comm, const std::string& path, const Snapshot& mine, const SaveOptions& options) {
  silence_hdf5_error_printing();
  const bool is_root = rank_of(comm) == 0;

  std::vector<ManifestItem> my_items;
  comm::agree_or_throw(comm, "describing the checkpoint entries",
                       comm::capture_failure([&] { my_items = describe_entries(mine); }));
  const std::vector<ManifestItem> all = merge_manifests(allgather_bytes(comm, serialize_manifest(my_items)));
  const JobMetadata metadata = share_job_metadata(comm, mine);
  comm::agree_or_throw(comm, "checking the checkpoint directory", comm::capture_failure([&] {
                   if (is_root) check_target_directory(path);
                 }));

  const std::string temporary = temporary_path(path, broadcast_bytes(comm, is_root ? this_writer_id() : "", 0));
  try {
    comm::agree_or_throw(comm, "writing the checkpoint", comm::capture_failure([&] {
                     CheckpointFileWriter(comm, temporary, options).write(all, metadata, mine);
                     // Each rank flushes what it wrote; on a local disk one would do, on a parallel FS each client
                     // holds its own dirty pages.
                     fsync_path(temporary, O_RDONLY);
                   }));
    comm::agree_or_throw(comm, "renaming the checkpoint into place", comm::capture_failure([&] {
                     if (!is_root) return;
                     if (std::rename(temporary.c_str(), path.c_str()) != 0) {
                       throw Error(ErrorCode::kIo, "cannot rename '" + shorten_for_message(temporary) + "' to '" + path +
                                                       "': " + std::strerror(errno));
                     }
                     std::filesystem::path dir = std::filesystem::path(path).parent_path();
                     fsync_path(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
                   }));
  } catch (...) {
    if (is_root) std::remove(temporary.c_str());
    throw;
  }
}

}  // namespace sluice::checkpoint
