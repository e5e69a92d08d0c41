#include "slurm/sbatch_runner.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/common/error.h"

extern char** environ;

namespace sluice::slurm {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream directories(path);
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (directory.empty()) directory = ".";
    const std::string candidate = directory + "/" + program;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

int run_sbatch(const std::string& sbatch_path, const std::string& script_path, bool wait) {
  std::vector<std::string> words = {sbatch_path};
  if (wait) words.push_back("--wait");
  words.push_back(script_path);
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  pid_t child = 0;
  const int spawn_error = posix_spawn(&child, sbatch_path.c_str(), nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0) {
    throw Error(ErrorCode::kIo, "could not run " + sbatch_path + ": " + std::strerror(spawn_error));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error(ErrorCode::kIo, "waiting for " + sbatch_path + ": " + std::strerror(errno));
  }
  if (WIFSIGNALED(status)) {
    throw Error(ErrorCode::kIo, sbatch_path + " was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return WEXITSTATUS(status);
}

}  // namespace sluice::slurm
