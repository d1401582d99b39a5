#pragma once

// A machine made of files in a temporary folder: an FsRoot fixture built in the test.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/fs_root.h"
#include "support/subprocess.h"

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

}  // namespace rtpulse::testutil
