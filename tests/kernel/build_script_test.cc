// scripts/build-rt-kernel's argument and input checks: each bad input is a clear error with
// exit 2 before anything is configured or built. (The real build runs in the QEMU proof.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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

const std::string kBuild = kSource + "/scripts/build-rt-kernel";
const std::string kFragments = std::string(RTPULSE_TEST_DATA) + "/kernel/fragments/";

class BuildScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rtpulse-build-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // The smallest tree the script accepts as a kernel: top Makefile, Kconfig files that
    // define the fragment's symbols, merge_config.sh and a Pi defconfig.
    tree_ = dir_ / "linux";
    WriteFile(tree_ / "Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 47\n");
    std::string kconfig;
    for (const char* sym : {"EXPERT",
                            "PREEMPT_RT",
                            "RCU_BOOST",
                            "HZ_1000",
                            "NO_HZ_FULL",
                            "RCU_NOCB_CPU",
                            "CPU_ISOLATION",
                            "HIGH_RES_TIMERS",
                            "CPU_FREQ",
                            "CPU_FREQ_GOV_PERFORMANCE",
                            "CPU_FREQ_DEFAULT_GOV_PERFORMANCE",
                            "PPS_CLIENT_GPIO",
                            "IKCONFIG",
                            "IKCONFIG_PROC",
                            "PROVE_LOCKING",
                            "DEBUG_LOCK_ALLOC",
                            "LOCK_STAT",
                            "DEBUG_RT_MUTEXES",
                            "DEBUG_SPINLOCK",
                            "DEBUG_MUTEXES",
                            "DEBUG_PREEMPT",
                            "DEBUG_OBJECTS",
                            "DEBUG_PAGEALLOC",
                            "SLUB_DEBUG_ON",
                            "PAGE_POISONING",
                            "DEBUG_KMEMLEAK",
                            "KASAN",
                            "KCSAN",
                            "UBSAN",
                            "PREEMPT_TRACER",
                            "IRQSOFF_TRACER"}) {
      kconfig += std::string("config ") + sym + "\n\tbool\n";
    }
    WriteFile(tree_ / "Kconfig", kconfig + "menuconfig PPS\n\ttristate\n");
    WriteFile(tree_ / "arch/arm64/Kconfig", "config ARM64\n\tdef_bool y\n");
    WriteFile(tree_ / "arch/arm64/configs/bcm2712_defconfig", "CONFIG_SMP=y\n");
    WriteFile(tree_ / "scripts/kconfig/merge_config.sh", "#!/bin/sh\nexit 99\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  CommandResult Build(const std::string& args) {
    return RunCommand(kBuild + " --work " + ShellQuote(dir_ / "work") + " --rtpulse " +
                      RTPULSE_BINARY + " " + args);
  }

  void ExpectRejected(const CommandResult& r, const std::string& says) {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("build-rt-kernel: error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    // Nothing was configured: no build folder with a .config.
    EXPECT_FALSE(fs::exists(dir_ / "work/build-pi5-arm64/.config"));
  }

  fs::path dir_;
  fs::path tree_;
};

TEST_F(BuildScriptTest, HelpDocumentsSourcesBoardsAndExitCodes) {
  auto r = RunCommand(kBuild + " --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* text : {"--source URL|DIR|TARBALL", "rpi-6.12.y", "bcm2712_defconfig",
                           "--dry-run", "SHA256SUMS", "Exit codes: 0 ok"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text;
  }
}

TEST_F(BuildScriptTest, TreeThatIsNotAKernel) {
  fs::create_directories(dir_ / "not-a-kernel/src");
  WriteFile(dir_ / "not-a-kernel/Makefile", "all:\n\techo hi\n");
  ExpectRejected(Build("--source " + ShellQuote(dir_ / "not-a-kernel")),
                 "is not a Linux kernel source tree");
}

TEST_F(BuildScriptTest, TarballThatDoesNotExist) {
  ExpectRejected(Build("--source " + ShellQuote(dir_ / "linux-9.9.tar.xz")), "does not exist");
}

TEST_F(BuildScriptTest, UnknownDefconfigListsTheTreesOwn) {
  ExpectRejected(Build("--source " + ShellQuote(tree_) + " --defconfig bcm9999_defconfig"),
                 "unknown defconfig 'bcm9999_defconfig' for arm64; this tree has: "
                 "bcm2712_defconfig");
}

TEST_F(BuildScriptTest, FragmentOptionKconfigDoesNotKnow) {
  ExpectRejected(Build("--source " + ShellQuote(tree_) + " --fragment " +
                       ShellQuote(kFragments + "unknown-symbol.config")),
                 "does not know: CONFIG_RTPULSE_NO_SUCH_OPTION");
}

TEST_F(BuildScriptTest, FragmentWithABadLine) {
  ExpectRejected(Build("--source " + ShellQuote(tree_) + " --fragment " +
                       ShellQuote(kFragments + "bad-line.config")),
                 "PREEMPT_RT=y");
}

TEST_F(BuildScriptTest, TreeConfiguredInPlace) {
  WriteFile(tree_ / ".config", "CONFIG_SMP=y\n");
  ExpectRejected(Build("--source " + ShellQuote(tree_)), "make mrproper");
}

TEST_F(BuildScriptTest, BadArguments) {
  ExpectRejected(Build("--board pi3"), "unknown board 'pi3'");
  ExpectRejected(Build("--name kernel_2712"), "stock kernel name");
  ExpectRejected(Build("--name kernel_rt.img"), "without / or .img");
  ExpectRejected(Build("--board generic --arch x86_64"), "needs --defconfig");
  ExpectRejected(Build("--board pi5 --arch x86_64"), "does not fit");
  ExpectRejected(Build("--arch sparc --board generic --defconfig x"), "unknown architecture");
  ExpectRejected(Build("--fragment /nonexistent.config"), "does not exist");
  ExpectRejected(Build("-j zero"), "--jobs 'zero'");
  ExpectRejected(Build("--frobnicate"), "unknown option '--frobnicate'");
}

TEST_F(BuildScriptTest, DryRunShowsTheStepsAndWritesNothing) {
  auto r = Build("--dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* text :
       {"git clone --depth 1 --branch rpi-6.12.y https://github.com/raspberrypi/linux.git",
        "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- LOCALVERSION=-rt -s bcm2712_defconfig",
        "merge_config.sh -m", "olddefconfig", "rtpulse kernel verify --config",
        "Image modules dtbs"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "work"));
}

}  // namespace
}  // namespace rtpulse
