// Merging every rank's checkpoint metadata into the one list of datasets rank 0 writes (checkpoint/save.cc).
#pragma once

#include <string>
#include <vector>

#include "checkpoint/manifest.h"

namespace sluice::checkpoint {

// Every rank's items (per_rank[r]: serialize_manifest of rank r's) in path order; deterministic, so every rank
// detects a clash identically without agreement. A path several ranks contribute is one item only when each
// contributes a box of it (ManifestItem::boxes) and the boxes tile the dataset exactly: the merged item has
// owner_rank kBlockOwners and every owner's box, by rank. Error(kInvalidArgument) naming the path and the ranks for
// a path two ranks contribute whole, boxes that overlap, leave a gap, reach outside the dataset, or whose owners
// disagree on the dataset's dims or type.
std::vector<ManifestItem> merge_manifests(const std::vector<std::string>& per_rank);

}  // namespace sluice::checkpoint
