#include "core/runtime/resume_fallback.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <utility>

#include "checkpoint/byte_exchange.h"
#include "checkpoint/directory.h"
#include "checkpoint/isolated_read.h"
#include "checkpoint/reader.h"
#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/common/log.h"
#include "core/runtime/trainer_checkpoint.h"

namespace sluice::runtime {

std::vector<std::string> checkpoints_newest_first(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::optional<int64_t> step = checkpoint::step_of_checkpoint_name(entry.path().filename().string());
    if (step && entry.is_regular_file(error)) found.emplace_back(*step, entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

namespace {

// Collective: rank 0's list of candidates, on every rank (a save finishing meanwhile on a shared file system must
// not make ranks try different files).
std::vector<std::string> candidates_from_rank_0(Trainer& trainer, const std::string& dir) {
  std::string joined;
  comm::agree_or_throw(trainer.parts().mpi->world(), "listing the checkpoints to resume from", comm::capture_failure([&] {
                         if (trainer.layout().rank != 0) return;
                         for (const std::string& path : checkpoints_newest_first(dir)) joined += path + '\n';
                       }));
  // Inside an agreement, so a rank that times out in the broadcast makes every rank fail alike.
  comm::agree_or_throw(trainer.parts().mpi->world(), "sharing the list of checkpoints", comm::capture_failure([&] {
                         joined = checkpoint::broadcast_bytes(trainer.parts().mpi->world(), joined, 0);
                       }));
  std::vector<std::string> paths;
  std::istringstream lines(joined);
  for (std::string line; std::getline(lines, line);) paths.push_back(line);
  return paths;
}

}  // namespace

std::string load_newest_valid(Trainer& trainer, const std::string& dir, const ApplicationState* application) {
  const std::vector<std::string> candidates = candidates_from_rank_0(trainer, dir);
  if (candidates.empty()) throw Error(ErrorCode::kCheckpoint, "no complete checkpoint (ckpt_<step>.h5) in '" + dir + "'");
  std::string rejected;
  for (const std::string& file : candidates) {
    try {
      // Collective and agreed: every rank decides alike. The probe first: a file that crashes libhdf5 is skipped
      // like any other damaged file instead of killing every rank.
      checkpoint::probe_checkpoint(trainer.parts().mpi->world(), file,
                                   trainer.config().checkpoint.isolated_reads);
      checkpoint::verify_all(trainer.parts().mpi->world(), file);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kCheckpoint) throw;  // a communication failure is not the file's fault
      if (trainer.layout().rank == 0) {
        // Through the host's log (sluice_set_log); by default stderr as "sluice: warning: ...".
        log::warning("skipping checkpoint '" + file + "', it fails verification: " + e.what());
      }
      rejected += "\n  " + file + ": " + e.what();
      continue;
    }
    load_checkpoint(trainer, file, application, /*verified=*/true);
    return file;
  }
  throw Error(ErrorCode::kCheckpoint, "every checkpoint in '" + dir + "' fails verification; not starting from "
                                      "scratch (that would silently discard the run). Remove or repair them:" +
                                          rejected);
}

}  // namespace sluice::runtime
