#include "core/fs_root.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace rtpulse {

FsRoot::FsRoot(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

const FsRoot& FsRoot::System() {
  static const FsRoot kRoot([] {
    const char* env = std::getenv("RTPULSE_SYSROOT");
    return std::string(env != nullptr ? env : "");
  }());
  return kRoot;
}

const FsRoot& FsRoot::Live() {
  static const FsRoot kRoot;
  return kRoot;
}

std::string FsRoot::Path(std::string_view absolute) const {
  return root_ + std::string(absolute);
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int error = errno;
  std::fclose(f);
  if (failed) {
    errno = error;
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> FsRoot::Read(std::string_view absolute) const {
  return ReadWholeFile(Path(absolute));
}

std::optional<std::string> FsRoot::ReadLine(std::string_view absolute) const {
  auto text = Read(absolute);
  if (!text) return std::nullopt;
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\0' || line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  return line;
}

bool FsRoot::Exists(std::string_view absolute) const {
  std::error_code ec;
  return std::filesystem::exists(Path(absolute), ec);
}

std::vector<std::string> FsRoot::List(std::string_view absolute) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(Path(absolute), ec), end; !ec && it != end;
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace rtpulse
