// The data-parallel gradient sum through host memory and MPI in a fixed order of additions (comm::Group's
// ordered sum: reduce-scatter + all-gather, replicas added in rank order): bit-identical to the sequential run.
// Works for any backend: device gradients are copied to the host and back.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/comm/collectives.h"
#include "core/runtime/gradient_reducer.h"
#include "kernels/backend.h"

namespace sluice::runtime {

class OrderedGradientReducer : public GradientReducer {
 public:
  // Both must outlive the reducer.
  OrderedGradientReducer(comm::Group& data_parallel_group, kernels::Backend& backend)
      : group_(data_parallel_group), backend_(backend) {}

  const char* name() const override { return "ordered"; }
  void start(int stage, const std::vector<model::Parameter*>& parameters) override;
  void finish() override;

 private:
  struct Sum {
    std::vector<model::Parameter*> parameters;
    std::vector<float> flat;  // the stage's gradients, concatenated in parameter order
    std::unique_ptr<comm::Request> request;
  };

  comm::Group& group_;
  kernels::Backend& backend_;
  std::map<int, Sum> sums_;  // by stage
};

}  // namespace sluice::runtime
