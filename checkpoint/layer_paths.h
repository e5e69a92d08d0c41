// Dataset paths inside a checkpoint. The layout is keyed by GLOBAL layer index, never by rank, so a checkpoint
// written under one pipeline layout can be read under another: each rank simply reads the layers it now owns.
#pragma once

#include <optional>
#include <string>

namespace sluice::checkpoint {

// "layer_0003": zero-padded to 4 digits so that name order equals layer order in h5dump/h5ls for < 10000 layers.
std::string layer_group_name(int layer);

std::string model_path(int layer, const std::string& param);                                  // /model/layer_0003/weight
std::string optimizer_path(int layer, const std::string& param, const std::string& state);    // /optimizer/layer_0003/weight/exp_avg
std::string accumulation_path(int layer, const std::string& param);                           // /accumulation/layer_0003/weight
// One data-parallel replica's partial gradient sum of a parameter in the middle of an accumulation window (replicas
// hold different sums until the data-parallel sum at the window's end): /accumulation/layer_0003/weight/replica_1.
std::string accumulation_path(int layer, const std::string& param, int replica);
std::string train_path(const std::string& name);                                              // /train/step
// A registered application array (sluice_register_state): replicated ones once, per-rank ones per world rank.
std::string application_path(const std::string& name);                                       // /application/temperature
std::string application_path(const std::string& name, int rank);                             // /application/counter/rank_3
// True for any path below /application/.
bool is_application_path(const std::string& path);
// Submitted samples the trainer holds (sluice_submit_samples): /samples/inputs, /samples/targets.
std::string samples_path(const std::string& name);                                           // /samples/inputs
// Normalization statistics (config `normalization`): /normalization/inputs_mean, ...
std::string normalization_path(const std::string& name);                                     // /normalization/inputs_std

// The global layer index of a /model, /optimizer or /accumulation path; nullopt for anything else.
std::optional<int> layer_index_of(const std::string& path);

// Throws Error(kInvalidArgument) naming the path unless it is /{model,optimizer,accumulation}/layer_NNNN/<name>[/...]
// or /application/<name>[/rank_N] or /samples/<name> or /normalization/<name>, with non-empty components made of [A-Za-z0-9_.-].
void validate_entry_path(const std::string& path);

// Throws Error(kInvalidArgument) unless name is one non-empty [A-Za-z0-9_.-] component (a /train dataset name or
// an attribute name).
void validate_name(const std::string& name, const std::string& what);

}  // namespace sluice::checkpoint
