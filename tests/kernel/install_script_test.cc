// scripts/install-rt-kernel on a fixture Raspberry Pi 5 root (tests/data/kernel/pi5-root),
// whose config.txt the seed's script already appended to twice, with a staging folder laid
// out as scripts/build-rt-kernel writes it (tests/kernel/make-fake-staging).
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kernel/run_command.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::kSource;
using testing::RunCommand;
using testing::ShellQuote;
using testing::WriteFile;

const std::string kInstall = kSource + "/scripts/install-rt-kernel";
const std::string kRelease = "6.12.47-v8-16k-rt";
const std::string kBegin =
    "# >>> rtpulse-kernel (managed by scripts/install-rt-kernel; remove with --uninstall) >>>";
const std::string kBlock = kBegin +
                           "\n[pi5]\nkernel=kernel_2712_rt.img\n[all]\n"
                           "# <<< rtpulse-kernel <<<\n";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

class InstallScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rtpulse-install-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    root_ = dir_ / "root";
    staging_ = dir_ / "staging";
    fs::copy(std::string(RTPULSE_TEST_DATA) + "/kernel/pi5-root", root_,
             fs::copy_options::recursive);
    MakeStaging(staging_, kRelease);
    before_ = Snapshot();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void MakeStaging(const fs::path& where, const std::string& release) {
    auto r = RunCommand(kSource + "/tests/kernel/make-fake-staging " + ShellQuote(where) + " " +
                        release);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  CommandResult Install(const std::string& args) {
    return RunCommand(kInstall + " --root " + ShellQuote(root_) + " " + args);
  }
  CommandResult InstallStaging(const std::string& args = "") {
    return Install(args + " " + ShellQuote(staging_));
  }

  /// Every file under the root with its checksum: equal snapshots mean nothing changed.
  std::string Snapshot() const {
    return RunCommand("cd " + ShellQuote(root_) +
                      " && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum")
        .output;
  }

  fs::path Boot(const std::string& name) const { return root_ / "boot/firmware" / name; }

  void SetRunningRelease(const std::string& release) {
    fs::create_directories(root_ / "proc/sys/kernel");
    WriteFile(root_ / "proc/sys/kernel/osrelease", release + "\n");
  }

  fs::path dir_;
  fs::path root_;
  fs::path staging_;
  std::string before_;
};

TEST_F(InstallScriptTest, TrybootInstallKeepsStockKernelAndConfigTxt) {
  const std::string config_before = ReadFile(Boot("config.txt"));
  auto r = InstallStaging();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // config.txt is what the next normal boot reads: untouched, so a failed tryboot falls back.
  EXPECT_EQ(ReadFile(Boot("config.txt")), config_before);
  EXPECT_EQ(ReadFile(Boot("kernel_2712.img")), "stock kernel_2712.img (fixture)\n");
  EXPECT_EQ(ReadFile(Boot("kernel_2712_rt.img")),
            ReadFile(staging_ / "boot/firmware/kernel_2712_rt.img"));
  // tryboot.txt: the whole config.txt (it replaces config.txt for one boot) plus our block last.
  const std::string tryboot = ReadFile(Boot("tryboot.txt"));
  EXPECT_EQ(tryboot.substr(0, tryboot.size() - kBlock.size()), config_before + "\n");
  EXPECT_EQ(tryboot.substr(tryboot.size() - kBlock.size()), kBlock);
  // The seed's own kernel= lines and duplicates are reported, not silently kept.
  EXPECT_NE(r.output.find("selects a kernel outside the rtpulse block"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("repeats these lines"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reboot '0 tryboot'"), std::string::npos) << r.output;
  // Device trees replaced, the originals kept; modules and config beside the stock ones.
  EXPECT_EQ(ReadFile(Boot("bcm2712-rpi-5-b.dtb")), "rt bcm2712-rpi-5-b.dtb (" + kRelease + ")\n");
  EXPECT_EQ(ReadFile(Boot("rtpulse-kernel/original/boot/firmware/bcm2712-rpi-5-b.dtb")),
            "stock bcm2712-rpi-5-b.dtb (fixture)\n");
  EXPECT_EQ(ReadFile(Boot("overlays/vc4-kms-v3d-pi5.dtbo")),
            "stock vc4-kms-v3d-pi5.dtbo (fixture)\n");
  EXPECT_TRUE(fs::exists(root_ / "lib/modules" / kRelease / "modules.dep"));
  EXPECT_TRUE(fs::exists(root_ / "lib/modules/6.12.47+rpt-rpi-2712/modules.dep"));
  EXPECT_TRUE(fs::exists(root_ / "boot" / ("config-" + kRelease)));
  EXPECT_FALSE(fs::exists(Boot("cmdline.txt.rtpulse-tmp")));
}

TEST_F(InstallScriptTest, RerunningChangesNothing) {
  for (const char* mode : {"--tryboot", "--permanent"}) {
    auto first = InstallStaging(std::string(mode) + " --isolate 2-3");
    ASSERT_EQ(first.exit_code, 0) << first.output;
    const std::string after_first = Snapshot();
    auto second = InstallStaging(std::string(mode) + " --isolate 2-3");
    ASSERT_EQ(second.exit_code, 0) << second.output;
    EXPECT_NE(second.output.find("already installed: nothing changed"), std::string::npos)
        << mode << "\n"
        << second.output;
    EXPECT_EQ(Snapshot(), after_first) << mode;
  }
}

TEST_F(InstallScriptTest, PermanentInstallKeepsExactlyOneBlock) {
  ASSERT_EQ(InstallStaging("--permanent").exit_code, 0);
  ASSERT_EQ(InstallStaging("--permanent").exit_code, 0);
  ASSERT_EQ(InstallStaging("--permanent").exit_code, 0);
  const std::string config = ReadFile(Boot("config.txt"));
  EXPECT_EQ(Count(config, kBegin), 1u) << config;
  EXPECT_EQ(Count(config, "kernel=kernel_2712_rt.img"), 1u) << config;
  EXPECT_EQ(config.substr(config.size() - kBlock.size()), kBlock);
  EXPECT_FALSE(fs::exists(Boot("tryboot.txt")));
}

TEST_F(InstallScriptTest, IsolationGoesIntoCmdlineOnceOnOneLine) {
  ASSERT_EQ(InstallStaging("--isolate 2-3").exit_code, 0);
  ASSERT_EQ(InstallStaging("--isolate 2,3").exit_code, 0);
  const std::string cmdline = ReadFile(Boot("cmdline.txt"));
  EXPECT_EQ(Count(cmdline, "\n"), 1u) << cmdline;
  EXPECT_EQ(cmdline.back(), '\n');
  EXPECT_EQ(Count(cmdline, "isolcpus="), 1u) << cmdline;  // the seed's isolcpus=3 is replaced
  EXPECT_NE(cmdline.find(" isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                         "irqaffinity=0-1\n"),
            std::string::npos)
      << cmdline;
  EXPECT_EQ(cmdline.find("console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 "), 0u);
}

TEST_F(InstallScriptTest, CommitNeedsTheNewKernelRunningThenWritesConfigTxt) {
  ASSERT_EQ(InstallStaging().exit_code, 0);
  SetRunningRelease("6.12.47+rpt-rpi-2712");
  auto refused = Install("--commit");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("not the installed " + kRelease), std::string::npos)
      << refused.output;
  EXPECT_EQ(Count(ReadFile(Boot("config.txt")), kBegin), 0u);

  SetRunningRelease(kRelease);
  auto r = Install("--commit");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string config = ReadFile(Boot("config.txt"));
  EXPECT_EQ(config.substr(config.size() - kBlock.size()), kBlock);
  EXPECT_FALSE(fs::exists(Boot("tryboot.txt"))) << "tryboot.txt did not exist before install";
  auto again = Install("--commit");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(ReadFile(Boot("config.txt")), config);
}

TEST_F(InstallScriptTest, UninstallRestoresTheBootTreeExactly) {
  ASSERT_EQ(InstallStaging("--isolate 1-3").exit_code, 0);
  SetRunningRelease(kRelease);
  ASSERT_EQ(Install("--commit").exit_code, 0);
  fs::remove_all(root_ / "proc");
  auto r = Install("--uninstall");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Snapshot(), before_);
  EXPECT_FALSE(fs::exists(root_ / "lib/modules" / kRelease));
  EXPECT_FALSE(fs::exists(Boot("rtpulse-kernel")));
  auto again = Install("--uninstall");
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("nothing installed"), std::string::npos);
}

TEST_F(InstallScriptTest, UninstallKeepsEditsMadeAfterTheInstall) {
  ASSERT_EQ(InstallStaging("--permanent --isolate 3").exit_code, 0);
  WriteFile(Boot("config.txt"), ReadFile(Boot("config.txt")) + "dtparam=spi=on\n");
  WriteFile(Boot("cmdline.txt"),
            "quiet isolcpus=managed_irq,domain,3 nohz_full=3 rcu_nocbs=3 "
            "irqaffinity=0-2 splash\n");
  auto r = Install("--uninstall");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string config = ReadFile(Boot("config.txt"));
  EXPECT_EQ(Count(config, kBegin), 0u);
  EXPECT_NE(config.find("dtparam=spi=on"), std::string::npos);
  EXPECT_EQ(ReadFile(Boot("cmdline.txt")), "quiet splash\n");
  EXPECT_NE(r.output.find("before the install it had: isolcpus=3"), std::string::npos) << r.output;
}

TEST_F(InstallScriptTest, DryRunChangesNothing) {
  auto r = InstallStaging("--dry-run --permanent --isolate 2-3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("would copy /boot/firmware/kernel_2712_rt.img"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("+kernel=kernel_2712_rt.img"), std::string::npos) << r.output;
  EXPECT_EQ(Snapshot(), before_);
}

// Bad input: a clear error, exit 2, and not one byte of the root changed.
class InstallBadInputTest : public InstallScriptTest {
 protected:
  void ExpectRejected(const CommandResult& r, const std::string& says) {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("install-rt-kernel: error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    EXPECT_EQ(Snapshot(), before_);
  }
};

TEST_F(InstallBadInputTest, BootFolderWithoutConfigTxt) {
  fs::remove(Boot("config.txt"));
  before_ = Snapshot();
  ExpectRejected(InstallStaging(), "no config.txt");
}

TEST_F(InstallBadInputTest, StagingThatIsNotOne) {
  ExpectRejected(Install(ShellQuote(dir_ / "nope")), "does not exist");
  ExpectRejected(Install(ShellQuote(root_ / "boot")), "no manifest.txt/SHA256SUMS");
  ExpectRejected(Install(""), "no STAGING folder");
}

TEST_F(InstallBadInputTest, StagingWithAFileChangedAfterTheBuild) {
  WriteFile(staging_ / "boot/firmware/kernel_2712_rt.img", "Linux version other (x)\n");
  ExpectRejected(InstallStaging(), "does not match its SHA256SUMS");
}

TEST_F(InstallBadInputTest, StagingMixingTwoBuilds) {
  // Modules of another build, checksums regenerated so only the release tells them apart.
  const fs::path other = dir_ / "other";
  MakeStaging(other, "6.12.48-v8-16k-rt");
  fs::remove_all(staging_ / "lib/modules");
  fs::copy(other / "lib", staging_ / "lib", fs::copy_options::recursive);
  auto sums = RunCommand("cd " + ShellQuote(staging_) +
                         " && find . -type f ! -name SHA256SUMS -printf '%P\\n' | sort | "
                         "xargs sha256sum > ../sums && mv ../sums SHA256SUMS");
  ASSERT_EQ(sums.exit_code, 0) << sums.output;
  ExpectRejected(InstallStaging(), "modules from a different build");
}

TEST_F(InstallBadInputTest, StagingWithAnUnlistedFile) {
  WriteFile(staging_ / "boot/firmware/extra.dtb", "x");
  ExpectRejected(InstallStaging(), "files SHA256SUMS does not list");
}

TEST_F(InstallBadInputTest, StagingForAnotherBoard) {
  auto r =
      RunCommand("sed -i 's/^board=pi5/board=generic/' " + ShellQuote(staging_ / "manifest.txt") +
                 " && cd " + ShellQuote(staging_) + " && sha256sum manifest.txt > /dev/null");
  ASSERT_EQ(r.exit_code, 0);
  // Re-sum so the board is the only problem.
  RunCommand("cd " + ShellQuote(staging_) +
             " && find . -type f ! -name SHA256SUMS -printf '%P\\n' | sort | xargs sha256sum > "
             "../sums && mv ../sums SHA256SUMS");
  ExpectRejected(InstallStaging(), "not a Raspberry Pi");
}

TEST_F(InstallBadInputTest, IsolationThatWouldLeaveNoHousekeepingCpu) {
  ExpectRejected(InstallStaging("--isolate 0-3"), "CPU 0 must stay a housekeeping CPU");
  ExpectRejected(InstallStaging("--isolate 4"), "CPU 4 does not exist");
  ExpectRejected(InstallStaging("--isolate 2-x"), "use CPU numbers and ranges");
}

TEST_F(InstallBadInputTest, OsPrefixInConfigTxt) {
  WriteFile(Boot("config.txt"), ReadFile(Boot("config.txt")) + "os_prefix=old/\n");
  before_ = Snapshot();
  ExpectRejected(InstallStaging(), "os_prefix");
}

TEST_F(InstallBadInputTest, UnknownOption) {
  ExpectRejected(Install("--frobnicate"), "--frobnicate");
}

/// The boot partition on a real small filesystem: a tmpfs of a few MB mounted over the
/// fixture's boot/firmware (its files copied in), as a nearly full FAT partition would be.
class InstallSpaceTest : public InstallScriptTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs as the boot partition";
    InstallScriptTest::SetUp();
    const fs::path boot = root_ / "boot/firmware";
    const fs::path saved = dir_ / "boot-files";
    fs::rename(boot, saved);
    fs::create_directory(boot);
    auto m = RunCommand("mount -t tmpfs -o size=4m rtpulse-test-boot " + ShellQuote(boot));
    if (m.exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs here: " << m.output;
    mounted_ = true;
    fs::copy(saved, boot, fs::copy_options::recursive);
    // A kernel image larger than the partition's free space (the release line stays in it).
    const fs::path image = staging_ / "boot/firmware/kernel_2712_rt.img";
    fs::resize_file(image, fs::file_size(image) + 6 * kMiB);
    auto sums = RunCommand("cd " + ShellQuote(staging_) +
                           " && find . -type f ! -name SHA256SUMS -printf '%P\\n' | LC_ALL=C "
                           "sort | xargs sha256sum > ../sums && mv ../sums SHA256SUMS");
    ASSERT_EQ(sums.exit_code, 0) << sums.output;
    before_ = Snapshot();
  }
  void TearDown() override {
    if (mounted_) RunCommand("umount " + ShellQuote(root_ / "boot/firmware"));
    if (!dir_.empty()) InstallScriptTest::TearDown();
  }

  /// What the install needs on the boot partition, computed here from the files: every staged
  /// boot file in full, the first backup of each boot file it replaces, and 1 MB for the text
  /// files and the record.
  uint64_t BootBytesNeeded() const {
    uint64_t bytes = kMiB;
    for (const auto& e : fs::recursive_directory_iterator(staging_ / "boot/firmware")) {
      if (!e.is_regular_file()) continue;
      bytes += e.file_size();
      const fs::path target =
          root_ / "boot/firmware" / fs::relative(e.path(), staging_ / "boot/firmware");
      if (fs::exists(target)) bytes += fs::file_size(target);
    }
    return bytes;
  }
  uint64_t BootFreeBytes() const {
    struct statvfs st {};
    EXPECT_EQ(statvfs((root_ / "boot/firmware").c_str(), &st), 0);
    return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  }

  static constexpr uint64_t kMiB = 1024 * 1024;
  bool mounted_ = false;
};

TEST_F(InstallSpaceTest, AShortBootPartitionIsRefusedWithTheNumbersAndNothingChanges) {
  const uint64_t need = BootBytesNeeded();
  const uint64_t free = BootFreeBytes();
  ASSERT_GT(need, free) << "the fixture must not fit";
  for (const char* args : {"", "--dry-run"}) {
    auto r = InstallStaging(args);
    EXPECT_EQ(r.exit_code, 3) << args << "\n" << r.output;
    const std::string mount = (root_ / "boot/firmware").string();
    const std::string says = "not enough free space on " + mount + ": needed " +
                             std::to_string((need + kMiB - 1) / kMiB) + " MB, free " +
                             std::to_string(free / kMiB) + " MB (df -h " + mount + ")";
    EXPECT_NE(r.output.find(says), std::string::npos) << says << "\n" << r.output;
    EXPECT_NE(r.output.find("--no-dtbs"), std::string::npos) << "how to free space";
    EXPECT_NE(r.output.find("Nothing was changed"), std::string::npos) << r.output;
    EXPECT_EQ(Snapshot(), before_) << args;
  }
  // With room (the same partition grown), the same install goes through.
  auto grow = RunCommand("mount -o remount,size=64m " + ShellQuote(root_ / "boot/firmware"));
  ASSERT_EQ(grow.exit_code, 0) << grow.output;
  auto r = InstallStaging();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(fs::file_size(Boot("kernel_2712_rt.img")),
            fs::file_size(staging_ / "boot/firmware/kernel_2712_rt.img"));
}

TEST(InstallScriptHelp, HelpExitsZeroAndDocumentsExitCodes) {
  auto r = RunCommand(kInstall + " --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Exit codes: 0 ok, 1 failure, 2 bad usage"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse
