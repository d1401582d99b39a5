#include "sys/throttled.h"

#include <gtest/gtest.h>

namespace rtpulse::sys {
namespace {

using Names = std::vector<std::string>;

TEST(ThrottledTest, DecodesNowAndSinceBoot) {
  // 0x50005: under-voltage and throttled, now and since boot.
  const auto f = ParseGetThrottled("throttled=0x50005\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->raw, 0x50005u);
  EXPECT_EQ(f->Now(), (Names{"under-voltage", "throttled"}));
  EXPECT_EQ(f->SinceBoot(), (Names{"under-voltage", "throttled"}));
  EXPECT_EQ(f->UnknownBits(), 0u);
}

TEST(ThrottledTest, EveryBitHasItsName) {
  const auto f = ParseGetThrottled("throttled=0xF000F");
  ASSERT_TRUE(f.has_value());
  const Names all{"under-voltage", "ARM frequency capped", "throttled", "soft temperature limit"};
  EXPECT_EQ(f->Now(), all);
  EXPECT_EQ(f->SinceBoot(), all);
  EXPECT_EQ(ParseGetThrottled("throttled=0x80000")->SinceBoot(), Names{"soft temperature limit"});
  EXPECT_EQ(ParseGetThrottled("throttled=0x2")->Now(), Names{"ARM frequency capped"});
}

TEST(ThrottledTest, CleanBoardAndUnknownBits) {
  const auto clean = ParseGetThrottled("throttled=0x0");
  ASSERT_TRUE(clean.has_value());
  EXPECT_TRUE(clean->Now().empty());
  EXPECT_TRUE(clean->SinceBoot().empty());
  EXPECT_EQ(ParseGetThrottled("throttled=0x100010")->UnknownBits(), 0x100010u);
}

TEST(ThrottledTest, RejectsOtherOutput) {
  for (const char* bad : {"", "throttled=", "throttled=0x", "throttled=0xZZ", "temp=51.6'C",
                          "error=1 error_msg=\"Command not registered\"", "throttled=0x5 extra"}) {
    EXPECT_FALSE(ParseGetThrottled(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace rtpulse::sys
