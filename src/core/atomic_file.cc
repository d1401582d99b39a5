#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/file_owner.h"

namespace rtpulse {

Status WriteFileAtomic(const std::string& path, std::string_view content) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError("cannot write", path, errno);
  HandOver(fd);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return WriteError("cannot write", path, err);
    }
    done += static_cast<size_t>(n);
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

}  // namespace rtpulse
