#include "checkpoint/save.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "checkpoint/byte_exchange.h"
#include "checkpoint/checkpoint_file_writer.h"
#include "checkpoint/checksum.h"
#include "checkpoint/dataset_chunks.h"
#include "checkpoint/dataset_transfer.h"
#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/hdf5_handle.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/manifest.h"
#include "checkpoint/manifest_merge.h"
#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/hdf5_lock.h"
#include "core/common/message_text.h"

namespace sluice::checkpoint {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Runs `step` on this rank, then agrees on its outcome (the failing rank rethrows its own exception). Two statements
// on purpose: as arguments of one agree_or_throw call, its default deadline (comm.timeout from now) may be evaluated
// before the step runs, so a step that takes longer than the timeout (writing a big file) would meet a deadline
// already past and name every rank that had not reported yet.
template <typename Step>
void run_and_agree(MPI_Comm comm, const std::string& what, Step&& step) {
  std::exception_ptr failure;
  try {
    step();
  } catch (...) {
    failure = std::current_exception();
  }
  comm::agree_or_throw(comm, what, failure);
}

int64_t element_count(const std::vector<int64_t>& dims, const std::string& path) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint entry '" + shorten_for_message(path) + "' has a negative dimension");
    count *= dim;
  }
  return count;
}

// A block entry (Entry::global_dims): its box must lie inside the dataset. Its checksum is rank 0's to compute, over
// the whole dataset as it writes it.
ManifestItem describe_block(const Entry& entry) {
  const std::string path = shorten_for_message(entry.path);
  if (entry.box_offset.size() != entry.dims.size() || entry.global_dims.size() != entry.dims.size()) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint block entry '" + path + "' has " +
                                                 std::to_string(entry.dims.size()) + " dims but " +
                                                 std::to_string(entry.box_offset.size()) + " box offsets and " +
                                                 std::to_string(entry.global_dims.size()) + " global dims");
  }
  if (entry.dims.size() > kMaxBoxDims) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint block entry '" + path + "' has " +
                                                 std::to_string(entry.dims.size()) + " dims; a block dataset has at most " +
                                                 std::to_string(kMaxBoxDims));
  }
  element_count(entry.global_dims, entry.path);
  const Box whole{std::vector<int64_t>(entry.dims.size(), 0), entry.global_dims};
  if (!box_contains(whole, {entry.box_offset, entry.dims})) {
    throw Error(ErrorCode::kInvalidArgument,
                "checkpoint block entry '" + path + "' reaches outside its dataset's global dims");
  }
  ManifestItem item{entry.path, entry.global_dims, 0};
  item.type = entry.type;
  item.boxes.push_back({0, entry.box_offset, entry.dims});
  return item;
}

// One entry's manifest item, its values' count checked against its dims.
ManifestItem describe_values(const Entry& entry) {
  const int64_t count = element_count(entry.dims, entry.path);
  const size_t element_size = data_type_size(entry.type);
  if (count * static_cast<int64_t>(element_size) != static_cast<int64_t>(entry.value_bytes())) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + entry.path + "': dims hold " +
                                                 std::to_string(count) + " values but data has " +
                                                 std::to_string(entry.value_bytes() / element_size));
  }
  if (entry.is_block()) return describe_block(entry);
  // Bound to path, type and shape (format_version 2): the same bytes under another name do not verify.
  ManifestItem item{entry.path, entry.dims,
                    bound_crc32({entry.path, entry.type, entry.dims}, entry.values(), entry.value_bytes())};
  item.type = entry.type;
  return item;
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
                                                   data_type_name(entry.type) +
                                                   "; only /application arrays may be "
                                                   "other than float32");
    }
    items.push_back(describe_values(entry));
  }
  return items;
}

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

// Every rank's manifest items (merged and checked afterwards, identically everywhere) and rank 0's train values and
// attributes, checked against what the other ranks passed (nothing, or the same). The exchanges run inside the
// agreement's step, so a rank that times out in one (a stopped peer) takes its TIMEOUT to the agreement, which
// names the silent rank on every live rank.
std::vector<ManifestItem> share_metadata(MPI_Comm comm, const Snapshot& mine, const std::vector<ManifestItem>& my_items,
                                         JobMetadata& shared) {
  const bool is_root = rank_of(comm) == 0;
  std::vector<std::string> manifests;
  run_and_agree(comm, "checking the checkpoint's job metadata", [&] {
    manifests = allgather_bytes(comm, serialize_manifest(my_items));
    shared.train_ints =
        deserialize_int_map(broadcast_bytes(comm, is_root ? serialize_int_map(mine.train_ints) : "", 0));
    shared.attributes =
        deserialize_string_map(broadcast_bytes(comm, is_root ? serialize_string_map(mine.attributes) : "", 0));
    validate_job_metadata(shared);
    if (!mine.train_ints.empty() && mine.train_ints != shared.train_ints) {
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint train_ints differ from rank 0's; pass none or the same on every rank");
    }
    if (!mine.attributes.empty() && mine.attributes != shared.attributes) {
      throw Error(ErrorCode::kInvalidArgument,
                  "checkpoint attributes differ from rank 0's; pass none or the same on every rank");
    }
  });
  return merge_manifests(manifests);
}

void check_target_directory(const std::string& path) {
  const std::filesystem::path target(path);
  if (path.empty() || !target.has_filename()) {
    throw Error(ErrorCode::kInvalidArgument,
                "checkpoint path '" + shorten_for_message(path) + "' does not name a file");
  }
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw Error(ErrorCode::kCheckpoint, "cannot save checkpoint '" + shorten_for_message(path) + "': directory '" +
                                            shorten_for_message(dir.string()) + "' does not exist");
  }
  // The rename at the end would replace whatever has this name: only ever a regular (checkpoint) file.
  const std::string kind = non_regular_kind(path);
  if (!kind.empty()) {
    throw Error(ErrorCode::kCheckpoint, "cannot save checkpoint '" + shorten_for_message(path) +
                                            "': it exists and is " + kind +
                                            "; a save only replaces a regular checkpoint file");
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

void check_options(const SaveOptions& options) {
  if (options.chunk_bytes < 8 || options.chunk_bytes > (size_t{1} << 30)) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint SaveOptions::chunk_bytes is " +
                                                 std::to_string(options.chunk_bytes) +
                                                 "; it must be between 8 and 1073741824 (1 GiB)");
  }
}

// Rank 0: the datasets several ranks own by blocks, slab by slab in row-major order, each one's crc32 carried over
// its slabs (bound like any dataset's: the same value the undecomposed run writes) and set after its last slab.
void write_blocks(DatasetReceiver& receiver, CheckpointFileWriter& writer, const std::vector<ManifestItem>& all,
                  const Snapshot& mine) {
  std::map<size_t, uint32_t> crcs;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].owner_rank != kBlockOwners) continue;
    const std::string header = manifest_line({all[i].path, all[i].type, all[i].dims});
    crcs[i] = crc32_of(header.data(), header.size());
  }
  receiver.receive_blocks(mine, [&](size_t item, const ChunkPlan& plan, const DatasetChunk& chunk, const void* bytes) {
    writer.write_chunk(item, plan, chunk, bytes);
    crcs[item] = crc32_continue(crcs[item], bytes, static_cast<size_t>(chunk.elements) * data_type_size(all[item].type));
  });
  for (const auto& [item, crc] : crcs) writer.write_checksum(item, crc);
}

// Rank 0: the whole file, its own datasets from `mine` and the others' as they arrive, then fsync. Whatever
// happens, every other rank is told that rank 0 needs nothing more, so none waits out its timeout for nothing.
void write_as_root(MPI_Comm comm, const std::string& file, const std::vector<ManifestItem>& all,
                   const JobMetadata& metadata, const Snapshot& mine, const SaveOptions& options) {
  DatasetReceiver receiver(comm, all, options.chunk_bytes);
  try {
    const Hdf5Lock lock;  // held while other ranks' chunks arrive too: hdf5_lock.h says when that is safe
    CheckpointFileWriter writer(file, all, metadata);
    receiver.keep_alive();
    std::map<std::string, const Entry*> my_entries;
    for (const Entry& entry : mine.entries) my_entries[entry.path] = &entry;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].owner_rank != 0) continue;
      const ChunkPlan plan(all[i].dims, data_type_size(all[i].type), options.chunk_bytes);
      const auto* values = static_cast<const unsigned char*>(my_entries.at(all[i].path)->values());
      for (const DatasetChunk& chunk : plan.chunks()) {
        writer.write_chunk(i, plan, chunk, values + chunk.first_element * data_type_size(all[i].type));
        receiver.keep_alive();
      }
    }
    receiver.receive_all([&](size_t item, const ChunkPlan& plan, const DatasetChunk& chunk, const void* bytes) {
      writer.write_chunk(item, plan, chunk, bytes);
    });
    write_blocks(receiver, writer, all, mine);
    writer.close();
  } catch (...) {
    receiver.finish(false);
    throw;
  }
  receiver.finish(true);
  // The other ranks now wait in the agreement below (bounded by 2.5 x comm.timeout + 1 s for rank 0's verdict),
  // which covers the flush.
  fsync_path(file, O_RDONLY);
}

}  // namespace

void save(MPI_Comm comm, const std::string& path, const Snapshot& mine, const SaveOptions& options) {
  silence_hdf5_error_printing();
  const bool is_root = rank_of(comm) == 0;

  std::vector<ManifestItem> my_items;
  run_and_agree(comm, "describing the checkpoint entries", [&] {
    check_options(options);
    my_items = describe_entries(mine);
  });
  JobMetadata metadata;
  const std::vector<ManifestItem> all = share_metadata(comm, mine, my_items, metadata);
  run_and_agree(comm, "checking the checkpoint directory", [&] {
    if (is_root) check_target_directory(path);
  });

  // Only rank 0 touches the file system from here on.
  const std::string temporary = is_root ? temporary_path(path, this_writer_id()) : std::string();
  try {
    run_and_agree(comm, "writing the checkpoint", [&] {
      if (options.before_data_transfer) options.before_data_transfer();
      if (is_root) {
        write_as_root(comm, temporary, all, metadata, mine, options);
      } else {
        send_datasets_to_writer(comm, all, mine);
      }
    });
    run_and_agree(comm, "renaming the checkpoint into place", [&] {
      if (!is_root) return;
      if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        throw Error(ErrorCode::kIo, "cannot rename '" + shorten_for_message(temporary) + "' to '" + path +
                                        "': " + std::strerror(errno));
      }
      std::filesystem::path dir = std::filesystem::path(path).parent_path();
      fsync_path(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
    });
  } catch (...) {
    if (is_root) std::remove(temporary.c_str());
    throw;
  }
}

}  // namespace sluice::checkpoint
