#include "checkpoint/manifest_merge.h"

#include <algorithm>

#include "checkpoint/dataset_chunks.h"
#include "core/common/error.h"

namespace sluice::checkpoint {
namespace {

Error merge_error(const std::string& path, const std::string& problem) {
  return Error(ErrorCode::kInvalidArgument, "checkpoint entry '" + path + "' " + problem);
}

std::string ranks_text(const std::vector<ManifestItem>& group) {
  std::string text;
  for (size_t i = 0; i < group.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == group.size() ? " and " : ", ") + std::to_string(group[i].owner_rank);
  }
  return (group.size() == 1 ? "rank " : "ranks ") + text;
}

std::string box_text(const OwnedBox& box) {
  std::string text = "[";
  for (size_t k = 0; k < box.offset.size(); ++k) {
    text += (k == 0 ? "" : ", ") + std::to_string(box.offset[k]) + ":" +
            std::to_string(box.offset[k] + box.extent[k]);
  }
  return text + "]";
}

Box as_box(const OwnedBox& box) { return {box.offset, box.extent}; }

// One path's items from several ranks (in rank order), each a box of the same dataset: one item holding every box,
// when they tile the dataset exactly.
ManifestItem merge_blocks(const std::vector<ManifestItem>& group) {
  const ManifestItem& first = group.front();
  const Box whole{std::vector<int64_t>(first.dims.size(), 0), first.dims};
  ManifestItem merged = first;
  merged.owner_rank = kBlockOwners;
  merged.crc32 = 0;
  merged.boxes.clear();
  int64_t covered = 0;
  for (const ManifestItem& item : group) {
    if (item.boxes.size() != 1) {
      throw merge_error(first.path, "is contributed by " + ranks_text(group) + ", not all of them as one block");
    }
    if (item.dims != first.dims || item.type != first.type) {
      throw merge_error(first.path, "has other dims or another type on rank " + std::to_string(item.owner_rank) +
                                        " than on rank " + std::to_string(first.owner_rank));
    }
    const OwnedBox& box = item.boxes.front();
    if (!box_contains(whole, as_box(box))) {
      throw merge_error(first.path, "block " + box_text(box) + " of rank " + std::to_string(box.rank) +
                                        " reaches outside the dataset");
    }
    for (const OwnedBox& other : merged.boxes) {
      Box overlap;
      if (intersect_boxes(as_box(box), as_box(other), overlap)) {
        throw merge_error(first.path, "blocks of rank " + std::to_string(other.rank) + " " + box_text(other) +
                                          " and rank " + std::to_string(box.rank) + " " + box_text(box) +
                                          " overlap");
      }
    }
    covered += box_volume(as_box(box));
    merged.boxes.push_back(box);
  }
  if (covered != box_volume(whole)) {
    throw merge_error(first.path, "blocks of " + ranks_text(group) + " leave a gap: they cover " +
                                      std::to_string(covered) + " of its " + std::to_string(box_volume(whole)) +
                                      " values");
  }
  return merged;
}

}  // namespace

std::vector<ManifestItem> merge_manifests(const std::vector<std::string>& per_rank) {
  std::vector<ManifestItem> items;
  for (size_t rank = 0; rank < per_rank.size(); ++rank) {
    for (ManifestItem& item : deserialize_manifest(per_rank[rank], static_cast<int>(rank))) items.push_back(item);
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const ManifestItem& a, const ManifestItem& b) { return a.path < b.path; });
  std::vector<ManifestItem> all;
  for (size_t begin = 0; begin < items.size();) {
    size_t end = begin + 1;
    while (end < items.size() && items[end].path == items[begin].path) ++end;
    const std::vector<ManifestItem> group(items.begin() + static_cast<std::ptrdiff_t>(begin),
                                          items.begin() + static_cast<std::ptrdiff_t>(end));
    const bool any_block = std::any_of(group.begin(), group.end(), [](const ManifestItem& i) { return !i.boxes.empty(); });
    if (!any_block && group.size() > 1) {
      throw merge_error(group[0].path, "is contributed by both rank " + std::to_string(group[0].owner_rank) +
                                           " and rank " + std::to_string(group[1].owner_rank));
    }
    all.push_back(any_block ? merge_blocks(group) : group.front());
    begin = end;
  }
  return all;
}

}  // namespace sluice::checkpoint
