// Times generation + lowering + validation at production scale (default p = 512, m = 4096) and reports each
// schedule's peak resident memory and CPU time. Each schedule runs in a forked child so its peak RSS is its own.
// Goal: under 2 s and 1 GiB per schedule. Usage: schedule_bench [P M [costed]]
// With `costed`: the lowering `sluice plan` uses, timed by F=2 I=1 W=0.5 (lower_and_replay(compute, costs), which
// also gives the chosen lists' posting-order and blocking makespans), then validate() as without.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs in the child; prints one table row.
void run_one(const std::string& name, int ranks, int microbatches, int chunks, bool costed) {
  using namespace sluice::schedule;
  CostModel costs;
  costs.forward = 2;
  costs.backward_weight = 0.5;
  const auto start = Clock::now();
  const Schedule compute = make_schedule(name, ranks, microbatches, chunks);
  const double generated = seconds_since(start);
  // Costed: as `sluice plan` does, the lowering that hands out the replays it chose by (no replay follows it), then
  // the validator.
  const Schedule lowered = costed ? lower_and_replay(compute, costs).lowered : lower(compute);
  const double after_lowering = seconds_since(start);
  validate(lowered);
  const double total = seconds_since(start);
  size_t actions = 0;
  for (const auto& list : lowered.actions) actions += list.size();
  std::printf("| %-11s | %d | %10zu | %8.3f | %8.3f | %8.3f | %8.3f |", name.c_str(), chunks, actions, generated,
              after_lowering - generated, total - after_lowering, total);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 2 ? std::atoi(argv[1]) : 512;
  const int microbatches = argc > 2 ? std::atoi(argv[2]) : 4096;
  const bool costed = argc > 3 && std::string(argv[3]) == "costed";
  std::printf("p = %d, m = %d (times in seconds; RSS = peak resident set of the run)\n\n", ranks, microbatches);
  std::printf("| schedule    | v | actions    | generate | lower    | validate | total    | cpu      | peak RSS MiB |\n");
  std::printf("|-------------|---|------------|----------|----------|----------|----------|----------|--------------|\n");
  std::fflush(stdout);
  const struct {
    const char* name;
    int chunks;
  } cases[] = {{"gpipe", 1}, {"1f1b", 1}, {"interleaved", 2}, {"zb-h1", 1}, {"zb-v", 2}};
  int failures = 0;
  for (const auto& c : cases) {
    std::fflush(stdout);  // the child must not inherit (and re-print) buffered rows
    const pid_t child = fork();
    if (child == 0) {
      run_one(c.name, ranks, microbatches, c.chunks, costed);
      std::_Exit(0);
    }
    int status = 0;
    struct rusage usage {};
    wait4(child, &status, 0, &usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("| %-11s | failed (status %d)\n", c.name, status);
      ++failures;
      continue;
    }
    // CPU time (user + system) next to the wall time: on a shared machine it shows how much of the wall time
    // was the run itself rather than waiting for a core.
    const double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec +
                       usage.ru_stime.tv_usec * 1e-6;
    std::printf(" %8.3f | %12.0f |\n", cpu, usage.ru_maxrss / 1024.0);  // ru_maxrss is in KiB on Linux
  }
  return failures == 0 ? 0 : 1;
}
