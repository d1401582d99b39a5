#include "load/worker.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <new>
#include <thread>

#include "core/parse.h"
#include "core/sched_policy.h"
#include "load/cpu_stat.h"

namespace rtpulse::load {
namespace {

constexpr int64_t kSliceNs = 10'000'000;  // Duty-cycle slice: busy, then sleep, every 10 ms.
constexpr int64_t kStartTimeoutNs = 5'000'000'000;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

enum SlotState : int { kStarting = 0, kRunning = 1, kFailed = 2 };

/// One worker's counters, in memory shared with the parent (MAP_SHARED survives fork).
struct alignas(64) WorkerSlot {
  std::atomic<uint64_t> ops{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> state{kStarting};
  int exit_code = 1;  // ExitCode of a failed setup.
  char error[240] = {};
};

void Fail(WorkerSlot& slot, const Error& error) {
  std::snprintf(slot.error, sizeof slot.error, "%s", error.message.c_str());
  slot.exit_code = ToInt(error.code);
  slot.state.store(kFailed);
}

[[noreturn]] void RunWorker(WorkerSlot& slot, int cpu, const LoadParams& params,
                            WorkFactory factory) {
  if (Status s = PlaceProcess({cpu}, params); !s) {
    Fail(slot, s.error());
    _exit(1);
  }
  std::unique_ptr<Work> work = factory(params);
  if (Status s = work->Setup(); !s) {
    Fail(slot, s.error());
    _exit(1);
  }
  slot.state.store(kRunning);
  const int64_t busy_ns = kSliceNs * params.intensity / 100;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  int64_t slice_start = NowNs();
  for (;;) {
    do {
      work->Step(ops, bytes);
      slot.ops.store(ops, std::memory_order_relaxed);
      slot.bytes.store(bytes, std::memory_order_relaxed);
    } while (NowNs() - slice_start < busy_ns);
    slice_start += kSliceNs;
    if (params.intensity >= 100 || slice_start < NowNs()) {
      slice_start = NowNs();
      continue;
    }
    const timespec until{static_cast<time_t>(slice_start / 1'000'000'000),
                         static_cast<long>(slice_start % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
  }
}

class WorkerLoad final : public Load {
 public:
  WorkerLoad(LoadSpec spec, WorkFactory factory, WorkerTraits traits)
      : spec_(std::move(spec)), factory_(factory), traits_(traits) {}
  ~WorkerLoad() override {
    Stop();
    if (slots_ != nullptr) munmap(slots_, SlotBytes());
  }
  WorkerLoad(const WorkerLoad&) = delete;
  WorkerLoad& operator=(const WorkerLoad&) = delete;

  Status Start() override {
    const auto& cpus = spec_.params.cpus;
    void* mem =
        mmap(nullptr, SlotBytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return Failure(fmt::format("mmap: {}", std::strerror(errno)));
    slots_ = static_cast<WorkerSlot*>(mem);
    for (size_t i = 0; i < cpus.size(); ++i) new (&slots_[i]) WorkerSlot;

    const int parent = getpid();
    for (size_t i = 0; i < cpus.size(); ++i) {
      const pid_t pid = fork();
      if (pid < 0) {
        Stop();
        return ResourceError(fmt::format("fork: {}", std::strerror(errno)));
      }
      if (pid == 0) {
        if (!PrepareChild(parent, pgid_)) _exit(1);
        RunWorker(slots_[i], cpus[i], spec_.params, factory_);
      }
      // Both sides call setpgid so the group exists before either goes on.
      setpgid(pid, pgid_ == 0 ? pid : pgid_);
      if (pgid_ == 0) pgid_ = pid;
      pids_.push_back(pid);
    }
    if (Status s = WaitRunning(); !s) {
      Stop();
      return s;
    }
    start_times_ = ReadCpuTimes();
    start_ns_ = NowNs();
    return Status::Ok();
  }

  void Stop() override {
    if (pgid_ == 0) return;
    if (start_ns_ != 0) {
      end_times_ = ReadCpuTimes();
      end_ns_ = NowNs();
      ops_ = bytes_ = 0;
      for (size_t i = 0; i < pids_.size(); ++i) {
        ops_ += slots_[i].ops.load();
        bytes_ += slots_[i].bytes.load();
        int status = 0;
        if (waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
          warnings_.push_back(fmt::format("worker on CPU {} ended early ({})", spec_.params.cpus[i],
                                          ExitText(i, status)));
          pids_[i] = -1;
        }
      }
    }
    killpg(pgid_, SIGKILL);
    for (const pid_t pid : pids_) {
      if (pid > 0) waitpid(pid, nullptr, 0);
    }
    pids_.clear();
    pgid_ = 0;
  }

  LoadReport Report() const override {
    LoadReport r;
    r.name = spec_.name;
    r.spec = spec_.text;
    r.cpus = spec_.params.cpus;
    r.ops_unit = traits_.ops_unit;
    r.warnings = warnings_;
    const int64_t end_ns = end_ns_ != 0 ? end_ns_ : NowNs();
    if (start_ns_ == 0) return r;
    r.seconds = static_cast<double>(end_ns - start_ns_) / 1e9;
    uint64_t ops = ops_;
    uint64_t bytes = bytes_;
    if (end_ns_ == 0) {  // Still running: read the live counters.
      ops = bytes = 0;
      for (size_t i = 0; i < spec_.params.cpus.size(); ++i) {
        ops += slots_[i].ops.load();
        bytes += slots_[i].bytes.load();
      }
    }
    r.ops = ops;
    if (r.seconds > 0) {
      r.ops_per_second = static_cast<double>(ops) / r.seconds;
      if (traits_.reports_bytes) r.mb_per_second = static_cast<double>(bytes) / 1e6 / r.seconds;
    }
    r.cpu_use =
        CpuUseBetween(start_times_, end_ns_ != 0 ? end_times_ : ReadCpuTimes(), spec_.params.cpus);
    if (traits_.cpu_bound) {
      for (const auto& use : r.cpu_use) {
        if (use.busy_percent < 0.5 * spec_.params.intensity) {
          r.warnings.push_back(fmt::format(
              "CPU {} was only {:.0f}% busy at intensity {}%: the load did not get the CPU",
              use.cpu, use.busy_percent, spec_.params.intensity));
        }
      }
    }
    return r;
  }

  int ProcessGroup() const override { return pgid_; }

 private:
  size_t SlotBytes() const {
    return sizeof(WorkerSlot) * std::max<size_t>(1, spec_.params.cpus.size());
  }

  std::string ExitText(size_t i, int status) const {
    if (slots_[i].state.load() == kFailed) return slots_[i].error;
    if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
    return fmt::format("exit status {}", WEXITSTATUS(status));
  }

  /// Waits until every worker has placed itself and set up, or one failed.
  Status WaitRunning() {
    const int64_t deadline = NowNs() + kStartTimeoutNs;
    for (;;) {
      size_t running = 0;
      for (size_t i = 0; i < pids_.size(); ++i) {
        const int state = slots_[i].state.load();
        if (state == kFailed) {
          return Error{
              static_cast<ExitCode>(slots_[i].exit_code),
              fmt::format("{} on CPU {}: {}", spec_.name, spec_.params.cpus[i], slots_[i].error)};
        }
        int status = 0;
        if (state == kStarting && waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
          pids_[i] = -1;
          return Failure(fmt::format("{} on CPU {}: worker died while starting ({})", spec_.name,
                                     spec_.params.cpus[i], ExitText(i, status)));
        }
        if (state == kRunning) ++running;
      }
      if (running == pids_.size()) return Status::Ok();
      if (NowNs() > deadline) {
        return Failure(fmt::format("{}: workers did not start within 5 s", spec_.name));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  LoadSpec spec_;
  WorkFactory factory_;
  WorkerTraits traits_;
  WorkerSlot* slots_ = nullptr;
  std::vector<pid_t> pids_;
  pid_t pgid_ = 0;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  uint64_t ops_ = 0;
  uint64_t bytes_ = 0;
  std::map<int, CpuTimes> start_times_;
  std::map<int, CpuTimes> end_times_;
  std::vector<std::string> warnings_;
};

Error PrivilegeOrFailure(int err, std::string message) {
  message += fmt::format(": {}", std::strerror(err));
  if (err == EPERM) return ResourceError(message + " (run as root or grant CAP_SYS_NICE)");
  return Failure(message);
}

}  // namespace

Status PlaceProcess(const std::vector<int>& cpus, const LoadParams& params) {
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : cpus) CPU_SET(static_cast<size_t>(cpu), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      return UsageError(
          fmt::format("cannot pin to CPU {}: {}", FormatCpuList(cpus), std::strerror(errno)));
    }
  }
  if (params.nice != 0 && setpriority(PRIO_PROCESS, 0, params.nice) != 0) {
    return PrivilegeOrFailure(errno, fmt::format("nice={}", params.nice));
  }
  if (params.policy != SchedPolicy::kOther) {
    sched_param sp{};
    sp.sched_priority = params.priority;
    if (sched_setscheduler(0, LinuxPolicy(params.policy), &sp) != 0) {
      return PrivilegeOrFailure(errno, "setting the scheduling policy");
    }
  }
  return Status::Ok();
}

bool PrepareChild(int parent_pid, int pgid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent_pid) return false;  // The parent died before prctl took effect.
  setpgid(0, pgid);
  // The parent takes SIGINT/SIGTERM synchronously with them blocked; a child must not inherit
  // that, or a stray signal would never end it.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD}) {
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  return true;
}

std::unique_ptr<Load> MakeWorkerLoad(const LoadSpec& spec, WorkFactory factory,
                                     WorkerTraits traits) {
  return std::make_unique<WorkerLoad>(spec, factory, traits);
}

}  // namespace rtpulse::load
