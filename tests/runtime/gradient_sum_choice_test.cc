// The rules of pipeline.gradient_sum (core/runtime/gradient_sum_choice.h) for every transport a job can end up
// with.
#include "core/runtime/gradient_sum_choice.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

TEST(GradientSumChoice, OrderedIsAlwaysKept) {
  for (const std::string transport : {"mpi", "staged", "nccl", "mixed: mpi, staged"}) {
    EXPECT_EQ(choose_gradient_sum("ordered", transport), "ordered") << transport;
  }
}

TEST(GradientSumChoice, AutoIsNcclExactlyWhenTheTransportIsNccl) {
  EXPECT_EQ(choose_gradient_sum("auto", "nccl"), "nccl");
  for (const std::string transport : {"mpi", "staged", "mixed: mpi, staged"}) {
    EXPECT_EQ(choose_gradient_sum("auto", transport), "ordered") << transport;
  }
}

TEST(GradientSumChoice, NcclWithoutANcclTransportIsRefusedNamingKeyTransportAndAlternative) {
  EXPECT_EQ(choose_gradient_sum("nccl", "nccl"), "nccl");
  for (const std::string transport : {"mpi", "staged", "mixed: mpi, staged"}) {
    try {
      choose_gradient_sum("nccl", transport);
      ADD_FAILURE() << "nccl accepted with transport " << transport;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kConfig);
      const std::string message = error.what();
      EXPECT_NE(message.find("pipeline.gradient_sum"), std::string::npos) << message;
      EXPECT_NE(message.find("transport is " + transport), std::string::npos) << message;
      EXPECT_NE(message.find("use ordered or auto"), std::string::npos) << message;
    }
  }
}

TEST(GradientSumChoice, UnknownValueIsRefused) { EXPECT_THROW(choose_gradient_sum("fast", "nccl"), Error); }

}  // namespace
}  // namespace sluice::runtime
