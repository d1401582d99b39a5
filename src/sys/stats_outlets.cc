#include "sys/stats_outlets.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/printable.h"

namespace rtpulse::sys {
namespace {

Status WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Failure(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

SharedStats::SharedStats(std::string name)
    : name_(name.empty() ? fmt::format("/cyclictest{}", ::getpid()) : std::move(name)) {
  // A file of this name is a dead run's with our PID: ours now.
  (void)::shm_unlink(name_.c_str());
  fd_ = ::shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    warning_ = fmt::format(
        "SIGUSR2's statistics file {} cannot be created ({}): SIGUSR2 will do nothing "
        "(is /dev/shm mounted?)",
        name_, std::strerror(errno));
  }
}

SharedStats::~SharedStats() {
  if (fd_ < 0) return;
  ::close(fd_);
  (void)::shm_unlink(name_.c_str());
}

void SharedStats::Write(const std::string& text) {
  if (fd_ < 0) return;
  // As cyclictest: truncate, then write from the start.
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) < 0) return;
  (void)WriteAll(fd_, text);
}

Expected<StatsFifo> StatsFifo::Create(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISFIFO(st.st_mode)) {
      return UsageError(fmt::format(
          "-F {}: the path exists and is not a named pipe; give a new path (cyclictest would "
          "delete it: rtpulse does not)",
          Printable(path)));
    }
    (void)::unlink(path.c_str());
  }
  // A reader may close the pipe mid-write: EPIPE then, not a dead process.
  (void)std::signal(SIGPIPE, SIG_IGN);
  if (::mkfifo(path.c_str(), 0644) != 0) {
    const int error = errno;
    return Error{error == ENOENT || error == ENOTDIR ? ExitCode::kUsage : ExitCode::kResource,
                 fmt::format("-F {}: cannot make the named pipe: {}", Printable(path),
                             std::strerror(error))};
  }
  return StatsFifo(path);
}

StatsFifo::StatsFifo(StatsFifo&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

StatsFifo::~StatsFifo() {
  if (!path_.empty()) (void)::unlink(path_.c_str());
}

void StatsFifo::Offer(const std::vector<std::string>& lines) const {
  // O_NONBLOCK: with no reader the open fails (ENXIO) at once instead of waiting for one.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return;
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  // A reader that went away makes write() fail with EPIPE (Create() set SIGPIPE to be
  // ignored): nothing to do about it.
  (void)WriteAll(fd, text);
  ::close(fd);
}

}  // namespace rtpulse::sys
