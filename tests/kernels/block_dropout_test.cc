// Dropout on a block of a domain-split field (Backend::dropout_block_forward / _backward; kernels/rng.h
// FieldBlockKey): on every block of uneven 2-D and 3-D splits the output is BITWISE the matching part of the plain
// dropout over the whole field (the mask keyed by the whole field's feature), and on the whole field as one block it
// is the plain op's bits. Keys that are not a block of their field, or a stream of another width, are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/rng.h"
#include "tests/kernels/random_tensor.h"
#include "tests/kernels/split_field.h"

namespace sluice::kernels {
namespace {

constexpr float kP = 0.3f;

int64_t points(const std::vector<int64_t>& extents) {
  int64_t n = 1;
  for (const int64_t e : extents) n *= e;
  return n;
}

void expect_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(got.data() + i, want.data() + i, sizeof(float)), 0)
        << what << ": float " << i << " is " << got.data()[i] << ", the whole field's " << want.data()[i];
  }
}

struct SplitCase {
  const char* name;
  std::vector<int64_t> global;
  std::vector<std::vector<int64_t>> cuts;
};

void PrintTo(const SplitCase& c, std::ostream* os) { *os << c.name; }

class BlockDropoutTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(BlockDropoutTest, EveryBlockIsThePartOfTheWholeFieldsDropout) {
  CpuBackend backend;
  const SplitCase& c = GetParam();
  const int64_t samples = 3, channels = 2, features = channels * points(c.global);
  const Tensor x = random_tensor(samples, features, 5);
  const RngStream stream = dropout_stream(11, 4, 7, features);
  Tensor y(backend.empty(samples, features)), dx(backend.empty(samples, features));
  backend.dropout_forward(x, kP, stream, y);
  backend.dropout_backward(x, kP, stream, dx);
  const std::vector<int64_t> none(c.global.size(), 0);
  int64_t dropped = 0;
  for (const Block& block : blocks_of(c.cuts)) {
    const FieldBlockKey key{channels, c.global, block.offset, block.extent};
    const Tensor x_block = padded_block(x, channels, c.global, block, none, none);
    Tensor y_block = backend.empty(samples, key.block_features());
    Tensor dx_block = backend.empty(samples, key.block_features());
    backend.dropout_block_forward(x_block, kP, stream, key, y_block);
    backend.dropout_block_backward(x_block, kP, stream, key, dx_block);
    expect_bits(y_block, padded_block(y, channels, c.global, block, none, none), "forward");
    expect_bits(dx_block, padded_block(dx, channels, c.global, block, none, none), "backward");
    for (int64_t i = 0; i < y_block.size(); ++i) dropped += y_block.data()[i] == 0.0f ? 1 : 0;
  }
  EXPECT_GT(dropped, 0) << "no element dropped: the test would not see a wrong mask";
  EXPECT_LT(dropped, samples * features) << "every element dropped";
  // The whole field as one block: the plain op's bits.
  Tensor y_whole = backend.empty(samples, features);
  backend.dropout_block_forward(x, kP, stream, FieldBlockKey{channels, c.global, none, c.global}, y_whole);
  expect_bits(y_whole, y, "the whole field as one block");
}

INSTANTIATE_TEST_SUITE_P(
    Splits, BlockDropoutTest,
    ::testing::Values(SplitCase{"uneven_2d", {6, 10}, {{2, 4}, {7, 3}}},
                      SplitCase{"uneven_3d", {4, 5, 6}, {{1, 3}, {5}, {2, 1, 3}}},
                      SplitCase{"slabs_1d", {9}, {{4, 5}}}),
    [](const ::testing::TestParamInfo<SplitCase>& info) { return std::string(info.param.name); });

void expect_refused(const std::function<void()>& call, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(BlockDropoutTest, KeysThatAreNotABlockOfTheirFieldAreRefused) {
  CpuBackend backend;
  const FieldBlockKey key{2, {6, 10}, {2, 7}, {4, 3}};
  const RngStream stream = dropout_stream(1, 0, 0, key.field_features());
  Tensor x = backend.zeros(1, key.block_features());
  Tensor y = backend.zeros(1, key.block_features());
  backend.dropout_block_forward(x, kP, stream, key, y);  // accepted as it is
  FieldBlockKey outside = key;
  outside.offset = {3, 7};
  expect_refused([&] { backend.dropout_block_forward(x, kP, stream, outside, y); },
                 "dropout_block_forward: block [4, 3] at [3, 7] of the field [6, 10] with 2 channels: not a block");
  expect_refused([&] { backend.dropout_block_forward(x, kP, dropout_stream(1, 0, 0, key.block_features()), key, y); },
                 "the random stream draws rows of 24 elements, the whole field has 120 features");
  Tensor wrong = backend.zeros(1, 10);
  expect_refused([&] { backend.dropout_block_backward(wrong, kP, stream, key, y); }, "dropout_block_backward");
}

}  // namespace
}  // namespace sluice::kernels
