#include "monitor/command_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rtpulse::monitor {
namespace {

/// Closes a file descriptor on every exit path.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string ExitText(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return "ended abnormally";
}

/// Reads the child's stdout until EOF or the deadline; false on timeout.
bool ReadUntil(int fd, int64_t deadline_ns, std::string& out) {
  char buffer[4096];
  for (;;) {
    const int64_t left_ns = deadline_ns - MonotonicNs();
    if (left_ns <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left_ns / kNsPerMs)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

ProcessRunner::ProcessRunner(std::string search_path, int64_t timeout_ns)
    : search_path_(std::move(search_path)), timeout_ns_(timeout_ns) {
  if (search_path_.empty()) {
    const char* env = std::getenv("PATH");
    search_path_ = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  }
}

std::string ProcessRunner::Find(const std::string& program) const {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  size_t start = 0;
  while (start <= search_path_.size()) {
    size_t end = search_path_.find(':', start);
    if (end == std::string::npos) end = search_path_.size();
    std::string dir = search_path_.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

Expected<std::string> ProcessRunner::Run(const std::vector<std::string>& argv) {
  if (argv.empty()) return Failure("no command given");
  // Resolve before spawning: the PATH search allocates, which a child of a threaded
  // process must not do.
  const std::string program = Find(argv[0]);
  if (program.empty()) return ResourceError(fmt::format("'{}' not found on PATH", argv[0]));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Failure(fmt::format("pipe: {}", std::strerror(errno)));
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  write_end.Reset();
  if (rc != 0) return Failure(fmt::format("cannot run '{}': {}", program, std::strerror(rc)));

  std::string out;
  const bool finished = ReadUntil(read_end.get(), MonotonicNs() + timeout_ns_, out);
  if (!finished) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) {
    return Failure(fmt::format("'{}' timed out after {} ms", argv[0], timeout_ns_ / kNsPerMs));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string first_line = out.substr(0, out.find('\n'));
    return Failure(fmt::format("'{}' failed ({}){}{}", fmt::join(argv, " "), ExitText(status),
                               first_line.empty() ? "" : ": ", first_line));
  }
  return out;
}

}  // namespace rtpulse::monitor
