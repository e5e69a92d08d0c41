// One pipeline chunk: a contiguous range [first, last) of the model's layers plus the per-micro-batch stash
// that lets the executor run F, I, W and B of different micro-batches in any order the schedule asks for.
//
// Recompute modes trade memory for compute; all three give bit-identical outputs and gradients because a
// recompute re-runs the same layers on the same input with the same ForwardContext (hence the same dropout
// mask):
//   none:      every layer's saved state is kept from F until backward.
//   full:      only the stage input is kept; the forward is re-run right before the micro-batch's backward.
//   selective: the listed global layers drop their saved state after F; each run of consecutive dropped layers
//              keeps only its input and is re-run right before the backward.
// On a domain-split field a dropped layer that fills halos (LayerSaved::halo_input) either fills them again on the
// recompute (RecomputeHalos::kExchange: the messages again) or keeps its halo-filled input from F to the recompute,
// which reuses it (kStash: no message, the padded input counted in the stash bytes). The same bits either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config/recompute_halos.h"
#include "core/model/layer.h"
#include "core/model/recompute_mode.h"
#include "kernels/backend.h"

namespace sluice::model {

struct RecomputePolicy {
  RecomputeMode mode = RecomputeMode::kNone;
  std::set<int> layers;  // selective: global layer indices; indices outside this stage are ignored
  config::RecomputeHalos halos = config::RecomputeHalos::kExchange;  // what a dropped halo layer keeps
};

// "none" | "full" | "selective" (config's pipeline.recompute) -> policy; unknown names throw Error(kConfig).
RecomputePolicy parse_recompute(const std::string& mode, const std::vector<int>& layers);
// The policy of the parsed config's pipeline.recompute, recompute_layers (used only for kSelective) and
// recompute_halos.
RecomputePolicy recompute_policy(RecomputeMode mode, const std::vector<int>& layers,
                                 config::RecomputeHalos halos = config::RecomputeHalos::kExchange);

// What a micro-batch's forward needs besides its input: what varies per optimizer step, and where the
// micro-batch's rows sit in the stream of samples (stashed with it, so a recompute sees the same).
struct StepInfo {
  uint64_t seed = 0;
  uint64_t step = 0;
  bool training = true;
  uint64_t first_sample = 0;  // global sample index of the micro-batch's row 0 (ForwardContext::first_sample)
};

class StageModule {
 public:
  // `layers` are global layers first, first + 1, ...; each must already carry that global index.
  // `fuse_layers`: run neighbours that can fuse their forwards (Layer::forward_with_next: a linear layer and the
  // activation after it) as one; the results are bit-identical either way, so false exists for tests.
  // `skip_model_input_grad`: on the stage holding global layer 0, do not compute dL/d(model input) (see
  // backward_input); the parameter gradients are bit-identical either way, so false exists for tests.
  StageModule(kernels::Backend& backend, int first, std::vector<std::unique_ptr<Layer>> layers,
              RecomputePolicy recompute = {}, bool fuse_layers = true, bool skip_model_input_grad = true);

  int first_layer() const { return first_; }
  int last_layer() const { return first_ + static_cast<int>(layers_.size()); }
  int64_t in_features() const { return layers_.front()->in_features(); }
  int64_t out_features() const { return layers_.back()->out_features(); }
  Layer& layer(int global_index);

  // F: runs the stage and stashes what backward needs. The micro-batch must not be stashed already.
  // Tensors come by value (here and in the backward ops): a caller done with one moves it in and saves a copy.
  kernels::Tensor forward(int microbatch, kernels::Tensor input, const StepInfo& step);
  // I: gradient w.r.t. the stage input; keeps what W needs.
  // On the first stage (first_layer() == 0) the stage input is the model's input, whose gradient nobody uses:
  // unless `skip_model_input_grad` was false, layer 0 runs Layer::backward_input_without_dx (for a linear
  // layer, one GEMM less per micro-batch) and this returns an EMPTY tensor (0 x 0). The same holds for B.
  kernels::Tensor backward_input(int microbatch, kernels::Tensor grad_output);
  // W: accumulates the weight gradients, then frees the micro-batch's stash (a no-op apart from that when the
  // stage has no parameters).
  void backward_weight(int microbatch);
  // B: I and W fused; frees the stash. Returns the gradient w.r.t. the stage input, EMPTY (0 x 0) on the first
  // stage as for backward_input.
  kernels::Tensor backward(int microbatch, kernels::Tensor grad_output);
  // Whether backward_input and backward return an empty tensor instead of dL/d(stage input).
  bool skips_input_grad() const { return skip_model_input_grad_ && first_ == 0; }
  // Drops a stash without a backward (e.g. after an evaluation forward).
  void discard(int microbatch);

  // On a domain-split field: every layer's Layer::finish_domain_step, in layer order: the parameter gradients'
  // per-tile partials of the step added in tile order (a collective over the domain group). Every domain rank of
  // the stage calls it once per optimizer step, after the step's last backward and before the gradient sum over
  // replicas; without a domain it does nothing.
  void finish_domain_step();

  void zero_grad();
  std::vector<Parameter*> parameters();

  size_t stashed_microbatches() const { return stashes_.size(); }
  size_t stashed_bytes() const;
  size_t peak_stashed_microbatches() const { return peak_microbatches_; }
  size_t peak_stashed_bytes() const { return peak_bytes_; }
  void reset_peaks();

 private:
  struct Stash {
    StepInfo step;
    std::vector<std::optional<LayerSaved>> saved;  // by local layer; empty while dropped for recompute
    std::map<size_t, kernels::Tensor> run_inputs;  // local index of a dropped run's first layer -> its input
    std::map<size_t, kernels::Tensor> halo_inputs;  // kStash: local index of a dropped halo layer -> its halo_input
    std::vector<kernels::Tensor> weight_grad_outputs;  // by local layer, dL/dy kept from I for W
    bool input_grad_done = false;
    size_t bytes() const;
  };

  bool dropped(size_t local) const;
  // Forward of local layers [begin, end) from `activation`, fusing neighbours where they can; stashes what the
  // recompute policy keeps (everything when `recomputing`, which refills a dropped run's saved state).
  kernels::Tensor run_forward(int microbatch, Stash& stash, size_t begin, size_t end, kernels::Tensor activation,
                              bool recomputing);
  ForwardContext context_for(const Stash& stash, int microbatch, size_t local) const;
  Stash& find_stash(int microbatch, const char* action);
  void recompute_dropped(int microbatch, Stash& stash);
  void check_grad_shape(const kernels::Tensor& grad_output) const;
  void note_peaks();

  kernels::Backend& backend_;
  int first_;
  std::vector<std::unique_ptr<Layer>> layers_;
  bool fuse_layers_;
  bool skip_model_input_grad_;
  std::vector<bool> dropped_;  // by local layer
  bool stash_halos_;           // RecomputeHalos::kStash
  std::map<int, Stash> stashes_;
  size_t peak_microbatches_ = 0;
  size_t peak_bytes_ = 0;
};

}  // namespace sluice::model
