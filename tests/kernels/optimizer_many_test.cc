// The list forms of the optimizer updates (sgd_update_many, adamw_update_many) on the CPU backend: a list of
// tensors of different shapes must end bit for bit where a second copy updated one tensor at a time ends, and a
// bad slot must be rejected by index before any tensor of the list is touched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "tests/kernels/random_tensor.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::kernels {
namespace {

// Deliberately uneven: a row vector, a column vector, a single element, an empty tensor and a larger matrix.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {{3, 5}, {1, 7}, {9, 1}, {1, 1}, {0, 0}, {33, 17}};

// The raw bits, so -0.0 vs 0.0 or a different NaN would count as a difference.
std::vector<uint32_t> bits(const Tensor& tensor) {
  std::vector<uint32_t> out(static_cast<size_t>(tensor.size()));
  if (!out.empty()) std::memcpy(out.data(), tensor.data(), tensor.bytes());
  return out;
}

// One optimizer's tensors for every shape: [i] is the i-th tensor, state holds one vector per state kind.
struct TensorSet {
  std::vector<Tensor> params;
  std::vector<std::vector<Tensor>> state;
};

TensorSet make_set(size_t state_kinds, unsigned seed) {
  TensorSet set;
  set.state.resize(state_kinds);
  for (size_t i = 0; i < kShapes.size(); ++i) {
    set.params.push_back(random_tensor(kShapes[i].first, kShapes[i].second, seed + static_cast<unsigned>(i)));
    // Non-zero starting state, so a wrong momentum/moment term shows even on the first step.
    for (size_t k = 0; k < state_kinds; ++k) {
      Tensor s = random_tensor(kShapes[i].first, kShapes[i].second, seed + 100 * static_cast<unsigned>(k + 1) +
                                                                        static_cast<unsigned>(i));
      if (k == 1) {  // exp_avg_sq must stay non-negative
        for (int64_t e = 0; e < s.size(); ++e) s.data()[e] *= s.data()[e];
      }
      set.state[k].push_back(std::move(s));
    }
  }
  return set;
}

std::vector<Tensor> make_grads(unsigned seed) {
  std::vector<Tensor> grads;
  for (size_t i = 0; i < kShapes.size(); ++i) {
    grads.push_back(random_tensor(kShapes[i].first, kShapes[i].second, seed + static_cast<unsigned>(i)));
  }
  return grads;
}

void expect_same_bits(const TensorSet& per_tensor, const TensorSet& many, const std::string& what) {
  for (size_t i = 0; i < kShapes.size(); ++i) {
    EXPECT_EQ(bits(per_tensor.params[i]), bits(many.params[i])) << what << ": param of tensor " << i;
    for (size_t k = 0; k < many.state.size(); ++k) {
      EXPECT_EQ(bits(per_tensor.state[k][i]), bits(many.state[k][i])) << what << ": state " << k << " of tensor " << i;
    }
  }
}

std::vector<SgdSlot> sgd_slots(const std::vector<Tensor>& grads, TensorSet& set) {
  std::vector<SgdSlot> slots;
  for (size_t i = 0; i < grads.size(); ++i) slots.push_back(SgdSlot{&grads[i], &set.state[0][i], &set.params[i]});
  return slots;
}

std::vector<AdamWSlot> adamw_slots(const std::vector<Tensor>& grads, TensorSet& set) {
  std::vector<AdamWSlot> slots;
  for (size_t i = 0; i < grads.size(); ++i) {
    slots.push_back(AdamWSlot{&grads[i], &set.state[0][i], &set.state[1][i], &set.params[i]});
  }
  return slots;
}

TEST(OptimizerMany, SgdListEqualsPerTensorUpdatesBitForBit) {
  CpuBackend backend;
  TensorSet per_tensor = make_set(1, 10), many = make_set(1, 10);
  const std::vector<uint32_t> initial = bits(many.params[5]);
  const SgdHyper hyper{0.1f, 0.9f, 0.01f};
  for (unsigned step = 1; step <= 3; ++step) {
    const std::vector<Tensor> grads = make_grads(1000 * step);
    for (size_t i = 0; i < grads.size(); ++i) {
      backend.sgd_update(hyper, grads[i], per_tensor.state[0][i], per_tensor.params[i]);
    }
    backend.sgd_update_many(hyper, sgd_slots(grads, many));
  }
  EXPECT_NE(bits(many.params[5]), initial) << "the list update left the parameters unchanged";
  expect_same_bits(per_tensor, many, "sgd");
}

TEST(OptimizerMany, AdamWListEqualsPerTensorUpdatesBitForBit) {
  CpuBackend backend;
  TensorSet per_tensor = make_set(2, 20), many = make_set(2, 20);
  const std::vector<uint32_t> initial = bits(many.params[5]);
  const AdamWHyper hyper{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f};
  for (int64_t step = 1; step <= 3; ++step) {
    const std::vector<Tensor> grads = make_grads(2000 * static_cast<unsigned>(step));
    for (size_t i = 0; i < grads.size(); ++i) {
      backend.adamw_update(hyper, step, grads[i], per_tensor.state[0][i], per_tensor.state[1][i],
                           per_tensor.params[i]);
    }
    backend.adamw_update_many(hyper, step, adamw_slots(grads, many));
  }
  EXPECT_NE(bits(many.params[5]), initial) << "the list update left the parameters unchanged";
  expect_same_bits(per_tensor, many, "adamw");
}

// Expects `update` to throw kInvalidArgument with `message` in its text.
template <typename Update>
void expect_invalid(Update update, const std::string& message) {
  try {
    update();
    FAIL() << "accepted; expected an error containing \"" << message << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(OptimizerMany, SgdShapeMismatchNamesTheSlotAndUpdatesNothing) {
  CpuBackend backend;
  TensorSet set = make_set(1, 30);
  const std::vector<Tensor> grads = make_grads(3000);
  std::vector<SgdSlot> slots = sgd_slots(grads, set);
  Tensor wrong = Tensor::host(5, 3);  // slot 0 is [3][5]
  slots[0].velocity = &wrong;
  expect_invalid([&] { backend.sgd_update_many(SgdHyper{0.1f, 0.9f, 0.0f}, slots); },
                 "sgd_update_many: slot 0: velocity has shape [5][3], expected [3][5]");

  // A bad last slot: the ones before it must not have been updated on the way.
  slots = sgd_slots(grads, set);
  Tensor wrong_grad = Tensor::host(33, 16);
  slots[5].grad = &wrong_grad;
  const std::vector<uint32_t> first_before = bits(set.params[0]);
  expect_invalid([&] { backend.sgd_update_many(SgdHyper{0.1f, 0.9f, 0.0f}, slots); },
                 "sgd_update_many: slot 5: grad has shape [33][16], expected [33][17]");
  EXPECT_EQ(bits(set.params[0]), first_before) << "slots before the bad one were updated";
}

TEST(OptimizerMany, AdamWBadSlotsAndStepAreRejectedByName) {
  CpuBackend backend;
  TensorSet set = make_set(2, 40);
  const std::vector<Tensor> grads = make_grads(4000);
  const AdamWHyper hyper;
  std::vector<AdamWSlot> slots = adamw_slots(grads, set);
  Tensor wrong = Tensor::host(1, 8);
  slots[1].exp_avg_sq = &wrong;
  const std::vector<uint32_t> before = bits(set.params[0]);
  expect_invalid([&] { backend.adamw_update_many(hyper, 1, slots); },
                 "adamw_update_many: slot 1: exp_avg_sq has shape [1][8], expected [1][7]");
  EXPECT_EQ(bits(set.params[0]), before) << "slots before the bad one were updated";

  slots = adamw_slots(grads, set);
  slots[3].param = nullptr;
  expect_invalid([&] { backend.adamw_update_many(hyper, 1, slots); }, "adamw_update_many: slot 3: param is null");
  expect_invalid([&] { backend.adamw_update_many(hyper, 0, adamw_slots(grads, set)); },
                 "adamw_update_many: step must be >= 1 (1-based), got 0");
}

// Memory that claims to be on a GPU, to check the device test without one (never dereferenced: the check
// must reject it first).
class FakeDeviceBuffer : public Buffer {
 public:
  explicit FakeDeviceBuffer(size_t count) : values_(count) {}
  float* data() override { return values_.data(); }
  Device device() const override { return Device::kCuda; }
  std::unique_ptr<Buffer> clone() const override { return std::make_unique<FakeDeviceBuffer>(*this); }

 private:
  std::vector<float> values_;
};

TEST(OptimizerMany, ATensorOnAnotherDeviceIsRejectedNamingTheSlot) {
  CpuBackend backend;
  TensorSet set = make_set(1, 50);
  const std::vector<Tensor> grads = make_grads(5000);
  std::vector<SgdSlot> slots = sgd_slots(grads, set);
  Tensor device_grad(1, 7, std::make_unique<FakeDeviceBuffer>(7));  // slot 1 is [1][7]
  slots[1].grad = &device_grad;
  expect_invalid([&] { backend.sgd_update_many(SgdHyper{}, slots); },
                 "sgd_update_many: slot 1: grad is a CUDA tensor; this backend needs host tensors");
}

TEST(OptimizerMany, AnEmptyListIsANoOp) {
  CpuBackend backend;
  EXPECT_NO_THROW(backend.sgd_update_many(SgdHyper{}, {}));
  EXPECT_NO_THROW(backend.adamw_update_many(AdamWHyper{}, 1, {}));
}

}  // namespace
}  // namespace sluice::kernels
