#include "core/runtime/declared_domain.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/comm/small_collectives.h"
#include "core/common/error.h"
#include "core/config/sample_shape.h"

namespace sluice::runtime {

namespace {

// The most spatial dimensions a field has (sample_shape.h: [C, D1[, D2[, D3]]]): the gather's slots per vector.
constexpr size_t kMaxDims = 3;

[[noreturn]] void refuse(const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, "declared domain (sluice_trainer_set_domain): " + problem);
}

std::string list_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string box_text(const config::DomainBox& box) {
  return "offset " + list_text(box.offset) + ", extent " + list_text(box.extent);
}

// "ranks 2, 3 and 5" (the first 8, then how many more).
std::string ranks_text(const std::vector<int>& ranks) {
  constexpr size_t kNamed = 8;
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < kNamed; ++i) {
    text += (i == 0 ? "" : (i + 1 == ranks.size() ? " and " : ", ")) + std::to_string(ranks[i]);
  }
  if (ranks.size() > kNamed) text += " and " + std::to_string(ranks.size() - kNamed) + " more";
  return text;
}

std::string dimension_text(size_t d) { return "spatial dimension " + std::to_string(d + 1); }

std::vector<int64_t> spatial_extents(const config::Config& cfg) {
  const config::SampleShape input = config::input_shape_of(cfg.model);
  if (!config::is_field(input)) return {};
  return std::vector<int64_t>(input.begin() + 1, input.end());
}

// pipeline.domain, or one block per dimension when it is not set.
std::vector<int> configured_blocks(const config::Config& cfg, size_t dims) {
  return cfg.pipeline.domain.empty() ? std::vector<int>(dims, 1) : cfg.pipeline.domain;
}

}  // namespace

std::string declared_domain_problem(const config::Config& cfg, const DeclaredDomain& declared) {
  const std::vector<int64_t> extents = spatial_extents(cfg);
  if (extents.empty()) {
    return "the model's input (model.inputs) is rows of " + std::to_string(cfg.model.inputs) +
           " features, not a field [C, D1[, D2[, D3]]]: it has no spatial dimensions to split";
  }
  const config::DomainBox& box = declared.box;
  if (declared.global.size() != extents.size() || box.offset.size() != extents.size() ||
      box.extent.size() != extents.size()) {
    return std::to_string(declared.global.size()) + " spatial dimensions declared (ndims), but the model's input " +
           "(model.inputs) has " + std::to_string(extents.size()) + " (" + list_text(extents) + ")";
  }
  if (declared.global != extents) {
    return "global_extent " + list_text(declared.global) + " is not the model's input field " + list_text(extents) +
           " (model.inputs without the channels, C order)";
  }
  for (size_t d = 0; d < extents.size(); ++d) {
    const std::string where = " in " + dimension_text(d);
    if (box.extent[d] < 1) return "block_extent " + std::to_string(box.extent[d]) + where + " (must be positive)";
    if (box.offset[d] < 0) return "block_offset " + std::to_string(box.offset[d]) + where + " (must be 0 or more)";
    if (box.offset[d] > extents[d] - box.extent[d]) {
      return "block_offset " + std::to_string(box.offset[d]) + " + block_extent " + std::to_string(box.extent[d]) +
             where + " reaches past the field's " + std::to_string(extents[d]) + " points there";
    }
  }
  return "";
}

namespace {

// Every rank declared, or none: the ranks that did not, named.
void require_all_declared(const std::vector<RankDeclaration>& ranks) {
  std::vector<int> missing;
  int first_declared = -1;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].declared) missing.push_back(static_cast<int>(r));
    if (ranks[r].declared && first_declared < 0) first_declared = static_cast<int>(r);
  }
  if (missing.empty()) return;
  refuse(ranks_text(missing) + " declared no block while rank " + std::to_string(first_declared) +
         " did: every rank of the trainer declares the block it holds, or none does (then the trainer splits the "
         "field evenly)");
}

// One dimension's cuts of the declared boxes: the distinct intervals [offset, offset + extent), which must follow
// each other from 0 to the extent. Each interval remembers a rank that declared it, to name it.
std::vector<int64_t> dimension_cuts(const std::vector<RankDeclaration>& ranks, size_t d, int64_t extent) {
  std::map<std::pair<int64_t, int64_t>, int> intervals;  // (begin, end) -> the first rank declaring it
  for (size_t r = 0; r < ranks.size(); ++r) {
    const config::DomainBox& box = ranks[r].declared->box;
    intervals.emplace(std::make_pair(box.offset[d], box.offset[d] + box.extent[d]), static_cast<int>(r));
  }
  std::vector<int64_t> cuts = {0};
  int previous_rank = -1;
  for (const auto& [interval, rank] : intervals) {
    const std::string declared_by = "rank " + std::to_string(rank) + "'s points [" + std::to_string(interval.first) +
                                    ", " + std::to_string(interval.second) + ")";
    if (interval.first < cuts.back()) {
      refuse("in " + dimension_text(d) + " the declared blocks overlap: " + declared_by + " and rank " +
             std::to_string(previous_rank) + "'s, which end at " + std::to_string(cuts.back()) +
             " (blocks tile the field as a product grid: in each dimension they share their cuts)");
    }
    if (interval.first > cuts.back()) {
      refuse("in " + dimension_text(d) + " points [" + std::to_string(cuts.back()) + ", " +
             std::to_string(interval.first) + ") are in no declared block (the next is " + declared_by + ")");
    }
    cuts.push_back(interval.second);
    previous_rank = rank;
  }
  if (cuts.back() != extent) {
    refuse("in " + dimension_text(d) + " points [" + std::to_string(cuts.back()) + ", " + std::to_string(extent) +
           ") are in no declared block: the trainer's " + std::to_string(ranks.size()) + " ranks declare blocks "
           "covering only part of the field; a solver on more ranks than the trainer is not supported");
  }
  return cuts;
}

// The grid's block index of `box` (its cuts' positions).
int64_t grid_block(const std::vector<std::vector<int64_t>>& cuts, const config::DomainBox& box) {
  int64_t block = 0;
  for (size_t d = 0; d < cuts.size(); ++d) {
    const auto at = std::lower_bound(cuts[d].begin(), cuts[d].end(), box.offset[d]);
    block = block * static_cast<int64_t>(cuts[d].size() - 1) + (at - cuts[d].begin());
  }
  return block;
}

// The declared grid against the trainer: every cell declared by some rank, no more blocks than ranks, and
// pipeline.domain's grid.
void check_grid_counts(const config::Config& cfg, const std::vector<RankDeclaration>& ranks,
                       const std::vector<std::vector<int64_t>>& cuts) {
  std::vector<int64_t> grid;
  std::vector<int> blocks;
  for (const std::vector<int64_t>& c : cuts) grid.push_back(static_cast<int64_t>(c.size()) - 1);
  for (int64_t g : grid) blocks.push_back(static_cast<int>(g));
  const int64_t cells = config::domain_block_count(blocks);
  std::set<int64_t> declared;
  for (const RankDeclaration& r : ranks) declared.insert(grid_block(cuts, r.declared->box));
  const std::string grid_text = "the declared boxes cut the field into a " + list_text(grid) + " grid of " +
                                std::to_string(cells) + " blocks";
  if (cells > static_cast<int64_t>(ranks.size())) {
    refuse(grid_text + ", more than the trainer's " + std::to_string(ranks.size()) + " ranks: a solver on more "
           "ranks than the trainer is not supported (solver blocks " + std::to_string(cells) + ", trainer ranks " +
           std::to_string(ranks.size()) + ")");
  }
  if (static_cast<int64_t>(declared.size()) != cells) {
    refuse(grid_text + ", but only " + std::to_string(declared.size()) + " of them are declared (blocks tile the "
           "field as a product grid: in each dimension they share their cuts)");
  }
  const std::vector<int> configured = configured_blocks(cfg, cuts.size());
  if (blocks != configured) {
    std::vector<int64_t> wide(configured.begin(), configured.end());
    refuse(grid_text + ", but pipeline.domain is " + list_text(wide) + " (" +
           std::to_string(config::domain_block_count(configured)) + " blocks): declare pipeline.domain's grid");
  }
}

// Every rank's box must be the block its layout gives it; the boxes in block order.
std::vector<config::DomainBox> boxes_by_block(const std::vector<RankDeclaration>& ranks,
                                              const std::vector<std::vector<int64_t>>& cuts) {
  std::map<int64_t, config::DomainBox> boxes;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const config::DomainBox& box = ranks[r].declared->box;
    const int64_t block = grid_block(cuts, box);
    if (block != ranks[r].block) {
      refuse("rank " + std::to_string(r) + " declared " + box_text(box) + ", block " + std::to_string(block) +
             " of the grid (row-major, the last dimension fastest), but the trainer's layout places block " +
             std::to_string(ranks[r].block) + " on it (a stage's blocks are consecutive ranks; docs/DOMAIN.md, "
             "\"The host's layout\"): declare on each rank the block the layout gives it");
    }
    boxes.emplace(block, box);
  }
  std::vector<config::DomainBox> ordered;
  for (const auto& [block, box] : boxes) ordered.push_back(box);
  return ordered;
}

}  // namespace

std::optional<config::DomainLayout> layout_of_declarations(const config::Config& cfg,
                                                           const std::vector<RankDeclaration>& ranks) {
  if (std::none_of(ranks.begin(), ranks.end(), [](const RankDeclaration& r) { return r.declared.has_value(); })) {
    return std::nullopt;
  }
  require_all_declared(ranks);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string problem = declared_domain_problem(cfg, *ranks[r].declared);
    if (!problem.empty()) refuse("rank " + std::to_string(r) + ": " + problem);
  }
  const std::vector<int64_t> global = spatial_extents(cfg);
  std::vector<std::vector<int64_t>> cuts;
  for (size_t d = 0; d < global.size(); ++d) cuts.push_back(dimension_cuts(ranks, d, global[d]));
  check_grid_counts(cfg, ranks, cuts);
  const std::vector<config::DomainBox> boxes = boxes_by_block(ranks, cuts);
  config::DomainLayout layout =
      config::declared_domain_layout(global, configured_blocks(cfg, global.size()), cfg.pipeline.domain_tile, boxes);
  try {
    config::domain_layer_costs(cfg.model.layers, config::input_shape_of(cfg.model), layout);
  } catch (const Error& e) {
    throw Error(e.code(), "declared domain (sluice_trainer_set_domain): " + std::string(e.what()));
  }
  return layout;
}

namespace {

// The gather's fixed record per rank: block, declared?, the three vectors' sizes, then kMaxDims slots each.
constexpr size_t kRecord = 5 + 3 * kMaxDims;

void put(std::vector<int64_t>& record, size_t at, const std::vector<int64_t>& values) {
  for (size_t i = 0; i < values.size() && i < kMaxDims; ++i) record[at + i] = values[i];
}

// A vector of the recorded size (a size beyond kMaxDims keeps its count, its values past the slots read 0: such a
// declaration is refused for its dimensions anyway).
std::vector<int64_t> take(const int64_t* record, int64_t size, size_t at) {
  std::vector<int64_t> values(static_cast<size_t>(std::max<int64_t>(size, 0)), 0);
  for (size_t i = 0; i < values.size() && i < kMaxDims; ++i) values[i] = record[at + i];
  return values;
}

}  // namespace

std::optional<config::DomainLayout> gather_declared_domain(MPI_Comm world, const config::Config& cfg,
                                                           int layout_block,
                                                           const std::optional<DeclaredDomain>& mine) {
  std::vector<int64_t> record(kRecord, 0);
  record[0] = layout_block;
  if (mine) {
    record[1] = 1;
    record[2] = static_cast<int64_t>(mine->global.size());
    record[3] = static_cast<int64_t>(mine->box.offset.size());
    record[4] = static_cast<int64_t>(mine->box.extent.size());
    put(record, 5, mine->global);
    put(record, 5 + kMaxDims, mine->box.offset);
    put(record, 5 + 2 * kMaxDims, mine->box.extent);
  }
  const std::vector<int64_t> all = comm::all_gather_int64s(world, record, "the declared domain blocks");
  std::vector<RankDeclaration> ranks(all.size() / kRecord);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const int64_t* at = all.data() + r * kRecord;
    ranks[r].block = static_cast<int>(at[0]);
    if (at[1] == 0) continue;
    config::DomainBox box{take(at, at[3], 5 + kMaxDims), take(at, at[4], 5 + 2 * kMaxDims)};
    ranks[r].declared = DeclaredDomain{take(at, at[2], 5), std::move(box)};
  }
  return layout_of_declarations(cfg, ranks);
}

}  // namespace sluice::runtime
