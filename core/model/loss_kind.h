// The loss kinds and their config spellings (`loss: cross_entropy`), apart from the loss code so the typed
// config can hold a LossKind without depending on kernels.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::model {

enum class LossKind {
  kMse,           // mean over all elements of the global batch of (y - t)^2
  kCrossEntropy,  // mean over the global batch's samples of -sum_c t_c log softmax(y)_c; rows of t are distributions;
                  // on a field the softmax is over the channels at each point, the mean over samples x points
  kCustom,        // the host's function (sluice_trainer_register_loss), same sum convention (core/model/loss.h)
};

// Indexed by LossKind, in the order error messages list them.
inline const std::vector<std::string>& loss_kind_names() {
  static const std::vector<std::string> names = {"mse", "cross_entropy", "custom"};
  return names;
}
inline const std::string& loss_kind_name(LossKind kind) { return loss_kind_names().at(static_cast<std::size_t>(kind)); }

}  // namespace sluice::model
