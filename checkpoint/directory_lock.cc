#include "checkpoint/directory_lock.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "checkpoint/directory.h"
#include "core/common/error.h"
#include "core/common/message_text.h"

namespace sluice::checkpoint {
namespace {

constexpr const char* kLockName = ".sluice.lock";

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string slurm_job_id() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job ? job : "";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string describe_self() {
  return "host=" + host_name() + "\npid=" + std::to_string(getpid()) + "\nslurm_job_id=" + slurm_job_id() +
         "\nstarted=" + utc_now() + "\n";
}

std::map<std::string, std::string> parse_holder(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) fields[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return fields;
}

std::string holder_text(const std::map<std::string, std::string>& holder) {
  auto field = [&](const char* key) {
    const auto found = holder.find(key);
    return found == holder.end() || found->second.empty() ? std::string("?") : found->second;
  };
  return "host " + field("host") + ", pid " + field("pid") + ", SLURM job " + field("slurm_job_id") + ", since " +
         field("started");
}

// The holder's process on this host: its pid if the lock was written here, else nullopt.
std::optional<pid_t> local_pid(const std::map<std::string, std::string>& holder) {
  const auto host = holder.find("host");
  const auto pid_text = holder.find("pid");
  if (host == holder.end() || host->second != host_name() || pid_text == holder.end()) return std::nullopt;
  char* end = nullptr;
  const long pid = std::strtol(pid_text->second.c_str(), &end, 10);
  if (end == pid_text->second.c_str() || *end != '\0' || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

// Whether the holder cannot be writing any more: a dead pid on this host, or this job's own SLURM_JOB_ID (a
// requeue after a node failure) unless its process is alive right here (another trainer of this very process or
// job step still using the directory).
bool holder_is_gone(const std::map<std::string, std::string>& holder) {
  const std::optional<pid_t> pid = local_pid(holder);
  const bool alive_here = pid && (kill(*pid, 0) == 0 || errno != ESRCH);
  if (pid && !alive_here) return true;
  const std::string job = slurm_job_id();
  const auto held_job = holder.find("slurm_job_id");
  return !job.empty() && held_job != holder.end() && held_job->second == job && !alive_here;
}

// Refuses a lock path that exists and is not a regular file (a FIFO, a directory, a socket, a device, a symlink
// to one) before anything opens it: opening a FIFO would block until a writer came, forever (issue 28).
void require_regular_lock(const std::string& lock) {
  const std::string kind = non_regular_kind(lock);
  if (kind.empty()) return;
  throw Error(ErrorCode::kCheckpoint, "checkpoint directory lock '" + shorten_for_message(lock) + "' is " + kind +
                                          ", not a lock file; remove it (it was not written by Sluice)");
}

bool read_file(const std::string& path, std::string& text) {
  if (!non_regular_kind(path).empty()) return false;  // never open a FIFO (it would block) or a directory
  std::ifstream file(path);
  if (!file) return false;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  text = buffer.str();
  return true;
}

// Writes `content` to a private file and links it to `lock`: false if `lock` exists (EEXIST).
bool try_create(const std::string& lock, const std::string& content) {
  const std::string mine = lock + ".new-" + host_name() + "-" + std::to_string(getpid());
  {
    errno = 0;
    std::ofstream file(mine, std::ios::trunc);
    file << content;
    file.close();
    if (!file) {
      // errno from the failed write or close says why (a full disk: "No space left on device").
      const int error = errno;
      std::remove(mine.c_str());
      throw Error(ErrorCode::kIo, "cannot write checkpoint directory lock '" + shorten_for_message(mine) + "'" +
                                      (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
    }
  }
  const int linked = link(mine.c_str(), lock.c_str());
  const int link_error = errno;
  unlink(mine.c_str());
  if (linked == 0) return true;
  if (link_error == EEXIST) return false;
  throw Error(ErrorCode::kIo, "cannot create checkpoint directory lock '" + shorten_for_message(lock) + "': " + std::strerror(link_error));
}

// Removes the stale lock `held` was read from. It is first renamed to a private name, so that if another job
// took it over between our read and now, what we moved is recognisably not `held` and is put back.
bool remove_if_unchanged(const std::string& lock, const std::string& held) {
  const std::string moved = lock + ".stale-" + host_name() + "-" + std::to_string(getpid());
  if (rename(lock.c_str(), moved.c_str()) != 0) return false;  // gone already: just retry the create
  std::string now;
  if (read_file(moved, now) && now != held) {
    rename(moved.c_str(), lock.c_str());  // a live lock taken meanwhile: restore it
    return false;
  }
  unlink(moved.c_str());
  return true;
}

}  // namespace

std::string lock_file_path(const std::string& dir) { return dir + "/" + kLockName; }

DirectoryLock::DirectoryLock(const std::string& dir) : path_(lock_file_path(dir)), content_(describe_self()) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error(ErrorCode::kIo, "cannot create checkpoint directory '" + shorten_for_message(dir) + "': " + std::strerror(errno));
  }
  // A few rounds: a stale lock is removed and the create retried; another job may win that race.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (try_create(path_, content_)) return;
    require_regular_lock(path_);
    std::string held;
    if (!read_file(path_, held)) continue;  // released meanwhile
    const std::map<std::string, std::string> holder = parse_holder(held);
    if (!holder_is_gone(holder)) {
      throw Error(ErrorCode::kCheckpoint,
                  "checkpoint directory '" + shorten_for_message(dir) + "' is in use by another job (" + holder_text(holder) +
                      "; lock file '" + shorten_for_message(path_) + "'); two jobs in one directory would overwrite each other's "
                      "checkpoints: give this run another checkpoint.dir, or delete the lock file if that job is gone");
    }
    if (remove_if_unchanged(path_, held)) taken_over_from_ = holder_text(holder);
  }
  throw Error(ErrorCode::kCheckpoint, "checkpoint directory '" + shorten_for_message(dir) + "': could not take the lock '" + path_ +
                                          "' (other jobs keep replacing it)");
}

DirectoryLock::~DirectoryLock() {
  std::string held;
  if (read_file(path_, held) && held == content_) unlink(path_.c_str());
}

}  // namespace sluice::checkpoint
