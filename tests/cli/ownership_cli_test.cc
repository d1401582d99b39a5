// Files written under sudo belong to the user who ran sudo: the real binary, run as root with
// SUDO_UID/SUDO_GID set to nobody's ids, writes a suite run, latency --json/--samples/
// --histfile, an import, a report and a compare, and every file and folder it wrote is
// nobody's (stat). A write the user may not make is exit 3 with the fix.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using testutil::ProcessOptions;
using testutil::ProcessResult;
using testutil::RunRtpulse;
using testutil::TempDir;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

ProcessOptions UnderSudoByNobody() {
  ProcessOptions options;
  options.extra_env = {"SUDO_UID=" + std::to_string(kNobody),
                       "SUDO_GID=" + std::to_string(kNogroup), "SUDO_USER=nobody"};
  return options;
}

/// Every entry at and below `top`: each must be nobody's; returns how many there were.
size_t ExpectAllNobodys(const fs::path& top) {
  std::vector<fs::path> entries = {top};
  for (const auto& e : fs::recursive_directory_iterator(top)) entries.push_back(e.path());
  for (const auto& p : entries) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_uid, kNobody) << p << " is uid " << st.st_uid;
    EXPECT_EQ(st.st_gid, kNogroup) << p << " is gid " << st.st_gid;
  }
  return entries.size();
}

bool HasFile(const fs::path& top, const std::string& name) {
  for (const auto& e : fs::recursive_directory_iterator(top)) {
    if (e.path().filename() == name) return true;
  }
  return false;
}

class OwnershipTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root: sudo's case is a root process";
  }
};

TEST_F(OwnershipTest, EverythingWrittenUnderSudoBelongsToTheInvokingUser) {
  TempDir dir;
  const auto as_sudo = UnderSudoByNobody();
  // latency: --json, --samples and --histfile, each into its own folder so the check covers
  // exactly what the command wrote.
  const fs::path lat = dir.File("latency");
  fs::create_directory(lat);
  ::chown(lat.c_str(), kNobody, kNogroup);  // the user's own folder, as under sudo
  auto l = RunRtpulse({"latency", "-S", "-i", "1000", "-l", "300", "-q", "-h", "100", "--json",
                       (lat / "run.json").string(), "--samples", (lat / "run.smp").string(),
                       "--histfile", (lat / "hist.txt").string()},
                      as_sudo);
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_EQ(ExpectAllNobodys(lat), 4u) << "the folder and its three files";

  // suite into a folder two levels below an existing one: both created folders are the user's.
  const fs::path run = fs::path(dir.File("runs")) / "board" / "run1";
  auto s = RunRtpulse(
      {"suite", "--quick", "--scenarios", "idle", "--samples", "-q", "--out", run.string()},
      as_sudo);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(fs::exists(run / "result.json"));
  EXPECT_TRUE(fs::exists(run / "idle" / "cyclictest.json"));
  EXPECT_TRUE(fs::exists(run / "idle" / "samples.bin"));
  EXPECT_TRUE(fs::exists(run / "thermal_power_log.csv"));
  const size_t suite_entries = ExpectAllNobodys(dir.File("runs"));
  EXPECT_GE(suite_entries, 12u);

  // report into the run folder: figures rendered by gnuplot too.
  auto r = RunRtpulse({"report", run.string()}, as_sudo);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(run / "report" / "index.html")) << r.out;
  EXPECT_TRUE(HasFile(run / "figures", "exceedance.png")) << r.out;
  EXPECT_GT(ExpectAllNobodys(dir.File("runs")), suite_entries);

  // import of the latency JSON into a new results folder.
  const fs::path imported = dir.File("imported");
  auto i = RunRtpulse({"import", (lat / "run.json").string(), "--out", imported.string()}, as_sudo);
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_TRUE(fs::exists(imported / "result.json"));
  ExpectAllNobodys(imported);

  // compare: --json, --html and --figures (a folder it creates, gnuplot's images in it).
  const fs::path cmp = dir.File("compare");
  fs::create_directory(cmp);
  ::chown(cmp.c_str(), kNobody, kNogroup);
  auto c = RunRtpulse({"compare", run.string(), run.string(), "--json", (cmp / "c.json").string(),
                       "--html", (cmp / "c.html").string(), "--figures", (cmp / "figs").string()},
                      as_sudo);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(fs::exists(cmp / "c.json"));
  EXPECT_TRUE(fs::exists(cmp / "c.html"));
  size_t svgs = 0;
  for (const auto& e : fs::directory_iterator(cmp / "figs")) {
    if (e.path().extension() == ".svg") ++svgs;
  }
  EXPECT_GE(svgs, 1u) << "gnuplot's images are among the files checked";
  EXPECT_GE(ExpectAllNobodys(cmp), 5u);
}

TEST_F(OwnershipTest, WithoutSudoRootKeepsItsFiles) {
  TempDir dir;
  ProcessOptions plain;
  plain.extra_env = {"SUDO_UID", "SUDO_GID"};
  auto l = RunRtpulse(
      {"latency", "-S", "-i", "1000", "-l", "50", "-q", "--json", dir.File("r.json")}, plain);
  ASSERT_EQ(l.exit_code, 0) << l.err;
  struct stat st {};
  ASSERT_EQ(::stat(dir.File("r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
}

TEST_F(OwnershipTest, AWriteTheUserMayNotMakeIsExit3WithTheFix) {
  TempDir dir;
  const fs::path closed = dir.File("roots");  // root's, 0755: nobody may not write in it
  fs::create_directory(closed);
  fs::permissions(closed, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  ProcessOptions as_nobody;
  as_nobody.run_as_uid = kNobody;
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const std::vector<Case> cases = {
      {{"latency", "-i", "1000", "-l", "10", "-q", "--json", (closed / "r.json").string()},
       (closed / "r.json").string()},
      {{"latency", "-i", "1000", "-l", "10", "-q", "--samples", (closed / "r.smp").string()},
       (closed / "r.smp").string()},
      {{"suite", "--quick", "--scenarios", "idle", "--out", (closed / "run").string()},
       (closed / "run").string()},
      {{"check", "--json", (closed / "c.json").string()}, (closed / "c.json").string()},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args.front() + " " + c.names);
    const ProcessResult r = RunRtpulse(c.args, as_nobody);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("ls -ld " + closed.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("write somewhere you own, or run with sudo"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(closed)) << "nothing written";
}

TEST_F(OwnershipTest, AControlRunAndItsInterferenceFolderBelongToTheInvokingUser) {
  TempDir dir;
  const auto as_sudo = UnderSudoByNobody();
  const fs::path run = dir.File("a") + "/control";
  const fs::path json_dir = dir.File("j");
  fs::create_directory(json_dir);
  ::chown(json_dir.c_str(), kNobody, kNogroup);  // the user's own folder, as under sudo
  auto c = RunRtpulse({"control", "--policy", "fifo:50", "--jobs", "50", "--no-stress", "-q",
                       "--json", (json_dir / "summary.json").string(), "--out", run.string()},
                      as_sudo);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(HasFile(run, "jobs.csv"));
  EXPECT_TRUE(HasFile(run, "control.json"));
  EXPECT_TRUE(HasFile(run, "samples.bin"));
  EXPECT_GT(ExpectAllNobodys(dir.File("a")), 10u);
  EXPECT_EQ(ExpectAllNobodys(json_dir), 2u) << "the folder and summary.json";
  const fs::path interference = dir.File("b") + "/interference";
  auto i = RunRtpulse({"control", "--interference", "--jobs", "20", "--repetitions", "2", "-q",
                       "--out", interference.string()},
                      as_sudo);
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_TRUE(HasFile(interference, "interference.txt"));
  ExpectAllNobodys(dir.File("b"));
}

}  // namespace
}  // namespace rtpulse
