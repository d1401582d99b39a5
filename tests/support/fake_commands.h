#pragma once

// A CommandRunner that answers from a table, built on the one runner interface
// (core/command_runner.h): what the check and monitor unit tests run against.

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/command_runner.h"

namespace rtpulse::testutil {

class FakeCommands final : public CommandRunner {
 public:
  /// `program` is on PATH at /fake/bin/<program>.
  FakeCommands& Install(const std::string& program) {
    installed_.push_back(program);
    return *this;
  }
  /// What running `argv` (space-joined) prints and returns.
  FakeCommands& Answer(const std::string& argv, CommandOutput output) {
    answers_[argv] = std::move(output);
    return *this;
  }

  std::string Find(std::string_view name) const override {
    for (const auto& p : installed_) {
      if (p == name) return "/fake/bin/" + p;
    }
    return "";
  }
  Expected<CommandOutput> Run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds) const override {
    std::string joined;
    for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + a;
    const auto it = answers_.find(joined);
    if (it == answers_.end()) return Failure("cannot run " + joined);
    return it->second;
  }

 private:
  std::vector<std::string> installed_;
  std::map<std::string, CommandOutput> answers_;
};

}  // namespace rtpulse::testutil
