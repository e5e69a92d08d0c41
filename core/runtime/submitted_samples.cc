#include "core/runtime/submitted_samples.h"

#include <optional>
#include <string>
#include <vector>

#include "core/comm/agreement.h"
#include "core/common/error.h"
#include "core/runtime/sample_routing.h"

namespace sluice::runtime {
namespace {

constexpr const char* kSubmit = "sluice_submit_samples";
constexpr const char* kTrain = "sluice_train_submitted";

void require_started(const Trainer& trainer) {
  if (!trainer.started()) throw Error(ErrorCode::kState, "trainer is not started");
}

// The checks of sluice_train_submitted's arguments. The store's count is the same on every rank, and so is `batch`
// when the caller follows the API; an odd rank out is still caught by the agreement rather than left waiting.
std::optional<Error> check_batch(const Trainer& trainer, int64_t batch) {
  const int replicas = trainer.layout().data_parallel;
  const int64_t held = trainer.submitted_samples().held();
  const std::string where = std::string(kTrain) + " on rank " + std::to_string(trainer.layout().rank) + ": ";
  if (batch == 0) {  // 0 stands for data.batch, which the config leaves out
    return Error(ErrorCode::kInvalidArgument, where + "batch 0 stands for data.batch, which the config does not "
                                                  "set; pass the batch (or set data.batch)");
  }
  if (batch < 0) {
    return Error(ErrorCode::kInvalidArgument, where + "batch must be positive (or 0 for data.batch), got " +
                                                  std::to_string(batch));
  }
  if (batch % replicas != 0) {
    return Error(ErrorCode::kInvalidArgument, where + "batch " + std::to_string(batch) +
                                                  " is not divisible by the " + std::to_string(replicas) +
                                                  " data-parallel replicas (each trains on batch / replicas samples)");
  }
  if (held < batch) {
    return Error(ErrorCode::kState, where + "batch " + std::to_string(batch) + " needs " + std::to_string(batch) +
                                        " submitted samples but " + std::to_string(held) +
                                        " are held; submit more with sluice_submit_samples first");
  }
  return std::nullopt;
}

}  // namespace

void submit_samples(Trainer& trainer, const float* inputs, const float* targets, int64_t count) {
  require_started(trainer);
  const SampleStore& store = trainer.submitted_samples();
  const RoutedSamples routed =
      route_samples(trainer, kSubmit, inputs, targets, count, store.keeps_inputs(), store.keeps_targets());
  trainer.append_samples(routed.inputs.data(), routed.targets.data(), routed.count);
}

StepResult train_submitted(Trainer& trainer, int64_t batch) {
  require_started(trainer);
  if (batch == 0) batch = trainer.config().data.batch;
  comm::agree_or_throw(trainer.parts().mpi->world(), arguments_of(kTrain), check_batch(trainer, batch));
  const SampleStore& store = trainer.submitted_samples();
  const std::vector<int64_t> ages = store.next_batch(batch, trainer.config().seed);
  const int64_t rows = batch / trainer.layout().data_parallel;
  std::vector<float> inputs(store.keeps_inputs() ? static_cast<size_t>(rows * store.input_features()) : 0);
  std::vector<float> targets(store.keeps_targets() ? static_cast<size_t>(rows * store.output_features()) : 0);
  // This replica's rows of the global batch, replica-major like sluice_train_step's global batch.
  store.copy_rows(ages, trainer.layout().replica * rows, rows, inputs.data(), targets.data());
  const StepResult result = trainer.train_step(store.keeps_inputs() ? inputs.data() : nullptr,
                                               store.keeps_targets() ? targets.data() : nullptr, rows);
  trainer.consume_samples(batch);
  return result;
}

}  // namespace sluice::runtime
