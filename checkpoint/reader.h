// Reading a checkpoint written by save(). Each rank opens the file on its own (read-only) and reads only what it
// needs, which is what makes resharding free: under a new pipeline layout a rank reads the layers it now owns.
// Every read verifies the dataset's crc32; verify_all() checks everything up front so a trainer can refuse a bad
// file before it has overwritten any of its state.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/hdf5_handle.h"
#include "checkpoint/manifest.h"
#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

class Reader {
 public:
  // Collective over comm: rank 0 resolves path (a directory means its latest checkpoint), every rank opens that
  // file, and all ranks throw the same Error(kCheckpoint) if any rank cannot open it, the file is truncated or not
  // HDF5, the format_version is not one this build reads (format.h), a /train value fails its checksum or lies
  // outside its range (value_ranges.h), or (version 2) the file's datasets and groups do not match its manifest
  // (file_structure.h). Each error names the file and the dataset.
  Reader(MPI_Comm comm, const std::string& path);
  // The same for a single process (e.g. `sluice inspect`).
  explicit Reader(const std::string& path);

  const std::string& file() const { return file_; }
  int64_t format_version() const { return format_version_; }
  // True for version-2 files: structure verified against /manifest, checksums bound to path, type and shape.
  bool has_manifest() const { return manifest_.has_value(); }
  const std::map<std::string, std::string>& attributes() const { return attributes_; }
  const std::map<std::string, int64_t>& train_ints() const { return train_ints_; }
  // The /train/<name> value; Error(kCheckpoint) naming file and dataset if the file has none.
  int64_t train_int(const std::string& name) const;

  // Every float dataset (/model, /optimizer, /accumulation, /samples, and in a version-2 file any other listed
  // dataset outside /train and /application), sorted by path.
  std::vector<std::string> paths() const;
  bool contains(const std::string& path) const { return dims_.count(path) != 0; }
  // Error(kCheckpoint) naming file and dataset if the file has no such dataset.
  const std::vector<int64_t>& dims(const std::string& path) const;
  // Global layer indices that have at least one /model dataset, ascending.
  std::vector<int> layer_indices() const;
  // All datasets of one layer (model, optimizer state, accumulation), sorted.
  std::vector<std::string> paths_of_layer(int layer) const;

  // Reads and checksum-verifies one dataset. Error(kCheckpoint) naming file and dataset when it is missing, not
  // float32, unreadable, or its crc32 does not match.
  Entry read(const std::string& path) const;
  // As read(path), and also Error(kCheckpoint) when its shape differs from expected_dims.
  Entry read(const std::string& path, const std::vector<int64_t>& expected_dims) const;
  // As read(path), into memory the caller already owns (e.g. the live parameter buffer), avoiding an allocation
  // per tensor. Error(kCheckpoint) naming file and dataset when count differs from the dataset's element count.
  // On a checksum failure the destination has already been overwritten: call verify_all() first.
  void read_into(const std::string& path, float* destination, size_t count) const;
  // Every float dataset (streamed, verify()) and every application array, checked by this process alone.
  void verify_all() const;

  // Checksum-verifies one float dataset without holding it: its bytes are read in row-major order in hyperslabs of
  // at most `slab_bytes` (checkpoint/dataset_chunks.h) and the crc32 carried across them, so memory stays bounded
  // by the slab however large the dataset (a held field sample of 4 x 512^3 floats is 2 GiB). Error(kCheckpoint)
  // naming file and dataset as read(path).
  void verify(const std::string& path, size_t slab_bytes = kVerifySlabBytes) const;
  static constexpr size_t kVerifySlabBytes = size_t{32} << 20;  // SaveOptions::chunk_bytes, the save's piece

  // Reads the box [offset, offset + extent) (one entry per dimension of the stored float32 dataset) as one HDF5
  // hyperslab into `destination` ([extent..] row-major, `count` values): a rank on a pipeline.domain split reads its
  // block [held, C, block] of the stored whole samples [held, C, D..] and nothing else. The dataset's crc32 covers
  // the whole dataset, so a box read cannot check it: the caller must have verified the file first (verify_all, as
  // every load does before it stages anything). Error(kCheckpoint) naming file and dataset when it is missing, not
  // float32, has another number of dimensions, the box leaves it, count differs from the box's values, or the read
  // fails.
  void read_box_into(const std::string& path, const std::vector<int64_t>& offset, const std::vector<int64_t>& extent,
                     float* destination, size_t count) const;

  // Application state (/application/<name> and /application/<name>/rank_R, docs/CHECKPOINT_FORMAT.md), sorted.
  // Files written before application state existed have none.
  std::vector<std::string> application_paths() const;
  bool contains_application(const std::string& path) const { return application_types_.count(path) != 0; }
  // Error(kCheckpoint) naming file and dataset if the file has no such array.
  DataType application_type(const std::string& path) const;
  const std::vector<int64_t>& application_dims(const std::string& path) const;
  // Reads and checksum-verifies one application array of `type` into `destination` (room for `count` elements).
  // Error(kCheckpoint) naming file and dataset when it is missing, of another type or element count, unreadable, or
  // its crc32 does not match.
  void read_application(const std::string& path, DataType type, void* destination, size_t count) const;

 private:
  void open_and_index();
  void index_datasets(const std::vector<std::string>& datasets);
  void index_train_value(hid_t dataset, const std::string& path);
  // What a dataset's crc32 covers before its bytes: its manifest line (version 2) or nothing (version 1).
  std::string checksum_header(const std::string& path) const;

  std::string file_;
  Hdf5Handle handle_;
  int64_t format_version_ = 0;
  std::map<std::string, std::string> attributes_;
  std::map<std::string, int64_t> train_ints_;
  std::map<std::string, std::vector<int64_t>> dims_;
  std::map<std::string, std::vector<int64_t>> application_dims_;
  std::map<std::string, DataType> application_types_;
  // Version 2 files: /manifest, which the structure was verified against on open. Empty for version 1.
  std::optional<std::map<std::string, ManifestLine>> manifest_;
};

// Collective over comm: the file `path` names (a directory: its latest checkpoint), as rank 0 resolves it, on
// every rank; all ranks throw the same Error(kCheckpoint) when it cannot be resolved.
std::string resolve_checkpoint_path(MPI_Comm comm, const std::string& path);

// Collective over comm: every float dataset's and application array's checksum is verified, the work split across
// ranks (each dataset by ONE rank, round-robin; float datasets streamed in bounded memory, Reader::verify); all ranks
// throw the same Error(kCheckpoint) naming file and dataset if any check fails. Call before loading anything: the
// agreement is what lets a rank that reads only a box of a dataset (Reader::read_box_into) trust the bytes outside
// it too, and refuse a flipped byte it never reads.
void verify_all(MPI_Comm comm, const std::string& path);

}  // namespace sluice::checkpoint
