#include "core/file_owner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/atomic_file.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

/// A fresh folder per test and SUDO_UID/SUDO_GID as the test sets them, both undone after.
class FileOwnerTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(testing::TempDir()) / "rtpulse_owner_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << tmpl;
    dir_ = tmpl;
    Save("SUDO_UID", saved_uid_);
    Save("SUDO_GID", saved_gid_);
  }
  void TearDown() override {
    Restore("SUDO_UID", saved_uid_);
    Restore("SUDO_GID", saved_gid_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static void Save(const char* name, std::optional<std::string>& into) {
    if (const char* v = std::getenv(name)) into = v;
  }
  static void Restore(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  static void SudoAs(uid_t uid, gid_t gid) {
    ::setenv("SUDO_UID", std::to_string(uid).c_str(), 1);
    ::setenv("SUDO_GID", std::to_string(gid).c_str(), 1);
  }
  static struct stat Stat(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st;
  }

  fs::path dir_;
  std::optional<std::string> saved_uid_;
  std::optional<std::string> saved_gid_;
};

TEST_F(FileOwnerTest, TheInvokingUserIsSudosOnlyWhenRootAndBothIdsAreNumbers) {
  SudoAs(1234, 5678);
  const auto owner = InvokingUser();
  if (::geteuid() != 0) {
    EXPECT_FALSE(owner) << "not root: the files are the process user's already";
    return;
  }
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->uid, 1234u);
  EXPECT_EQ(owner->gid, 5678u);
  ::setenv("SUDO_GID", "12x", 1);
  EXPECT_FALSE(InvokingUser()) << "a garbled id is ignored, not half-parsed";
  ::unsetenv("SUDO_GID");
  EXPECT_FALSE(InvokingUser());
  ::unsetenv("SUDO_UID");
  SudoAs(1234, 5678);
  ::setenv("SUDO_UID", "", 1);
  EXPECT_FALSE(InvokingUser());
}

TEST_F(FileOwnerTest, UnderSudoAWrittenFileAndEveryCreatedFolderBelongToTheUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
  const fs::path existing = dir_ / "existing";
  fs::create_directory(existing);
  SudoAs(kNobody, kNogroup);
  const fs::path deep = existing / "a" / "b" / "c";
  ASSERT_TRUE(CreateFolders(deep.string()).ok());
  for (const fs::path& p : {existing / "a", existing / "a" / "b", deep}) {
    const auto st = Stat(p);
    EXPECT_EQ(st.st_uid, kNobody) << p;
    EXPECT_EQ(st.st_gid, kNogroup) << p;
  }
  EXPECT_EQ(Stat(existing).st_uid, 0u) << "a folder that was there is left as it was";
  const fs::path file = deep / "result.json";
  ASSERT_TRUE(WriteFileAtomic(file.string(), "{}\n").ok());
  EXPECT_EQ(Stat(file).st_uid, kNobody);
  EXPECT_EQ(Stat(file).st_gid, kNogroup);
  // Rewriting a file (root's from before) replaces it with the user's.
  ::unsetenv("SUDO_UID");
  const fs::path rewritten = existing / "rewritten.txt";
  ASSERT_TRUE(WriteFileAtomic(rewritten.string(), "1\n").ok());
  EXPECT_EQ(Stat(rewritten).st_uid, 0u) << "not under sudo: root's";
  SudoAs(kNobody, kNogroup);
  ASSERT_TRUE(WriteFileAtomic(rewritten.string(), "2\n").ok());
  EXPECT_EQ(Stat(rewritten).st_uid, kNobody);
  ASSERT_TRUE(CreateFolders(deep.string()).ok()) << "existing folders are fine";
}

TEST_F(FileOwnerTest, AFileInTheWayOfAFolderIsNamed) {
  const fs::path file = dir_ / "plain";
  ASSERT_TRUE(WriteFileAtomic(file.string(), "x").ok());
  for (const fs::path& want : {file, file / "below"}) {
    const Status s = CreateFolders(want.string());
    ASSERT_FALSE(s.ok()) << want;
    EXPECT_EQ(s.error().code, ExitCode::kUsage);
    EXPECT_NE(s.error().message.find("'" + want.string() + "'"), std::string::npos)
        << s.error().message;
    EXPECT_NE(s.error().message.find("in the way"), std::string::npos) << s.error().message;
  }
}

TEST_F(FileOwnerTest, AFolderThatCannotBeMadeForOtherReasonsIsBadInput) {
  const Status s = CreateFolders("/proc/rtpulse-no-such/run");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kUsage) << s.error().message;
  EXPECT_NE(s.error().message.find("cannot create folder '/proc/rtpulse-no-such'"),
            std::string::npos)
      << s.error().message;
}

TEST_F(FileOwnerTest, PermissionAndReadOnlyFailuresAreMissingPrivilegeWithTheFix) {
  const Error denied = WriteError("cannot write", "/srv/out/run.json", EACCES);
  EXPECT_EQ(denied.code, ExitCode::kResource);
  EXPECT_EQ(denied.message,
            "cannot write '/srv/out/run.json': Permission denied; this user may not write in "
            "'/srv/out': check its owner and mode (ls -ld /srv/out), write somewhere you own, "
            "or run with sudo");
  EXPECT_EQ(WriteError("cannot write", "x.json", EPERM).code, ExitCode::kResource);
  EXPECT_NE(WriteError("cannot write", "x.json", EPERM).message.find("ls -ld ."), std::string::npos)
      << "a bare name is in the current folder";
  const Error rofs = WriteError("cannot create folder", "/mnt/ro/run", EROFS);
  EXPECT_EQ(rofs.code, ExitCode::kResource);
  EXPECT_NE(rofs.message.find("read-only filesystem"), std::string::npos) << rofs.message;
  const Error full = WriteError("cannot write", "/data/run.smp", ENOSPC);
  EXPECT_EQ(full.code, ExitCode::kResource) << "a full disk is a missing resource, exit 3";
  EXPECT_NE(full.message.find("df -h /data"), std::string::npos) << full.message;
  const Error other = WriteError("cannot write", "/data/run.smp", EIO);
  EXPECT_EQ(other.code, ExitCode::kFailure);
  EXPECT_EQ(other.message, "cannot write '/data/run.smp': Input/output error");
}

}  // namespace
}  // namespace rtpulse
