#include "core/command_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

extern char** environ;

namespace rtpulse {
namespace {

using Clock = std::chrono::steady_clock;

/// The default search path of execvp() when $PATH is unset.
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

/// Closes both ends of the pipes it owns, whatever happens.
struct Pipes {
  std::array<int, 2> out{-1, -1};
  std::array<int, 2> err{-1, -1};
  ~Pipes() {
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) close(fd);
    }
  }
};

/// posix_spawn attributes: own process group (so a timeout kills grandchildren too), no
/// blocked signals and default dispositions, whatever the caller had.
class SpawnSetup {
 public:
  SpawnSetup(const Pipes& pipes) {  // NOLINT(google-explicit-constructor)
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, pipes.out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, pipes.err[1], STDERR_FILENO);
    posix_spawnattr_init(&attr_);
    sigset_t none;
    sigemptyset(&none);
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attr() const { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_{};
  posix_spawnattr_t attr_{};
};

/// Reads both pipes until they close or the deadline passes; true when it timed out.
bool Drain(Pipes& pipes, Clock::time_point deadline, CommandOutput& output) {
  std::array<pollfd, 2> fds = {pollfd{pipes.out[0], POLLIN, 0}, pollfd{pipes.err[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks = {&output.out, &output.err};
  int open_fds = 2;
  std::array<char, 4096> buffer{};
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return true;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
      return true;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      const size_t room = SystemCommandRunner::kMaxOutputBytes - sinks[i]->size();
      sinks[i]->append(buffer.data(), std::min(room, static_cast<size_t>(n)));
    }
  }
  return false;
}

/// Reaps the child; a child still running at the deadline (it closed its output but went on)
/// is killed with its group. Returns the wait status, or nullopt when it had to be killed.
std::optional<int> WaitExit(pid_t pid, Clock::time_point deadline) {
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return std::nullopt;
    }
    usleep(2000);
  }
  if (!WIFEXITED(status) && !WIFSIGNALED(status)) return std::nullopt;
  return status;
}

/// "exit status 255", "killed by signal 9": how a program that should have succeeded ended.
std::string ExitText(const CommandOutput& output) {
  if (output.term_signal != 0) return fmt::format("killed by signal {}", output.term_signal);
  return fmt::format("exit status {}", output.exit_code);
}

}  // namespace

SystemCommandRunner::SystemCommandRunner(std::string search_path)
    : search_path_(std::move(search_path)) {}

std::string SystemCommandRunner::Find(std::string_view name) const {
  if (name.empty()) return "";
  if (name.find('/') != std::string_view::npos) {
    return IsExecutableFile(std::string(name)) ? std::string(name) : "";
  }
  // Chosen in steps: one conditional expression would make a temporary std::string.
  std::string_view path = search_path_;
  if (path.empty()) {
    const char* env = std::getenv("PATH");
    path = env != nullptr ? env : kDefaultPath;
  }
  size_t pos = 0;
  while (pos <= path.size()) {
    const size_t colon = std::min(path.find(':', pos), path.size());
    std::string dir(path.substr(pos, colon - pos));
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current folder
    const std::string candidate = dir + "/" + std::string(name);
    if (IsExecutableFile(candidate)) return candidate;
    pos = colon + 1;
  }
  return "";
}

Expected<CommandOutput> SystemCommandRunner::Run(const std::vector<std::string>& argv,
                                                 std::chrono::milliseconds timeout) const {
  if (argv.empty()) return Failure("no command given");
  // Resolved before spawning: the path search allocates, which a child of a threaded process
  // must not do.
  const std::string program = Find(argv[0]);
  if (program.empty()) return ResourceError(fmt::format("'{}' not found on PATH", argv[0]));
  Pipes pipes;
  if (pipe2(pipes.out.data(), O_CLOEXEC) != 0 || pipe2(pipes.err.data(), O_CLOEXEC) != 0) {
    return Failure(fmt::format("cannot run {}: pipe: {}", argv[0], std::strerror(errno)));
  }
  std::vector<char*> args;
  std::vector<std::string> storage = argv;
  for (auto& a : storage) args.push_back(a.data());
  args.push_back(nullptr);
  const auto deadline = Clock::now() + timeout;
  pid_t pid = -1;
  {
    const SpawnSetup setup(pipes);
    if (const int rc =
            posix_spawn(&pid, program.c_str(), setup.actions(), setup.attr(), args.data(), environ);
        rc != 0) {
      return Failure(fmt::format("cannot run {}: {}", program, std::strerror(rc)));
    }
  }
  close(pipes.out[1]);
  close(pipes.err[1]);
  pipes.out[1] = pipes.err[1] = -1;
  CommandOutput output;
  const bool drained = !Drain(pipes, deadline, output);
  const auto status = WaitExit(pid, drained ? deadline : Clock::now());
  output.timed_out = !status.has_value();
  if (status && WIFEXITED(*status)) {
    output.exit_code = WEXITSTATUS(*status);
  } else if (status) {
    output.term_signal = WTERMSIG(*status);
    output.exit_code = 128 + output.term_signal;
  }
  return output;
}

Expected<std::string> RunForStdout(const CommandRunner& runner,
                                   const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout) {
  auto output = runner.Run(argv, timeout);
  if (!output) return output.error();
  if (output->timed_out) {
    return Failure(fmt::format("'{}' timed out after {} ms", argv[0], timeout.count()));
  }
  if (output->exit_code != 0) {
    const std::string first_line = output->out.substr(0, output->out.find('\n'));
    return Failure(fmt::format("'{}' failed ({}){}{}", fmt::join(argv, " "), ExitText(*output),
                               first_line.empty() ? "" : ": ", first_line));
  }
  return std::move(output->out);
}

}  // namespace rtpulse
