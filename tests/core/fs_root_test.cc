#include "core/fs_root.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

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

TEST(FsRootTest, ReadWholeFileIsBinarySafeAndSaysWhyItFailed) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rtpulse-wholefile-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // Larger than one read (64 KiB) and with NULs and no final newline.
  std::string bytes(200'000, 'x');
  bytes[10] = '\0';
  bytes[70'000] = '\0';
  std::ofstream(dir / "blob", std::ios::binary) << bytes;
  EXPECT_EQ(ReadWholeFile((dir / "blob").string()), bytes);
  std::ofstream(dir / "empty");
  EXPECT_EQ(ReadWholeFile((dir / "empty").string()), "") << "an empty file is not a failure";
  errno = 0;
  EXPECT_FALSE(ReadWholeFile((dir / "absent").string()));
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_FALSE(ReadWholeFile(dir.string())) << "a folder is not a file";
  EXPECT_EQ(errno, EISDIR);
  const FsRoot root(dir.string());
  EXPECT_EQ(root.Read("/blob"), bytes) << "FsRoot::Read reads through the same function";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rtpulse
