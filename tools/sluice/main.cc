// The `sluice` command: plan (simulate and draw a schedule), train (run under mpirun/srun), inspect
// (checkpoints), export (a model-only checkpoint to ship), submit (fill and submit an sbatch script). Each subcommand lives in its own module; this
// file only dispatches and turns errors into exit codes: 2 for bad arguments, 1 for everything else
// (a subcommand may choose another code, e.g. `train` after a preemption checkpoint).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "core/common/error.h"
#include "tools/sluice/build_info.h"
#include "tools/sluice/command_exit.h"
#include "tools/sluice/export_command.h"
#include "tools/sluice/inspect_command.h"
#include "tools/sluice/plan_command.h"
#include "tools/sluice/submit_command.h"
#include "tools/sluice/train_command.h"

int main(int argc, char** argv) {
  CLI::App app{"sluice: pipeline-parallel training for C and Fortran simulation codes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", sluice::tools::version_text(), "Print the version and how this binary was built");
  sluice::tools::register_plan_command(app);
  sluice::tools::register_train_command(app);
  sluice::tools::register_inspect_command(app);
  sluice::tools::register_export_command(app);
  sluice::tools::register_submit_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return 2;
  } catch (const sluice::tools::CommandExit& e) {
    return e.code;
  } catch (const sluice::Error& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return e.code() == sluice::ErrorCode::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
