// Command-line face of page_cache.h, so run.sh evicts and inspects dd's file with exactly the code the benchmark
// uses on the checkpoint: `page_cache_tool evict FILE` / `page_cache_tool resident FILE` (prints the fraction).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "bench/checkpoint/page_cache.h"
#include "core/common/error.h"

int main(int argc, char** argv) {
  CLI::App app{"evict a file from the page cache, or report how much of it is cached"};
  app.require_subcommand(1);
  std::string path;
  CLI::App* evict = app.add_subcommand("evict", "drop the file's clean pages from the page cache");
  evict->add_option("file", path, "file to evict")->required();
  CLI::App* resident = app.add_subcommand("resident", "print the cached fraction of the file (0 to 1)");
  resident->add_option("file", path, "file to inspect")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    if (evict->parsed()) sluice::bench::evict_from_page_cache(path);
    if (resident->parsed()) std::printf("%.3f\n", sluice::bench::resident_fraction(path));
  } catch (const sluice::Error& error) {
    std::fprintf(stderr, "page_cache_tool: %s\n", error.what());
    return 1;
  }
  return 0;
}
