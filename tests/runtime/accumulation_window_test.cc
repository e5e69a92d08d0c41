// The accumulation window's rules on their own (core/runtime/accumulation_window.h): which call starts and ends a
// window, that a call in the middle of a window must pass the window's batch, that a failure drops the window and
// a checkpoint's position continues it with the batch it saved (any batch when an older file saved none).
#include "core/runtime/accumulation_window.h"

#include <gtest/gtest.h>

#include "core/common/error.h"

namespace sluice::runtime {
namespace {

TEST(AccumulationWindow, OneCallWindowsStartAndEndEveryCall) {
  AccumulationWindow window(1);
  for (int call = 0; call < 3; ++call) {
    EXPECT_TRUE(window.starts());
    EXPECT_TRUE(window.ends());
    window.check_batch(8 + call);  // every call is a window of its own: any batch
    window.advance(8 + call);
    EXPECT_EQ(window.position(), 0);
  }
}

TEST(AccumulationWindow, CallsOfAWindowMoveItOnAndTheLastClosesIt) {
  AccumulationWindow window(3);
  EXPECT_EQ(window.accumulate(), 3);
  EXPECT_TRUE(window.starts());
  EXPECT_FALSE(window.ends());
  window.advance(8);
  EXPECT_EQ(window.position(), 1);
  EXPECT_FALSE(window.starts());
  EXPECT_FALSE(window.ends());
  window.advance(8);
  EXPECT_EQ(window.position(), 2);
  EXPECT_TRUE(window.ends());
  window.advance(8);
  EXPECT_EQ(window.position(), 0);
  EXPECT_TRUE(window.starts());
  window.check_batch(16);  // a new window may take another batch
}

TEST(AccumulationWindow, AnotherBatchInTheMiddleOfAWindowIsRefusedNamingBoth) {
  AccumulationWindow window(4);
  window.advance(8);
  window.check_batch(8);
  try {
    window.check_batch(6);
    FAIL() << "a batch of 6 rows in a window of 8-row calls was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string what = e.what();
    EXPECT_NE(what.find("batch of 6 rows in call 2 of 4"), std::string::npos) << what;
    EXPECT_NE(what.find("whose calls pass 8 rows"), std::string::npos) << what;
  }
  EXPECT_EQ(window.position(), 1);  // a refusal changes nothing
}

TEST(AccumulationWindow, AFailureDropsTheWindow) {
  AccumulationWindow window(3);
  window.advance(8);
  window.advance(8);
  window.drop();
  EXPECT_EQ(window.position(), 0);
  EXPECT_TRUE(window.starts());
  window.check_batch(4);
}

TEST(AccumulationWindow, ARestoredPositionKeepsItsSavedBatch) {
  AccumulationWindow window(3);
  window.advance(8, 2);
  EXPECT_EQ(window.call_samples(), 16);  // rows x replicas, as a checkpoint saves it
  AccumulationWindow resumed(3);
  resumed.restore(window.position(), window.call_samples());
  EXPECT_EQ(resumed.position(), 1);
  resumed.check_batch(8, 2);
  resumed.check_batch(16, 1);  // the same global batch under another replica count
  EXPECT_THROW(resumed.check_batch(5, 2), Error);
  try {
    resumed.check_batch(5, 3);
    FAIL() << "a batch the window's 16 samples cannot match was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("16 samples over all replicas, which 3 replicas cannot share evenly"), std::string::npos)
        << what;
  }
}

TEST(AccumulationWindow, ARestoredPositionWithoutASavedBatchTakesAnyBatchForItsNextCall) {
  AccumulationWindow window(3);
  window.advance(8);
  window.restore(2);  // a file written before the window's batch was saved
  EXPECT_EQ(window.position(), 2);
  EXPECT_TRUE(window.ends());
  window.check_batch(5);
  window.restore(0, 16);
  EXPECT_TRUE(window.starts());
  EXPECT_EQ(window.call_samples(), 0);  // a step boundary has no window batch
  window.check_batch(4);
  EXPECT_THROW(window.restore(3), Error);
  EXPECT_THROW(window.restore(-1), Error);
  EXPECT_THROW(window.restore(1, -4), Error);
}

}  // namespace
}  // namespace sluice::runtime
