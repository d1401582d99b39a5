#include "kernel/running_config.h"

#include <gtest/gtest.h>

#include "core/gzip.h"
#include "support/test_paths.h"

namespace rtpulse::kernel {
namespace {

FsRoot Sysroot(const std::string& name) {
  return FsRoot(std::string(RTPULSE_TEST_DATA) + "/kernel/" + name);
}

TEST(RunningConfigTest, ReadsProcConfigGzFirst) {
  auto running = LoadRunningConfig(Sysroot("sysroot-rt"));
  ASSERT_TRUE(running) << running.error().message;
  EXPECT_EQ(running->source, "/proc/config.gz");
  EXPECT_EQ(running->release, "6.12.47-v8-16k-rt");
  EXPECT_EQ(running->version, "#1 SMP PREEMPT_RT Sat Nov 29 10:00:00 UTC 2025");
  EXPECT_EQ(running->config.Get("PREEMPT_RT"), "y");
  EXPECT_EQ(running->config.version(), "6.12.47");
}

TEST(RunningConfigTest, FallsBackToBootConfigOfTheRelease) {
  auto running = LoadRunningConfig(Sysroot("sysroot-boot-config"));
  ASSERT_TRUE(running) << running.error().message;
  EXPECT_EQ(running->source, "/boot/config-6.12.47+rpt-rpi-2712");
  EXPECT_EQ(running->config.Get("PREEMPT"), "y");
}

TEST(RunningConfigTest, NoConfigIsAResourceErrorWithTheFix) {
  auto running = LoadRunningConfig(Sysroot("sysroot-no-config"));
  ASSERT_FALSE(running);
  EXPECT_EQ(running.error().code, ExitCode::kResource);
  EXPECT_NE(running.error().message.find("modprobe configs"), std::string::npos);
  EXPECT_NE(running.error().message.find("/boot/config-6.12.47+rpt-rpi-2712"), std::string::npos);
  EXPECT_NE(running.error().message.find("--config"), std::string::npos);
}

TEST(RunningConfigTest, CorruptConfigGzIsAFailure) {
  auto running = LoadRunningConfig(Sysroot("sysroot-bad-gzip"));
  ASSERT_FALSE(running);
  EXPECT_EQ(running.error().code, ExitCode::kFailure);
  EXPECT_NE(running.error().message.find("not valid gzip"), std::string::npos);
}

TEST(GunzipTest, RoundTripsAndHandlesConcatenatedMembers) {
  // printf 'ab' | gzip -n, twice, concatenated: gzip -d yields "abab".
  const unsigned char member[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b,
                                  0x4c, 0x02, 0x00, 0x6d, 0x48, 0x83, 0x9e, 0x02, 0x00, 0x00, 0x00};
  std::string one(reinterpret_cast<const char*>(member), sizeof(member));
  auto plain = Gunzip(one, "t");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(*plain, "ab");
  auto twice = Gunzip(one + one, "t");
  ASSERT_TRUE(twice) << twice.error().message;
  EXPECT_EQ(*twice, "abab");
}

TEST(GunzipTest, TruncatedDataIsAnError) {
  const unsigned char member[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b};
  EXPECT_FALSE(Gunzip(std::string(reinterpret_cast<const char*>(member), sizeof(member)), "t"));
  EXPECT_FALSE(Gunzip("", "t"));
}

}  // namespace
}  // namespace rtpulse::kernel
