// stress-ng: the external backend. Arguments pass through verbatim; rtpulse adds
// --metrics-brief (and --timeout for a timed run), owns the process group and reads the
// achieved bogo ops/s back from stress-ng's metrics table.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
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

#include "load/builtins.h"
#include "load/cpu_stat.h"
#include "load/stress_ng.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string LastLine(const std::string& text) {
  std::string last;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last = line;
  }
  return last;
}

class StressNg final : public Load {
 public:
  explicit StressNg(LoadSpec spec) : spec_(std::move(spec)) {}
  ~StressNg() override {
    Stop();
    if (out_fd_ >= 0) close(out_fd_);
  }
  StressNg(const StressNg&) = delete;
  StressNg& operator=(const StressNg&) = delete;

  Status Start() override {
    std::vector<std::string> argv{"stress-ng"};
    argv.insert(argv.end(), spec_.params.args.begin(), spec_.params.args.end());
    argv.emplace_back("--metrics-brief");
    if (spec_.params.duration_ns > 0) {
      argv.emplace_back("--timeout");
      argv.push_back(fmt::format("{}s", (spec_.params.duration_ns + 999'999'999) / 1'000'000'000));
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Failure(fmt::format("pipe: {}", std::strerror(errno)));
    const int parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) return ResourceError(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
      if (!PrepareChild(parent, 0)) _exit(1);
      dup2(fds[1], STDOUT_FILENO);
      dup2(fds[1], STDERR_FILENO);
      if (Status s = PlaceProcess(spec_.params.cpus, spec_.params); !s) {
        fmt::print(stderr, "{}\n", s.error().message);
        _exit(1);
      }
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execvp("stress-ng", cargv.data());
      fmt::print(stderr, "cannot run stress-ng: {}\n", std::strerror(errno));
      _exit(127);
    }
    close(fds[1]);
    out_fd_ = fds[0];
    setpgid(pid, pid);
    pid_ = pid;
    pgid_ = pid;
    start_times_ = ReadCpuTimes();
    start_ns_ = NowNs();
    // Wait for stress-ng to accept its arguments, so bad ones fail before the run starts.
    const int64_t deadline = NowNs() + 5'000'000'000;
    while (output_.find("dispatching hogs") == std::string::npos) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        Drain(0);
        pid_ = -1;
        killpg(pgid_, SIGKILL);
        pgid_ = 0;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        return Error{code == 127 ? ExitCode::kResource : ExitCode::kUsage,
                     fmt::format("stress-ng '{}' failed to start: {}",
                                 fmt::join(spec_.params.args, " "), LastLine(output_))};
      }
      if (NowNs() > deadline) break;
      Drain(20);
    }
    return Status::Ok();
  }

  void Stop() override {
    if (pgid_ == 0) return;
    end_times_ = ReadCpuTimes();
    end_ns_ = NowNs();
    // SIGINT makes stress-ng stop its stressors and print the metrics table.
    killpg(pgid_, SIGINT);
    int status = 0;
    const int64_t deadline = NowNs() + 3'000'000'000;
    while (pid_ > 0 && NowNs() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      Drain(20);
    }
    Drain(0);
    if (pid_ > 0) warnings_.push_back("stress-ng did not stop within 3 s of SIGINT: killed");
    killpg(pgid_, SIGKILL);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
    pgid_ = 0;
  }

  LoadReport Report() const override {
    LoadReport r;
    r.name = spec_.name;
    r.spec = spec_.text;
    r.cpus = spec_.params.cpus;
    r.ops_unit = "bogo ops";
    r.warnings = warnings_;
    if (start_ns_ == 0) return r;
    const bool done = end_ns_ != 0;
    r.seconds = static_cast<double>((done ? end_ns_ : NowNs()) - start_ns_) / 1e9;
    const StressNgMetrics m = ParseStressNgMetrics(output_);
    r.ops = m.bogo_ops;
    r.ops_per_second = m.bogo_ops_per_second;
    if (done && m.stressors == 0) {
      r.warnings.push_back("no metrics from stress-ng: " + LastLine(output_));
    }
    r.cpu_use = CpuUseBetween(start_times_, done ? end_times_ : ReadCpuTimes(), r.cpus);
    return r;
  }

  int ProcessGroup() const override { return pgid_; }

 private:
  /// Appends what stress-ng wrote, waiting up to `timeout_ms` for the first bytes.
  void Drain(int timeout_ms) {
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return;
    char buffer[4096];
    for (;;) {
      const ssize_t n = read(out_fd_, buffer, sizeof buffer);
      if (n <= 0) return;
      output_.append(buffer, static_cast<size_t>(n));
      if (poll(&p, 1, 0) <= 0) return;
    }
  }

  LoadSpec spec_;
  pid_t pid_ = -1;
  pid_t pgid_ = 0;
  int out_fd_ = -1;
  std::string output_;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  std::map<int, CpuTimes> start_times_;
  std::map<int, CpuTimes> end_times_;
  std::vector<std::string> warnings_;
};

std::string StressNgSupported() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (access((dir + "/stress-ng").c_str(), X_OK) == 0) return "";
  }
  return "stress-ng is not installed (apt-get install stress-ng)";
}

}  // namespace

StressNgMetrics ParseStressNgMetrics(const std::string& output) {
  // "stress-ng: metrc: [42] cpu   208   1.00   0.18   0.00   207.18   1118.64"
  StressNgMetrics m;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const auto bracket = line.find("] ");
    if (line.rfind("stress-ng:", 0) != 0 || bracket == std::string::npos) continue;
    std::istringstream fields(line.substr(bracket + 2));
    std::string name;
    uint64_t ops = 0;
    double real_s = 0;
    double usr_s = 0;
    double sys_s = 0;
    double rate = 0;
    if (!(fields >> name >> ops >> real_s >> usr_s >> sys_s >> rate)) continue;
    m.bogo_ops += ops;
    m.bogo_ops_per_second += rate;
    ++m.stressors;
  }
  return m;
}

LoadDescriptor StressNgLoad() {
  return {"stress-ng",
          "anything stress-ng can do: its arguments pass through, e.g. stress-ng:--cpu 2",
          {},
          false,
          &StressNgSupported,
          [](const LoadParams& p) -> Status {
            if (p.args.empty()) {
              return UsageError("stress-ng: no arguments; give e.g. 'stress-ng:--cpu 2'");
            }
            return Status::Ok();
          },
          [](const LoadSpec& spec) -> std::unique_ptr<Load> {
            return std::make_unique<StressNg>(spec);
          }};
}

}  // namespace rtpulse::load
