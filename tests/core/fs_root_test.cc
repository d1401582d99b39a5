#include "core/fs_root.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace rtpulse {
namespace {

TEST(FsRootTest, ListsFolderEntriesSortedAndNothingElse) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rtpulse-fsroot-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "sys/cpufreq/policy4");
  std::filesystem::create_directories(dir / "sys/cpufreq/policy0");
  std::ofstream(dir / "sys/cpufreq/boost") << "1\n";
  const FsRoot root(dir.string() + "/");
  EXPECT_EQ(root.List("/sys/cpufreq"), (std::vector<std::string>{"boost", "policy0", "policy4"}));
  EXPECT_TRUE(root.List("/sys/cpufreq/boost").empty()) << "a file is not a folder";
  EXPECT_TRUE(root.List("/absent").empty());
  EXPECT_EQ(root.ReadLine("/sys/cpufreq/boost"), "1");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rtpulse
