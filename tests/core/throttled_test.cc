// The one get_throttled parser, used by `check` and by `monitor`.

#include "core/throttled.h"

#include <gtest/gtest.h>

namespace rtpulse {
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

// The monitor's former ParseThrottled cases, on the shared parser.
TEST(ThrottledTest, MonitorValues) {
  EXPECT_EQ(ParseGetThrottled("throttled=0x0\n")->raw, 0u);
  EXPECT_EQ(ParseGetThrottled("throttled=0x50005\n")->raw, 0x50005u);
  EXPECT_EQ(ParseGetThrottled("throttled=0xE000F")->raw, 0xE000Fu);
  EXPECT_FALSE(ParseGetThrottled("throttled=0x"));
  EXPECT_FALSE(ParseGetThrottled("throttled=50005")) << "vcgencmd always prints the 0x";
  EXPECT_FALSE(ParseGetThrottled("error=1 error_msg=\"Command not registered\""));
  EXPECT_FALSE(ParseGetThrottled("throttled=0x1FFFFFFFF")) << "more than 32 bits";
}

TEST(ThrottledTest, SurroundingBlanksAreIgnored) {
  EXPECT_EQ(ParseGetThrottled("  throttled=0x5\r\n")->raw, 0x5u);
  EXPECT_EQ(ParseGetThrottled("throttled=0X5")->raw, 0x5u);
}

TEST(ThrottledTest, BitConstantsMatchTheNames) {
  const ThrottledFlags f{kArmFreqCappedNow | (kSoftTempLimitNow << kThrottledSinceBootShift)};
  EXPECT_EQ(f.Now(), Names{"ARM frequency capped"});
  EXPECT_EQ(f.SinceBoot(), Names{"soft temperature limit"});
}

}  // namespace
}  // namespace rtpulse
