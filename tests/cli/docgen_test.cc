// The man pages and bash completion generated from the command tree (cli/docgen.h).

#include "cli/docgen.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cli/app.h"
#include "support/subprocess.h"

namespace rtpulse::cli {
namespace {

using testutil::RunProcess;
using testutil::TempDir;

/// groff spelling of an option name as the pages write it.
std::string Groff(std::string text) {
  std::string out;
  for (const char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

class DocgenTest : public ::testing::Test {
 protected:
  std::function<int()> runner_;
  std::unique_ptr<CLI::App> app_ = BuildApp(runner_);
  ManHeader header_{"9.8.7", "2026-12-01"};
};

TEST_F(DocgenTest, OnePagePerCommandPlusTheOverviewAndTheCompletion) {
  const auto files = GenerateDocs(*app_, header_);
  std::map<std::string, std::string> by_name(files.begin(), files.end());
  const auto commands = app_->get_subcommands([](const CLI::App*) { return true; });
  ASSERT_EQ(commands.size(), 16u) << "the command table in app.cc";
  EXPECT_EQ(files.size(), commands.size() + 2);
  EXPECT_TRUE(by_name.count("rtpulse.1"));
  EXPECT_TRUE(by_name.count("rtpulse.bash"));
  for (const CLI::App* command : commands) {
    const std::string page = "rtpulse-" + command->get_name() + ".1";
    ASSERT_TRUE(by_name.count(page)) << page;
    EXPECT_NE(by_name["rtpulse.1"].find(".BR " + Groff(command->get_name()) + " \" (rtpulse\\-" +
                                        Groff(command->get_name()) + "(1))\""),
              std::string::npos)
        << "overview lists " << command->get_name();
  }
}

TEST_F(DocgenTest, EveryPageHasTheStandardSectionsAndHeader) {
  for (const auto& [name, text] : GenerateDocs(*app_, header_)) {
    if (name == "rtpulse.bash") continue;
    for (const char* section : {".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n",
                                ".SH EXIT STATUS\n", ".SH SEE ALSO\n"}) {
      EXPECT_NE(text.find(section), std::string::npos) << name << " lacks " << section;
    }
    EXPECT_NE(text.find("\"2026-12-01\" \"rtpulse 9.8.7\" \"User Commands\""), std::string::npos)
        << name;
    EXPECT_EQ(text.find("\n-"), std::string::npos) << name << ": unescaped hyphen at a line start";
  }
}

/// Every visible option of every command (and of kernel's nested commands) is on its page
/// with its description: the pages cannot drift from --help.
TEST_F(DocgenTest, EveryOptionIsDocumentedWithItsDescription) {
  std::function<void(const CLI::App&, const std::string&)> check = [&](const CLI::App& app,
                                                                       const std::string& page) {
    for (const CLI::Option* o : app.get_options()) {
      if (o->get_group().empty()) continue;
      for (const auto& l : o->get_lnames()) {
        EXPECT_NE(page.find("\\fB" + Groff("--" + l) + "\\fR"), std::string::npos)
            << app.get_name() << " --" << l;
      }
      for (const auto& s : o->get_snames()) {
        EXPECT_NE(page.find("\\fB\\-" + s + "\\fR"), std::string::npos)
            << app.get_name() << " -" << s;
      }
      EXPECT_NE(page.find(Groff(o->get_description())), std::string::npos)
          << app.get_name() << " " << o->get_name();
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      EXPECT_NE(page.find(".SS \"" + Groff("rtpulse " + app.get_name() + " " + sub->get_name())),
                std::string::npos);
      check(*sub, page);
    }
  };
  for (const CLI::App* command : app_->get_subcommands([](const CLI::App*) { return true; })) {
    check(*command, RenderManPage(*app_, *command, header_));
  }
}

TEST_F(DocgenTest, FootersBecomeExitStatusEnvironmentAndSeeAlso) {
  CLI::App* check = app_->get_subcommand("check");
  const std::string page = RenderManPage(*app_, *check, header_);
  const auto exit_status = page.find(".SH EXIT STATUS\n0 done");
  EXPECT_NE(exit_status, std::string::npos) << page;
  EXPECT_NE(page.find(".SH ENVIRONMENT\n.PP\nRTPULSE_SYSROOT=DIR"), std::string::npos) << page;
  EXPECT_NE(page.find("NO_COLOR turns colours off"), std::string::npos);

  const std::string overview = RenderManPage(*app_, *app_, header_);
  EXPECT_NE(overview.find(".SH EXIT STATUS\n0 ok, 1 failure, 2 bad usage"), std::string::npos)
      << overview;
  EXPECT_NE(overview.find("\\fB\\-V\\fR, \\fB\\-\\-version\\fR"), std::string::npos);
}

TEST(DocgenHiddenTest, HiddenOptionsAndCommandsAreLeftOut) {
  CLI::App app{"demo", "rtpulse"};
  CLI::App* sub = app.add_subcommand("demo", "a demo command");
  std::string value;
  sub->add_option("--shown", value, "a documented option");
  sub->add_option("--secret", value, "an internal option")->group("");
  app.add_subcommand("internal", "not for users")->group("");
  const std::string page = RenderManPage(app, *sub, {"1", "2026-01-01"});
  EXPECT_NE(page.find("\\-\\-shown"), std::string::npos);
  EXPECT_EQ(page.find("secret"), std::string::npos) << page;
  const std::string overview = RenderManPage(app, app, {"1", "2026-01-01"});
  EXPECT_EQ(overview.find("internal"), std::string::npos) << overview;
  EXPECT_EQ(RenderBashCompletion(app).find("secret"), std::string::npos);
  EXPECT_EQ(RenderBashCompletion(app).find("internal"), std::string::npos);
}

TEST(DocgenEscapeTest, LeadingDotsAndBackslashesCannotBecomeRequests) {
  CLI::App app{"demo", "rtpulse"};
  CLI::App* sub = app.add_subcommand("demo", "a demo command");
  sub->footer(".so /etc/passwd\nback\\slash");
  const std::string page = RenderManPage(app, *sub, {"1", "2026-01-01"});
  EXPECT_EQ(page.find("\n.so"), std::string::npos) << page;
  EXPECT_NE(page.find("\\&.so /etc/passwd"), std::string::npos) << page;
  EXPECT_NE(page.find("back\\eslash"), std::string::npos) << page;
}

/// Runs the completion function in a real bash as if the user pressed Tab after `line`.
std::string Complete(const std::string& script, const std::string& line) {
  TempDir dir;
  const std::string path = dir.File("rtpulse.bash");
  std::ofstream(path) << script;
  std::ofstream(dir.File("run.json")) << "{}";
  const std::string driver = "source '" + path + "'\n" + "cd '" + dir.path() + "'\n" +
                             "COMP_LINE='" + line +
                             "'\n"
                             "read -ra COMP_WORDS <<< \"$COMP_LINE\"\n"
                             "[[ \"$COMP_LINE\" == *' ' ]] && COMP_WORDS+=('')\n"
                             "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                             "_rtpulse\n"
                             "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const auto r = RunProcess({"/bin/bash", "--norc", "-c", driver});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST_F(DocgenTest, BashCompletesCommandsNestedCommandsOptionsAndFiles) {
  const std::string script = RenderBashCompletion(*app_);
  EXPECT_NE(script.find("complete -F _rtpulse rtpulse"), std::string::npos);
  EXPECT_EQ(Complete(script, "rtpulse lat"), "latency\n");
  EXPECT_EQ(Complete(script, "rtpulse kernel v"), "verify\n");
  EXPECT_EQ(Complete(script, "rtpulse kernel verify --ru"), "--running\n");
  EXPECT_EQ(Complete(script, "rtpulse latency -p 95 --js"), "--json\n")
      << "an option value is not mistaken for a command";
  EXPECT_EQ(Complete(script, "rtpulse latency --json ru"), "run.json\n") << "file-valued option";
  EXPECT_EQ(Complete(script, "rtpulse samples ru"), "run.json\n") << "file positional";
  const std::string all = Complete(script, "rtpulse ");
  for (const CLI::App* command : app_->get_subcommands([](const CLI::App*) { return true; })) {
    EXPECT_NE(all.find(command->get_name() + "\n"), std::string::npos) << command->get_name();
  }
}

}  // namespace
}  // namespace rtpulse::cli
