// Write and read throughput of a collective checkpoint (save() includes checksums, fsync and the atomic rename;
// reads verify every checksum). run.sh compares it with dd on the same disk in the same run.
// Between write and read the file's pages are evicted from the page cache, so the read comes from the disk (the
// fraction still cached is reported, and should be 0).
// Prints one line: RESULT ranks=<n> bytes=<total> write_s=<s> read_s=<s> resident_before_read=<f>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/checkpoint/page_cache.h"
#include "checkpoint/directory.h"
#include "checkpoint/layer_paths.h"
#include "checkpoint/reader.h"
#include "checkpoint/save.h"

namespace {

struct BenchOptions {
  std::string dir = ".";
  int mib_per_rank = 512;
  int tensor_mib = 64;
};

// Pipeline-like ownership: rank r holds a contiguous block of layers, one float tensor of tensor_mib each.
sluice::checkpoint::Snapshot make_snapshot(const BenchOptions& options, int rank) {
  const int layers_per_rank = std::max(1, options.mib_per_rank / options.tensor_mib);
  const int64_t floats = int64_t{options.tensor_mib} * (1 << 20) / static_cast<int64_t>(sizeof(float));
  sluice::checkpoint::Snapshot snapshot;
  for (int i = 0; i < layers_per_rank; ++i) {
    const int layer = rank * layers_per_rank + i;
    std::vector<float> data(static_cast<size_t>(floats));
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<float>(layer) + static_cast<float>(k % 1024);
    snapshot.entries.push_back({sluice::checkpoint::model_path(layer, "weight"), {floats}, std::move(data)});
  }
  if (rank == 0) snapshot.train_ints["step"] = 1;
  return snapshot;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  CLI::App app{"checkpoint write/read throughput"};
  BenchOptions options;
  app.add_option("--dir", options.dir, "directory on the disk to measure")->check(CLI::ExistingDirectory);
  app.add_option("--mib-per-rank", options.mib_per_rank, "MiB each rank contributes")->check(CLI::PositiveNumber);
  app.add_option("--tensor-mib", options.tensor_mib, "MiB per dataset")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = rank == 0 ? app.exit(error) : 2;
    MPI_Finalize();
    return code;
  }

  const sluice::checkpoint::Snapshot mine = make_snapshot(options, rank);
  int64_t my_bytes = 0;
  for (const auto& entry : mine.entries) my_bytes += static_cast<int64_t>(entry.data.size() * sizeof(float));
  int64_t total_bytes = 0;
  MPI_Allreduce(&my_bytes, &total_bytes, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

  const std::string file = options.dir + "/" + sluice::checkpoint::checkpoint_file_name(1);

  MPI_Barrier(MPI_COMM_WORLD);
  const double write_start = MPI_Wtime();
  sluice::checkpoint::save(MPI_COMM_WORLD, file, mine);
  MPI_Barrier(MPI_COMM_WORLD);
  const double write_seconds = MPI_Wtime() - write_start;

  // save() has fsynced the file, so all its pages are clean and can be dropped: the read below then measures the
  // disk, as dd's read does after run.sh evicts dd's file the same way.
  double resident_before_read = 0.0;
  if (rank == 0) {
    sluice::bench::evict_from_page_cache(file);
    resident_before_read = sluice::bench::resident_fraction(file);
  }

  // A trainer restores into parameter memory it already holds, so the read goes into preallocated buffers.
  std::vector<std::vector<float>> destinations;
  for (const auto& entry : mine.entries) destinations.emplace_back(entry.data.size(), 0.0f);
  MPI_Barrier(MPI_COMM_WORLD);
  const double read_start = MPI_Wtime();
  {
    const sluice::checkpoint::Reader reader(MPI_COMM_WORLD, file);
    for (size_t i = 0; i < mine.entries.size(); ++i) {
      reader.read_into(mine.entries[i].path, destinations[i].data(), destinations[i].size());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double read_seconds = MPI_Wtime() - read_start;

  if (rank == 0) {
    std::printf("RESULT ranks=%d bytes=%lld write_s=%.3f read_s=%.3f resident_before_read=%.3f\n", ranks,
                static_cast<long long>(total_bytes), write_seconds, read_seconds,
                resident_before_read);
    std::filesystem::remove(file);
  }
  MPI_Finalize();
  return 0;
}
