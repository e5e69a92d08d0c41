#include "checkpoint/directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/common/error.h"
#include "core/common/message_text.h"

namespace sluice::checkpoint {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "ckpt_";
constexpr const char* kSuffix = ".h5";
constexpr const char* kTemporaryMarker = ".tmp-";

// Parses "ckpt_<digits>.h5" at the start of name and returns the step and the length consumed.
std::optional<std::pair<int64_t, size_t>> parse_leading_checkpoint_name(const std::string& name) {
  const std::string prefix = kPrefix;
  const std::string suffix = kSuffix;
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t cursor = prefix.size();
  int64_t step = 0;
  size_t digits = 0;
  while (cursor < name.size() && name[cursor] >= '0' && name[cursor] <= '9' && digits < 18) {
    step = step * 10 + (name[cursor] - '0');
    ++cursor;
    ++digits;
  }
  if (digits == 0 || name.compare(cursor, suffix.size(), suffix) != 0) return std::nullopt;
  return std::make_pair(step, cursor + suffix.size());
}

struct DirectoryListing {
  std::vector<std::pair<int64_t, fs::path>> complete;
  std::vector<std::pair<int64_t, fs::path>> temporary;
};

DirectoryListing list_checkpoints(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint directory '" + shorten_for_message(dir) + "' does not exist or is not a directory");
  }
  DirectoryListing listing;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (!entry.is_regular_file(error)) continue;
    const std::string name = entry.path().filename().string();
    if (auto step = step_of_checkpoint_name(name)) listing.complete.emplace_back(*step, entry.path());
    if (auto step = step_of_temporary_name(name)) listing.temporary.emplace_back(*step, entry.path());
  }
  if (error) throw Error(ErrorCode::kIo, "cannot list checkpoint directory '" + shorten_for_message(dir) + "': " + error.message());
  std::sort(listing.complete.begin(), listing.complete.end());
  return listing;
}

void remove_file(const fs::path& path) {
  std::error_code error;
  fs::remove(path, error);
  if (error) throw Error(ErrorCode::kIo, "cannot delete old checkpoint '" + shorten_for_message(path.string()) + "': " + error.message());
}

}  // namespace

std::string checkpoint_file_name(int64_t step) {
  if (step < 0) throw Error(ErrorCode::kInvalidArgument, "checkpoint step must be >= 0, got " + std::to_string(step));
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%s%08lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return buffer;
}

std::optional<int64_t> step_of_checkpoint_name(const std::string& file_name) {
  auto parsed = parse_leading_checkpoint_name(file_name);
  if (!parsed || parsed->second != file_name.size()) return std::nullopt;
  return parsed->first;
}

std::string temporary_path(const std::string& final_path, const std::string& writer_id) {
  return final_path + kTemporaryMarker + writer_id;
}

std::optional<int64_t> step_of_temporary_name(const std::string& file_name) {
  auto parsed = parse_leading_checkpoint_name(file_name);
  const std::string marker = kTemporaryMarker;
  if (!parsed || file_name.compare(parsed->second, marker.size(), marker) != 0 ||
      file_name.size() == parsed->second + marker.size()) {
    return std::nullopt;
  }
  return parsed->first;
}

std::string latest_in_dir(const std::string& dir) {
  const DirectoryListing listing = list_checkpoints(dir);
  if (listing.complete.empty()) {
    throw Error(ErrorCode::kCheckpoint, "checkpoint directory '" + dir +
                                            "' contains no complete checkpoint (ckpt_NNNNNNNN.h5)");
  }
  return listing.complete.back().second.string();
}

std::string resolve_checkpoint_path(const std::string& file_or_dir) {
  std::error_code error;
  return fs::is_directory(file_or_dir, error) ? latest_in_dir(file_or_dir) : file_or_dir;
}

std::string non_regular_kind(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "";  // missing (or unreachable): the caller's own open reports it
  switch (info.st_mode & S_IFMT) {
    case S_IFREG: return "";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

std::string this_writer_id() {
  if (const char* job = std::getenv("SLURM_JOB_ID")) return job;
  return std::to_string(::getpid());
}

void rotate(const std::string& dir, int keep, const std::string& writer_id) {
  if (keep < 1) {
    throw Error(ErrorCode::kInvalidArgument, "checkpoint rotate: keep must be >= 1, got " + std::to_string(keep));
  }
  const DirectoryListing listing = list_checkpoints(dir);
  const size_t to_delete = listing.complete.size() > static_cast<size_t>(keep)
                               ? listing.complete.size() - static_cast<size_t>(keep)
                               : 0;
  for (size_t i = 0; i < to_delete; ++i) remove_file(listing.complete[i].second);
  if (listing.complete.empty()) return;  // without a complete checkpoint no temporary can be proven stale
  const int64_t newest_step = listing.complete.back().first;
  const std::string own_suffix = kTemporaryMarker + writer_id;
  for (const auto& [step, path] : listing.temporary) {
    const std::string name = path.filename().string();
    const bool own = writer_id.empty() ||  // the caller holds the directory's lock: no one else is writing
                     (name.size() > own_suffix.size() &&
                      name.compare(name.size() - own_suffix.size(), own_suffix.size(), own_suffix) == 0);
    if (own && step <= newest_step) remove_file(path);
  }
}

}  // namespace sluice::checkpoint
