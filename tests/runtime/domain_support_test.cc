// What a domain split cannot run yet is refused by name (core/runtime/domain_support.h), and what runs on a domain
// (core/runtime/trainer_domain.h): the refusals name the setting and the split; an unsplit config is never refused.
#include "core/runtime/domain_support.h"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.h"
#include "core/config/config_parser.h"
#include "core/runtime/trainer_domain.h"

namespace sluice::runtime {
namespace {

std::string config_text(const std::string& domain, const std::string& extra) {
  return "model:\n  inputs: [2, 8, 8]\n  layers:\n    - {type: conv, channels: 2, kernel: 3, padding: periodic}\n"
         "pipeline: {stages: 2" + domain + "}\noptimizer: {type: sgd, lr: 0.1}\ndata: {type: external}\n" + extra;
}

// The message of the kUnsupported refusal `f` throws; "" when it throws nothing.
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    return e.what();
  }
  return "";
}

TEST(DomainSupportTest, ASplitRefusesWhatItCannotRunYetByName) {
  const std::string split = ", domain: [2, 2]";
  const auto start = [&](const std::string& extra) {
    const config::Config cfg = config::parse_config(config_text(split, extra));
    return refusal([&] { refuse_unbuilt_domain_split(cfg); });
  };
  EXPECT_EQ(start(""), "");
  EXPECT_EQ(start("normalization: {inputs: auto}\n"), "");  // per canonical tile (normalization_tiles.h)
  EXPECT_NE(start("loss: custom\n").find("pipeline.domain [2, 2] (4 blocks) with loss: custom is not supported"),
            std::string::npos);
  EXPECT_NE(start("device: [cpu, cuda]\n").find("on device cuda (stage 1) is not supported yet"), std::string::npos);
}

TEST(DomainSupportTest, NoSplitIsNeverRefused) {
  for (const std::string& domain : {std::string(), std::string(", domain: [1, 1]")}) {
    const config::Config cfg = config::parse_config(config_text(domain, "normalization: {inputs: auto}\nloss: custom\n"));
    EXPECT_EQ(refusal([&] { refuse_unbuilt_domain_split(cfg); }), "") << domain;
  }
}

TEST(DomainSupportTest, WhatRunsOnADomain) {
  EXPECT_FALSE(runs_on_domain(config::parse_config(config_text("", ""))));
  EXPECT_TRUE(runs_on_domain(config::parse_config(config_text(", domain: [1, 1]", ""))));
  EXPECT_TRUE(runs_on_domain(config::parse_config(config_text(", domain: [2, 2]", ""))));
  // Unsplit, a custom loss or a cuda stage keeps the plain layers (the domain loss and halos cannot serve them).
  EXPECT_FALSE(runs_on_domain(config::parse_config(config_text(", domain: [1, 1]", "loss: custom\n"))));
  EXPECT_FALSE(runs_on_domain(config::parse_config(config_text(", domain: [1, 1]", "device: [cpu, cuda]\n"))));
}

TEST(DomainSupportTest, TheEvenLayoutUnlessOneIsDeclared) {
  const config::Config cfg = config::parse_config(config_text(", domain: [2, 2], domain_tile: [2, 2]", ""));
  const config::DomainLayout even = domain_layout_for(cfg, std::nullopt);
  EXPECT_EQ(even.box(3).offset, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(even.box(3).extent, (std::vector<int64_t>{4, 4}));
  const config::DomainLayout declared =
      config::declared_domain_layout({8, 8}, {2, 2}, {2, 2}, {{{0, 0}, {2, 6}}, {{0, 6}, {2, 2}}, {{2, 0}, {6, 6}},
                                                             {{2, 6}, {6, 2}}});
  EXPECT_EQ(domain_layout_for(cfg, declared).box(3).offset, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(domain_layout_for(cfg, declared).box(3).extent, (std::vector<int64_t>{6, 2}));
}

}  // namespace
}  // namespace sluice::runtime
