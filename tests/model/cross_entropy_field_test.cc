// loss: cross_entropy on fields (core/model/loss.h): the loss and its gradient against PyTorch's
// nn.CrossEntropyLoss (reference/loss_references.txt, written once by reference/make_loss_references.py), a
// finite-difference check, and the property the pipeline relies on: micro-batches of any sizes sum to the full
// batch's mean, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/model/loss.h"
#include "kernels/cpu/cpu_backend.h"

namespace sluice::model {
namespace {

using kernels::Tensor;

struct LossCase {
  std::string name;
  std::vector<int64_t> shape;  // per sample: [C] (rows) or [C, D1[, D2[, D3]]]
  int64_t batch = 0;
  std::vector<float> logits, target, grad;
  double loss = 0.0;
  int64_t features() const { return static_cast<int64_t>(logits.size()) / batch; }
  int64_t points() const {
    int64_t p = 1;
    for (size_t d = 1; d < shape.size(); ++d) p *= shape[d];
    return p;
  }
};

std::vector<float> read_tensor(std::istringstream& line) {
  int64_t count = 0;
  line >> count;
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) line >> v;
  if (!line) throw std::runtime_error("short tensor line");
  return values;
}

// The format is in reference/README.md.
std::vector<LossCase> read_cases() {
  std::ifstream in("tests/model/reference/loss_references.txt");
  if (!in) throw std::runtime_error("cannot open tests/model/reference/loss_references.txt");
  std::vector<LossCase> cases;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream line(text);
    std::string key;
    if (!(line >> key) || key[0] == '#') continue;
    if (key == "case") {
      cases.emplace_back();
      line >> cases.back().name;
    } else if (key == "shape") {
      for (int64_t e = 0; line >> e;) cases.back().shape.push_back(e);
    } else if (key == "batch") {
      line >> cases.back().batch;
    } else if (key == "loss") {
      line >> cases.back().loss;
    } else if (key == "tensor") {
      std::string name;
      line >> name;
      std::vector<float> values = read_tensor(line);
      LossCase& c = cases.back();
      (name == "logits" ? c.logits : name == "target" ? c.target : c.grad) = std::move(values);
    } else if (key != "end") {
      throw std::runtime_error("unexpected line: " + text);
    }
  }
  return cases;
}

LossResult loss_of(const LossCase& c, const std::vector<float>& logits, int64_t first = 0, int64_t rows = -1) {
  if (rows < 0) rows = c.batch;
  const int64_t f = c.features();
  const Tensor output = Tensor::host_from(rows, f, std::vector<float>(logits.begin() + first * f,
                                                                      logits.begin() + (first + rows) * f));
  const Tensor target = Tensor::host_from(rows, f, std::vector<float>(c.target.begin() + first * f,
                                                                      c.target.begin() + (first + rows) * f));
  return compute_loss(kernels::cpu_backend(), LossKind::kCrossEntropy, output, target, c.batch, nullptr, c.points());
}

TEST(CrossEntropyOnFields, MatchesPyTorch) {
  const std::vector<LossCase> cases = read_cases();
  ASSERT_EQ(cases.size(), 10u);
  int fields = 0;
  for (const LossCase& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.target.size(), c.logits.size());
    ASSERT_EQ(c.grad.size(), c.logits.size());
    fields += c.shape.size() >= 2;
    const LossResult r = loss_of(c, c.logits);
    // The mean over samples × points, as PyTorch's reduction='mean'.
    EXPECT_NEAR(r.sum / c.batch, c.loss, 1e-5 * std::max(1.0, std::fabs(c.loss)));
    const std::vector<float> grad = r.grad.to_vector();
    for (size_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(grad[i], c.grad[i], 1e-7 + 1e-5 * std::fabs(c.grad[i])) << i;
  }
  EXPECT_EQ(fields, 8);
}

TEST(CrossEntropyOnFields, GradientIsTheFiniteDifferenceOfTheMeanLoss) {
  for (const LossCase& c : read_cases()) {
    if (c.shape.size() < 2 || c.name.find("large") != std::string::npos) continue;
    SCOPED_TRACE(c.name);
    const std::vector<float> grad = loss_of(c, c.logits).grad.to_vector();
    // Every 7th element: each channel and point of each sample gets visited across the cases.
    for (size_t i = 0; i < c.logits.size(); i += 7) {
      std::vector<float> nudged = c.logits;
      const float h = 1e-2f;
      nudged[i] = c.logits[i] + h;
      const double plus = loss_of(c, nudged).sum / c.batch;
      nudged[i] = c.logits[i] - h;
      const double minus = loss_of(c, nudged).sum / c.batch;
      const double step = static_cast<double>(c.logits[i] + h) - static_cast<double>(c.logits[i] - h);
      EXPECT_NEAR(grad[i], (plus - minus) / step, 1e-4) << i;
    }
  }
}

TEST(CrossEntropyOnFields, MicrobatchesOfAnySizeSumToTheFullBatchBitForBit) {
  for (const LossCase& c : read_cases()) {
    if (c.batch < 3) continue;
    SCOPED_TRACE(c.name);
    const LossResult whole = loss_of(c, c.logits);
    const LossResult first = loss_of(c, c.logits, 0, 1);
    const LossResult rest = loss_of(c, c.logits, 1, c.batch - 1);
    EXPECT_NEAR(first.sum + rest.sum, whole.sum, 1e-12);
    std::vector<float> joined = first.grad.to_vector();
    const std::vector<float> tail = rest.grad.to_vector();
    joined.insert(joined.end(), tail.begin(), tail.end());
    EXPECT_EQ(joined, whole.grad.to_vector());
  }
}

TEST(CrossEntropyOnFields, PointsThatDoNotDivideTheOutputAreRefused) {
  const Tensor output = Tensor::host(2, 6);
  try {
    compute_loss(kernels::cpu_backend(), LossKind::kCrossEntropy, output, output, 2, nullptr, 4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("4 points per channel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::model
