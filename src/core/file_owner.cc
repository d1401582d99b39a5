#include "core/file_owner.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace rtpulse {
namespace {

std::optional<unsigned long> EnvId(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  unsigned long value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string FolderOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

std::optional<FileOwner> InvokingUser() {
  if (::geteuid() != 0) return std::nullopt;
  const auto uid = EnvId("SUDO_UID");
  const auto gid = EnvId("SUDO_GID");
  if (!uid || !gid) return std::nullopt;
  return FileOwner{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid)};
}

void HandOver(const std::string& path) {
  if (const auto owner = InvokingUser()) {
    (void)::lchown(path.c_str(), owner->uid, owner->gid);
  }
}

void HandOver(int fd) {
  if (const auto owner = InvokingUser()) {
    (void)::fchown(fd, owner->uid, owner->gid);
  }
}

Status CreateFolders(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) return Status::Ok();
  // The missing folders, deepest last, so each is created (and handed over) in turn.
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = fs::path(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) break;
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) {
      const int err = errno;
      if (err == ENOTDIR) break;  // a file where a parent folder should be: said below
      Error e = WriteError("cannot create folder", it->string(), err);
      // Beyond privilege and space, a folder that cannot be made is a bad path (/proc/x).
      if (e.code == ExitCode::kFailure) {
        e.code = ExitCode::kUsage;
      }
      return e;
    }
    HandOver(it->string());
  }
  if (!fs::is_directory(dir, ec)) {
    return UsageError(
        fmt::format("cannot create folder '{}': a file is in the way of it or of a "
                    "parent (remove the file or choose another name)",
                    dir));
  }
  return Status::Ok();
}

Error WriteError(std::string_view what, const std::string& path, int err) {
  const std::string head = fmt::format("{} '{}': {}", what, path, std::strerror(err));
  const std::string folder = FolderOf(path);
  switch (err) {
    case EACCES:
    case EPERM:
      return ResourceError(
          fmt::format("{}; this user may not write in '{}': check its owner and mode (ls -ld {}), "
                      "write somewhere you own, or run with sudo",
                      head, folder, folder));
    case EROFS:
      return ResourceError(
          fmt::format("{}; '{}' is on a read-only filesystem: write somewhere else", head, folder));
    case ENOSPC:
    case EDQUOT:
      // A missing resource (exit 3, docs/cli.md): the space to write in.
      return ResourceError(
          fmt::format("{}; no space left for '{}': free some (df -h {}) or write somewhere else",
                      head, folder, folder));
    default:
      return Failure(head);
  }
}

}  // namespace rtpulse
