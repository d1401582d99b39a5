#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace rtpulse {
namespace {

namespace fs = std::filesystem;

/// A fresh folder per test, removed afterwards.
class AtomicFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "rtpulse_atomic_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << tmpl;
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  void ExpectNoTempFiles() const {
    for (const auto& name : Names()) {
      EXPECT_EQ(name.find(".tmp."), std::string::npos) << "left behind: " << name;
    }
  }

  fs::path dir_;
};

// ---- WriteFileAtomic --------------------------------------------------------------------

TEST_F(AtomicFileTest, CreatesTheFileWithTheContent) {
  const std::string path = PathOf("out.json");
  const Status s = WriteFileAtomic(path, "{\"a\": 1}\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(ReadAll(path), "{\"a\": 1}\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, ReplacesExistingContentCompletely) {
  const std::string path = PathOf("out.txt");
  ASSERT_TRUE(WriteFileAtomic(path, "a first, rather long version of the file\n").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second\n").ok());
  EXPECT_EQ(ReadAll(path), "second\n");  // no tail of the longer first version
  ASSERT_TRUE(WriteFileAtomic(path, "").ok());
  EXPECT_EQ(ReadAll(path), "");
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(Names(), std::vector<std::string>{"out.txt"});
}

TEST_F(AtomicFileTest, WritesLargeAndBinaryContentExactly) {
  std::string content(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 131 % 256);
  const std::string path = PathOf("samples.bin");
  ASSERT_TRUE(WriteFileAtomic(path, content).ok());
  EXPECT_EQ(fs::file_size(path), content.size());
  EXPECT_TRUE(ReadAll(path) == content);
}

TEST_F(AtomicFileTest, LeavesNoTempFilesBehind) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(WriteFileAtomic(PathOf("a.json"), std::string(static_cast<size_t>(i), 'x')).ok());
    ASSERT_TRUE(WriteFileAtomic(PathOf("b.hist"), "row\n").ok());
  }
  ExpectNoTempFiles();
  EXPECT_EQ(Names(), (std::vector<std::string>{"a.json", "b.hist"}));
}

TEST_F(AtomicFileTest, MissingFolderFailsNamingThePath) {
  const std::string path = PathOf("no/such/folder/out.json");
  const Status s = WriteFileAtomic(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kFailure);
  EXPECT_NE(s.error().message.find("'" + path + "'"), std::string::npos) << s.error().message;
  EXPECT_TRUE(Names().empty());
}

TEST_F(AtomicFileTest, TargetThatIsAFolderFailsAndCleansUp) {
  const std::string path = PathOf("results");
  fs::create_directory(path);
  const Status s = WriteFileAtomic(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("'" + path + "'"), std::string::npos) << s.error().message;
  EXPECT_TRUE(fs::is_directory(path));
  ExpectNoTempFiles();
  EXPECT_EQ(Names(), std::vector<std::string>{"results"});
}

// ---- CheckWritable ----------------------------------------------------------------------

TEST_F(AtomicFileTest, CheckWritableAcceptsAFileInAWritableFolder) {
  const std::string path = PathOf("new.json");
  const Status s = CheckWritable(path);
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(fs::exists(path)) << "CheckWritable must not create the file";
}

TEST_F(AtomicFileTest, CheckWritableAcceptsAnExistingFile) {
  const std::string path = PathOf("old.json");
  ASSERT_TRUE(WriteFileAtomic(path, "old").ok());
  const Status s = CheckWritable(path);
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(ReadAll(path), "old");
}

TEST_F(AtomicFileTest, CheckWritableAcceptsABareFileName) {
  // No folder part: the current folder (the build tree while ctest runs) is checked.
  const Status s = CheckWritable("rtpulse_check_writable_probe.json");
  EXPECT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(fs::exists("rtpulse_check_writable_probe.json"));
}

TEST_F(AtomicFileTest, CheckWritableRejectsAFolder) {
  const Status s = CheckWritable(dir_.string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("'" + dir_.string() + "'"), std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("folder"), std::string::npos) << s.error().message;
}

TEST_F(AtomicFileTest, CheckWritableRejectsAMissingFolder) {
  const std::string missing = PathOf("missing");
  const std::string path = missing + "/out.json";
  const Status s = CheckWritable(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("'" + path + "'"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("'" + missing + "'"), std::string::npos) << s.error().message;
  EXPECT_FALSE(fs::exists(missing)) << "CheckWritable must not create folders";
}

TEST_F(AtomicFileTest, CheckWritableRejectsAReadOnlyFolder) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root: root bypasses folder permission bits (CAP_DAC_OVERRIDE), "
                    "so a read-only folder is still writable";
  }
  const std::string ro = PathOf("readonly");
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string path = ro + "/out.json";
  const Status s = CheckWritable(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kResource) << "missing privilege, README exit code 3";
  EXPECT_NE(s.error().message.find("'" + path + "'"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("not writable"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("ls -ld " + ro), std::string::npos) << s.error().message;
  fs::permissions(ro, fs::perms::owner_all);
}

}  // namespace
}  // namespace rtpulse
