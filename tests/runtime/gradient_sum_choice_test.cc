// The rules of pipeline.gradient_sum (core/runtime/gradient_sum_choice.h) for every transport a job can end up
// with.
#include "core/runtime/gradient_sum_choice.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

// choose_gradient_sum with the request and the choice spelled as in the config.
std::string chosen(const std::string& requested, const std::string& transport) {
  return config::gradient_sum_kind_name(
      choose_gradient_sum(config::gradient_sum_kinds().parse(requested, "pipeline.gradient_sum"), transport));
}

TEST(GradientSumChoice, OrderedIsAlwaysKept) {
  for (const std::string transport : {"mpi", "staged", "nccl", "mixed: mpi, staged"}) {
    EXPECT_EQ(chosen("ordered", transport), "ordered") << transport;
  }
}

TEST(GradientSumChoice, AutoIsNcclExactlyWhenTheTransportIsNccl) {
  EXPECT_EQ(chosen("auto", "nccl"), "nccl");
  for (const std::string transport : {"mpi", "staged", "mixed: mpi, staged"}) {
    EXPECT_EQ(chosen("auto", transport), "ordered") << transport;
  }
}

TEST(GradientSumChoice, NcclWithoutANcclTransportIsRefusedNamingKeyTransportAndAlternative) {
  EXPECT_EQ(chosen("nccl", "nccl"), "nccl");
  for (const std::string transport : {"mpi", "staged", "mixed: mpi, staged"}) {
    try {
      chosen("nccl", transport);
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

// An unknown name cannot reach the rules any more (the config parser refuses it, listing the table's names).
TEST(GradientSumChoice, UnknownNameIsRefusedByTheTable) {
  EXPECT_THROW(config::gradient_sum_kinds().parse("fast", "pipeline.gradient_sum"), Error);
  EXPECT_EQ(config::gradient_sum_kinds().names_text(), "auto, ordered, nccl");
}

}  // namespace
}  // namespace sluice::runtime
