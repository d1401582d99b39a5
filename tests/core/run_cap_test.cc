// RTPULSE_MAX_RUN_S (core/run_cap.h): unset or empty is no cap, a positive number of seconds
// is the cap in ns, anything else a usage error naming the value; the warning names the
// variable, what was capped and from what to what.
#include "core/run_cap.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

namespace rtpulse {
namespace {

class RunCapTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kMaxRunEnv); }
};

TEST_F(RunCapTest, UnsetOrEmptyIsNoCapAndSecondsAreNanoseconds) {
  unsetenv(kMaxRunEnv);
  auto none = MaxRunNs();
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  setenv(kMaxRunEnv, "", 1);
  ASSERT_TRUE(MaxRunNs());
  EXPECT_FALSE(MaxRunNs()->has_value());
  setenv(kMaxRunEnv, "2", 1);
  EXPECT_EQ(MaxRunNs()->value_or(0), 2'000'000'000);
  setenv(kMaxRunEnv, "0.25", 1);
  EXPECT_EQ(MaxRunNs()->value_or(0), 250'000'000);
  EXPECT_EQ(MaxRunWarning("-D", "10m", MaxRunSeconds(250'000'000)),
            "RTPULSE_MAX_RUN_S=0.25: -D capped from 10m to 0.25 s (a test aid: the run is "
            "shorter than asked)");
}

TEST_F(RunCapTest, AValueThatIsNoPositiveNumberIsAUsageErrorNamingIt) {
  // 1e-10 s would round to 0 ns, which reads as "no end": refused below 1 ms.
  for (const char* bad : {"abc", "0", "-1", "2s", "nan", "inf", "1e-10", "0.0009"}) {
    setenv(kMaxRunEnv, bad, 1);
    auto cap = MaxRunNs();
    ASSERT_FALSE(cap) << bad;
    EXPECT_EQ(cap.error().code, ExitCode::kUsage);
    EXPECT_NE(cap.error().message.find(std::string("RTPULSE_MAX_RUN_S='") + bad + "'"),
              std::string::npos)
        << cap.error().message;
  }
}

// The two ways a command applies the cap: a run length (0 = no end) and a count of items of
// a known length; each says what it capped in the notes, and leaves alone what fits.
TEST_F(RunCapTest, DurationsAndCountsAreCappedAndSaySo) {
  std::vector<std::string> notes;
  int64_t endless = 0;
  int64_t ten_min = 600'000'000'000;
  uint64_t jobs = 10'000;
  ASSERT_TRUE(CapRunDuration(endless, "-D", "no end", notes));
  ASSERT_TRUE(CapRunCount(jobs, 4e6, "--jobs", "jobs", notes));
  EXPECT_EQ(endless, 0) << "no cap set: nothing changes";
  EXPECT_EQ(jobs, 10'000u);
  EXPECT_TRUE(notes.empty());
  setenv(kMaxRunEnv, "2", 1);
  ASSERT_TRUE(CapRunDuration(endless, "-D", "no end", notes));
  ASSERT_TRUE(CapRunDuration(ten_min, "-D", "10m", notes));
  ASSERT_TRUE(CapRunCount(jobs, 4e6, "--jobs", "jobs", notes));
  EXPECT_EQ(endless, 2'000'000'000);
  EXPECT_EQ(ten_min, 2'000'000'000);
  EXPECT_EQ(jobs, 500u);  // 2 s of 4 ms periods
  int64_t short_run = 1'000'000'000;
  uint64_t frames = 5;
  ASSERT_TRUE(CapRunDuration(short_run, "-D", "1s", notes));
  ASSERT_TRUE(CapRunCount(frames, 1e8, "--frames", "frames", notes));  // 20 fit in 2 s
  EXPECT_EQ(short_run, 1'000'000'000);
  EXPECT_EQ(frames, 5u);
  uint64_t slow = 10;
  ASSERT_TRUE(CapRunCount(slow, 5e9, "--frames", "frames", notes));  // none fits: at least 1
  EXPECT_EQ(slow, 1u);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "RTPULSE_MAX_RUN_S=2: -D capped from no end to 2 s (a test aid: the run "
                       "is shorter than asked)",
                       "RTPULSE_MAX_RUN_S=2: -D capped from 10m to 2 s (a test aid: the run is "
                       "shorter than asked)",
                       "RTPULSE_MAX_RUN_S=2: --jobs capped from 10000 jobs to 500 jobs (2 s) (a "
                       "test aid: the run is shorter than asked)",
                       "RTPULSE_MAX_RUN_S=2: --frames capped from 10 frames to 1 frames (5 s) (a "
                       "test aid: the run is shorter than asked)"}));
  setenv(kMaxRunEnv, "x", 1);
  EXPECT_FALSE(CapRunDuration(ten_min, "-D", "10m", notes));
  EXPECT_FALSE(CapRunCount(jobs, 4e6, "--jobs", "jobs", notes));
}

}  // namespace
}  // namespace rtpulse
