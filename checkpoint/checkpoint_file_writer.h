// Rank 0's writing of one checkpoint file with serial HDF5 (the default sec2 driver: no MPI-IO, whose internal
// collectives cannot be bounded): the structure first (root attributes, groups, /train values, /manifest and every
// dataset with its crc32), then the values chunk by chunk as they come, from rank 0's own Snapshot or from another
// rank (dataset_transfer.h). Callers hold the process-wide HDF5 lock (core/common/hdf5_lock.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/dataset_chunks.h"
#include "checkpoint/hdf5_handle.h"
#include "checkpoint/manifest.h"

namespace sluice::checkpoint {

// What the whole job writes once: rank 0's train values and root attributes.
struct JobMetadata {
  std::map<std::string, int64_t> train_ints;
  std::map<std::string, std::string> attributes;
};

class CheckpointFileWriter {
 public:
  // Creates (truncates) `file` and writes everything but the datasets' values. `all`: every rank's datasets.
  CheckpointFileWriter(std::string file, const std::vector<ManifestItem>& all, const JobMetadata& metadata);

  // Writes one chunk of the values of dataset all[item] (native byte order, the chunk's elements only).
  void write_chunk(size_t item, const ChunkPlan& plan, const DatasetChunk& chunk, const void* values);

  // Sets the crc32 attribute of dataset all[item], one several ranks own by blocks: rank 0 computes it over the
  // slabs as it writes them, so it is known only after the last one (created with 0 until then).
  void write_checksum(size_t item, uint32_t crc32);

  // An abandoned file (an error before close()) is closed with abandon().
  ~CheckpointFileWriter();
  CheckpointFileWriter(const CheckpointFileWriter&) = delete;
  CheckpointFileWriter& operator=(const CheckpointFileWriter&) = delete;

  // Flushes and closes the datasets and the file; Error(kCheckpoint) when HDF5 cannot write (the file is then
  // incomplete, and abandoned as below).
  void close();

 private:
  void write_root_attributes(const JobMetadata& metadata);
  void write_train_values(const std::map<std::string, int64_t>& values);
  void write_manifest(const std::vector<ManifestItem>& all, const JobMetadata& metadata);
  Hdf5Handle create_dataset(const ManifestItem& item);
  void close_written(Hdf5Handle& dataset, const std::string& object);
  void start_writeback();
  // Closes an incomplete file without failing. HDF5 writes what it still holds (metadata, small datasets) when
  // the file closes; when that write fails (a full disk), H5Fclose fails and leaves a half-closed file in HDF5's
  // tables, which HDF5's termination (at MPI_Finalize) closes again and crashes on (issue 28). So the file's
  // descriptor is first pointed at an anonymous in-memory file: the close then writes there and succeeds. The
  // file on disk is incomplete either way; the caller removes it.
  void abandon() noexcept;

  static constexpr size_t kWritebackBytes = size_t{64} << 20;

  std::string file_;
  const std::vector<ManifestItem>& all_;
  Hdf5Handle handle_;
  std::vector<Hdf5Handle> datasets_;  // parallel to all_
  size_t unflushed_bytes_ = 0;        // written since the last start_writeback()
};

}  // namespace sluice::checkpoint
