#include "tools/sluice/export_command.h"

#include <mpi.h>

#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string>

#include "checkpoint/model_export.h"
#include "core/common/error.h"

namespace sluice::tools {
namespace {

struct ExportOptions {
  std::string checkpoint;
  std::string out;
  bool with_application_state = false;
};

int64_t file_bytes(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

// MPI lives exactly as long as the export: save() writes through a communicator (here MPI_COMM_SELF).
class MpiSession {
 public:
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
    owned_ = initialized == 0;
  }
  ~MpiSession() {
    if (owned_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owned_ = false;
};

void run_export(const ExportOptions& options) {
  checkpoint::ExportOptions what;
  what.with_application_state = options.with_application_state;
  std::string source;
  {
    const MpiSession mpi;
    source = checkpoint::export_model_file(options.checkpoint, options.out, what);
  }
  std::cout << "wrote model-only export " << options.out << " (" << file_bytes(options.out) << " bytes) from "
            << source << " (" << file_bytes(source) << " bytes)" << std::endl;
}

}  // namespace

void register_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command = app.add_subcommand(
      "export", "Write a model-only copy of a checkpoint to ship for inference: parameters, normalization and "
                "config, without optimizer state or submitted samples (a run cannot resume from it)");
  command->add_option("checkpoint", options->checkpoint, "checkpoint file, or a directory (meaning its latest)")
      ->required();
  command->add_option("out", options->out, "the export to write (replaced if it exists)")->required();
  command->add_flag("--with-application-state", options->with_application_state,
                    "keep the host application's registered arrays (/application); left out by default");
  command->callback([options] { run_export(*options); });
}

}  // namespace sluice::tools
