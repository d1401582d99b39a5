#include "core/memory_facts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rtpulse {
namespace {

namespace fs = std::filesystem;

// A /proc/meminfo as the kernel prints it (values in kB).
constexpr const char* kMeminfo =
    "MemTotal:        8039428 kB\n"
    "MemFree:          512340 kB\n"
    "MemAvailable:    6123456 kB\n"
    "HugePages_Total:       0\n";

TEST(MemoryFactsTest, MeminfoFieldsAreKibTimes1024) {
  EXPECT_EQ(MeminfoBytes(kMeminfo, "MemTotal"), uint64_t{8039428} * 1024);
  EXPECT_EQ(MeminfoBytes(kMeminfo, "MemAvailable"), uint64_t{6123456} * 1024);
  EXPECT_EQ(MeminfoBytes(kMeminfo, "MemFree"), uint64_t{512340} * 1024);
}

TEST(MemoryFactsTest, AnAbsentOrGarbledFieldIsUnknown) {
  EXPECT_FALSE(MeminfoBytes(kMeminfo, "SwapTotal"));
  EXPECT_FALSE(MeminfoBytes(kMeminfo, "Mem")) << "a prefix of a name is not the name";
  EXPECT_FALSE(MeminfoBytes("MemAvailable:   lots kB\n", "MemAvailable"));
  EXPECT_FALSE(MeminfoBytes("", "MemAvailable"));
}

class MemoryFactsTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("memory_facts_test." + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    const fs::path p = root_ / path.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(MemoryFactsTreeTest, MeminfoIsReadUnderTheRoot) {
  FsRoot root(root_.string());
  EXPECT_FALSE(MeminfoBytes(root, "MemAvailable")) << "no file: unknown";
  Write("/proc/meminfo", kMeminfo);
  EXPECT_EQ(MeminfoBytes(root, "MemAvailable"), uint64_t{6123456} * 1024);
}

TEST_F(MemoryFactsTreeTest, LastLevelCacheIsTheLargestIndexOfCpu0) {
  FsRoot root(root_.string());
  EXPECT_EQ(LastLevelCacheBytes(root), 0u) << "no cache folder: unknown";
  // A Raspberry Pi 5 (Cortex-A76): 64K L1d and L1i, 512K L2 per core, 2048K shared L3.
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/";
  Write(base + "index0/size", "64K\n");
  Write(base + "index1/size", "64K\n");
  Write(base + "index2/size", "512K\n");
  Write(base + "index3/size", "2048K\n");
  Write(base + "uevent", "");
  EXPECT_EQ(LastLevelCacheBytes(root), uint64_t{2048} * 1024);
  Write(base + "index4/size", "3M\n");
  EXPECT_EQ(LastLevelCacheBytes(root), uint64_t{3} << 20);
  Write(base + "index5/size", "garbage\n");
  EXPECT_EQ(LastLevelCacheBytes(root), uint64_t{3} << 20) << "an unreadable size is skipped";
}

}  // namespace
}  // namespace rtpulse
