#include "core/terminal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rtpulse {
namespace {

TEST(TerminalTest, ColourOnlyOnATerminal) {
  EXPECT_TRUE(ColorEnabled(true, nullptr, "xterm"));
  EXPECT_TRUE(ColorEnabled(true, nullptr, nullptr));
  EXPECT_FALSE(ColorEnabled(false, nullptr, "xterm")) << "a pipe or a file gets no colour";
}

TEST(TerminalTest, NoColorSetAndNonEmptyDisablesColour) {
  EXPECT_FALSE(ColorEnabled(true, "1", "xterm"));
  EXPECT_FALSE(ColorEnabled(true, "0", "xterm")) << "any non-empty value counts, even 0";
  EXPECT_TRUE(ColorEnabled(true, "", "xterm")) << "no-color.org: an empty NO_COLOR is unset";
}

TEST(TerminalTest, DumbTerminalGetsNoColour) {
  EXPECT_FALSE(ColorEnabled(true, nullptr, "dumb"));
  EXPECT_TRUE(ColorEnabled(true, nullptr, "dumb-ish"));
}

/// The fd overload reads the real environment and asks the kernel whether fd is a terminal.
TEST(TerminalTest, FdOverloadTellsAPseudoTerminalFromAPipe) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);

  const char* saved_no_color = std::getenv("NO_COLOR");
  const char* saved_term = std::getenv("TERM");
  const std::string no_color = saved_no_color ? saved_no_color : "";
  const std::string term = saved_term ? saved_term : "";
  unsetenv("NO_COLOR");
  setenv("TERM", "xterm", 1);
  EXPECT_TRUE(ColorEnabled(slave));
  EXPECT_FALSE(ColorEnabled(pipe_fds[1]));
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(ColorEnabled(slave));
  setenv("NO_COLOR", "", 1);
  EXPECT_TRUE(ColorEnabled(slave));

  if (saved_no_color != nullptr) {
    setenv("NO_COLOR", no_color.c_str(), 1);
  } else {
    unsetenv("NO_COLOR");
  }
  if (saved_term != nullptr) {
    setenv("TERM", term.c_str(), 1);
  } else {
    unsetenv("TERM");
  }
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  close(slave);
  close(master);
}

}  // namespace
}  // namespace rtpulse
