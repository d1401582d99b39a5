#pragma once

// A machine made of files in a temporary folder (an FsRoot fixture built in the test), and a
// CommandRunner that answers from a table: what the check unit tests run against.

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "core/fs_root.h"
#include "support/subprocess.h"
#include "sys/process_facts.h"

namespace rtpulse::testutil {

class FakeTree {
 public:
  /// Writes `content` at the absolute path `path` inside the tree.
  FakeTree& Write(const std::string& path, const std::string& content) {
    const std::filesystem::path full = dir_->path() + path;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << content;
    return *this;
  }
  FsRoot Root() const { return FsRoot(dir_->path()); }
  const std::string& path() const { return dir_->path(); }

 private:
  std::unique_ptr<TempDir> dir_ = std::make_unique<TempDir>();  // movable, so helpers return trees
};

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

inline sys::ProcessFacts RootProcess() {
  sys::ProcessFacts p;
  p.euid = 0;
  p.cap_effective = ~uint64_t{0};
  return p;
}

}  // namespace rtpulse::testutil
