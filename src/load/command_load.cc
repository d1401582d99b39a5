// cmd: the user's own program as a load ("test under the load you expect"). rtpulse starts
// `instances` copies in one new process group, placed like every load (CPU affinity, nice,
// policy), sends their output to a log file, and stops them with SIGTERM, then SIGKILL after
// a grace. A copy that ends before it is stopped is a failed load: the report names the
// command and how it ended.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/file_owner.h"
#include "core/parse.h"
#include "load/builtins.h"
#include "load/cpu_stat.h"
#include "load/process_group.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

constexpr int kCommandMaxInstances = 256;

int64_t CommandNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool InPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (access((dir.empty() ? program : dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// What a child that could not exec writes to its close-on-exec pipe (nothing on success).
struct CommandStartFailure {
  int exit_code = 1;
  char message[240] = {};
};

const LoadOption kCommandInstances{
    "instances", LoadOption::Kind::kWhole, "copies of the program per CPU", "1",
    1,           kCommandMaxInstances};
const LoadOption kCommandGrace{
    "grace", LoadOption::Kind::kTime, "wait from SIGTERM to SIGKILL at the end", "2s",
    0,       60'000'000'000};
const LoadOption kCommandShell{"shell", LoadOption::Kind::kFlag,
                               "1: the rest of the line runs in /bin/sh -c", "0"};

class UserCommandLoad final : public Load {
 public:
  explicit UserCommandLoad(LoadSpec spec)
      : spec_(std::move(spec)),
        // The spec parser checked both against their rows.
        instances_(static_cast<int>(WholeOption(spec_.params, kCommandInstances))),
        grace_ns_(TimeOption(spec_.params, kCommandGrace)) {}
  ~UserCommandLoad() override { Stop(); }
  UserCommandLoad(const UserCommandLoad&) = delete;
  UserCommandLoad& operator=(const UserCommandLoad&) = delete;

  Status Start() override {
    int log_fd = -1;
    if (!spec_.params.log_path.empty()) {
      log_fd = open(spec_.params.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (log_fd < 0) return WriteError("cannot write", spec_.params.log_path, errno);
      HandOver(log_fd);
    }
    start_times_ = ReadCpuTimes();
    start_ns_ = CommandNowNs();
    Status started = Status::Ok();
    for (int i = 0; i < instances_ && started; ++i) started = StartInstance(i, log_fd);
    if (log_fd >= 0) close(log_fd);
    if (!started) {
      Stop();
      start_ns_ = 0;
      return started;
    }
    return Status::Ok();
  }

  void Stop() override {
    if (pgid_ == 0) return;
    end_times_ = ReadCpuTimes();
    end_ns_ = CommandNowNs();
    // Those already gone ended on their own: the load failed.
    // Record() takes an instance out of running_: walk a copy.
    for (const Running p : std::vector<Running>(running_)) {
      int status = 0;
      if (waitpid(p.pid, &status, WNOHANG) == p.pid) Record(p, status, true, false);
    }
    killpg(pgid_, SIGTERM);
    const int64_t deadline = CommandNowNs() + grace_ns_;
    while (!running_.empty() && CommandNowNs() < deadline) {
      for (const Running p : std::vector<Running>(running_)) {
        int status = 0;
        if (waitpid(p.pid, &status, WNOHANG) == p.pid) Record(p, status, false, false);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Whatever is left (and any child a command left in the group) gets SIGKILL.
    killpg(pgid_, SIGKILL);
    while (!running_.empty()) {
      int status = 0;
      if (waitpid(running_.front().pid, &status, 0) == running_.front().pid || errno == ECHILD) {
        Record(running_.front(), status, false, true);
      }
    }
    // The group's other members (children a command started) got the same SIGKILL, but the
    // kernel takes them asynchronously: Stop() returns once they are gone, so nothing of the
    // load outlives it, or says which are left.
    const std::vector<int> left = AwaitGroupGone(pgid_, 2 * kNsPerSec);
    if (!left.empty()) {
      std::string pids;
      for (const int pid : left) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
      warnings_.push_back(fmt::format(
          "{} process(es) of its group still alive 2 s after SIGKILL (pid {})", left.size(), pids));
    }
    pgid_ = 0;
  }

  LoadReport Report() const override {
    LoadReport r;
    r.name = spec_.name;
    r.spec = spec_.text;
    r.cpus = spec_.params.cpus;
    r.ops_unit = "";  // A user's program does not tell us what it did: no rate is claimed.
    r.log_path = spec_.params.log_path;
    r.processes = ended_;
    r.warnings = warnings_;
    if (start_ns_ == 0) return r;
    const bool done = end_ns_ != 0;
    r.seconds = static_cast<double>((done ? end_ns_ : CommandNowNs()) - start_ns_) / 1e9;
    r.cpu_use = CpuUseBetween(start_times_, done ? end_times_ : ReadCpuTimes(), r.cpus);
    return r;
  }

  int ProcessGroup() const override { return pgid_; }

 private:
  struct Running {
    int instance = 0;
    pid_t pid = -1;
  };

  std::string CommandText() const { return fmt::format("{}", fmt::join(spec_.params.args, " ")); }

  /// Removes `p` from running_ and records how it ended.
  void Record(Running p, int status, bool early, bool killed) {
    ProcessEnd end;
    end.instance = p.instance;
    end.pid = p.pid;
    end.early = early;
    end.killed = killed;
    if (WIFEXITED(status)) end.exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
    end.seconds = static_cast<double>(CommandNowNs() - start_ns_) / 1e9;
    if (early) {
      warnings_.push_back(
          fmt::format("command '{}' (instance {}, pid {}) ended before it was stopped: {}; the "
                      "load ran for only part of the run",
                      CommandText(), p.instance, p.pid, end.Describe()));
    } else if (killed) {
      warnings_.push_back(fmt::format(
          "command '{}' (instance {}, pid {}) did not stop within {:.1f} s of SIGTERM: killed",
          CommandText(), p.instance, p.pid, static_cast<double>(grace_ns_) / 1e9));
    }
    ended_.push_back(end);
    for (size_t i = 0; i < running_.size(); ++i) {
      if (running_[i].pid == p.pid) {
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }

  Status StartInstance(int instance, int log_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Failure(fmt::format("pipe: {}", std::strerror(errno)));
    std::vector<std::string> argv = spec_.params.args;
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    // The environment is built before fork: the child of a threaded process only execs.
    std::vector<std::string> env_text;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "RTPULSE_LOAD_INSTANCE=", 22) != 0) env_text.emplace_back(*e);
    }
    env_text.push_back(fmt::format("RTPULSE_LOAD_INSTANCE={}", instance));
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return ResourceError(fmt::format("fork: {}", std::strerror(errno)));
    }
    if (pid == 0) {
      close(fds[0]);
      CommandStartFailure failure;
      auto fail = [&](ExitCode code, const std::string& message) {
        failure.exit_code = ToInt(code);
        std::snprintf(failure.message, sizeof failure.message, "%s", message.c_str());
        (void)!write(fds[1], &failure, sizeof failure);
        _exit(127);
      };
      if (!PrepareChild(parent, pgid_)) _exit(1);
      const int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
      dup2(log_fd >= 0 ? log_fd : STDERR_FILENO, STDOUT_FILENO);
      if (log_fd >= 0) dup2(log_fd, STDERR_FILENO);
      if (Status s = PlaceProcess(spec_.params.cpus, spec_.params); !s) {
        fail(s.error().code, s.error().message);
      }
      execvpe(cargv[0], cargv.data(), envp.data());
      fail(errno == ENOENT || errno == EACCES ? ExitCode::kUsage : ExitCode::kFailure,
           fmt::format("cannot run '{}': {}", argv[0], std::strerror(errno)));
    }
    close(fds[1]);
    // Both sides call setpgid so the group exists before either goes on.
    setpgid(pid, pgid_ == 0 ? pid : pgid_);
    if (pgid_ == 0) pgid_ = pid;
    running_.push_back({instance, pid});
    // EOF: the exec happened. A record: placement or exec failed, and the child is ending.
    CommandStartFailure failure;
    ssize_t n = 0;
    do {
      n = read(fds[0], &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    close(fds[0]);
    if (n == static_cast<ssize_t>(sizeof failure)) {
      failure.message[sizeof failure.message - 1] = '\0';
      return Error{static_cast<ExitCode>(failure.exit_code),
                   fmt::format("cmd '{}' (instance {}) did not start: {}", CommandText(), instance,
                               failure.message)};
    }
    return Status::Ok();
  }

  LoadSpec spec_;
  int instances_ = 1;
  int64_t grace_ns_ = 0;
  pid_t pgid_ = 0;
  std::vector<Running> running_;
  std::vector<ProcessEnd> ended_;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  std::map<int, CpuTimes> start_times_;
  std::map<int, CpuTimes> end_times_;
  std::vector<std::string> warnings_;
};

Status ValidateCommand(const LoadParams& p) {
  if (p.args.empty()) {
    return UsageError("no command given; give e.g. 'cmd:cpus=1 python3 my_app.py'");
  }
  if (p.intensity != 100) {
    return UsageError("intensity= does not apply to a command (it runs as it runs); remove it");
  }
  if (!InPath(p.args[0])) {
    return UsageError(
        fmt::format("program '{}' not found{}; give its path or install it", p.args[0],
                    p.args[0].find('/') == std::string::npos ? " in PATH" : " or not executable"));
  }
  return Status::Ok();
}

}  // namespace

std::string ProcessEnd::Describe() const {
  if (signal != 0) {
    return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  }
  return fmt::format("exit status {}", exit_status);
}

LoadDescriptor CommandLoad() {
  return {"cmd",
          "your own program: cmd:[cpus=..,instances=N] PROGRAM ARGS (split on blanks)",
          {kCommandInstances, kCommandGrace, kCommandShell},
          false,
          &AlwaysSupported,
          &ValidateCommand,
          [](const LoadSpec& spec) -> std::unique_ptr<Load> {
            return std::make_unique<UserCommandLoad>(spec);
          }};
}

}  // namespace rtpulse::load
