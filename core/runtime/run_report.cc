#include "core/runtime/run_report.h"

#include "core/runtime/rank_order_choice.h"

#include <mpi.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/model/recompute_mode.h"
#include "core/runtime/domain_step_traffic.h"
#include "core/runtime/placement.h"
#include "core/schedule/chrome_trace.h"
#include "kernels/cpu/onednn_gemm.h"

namespace sluice::runtime {
namespace {

void write_chrome_trace_file(const std::vector<std::string>& per_rank, const std::string& path) {
  std::vector<schedule::TraceEvent> events;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    std::istringstream in(per_rank[r]);
    schedule::TraceEvent e;
    while (in >> e.start_us >> e.duration_us >> e.name) {
      e.rank = static_cast<int>(r);
      events.push_back(e);
    }
  }
  std::ofstream file(path);
  if (!file) throw Error(ErrorCode::kIo, "cannot write trace file '" + path + "'");
  schedule::write_chrome_trace(file, events);
}

std::string host_name() {
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  return std::string(host, static_cast<size_t>(len));
}

// This rank's line of the layout print.
std::string list_text(const std::vector<int64_t>& values) {
  std::string text;
  for (const int64_t v : values) text += (text.empty() ? "[" : ", ") + std::to_string(v);
  return text + "]";
}

// The rows one call of `sluice train` trains on per replica (0 when data.batch is not configured: the C API's
// calls bring their own).
int64_t rows_per_call(const Trainer& trainer) {
  return trainer.config().data.batch / trainer.layout().data_parallel;
}

// ", halo bytes per call on paper N (M messages), tile-gather bytes G" for a block of a split when the call's rows
// are known.
std::string paper_halo_text(Trainer& trainer) {
  const RunDomain& domain = *trainer.parts().domain;
  const int64_t rows = rows_per_call(trainer);
  if (rows <= 0) return "";
  std::vector<std::pair<int, int>> ranges;
  for (auto& [index, stage] : trainer.parts().stages) ranges.emplace_back(stage->first_layer(), stage->last_layer());
  const DomainStepTraffic t =
      domain_step_traffic(trainer.config(), domain.layout, domain.block, ranges, rows, trainer.config().pipeline.microbatches);
  std::vector<int64_t> params(trainer.config().model.layers.size(), 0);
  for (auto& [index, stage] : trainer.parts().stages) {
    for (int l = stage->first_layer(); l < stage->last_layer(); ++l) {
      for (model::Parameter* p : stage->layer(l).parameters()) params[static_cast<size_t>(l)] += p->value.size();
    }
  }
  const int64_t gathered = domain_gather_bytes(trainer.config(), domain.layout, domain.block, ranges, params, rows,
                                               trainer.config().pipeline.microbatches);
  return ", halo bytes per call on paper " + std::to_string(t.halo_bytes) + " (" + std::to_string(t.halo_messages) +
         " messages), tile-gather bytes " + std::to_string(gathered);
}

std::string my_layout_line(Trainer& trainer) {
  const config::Layout& layout = trainer.layout();
  std::ostringstream mine;
  mine << "rank " << layout.rank << ": replica " << layout.replica << ", pipeline rank " << layout.stage_rank;
  if (layout.blocks > 1 && trainer.parts().domain) {
    const config::DomainBox box = trainer.parts().domain->box();
    mine << ", domain block " << layout.block << " (offset " << list_text(box.offset) << ", extent "
         << list_text(box.extent) << ")" << paper_halo_text(trainer);
  }
  mine << ", stages";
  for (auto& [index, stage] : trainer.parts().stages) {
    mine << " " << index << " (layers " << stage->first_layer() << "-" << stage->last_layer() - 1 << ")";
  }
  const std::vector<int>& nodes = trainer.parts().rank_order.node_of_rank;
  if (!nodes.empty()) mine << ", node " << nodes.at(layout.rank);
  mine << ", " << trainer.parts().blas_threads << " kernel thread(s)";
  // Which library multiplies, and OpenBLAS's kernel choice: a CPU OpenBLAS does not know runs its slow fallback.
  if (trainer.parts().backend->device() == kernels::Device::kHost) mine << " (" << kernels::cpu_products_text() << ")";
  mine << ", host " << host_name() << " (node-local rank " << node_local_rank() << "), device "
       << trainer.parts().backend->device_name() << ", transport " << trainer.parts().transport_name();
  return mine.str();
}

}  // namespace

std::string layout_description(Trainer& trainer) {
  const config::Layout& layout = trainer.layout();
  const config::Config& cfg = trainer.config();
  const std::vector<std::string> lines = trainer.parts().mpi->world_group().gather_text(my_layout_line(trainer), 0);
  std::ostringstream out;
  out << "sluice: " << layout.world << " ranks = " << layout.data_parallel << " data-parallel x " << layout.stages
      << " pipeline ranks" << (layout.blocks > 1 ? " x " + std::to_string(layout.blocks) + " domain blocks" : "")
      << ", schedule " << config::schedule_setting_name(cfg.pipeline.schedule) << ", "
      << cfg.pipeline.chunks << " chunk(s)/rank, " << cfg.pipeline.microbatches << " micro-batches, recompute "
      << model::recompute_mode_name(cfg.pipeline.recompute) << ", transport " << trainer.parts().transport_summary();
  if (!trainer.parts().gradient_sum_name().empty()) out << ", gradient sum " << trainer.parts().gradient_sum_name();
  out << "\n  " << describe(trainer.parts().rank_order, cfg.pipeline.rank_order) << "\n";
  if (!trainer.parts().schedule_choice_report.empty()) out << trainer.parts().schedule_choice_report;
  if (layout.blocks > 1 && trainer.parts().domain && rows_per_call(trainer) > 0) {
    out << "  halo bytes per call on paper: what each block sends, the forward and backward halos of its stages' "
           "layers for "
        << rows_per_call(trainer) << " rows in " << cfg.pipeline.microbatches
        << " micro-batches (excluding the halos a recompute re-exchanges), and its tile gathers (the parameter "
           "gradients' tile partials, the norm statistics, the loss; excluding the norms' a recompute repeats); "
           "measured in the summary\n";
  }
  for (const std::string& line : lines) out << "  " << line << "\n";
  return out.str();
}

PipelineStats gather_stats(Trainer& trainer) {
  const StepCounters& c = trainer.stats().counters;
  constexpr int kFields = 9 + kNumComputeKinds;
  double mine[kFields] = {c.busy_total(), c.step_seconds, static_cast<double>(trainer.stats().peak_stash_bytes),
                          static_cast<double>(c.peak_stash_microbatches), c.wait_seconds, c.pipeline_seconds,
                          static_cast<double>(c.halo_bytes_sent), static_cast<double>(c.halo_messages_sent),
                          static_cast<double>(c.gather_bytes_sent)};
  for (int k = 0; k < kNumComputeKinds; ++k) mine[9 + k] = c.busy_seconds[k];
  const std::vector<double> all = trainer.parts().mpi->world_group().all_gather(mine, kFields);
  PipelineStats s;
  s.bubble_fraction = trainer.stats().bubble_fraction;
  for (int r = 0; r < trainer.layout().world; ++r) {
    const double* row = all.data() + static_cast<size_t>(r) * kFields;
    s.busy_seconds.push_back(row[0]);
    s.step_seconds.push_back(row[1]);
    s.peak_stash_bytes.push_back(row[2]);
    s.peak_stash_microbatches.push_back(row[3]);
    s.wait_seconds.push_back(row[4]);
    s.idle_fraction.push_back(row[5] > 0.0 ? 1.0 - row[0] / row[5] : 0.0);
    s.halo_bytes_sent.push_back(row[6]);
    s.halo_messages_sent.push_back(row[7]);
    s.gather_bytes_sent.push_back(row[8]);
    std::array<double, kNumComputeKinds> kinds{};
    for (int k = 0; k < kNumComputeKinds; ++k) kinds[k] = row[9 + k];
    s.busy_by_kind.push_back(kinds);
  }
  return s;
}

void write_trace(Trainer& trainer, const std::string& path) {
  // Each rank's timeline as text lines "start duration name", gathered on rank 0.
  std::ostringstream mine;
  for (const auto& e : trainer.stats().counters.timeline) {
    mine << e.start_us << " " << e.duration_us << " " << e.name << "\n";
  }
  const std::vector<std::string> all = trainer.parts().mpi->world_group().gather_text(mine.str(), 0);
  comm::agree_or_throw(trainer.parts().mpi->world(), "writing the trace", comm::capture_failure([&] {
                         if (trainer.layout().rank == 0) write_chrome_trace_file(all, path);
                       }));
}

}  // namespace sluice::runtime
