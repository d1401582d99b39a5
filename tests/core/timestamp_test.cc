#include "core/timestamp.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace rtpulse {
namespace {

// 2026-01-02T03:04:05Z is 1767323045 s after the epoch (python3: calendar.timegm).
constexpr int64_t kSeconds = 1767323045;
constexpr int64_t kNs = kSeconds * 1'000'000'000 + 678'900'000;

TEST(TimestampTest, UtcIsoSecondsTruncatesToTheSecond) {
  EXPECT_EQ(UtcIsoSeconds(kNs), "2026-01-02T03:04:05Z");
  EXPECT_EQ(UtcIsoSeconds(1), "1970-01-01T00:00:00Z");
}

TEST(TimestampTest, AnUnknownTimeIsEmptyNotTheEpoch) {
  EXPECT_EQ(UtcIsoSeconds(0), "");
  EXPECT_EQ(UtcIsoSeconds(-5), "");
  EXPECT_EQ(UtcIsoMillis(0), "");
}

TEST(TimestampTest, UtcIsoMillisKeepsThreeDigitsTruncated) {
  EXPECT_EQ(UtcIsoMillis(kNs), "2026-01-02T03:04:05.678Z");
  EXPECT_EQ(UtcIsoMillis(kSeconds * 1'000'000'000 + 7'000'000), "2026-01-02T03:04:05.007Z");
}

TEST(TimestampTest, RunFolderStampIsLocalTime) {
  const char* old = getenv("TZ");
  const std::string saved = old != nullptr ? old : "";
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(RunFolderStamp(static_cast<std::time_t>(kSeconds)), "20260102_030405");
  // Two hours east of UTC (POSIX TZ strings count west as positive).
  setenv("TZ", "XYZ-2", 1);
  tzset();
  EXPECT_EQ(RunFolderStamp(static_cast<std::time_t>(kSeconds)), "20260102_050405");
  if (old != nullptr) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

}  // namespace
}  // namespace rtpulse
