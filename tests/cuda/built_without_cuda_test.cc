// What every tests/cuda target runs in the default build: a visible skip, never a silent pass.
#include <gtest/gtest.h>

TEST(CudaTests, NeedTheCudaBuild) {
  GTEST_SKIP() << "built without --config=cuda: rebuild with `bazel test --config=cuda //tests/cuda/...`";
}
