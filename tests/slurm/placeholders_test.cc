// Template filling is strict both ways, so template and launcher cannot drift apart silently.
#include "slurm/placeholders.h"

#include <gtest/gtest.h>

#include "core/common/error.h"

namespace sluice::slurm {
namespace {

TEST(FillPlaceholders, ReplacesEveryOccurrence) {
  EXPECT_EQ(fill_placeholders("@A@-@B_2@-@A@", {{"A", "x"}, {"B_2", "yy"}}), "x-yy-x");
}

TEST(FillPlaceholders, LoneAtSignsAreText) {
  EXPECT_EQ(fill_placeholders("--signal=B:USR1@120 user@host @ @lower@", {}), "--signal=B:USR1@120 user@host @ @lower@");
}

TEST(FillPlaceholders, ValuesAreNotRescanned) {
  EXPECT_EQ(fill_placeholders("@A@", {{"A", "@B@"}}), "@B@");
}

TEST(FillPlaceholders, MissingValueIsNamed) {
  try {
    fill_placeholders("nodes=@NODES@ time=@TIME@", {{"NODES", "2"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "template placeholder @TIME@ has no value");
  }
}

TEST(FillPlaceholders, UnusedValueIsNamed) {
  try {
    fill_placeholders("nodes=@NODES@", {{"NODES", "2"}, {"GPUS", "1"}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "template has no placeholder @GPUS@ for the value given");
  }
}

}  // namespace
}  // namespace sluice::slurm
