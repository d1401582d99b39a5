// scripts/install-deps against stand-ins for dpkg-query, apt-cache and apt-get on PATH: a
// package apt does not know is named with the suite to enable, exit 3, nothing installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "kernel/run_command.h"

namespace rtpulse {
namespace {

namespace fs = std::filesystem;
using testing::kSource;
using testing::RunCommand;
using testing::ShellQuote;
using testing::WriteFile;

class InstallDepsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "install-deps calls sudo when not root";
    char tmpl[] = "/tmp/rtpulse-deps-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ / "bin");
    // Nothing is installed; apt knows every package but those listed in unknown.txt.
    Tool("dpkg-query", "exit 1\n");
    Tool("apt-cache",
         "pkg=\"$2\"\nif grep -qxF \"$pkg\" " + ShellQuote(dir_ / "unknown.txt") +
             "; then printf '%s:\\n  Installed: (none)\\n  Candidate: (none)\\n' \"$pkg\"; "
             "else printf '%s:\\n  Installed: (none)\\n  Candidate: 1.0\\n' \"$pkg\"; fi\n");
    Tool("apt-get", "echo \"apt-get $*\" >> " + ShellQuote(dir_ / "apt.log") + "\n");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void Tool(const std::string& name, const std::string& body) {
    WriteFile(dir_ / "bin" / name, "#!/bin/sh\n" + body);
    fs::permissions(dir_ / "bin" / name, fs::perms::owner_all);
  }
  testing::CommandResult Run(const std::string& args) {
    return RunCommand("PATH=" + ShellQuote(dir_ / "bin") + ":$PATH " + kSource +
                      "/scripts/install-deps " + args);
  }
  std::string AptLog() const {
    return RunCommand("cat " + ShellQuote(dir_ / "apt.log") + " 2>/dev/null").output;
  }
  fs::path dir_;
};

TEST_F(InstallDepsTest, APackageAptDoesNotKnowIsNamedWithTheSuiteToEnable) {
  WriteFile(dir_ / "unknown.txt", "linux-source-6.12\n");
  auto r = Run("--test");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("install-deps: apt knows no package 'linux-source-6.12': enable the "
                          "suite bookworm-security"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nothing installed (missing from apt's sources: linux-source-6.12)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Unable to locate package"), std::string::npos) << r.output;
  // apt-get update ran (so the lists were fresh), install did not.
  EXPECT_NE(AptLog().find("apt-get update"), std::string::npos) << AptLog();
  EXPECT_EQ(AptLog().find(" install "), std::string::npos) << AptLog();
}

TEST_F(InstallDepsTest, OtherUnknownPackagesPointAtBookwormMain) {
  WriteFile(dir_ / "unknown.txt", "stress-ng\nlinux-source-6.12\n");
  auto r = Run("--test");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no package 'stress-ng': enable the suite bookworm main"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("no package 'linux-source-6.12': enable the suite bookworm-security"),
            std::string::npos)
      << r.output;
}

TEST_F(InstallDepsTest, WhenAptKnowsEverythingItInstallsTheMissingOnes) {
  WriteFile(dir_ / "unknown.txt", "");
  auto r = Run("");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(AptLog().find("install -y -qq --no-install-recommends build-essential"),
            std::string::npos)
      << AptLog();
}

}  // namespace
}  // namespace rtpulse
