#include "core/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

// An output option: "" writes nothing, "-" standard output, a path the file.
TEST_F(AtomicFileTest, WriteOutputTakesNothingStdoutOrAFile) {
  ASSERT_TRUE(WriteOutput("", "ignored\n").ok());
  EXPECT_TRUE(Names().empty());
  testing::internal::CaptureStdout();
  const Status to_stdout = WriteOutput("-", "{\"b\": 2}\n");
  std::fflush(stdout);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "{\"b\": 2}\n");
  ASSERT_TRUE(to_stdout.ok());
  EXPECT_TRUE(Names().empty());
  ASSERT_TRUE(WriteOutput(PathOf("o.json"), "x\n").ok());
  EXPECT_EQ(ReadAll(PathOf("o.json")), "x\n");
  const Status missing = WriteOutput(PathOf("no/such/o.json"), "x\n");
  EXPECT_FALSE(missing.ok());
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

// `rtpulse load --json /dev/null` run as root once renamed a regular file over /dev/null.
// Devices, FIFOs and terminals are written in place and stay what they were.
TEST_F(AtomicFileTest, AFifoIsWrittenInPlaceNotReplaced) {
  const std::string path = PathOf("pipe");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // This end keeps the FIFO open for reading, so the writer's open does not block.
  const int reader = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteFileAtomic(path, "through the pipe").ok());
  char buf[64] = {};
  const ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ExpectNoTempFiles();
}

TEST_F(AtomicFileTest, ACharacterDeviceIsWrittenInPlaceNotReplaced) {
  const std::string path = PathOf("null");
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot create a device node here (needs root and CAP_MKNOD)";
  }
  ASSERT_TRUE(WriteFileAtomic(path, "gone").ok());
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced by a file";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  ExpectNoTempFiles();
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
