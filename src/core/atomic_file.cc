#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/file_owner.h"

namespace rtpulse {

namespace {

/// Writes all of `content` to `fd`: 0, or the errno of the failed write.
int WriteAllTo(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

/// `path` names something other than a regular file (/dev/null, /dev/stdout, a FIFO, a
/// terminal): it is written in place. A rename would replace the device node or pipe with a
/// regular file (as root, /dev/null itself), and its owner is not changed.
Status WriteInPlace(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return WriteError("cannot write", path, errno);
  const int err = WriteAllTo(fd, content);
  if (::close(fd) != 0 && err == 0) return WriteError("cannot flush", path, errno);
  return err == 0 ? Status::Ok() : WriteError("cannot write", path, err);
}

}  // namespace

Status WriteFileAtomic(const std::string& path, std::string_view content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return WriteInPlace(path, content);
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError("cannot write", path, errno);
  HandOver(fd);
  if (const int err = WriteAllTo(fd, content); err != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return WriteError("cannot write", path, err);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_err = errno;
  if (::close(fd) != 0 || !synced) {
    const int err = synced ? errno : sync_err;
    ::unlink(tmp.c_str());
    return WriteError("cannot flush", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return WriteError("cannot rename onto", path, err);
  }
  return Status::Ok();
}

Status CheckWritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (fs::is_directory(p, ec)) {
    return UsageError(fmt::format("output '{}' is a folder: give a file name", path));
  }
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) {
    return UsageError(fmt::format("cannot write '{}': folder '{}' does not exist (create it first)",
                                  path, dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    const Error e = WriteError("cannot write", path, errno);
    return Error{e.code, fmt::format("folder '{}' is not writable: {}", dir.string(), e.message)};
  }
  return Status::Ok();
}

Status CheckOutputFolder(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) {
      return UsageError(
          fmt::format("--out '{}' exists and is not a folder; name a new folder", dir));
    }
    if (!std::filesystem::is_empty(dir, ec)) {
      return UsageError(fmt::format(
          "--out '{}' already holds files; name a new or empty folder (results are never "
          "overwritten)",
          dir));
    }
    if (access(dir.c_str(), W_OK) != 0) {
      const Error e = WriteError("cannot write in", dir + "/", errno);
      return Error{e.code == ExitCode::kFailure ? ExitCode::kUsage : e.code,
                   fmt::format("--out '{}' is not writable: {}", dir, e.message)};
    }
    return Status::Ok();
  }
  // The nearest existing ancestor must be a writable folder.
  std::filesystem::path parent = std::filesystem::absolute(dir, ec).parent_path();
  while (!parent.empty() && !std::filesystem::exists(parent, ec)) parent = parent.parent_path();
  if (parent.empty() || !std::filesystem::is_directory(parent, ec)) {
    return UsageError(fmt::format("--out '{}': cannot create it ({} is not a writable folder)", dir,
                                  parent.string()));
  }
  if (access(parent.c_str(), W_OK) != 0) {
    // Missing privilege (exit 3), with the fix, unless the cause is something else.
    const int err = errno;
    std::filesystem::path first =
        std::filesystem::absolute(dir, ec);  // the folder mkdir would be refused
    while (first.parent_path() != parent && first.has_parent_path()) first = first.parent_path();
    const Error e = WriteError("cannot create folder", first.string(), err);
    return Error{e.code == ExitCode::kFailure ? ExitCode::kUsage : e.code,
                 fmt::format("--out '{}': cannot create it ({} is not a writable folder): {}", dir,
                             parent.string(), e.message)};
  }
  return Status::Ok();
}

Status WriteOutput(const std::string& path, std::string_view content) {
  if (path.empty()) return Status::Ok();
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return Status::Ok();
  }
  return WriteFileAtomic(path, content);
}

}  // namespace rtpulse
