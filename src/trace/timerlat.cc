#include "trace/timerlat.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/sched_policy.h"
#include "core/tracefs_mount.h"

namespace rtpulse::trace {
namespace {

constexpr int kTimerlatIrqContext = 0;
constexpr int kTimerlatThreadContext = 1;
constexpr int kTimerlatUserReturnContext = 2;

std::optional<std::string> TimerlatReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) {
    line.pop_back();
  }
  return line;
}

/// One write(2) of `value`, as tracefs files want it (a partial write is not a value).
Status TimerlatWriteFile(const std::string& path, const std::string& value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    return ResourceError(fmt::format("cannot open {} for writing: {}{}", path, std::strerror(errno),
                                     errno == EACCES ? " (run as root)" : ""));
  }
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return ResourceError(fmt::format("cannot write '{}' to {}: {}", Printable(value), path,
                                     n < 0 ? std::strerror(err) : "short write"));
  }
  return Status::Ok();
}

bool TimerlatHasWord(const std::string& text, std::string_view word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

// ---- OsnoiseSettings -------------------------------------------------------------------------

OsnoiseSettings::~OsnoiseSettings() {
  (void)Restore();
}

Status OsnoiseSettings::Set(const std::string& file, const std::string& value) {
  const std::string path = dir_ + "/" + file;
  auto it =
      std::find_if(saved_.begin(), saved_.end(), [&](const Saved& s) { return s.file == file; });
  if (it == saved_.end()) {
    auto old = TimerlatReadFirstLine(path);
    if (!old) {
      return ResourceError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    }
    saved_.push_back({file, *old, value});
  } else {
    it->new_value = value;
  }
  return Write(file, value);
}

Status OsnoiseSettings::Write(const std::string& file, const std::string& value) {
  if (write_log_ != nullptr) write_log_->emplace_back(file, value);
  return TimerlatWriteFile(dir_ + "/" + file, value);
}

Status OsnoiseSettings::SetOption(const std::string& option, bool on) {
  const std::string path = dir_ + "/options";
  if (!options_saved_) {
    auto old = TimerlatReadFirstLine(path);
    if (!old) {
      return ResourceError(fmt::format("cannot read {}: {} (osnoise options need Linux 6.2+)", path,
                                       std::strerror(errno)));
    }
    options_before_ = *old;
    options_saved_ = true;
  }
  return Write("options", on ? option : "NO_" + option);
}

Status OsnoiseSettings::Restore() {
  Status first = Status::Ok();
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    Status s = Write(it->file, it->old_value);
    if (!s && first) first = s;
  }
  saved_.clear();
  if (options_saved_) {
    // The saved line lists every flag as NAME or NO_NAME; DEFAULTS is a command, not a flag.
    std::istringstream in(options_before_);
    std::string flag;
    while (in >> flag) {
      if (flag == "DEFAULTS" || flag == "NO_DEFAULTS") continue;
      Status s = Write("options", flag);
      if (!s && first) first = s;
    }
    options_saved_ = false;
  }
  return first;
}

std::vector<std::string> OsnoiseSettings::Changes() const {
  std::vector<std::string> out;
  for (const auto& s : saved_) {
    if (s.old_value == s.new_value) continue;  // written, but it already had that value
    out.push_back(fmt::format("{}: {} -> {}", s.file, s.old_value, s.new_value));
  }
  return out;
}

// ---- TimerlatCollector -----------------------------------------------------------------------

TimerlatCollector::TimerlatCollector(const std::vector<int>& cpus, int64_t period_ns)
    : period_ns_(period_ns) {
  int max_cpu = 0;
  for (int c : cpus) max_cpu = std::max(max_cpu, c);
  index_of_cpu_.assign(static_cast<size_t>(max_cpu) + 1, -1);
  cpus_.resize(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    cpus_[i].cpu = cpus[i];
    if (cpus[i] >= 0) index_of_cpu_[static_cast<size_t>(cpus[i])] = static_cast<int>(i);
  }
}

void TimerlatCollector::OnEvent(const TraceEvent& event) {
  if (event.kind != EventKind::kTimerlat || event.cpu < 0 ||
      static_cast<size_t>(event.cpu) >= index_of_cpu_.size() ||
      index_of_cpu_[static_cast<size_t>(event.cpu)] < 0 || event.number <= 0) {
    ++ignored_;
    return;
  }
  TimerlatCpu& c = cpus_[static_cast<size_t>(index_of_cpu_[static_cast<size_t>(event.cpu)])];
  const auto seq = static_cast<uint64_t>(event.number);
  if (event.timerlat_context == kTimerlatUserReturnContext) {
    ++c.user_return;
    if (seq <= c.last_user_seq) {
      ++c.out_of_order;
      return;
    }
    c.user.Record(event.timerlat_latency_ns);
    c.last_user_seq = seq;
    c.last_user_latency_ns = event.timerlat_latency_ns;
    return;
  }
  const bool irq = event.timerlat_context == kTimerlatIrqContext;
  if (!irq && event.timerlat_context != kTimerlatThreadContext) {
    ++ignored_;
    return;
  }
  if (c.first_seq == 0) c.first_seq = seq;
  uint64_t& last = irq ? c.last_irq_seq : c.last_thread_seq;
  uint64_t& lost = irq ? c.irq_lost : c.thread_lost;
  if (seq <= last) {
    ++c.out_of_order;
    return;
  }
  // The kernel numbers every activation of this CPU from 1: the records between the last one
  // seen (or the start) and this one were lost from the buffer.
  const uint64_t gap = seq - last;
  lost += gap - 1;
  if (irq) {
    const int64_t expiry = event.ts_ns - event.timerlat_latency_ns;
    if (period_ns_ > 0 && last > 0) {
      // Expiries between the last activation's and this one that were neither numbered
      // (lost records are) nor fired: the kernel skipped them behind a late thread.
      const int64_t periods = (expiry - c.last_expiry_ns + period_ns_ / 2) / period_ns_;
      if (periods > static_cast<int64_t>(gap)) {
        const int64_t stall_end =
            c.last_thread_seq == last ? c.last_thread_ts_ns : c.last_irq_ts_ns;
        for (int64_t k = static_cast<int64_t>(gap); k < periods; ++k) {
          c.skipped.Record(stall_end - (c.last_expiry_ns + k * period_ns_));
        }
        c.skipped_periods += static_cast<uint64_t>(periods) - gap;
      }
    }
    c.last_expiry_ns = expiry;
    c.last_irq_ts_ns = event.ts_ns;
  } else {
    c.last_thread_ts_ns = event.ts_ns;
  }
  last = seq;
  (irq ? c.irq : c.thread).Record(event.timerlat_latency_ns);
  (irq ? c.last_irq_latency_ns : c.last_thread_latency_ns) = event.timerlat_latency_ns;
}

// ---- Finding the tracer ----------------------------------------------------------------------

Expected<std::string> FindTimerlatTracefs(const std::string& tracefs_dir) {
  std::vector<std::string> candidates;
  if (!tracefs_dir.empty()) {
    candidates.push_back(tracefs_dir);
  } else {
    // As root, when nobody has (said in RunTimerlat's notes: TracefsMountNote).
    MountTracefsIfAbsent();
    candidates.assign(std::begin(kTracefsDirs), std::end(kTracefsDirs));
  }
  std::string dir;
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c + "/available_tracers")) {
      dir = c;
      break;
    }
  }
  if (dir.empty()) {
    return ResourceError(
        fmt::format("--wake timerlat: no tracefs at {} (mount it: mount -t tracefs nodev "
                    "/sys/kernel/tracing; `rtpulse check` lists the tracing facilities)",
                    candidates.front()));
  }
  auto tracers = TimerlatReadFirstLine(dir + "/available_tracers");
  if (!tracers) {
    return ResourceError(
        fmt::format("--wake timerlat: cannot read {}/available_tracers: {} (run "
                    "as root)",
                    dir, std::strerror(errno)));
  }
  if (!TimerlatHasWord(*tracers, "timerlat")) {
    return ResourceError(fmt::format(
        "--wake timerlat: this kernel has no timerlat tracer ({}/available_tracers: {}); build "
        "it with CONFIG_TIMERLAT_TRACER=y (`rtpulse check` lists the tracing facilities)",
        dir, tracers->empty() ? "empty" : *tracers));
  }
  // Busy: timerlat and osnoise share osnoise/ and the per-CPU state, so another user of either
  // (the top-level tracer or an instance's, e.g. rtla's) would be disturbed.
  std::vector<std::pair<std::string, std::string>> tracers_now;
  tracers_now.emplace_back(dir, TimerlatReadFirstLine(dir + "/current_tracer").value_or(""));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/instances", ec)) {
    tracers_now.emplace_back(
        entry.path().string(),
        TimerlatReadFirstLine(entry.path().string() + "/current_tracer").value_or(""));
  }
  for (const auto& [where, tracer] : tracers_now) {
    if (tracer == "timerlat" || tracer == "osnoise") {
      return ResourceError(fmt::format(
          "--wake timerlat: the {} tracer is busy: {}/current_tracer is '{}' (another tool, e.g. "
          "rtla, uses it; stop it or write nop there)",
          tracer, where, tracer));
    }
  }
  return dir;
}

// ---- The run ---------------------------------------------------------------------------------
namespace {

/// The user-space interface: one pinned thread per CPU blocked in read() on its timerlat_fd.
class TimerlatUserThreads {
 public:
  TimerlatUserThreads(const TimerlatPlan& plan, const std::string& osnoise_dir)
      : plan_(plan), osnoise_dir_(osnoise_dir), slots_(plan.cpus.size()) {}
  ~TimerlatUserThreads() { Stop(); }
  TimerlatUserThreads(const TimerlatUserThreads&) = delete;
  TimerlatUserThreads& operator=(const TimerlatUserThreads&) = delete;

  /// Starts every thread and waits until each opened its file (or failed to).
  Status Start() {
    for (size_t i = 0; i < plan_.cpus.size(); ++i) {
      threads_.emplace_back([this, i] { Body(i); });
    }
    std::unique_lock lock(mutex_);
    ready_cv_.wait(lock, [&] { return ready_ == slots_.size(); });
    for (const auto& s : slots_) {
      if (!s.error.ok()) return s.error;
    }
    return Status::Ok();
  }

  /// Ends every thread after its current read() returns (within one period) and closes its
  /// file: this must happen before the tracer goes off, or the kernel kills the process.
  void Stop() {
    stop_.store(true);
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

  int tid(size_t i) const { return slots_[i].tid; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::string read_error() const {
    for (const auto& s : slots_) {
      if (!s.read_error.empty()) return s.read_error;
    }
    return "";
  }

 private:
  struct Slot {
    int tid = 0;
    Status error = Status::Ok();
    std::string read_error;
  };

  void Ready(size_t i, Status error) {
    std::lock_guard lock(mutex_);
    slots_[i].error = std::move(error);
    ++ready_;
    ready_cv_.notify_all();
  }

  void Body(size_t i) {
    const int cpu = plan_.cpus[i];
    slots_[i].tid = static_cast<int>(::syscall(SYS_gettid));
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<size_t>(cpu), &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      Ready(i, ResourceError(fmt::format("--wake timerlat: cannot pin a thread to CPU {}: {}", cpu,
                                         std::strerror(errno))));
      return;
    }
    sched_param param{};
    param.sched_priority = plan_.priority;
    if (sched_setscheduler(0, plan_.sched_policy, &param) != 0) {
      std::lock_guard lock(mutex_);
      warnings_.push_back(
          fmt::format("timerlat thread on CPU {} runs without {} priority {}: {} (run as root)",
                      cpu, plan_.policy_name, plan_.priority, std::strerror(errno)));
    }
    const std::string path = fmt::format("{}/per_cpu/cpu{}/timerlat_fd", osnoise_dir_, cpu);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      Ready(i, ResourceError(fmt::format(
                   "--wake timerlat: cannot open {}: {}{}", path, std::strerror(err),
                   err == EBUSY ? " (another thread, e.g. rtla timerlat -u, reads it: stop it)"
                                : "")));
      return;
    }
    Ready(i, Status::Ok());
    char buffer[1024];
    while (!stop_.load(std::memory_order_relaxed)) {
      // Returns at every activation, once the thread latency is recorded.
      if (::read(fd, buffer, sizeof buffer) < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        std::lock_guard lock(mutex_);
        slots_[i].read_error = fmt::format("read({}): {}", path, std::strerror(err));
        break;
      }
    }
    ::close(fd);
  }

  const TimerlatPlan& plan_;
  std::string osnoise_dir_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable ready_cv_;
  size_t ready_ = 0;
  std::vector<std::string> warnings_;
};

/// The kernel's timerlat/N thread's pid, or 0.
int TimerlatKernelThread(int cpu) {
  const std::string want = fmt::format("timerlat/{}", cpu);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (TimerlatReadFirstLine(entry.path().string() + "/comm").value_or("") == want) {
      return std::stoi(name);
    }
  }
  return 0;
}

Status TimerlatConfigure(OsnoiseSettings& osnoise, const TimerlatPlan& plan, bool user) {
  const int64_t period_us = plan.period_ns / 1000;
  if (Status s = osnoise.Set("timerlat_period_us", std::to_string(period_us)); !s) return s;
  if (Status s = osnoise.Set("cpus", FormatCpuList(plan.cpus)); !s) return s;
  // A threshold left by an earlier user would stop the trace in the middle of the run.
  if (Status s = osnoise.Set("stop_tracing_us", "0"); !s) return s;
  if (Status s = osnoise.Set("stop_tracing_total_us", "0"); !s) return s;
  if (std::filesystem::exists(osnoise.dir() + "/print_stack")) {
    if (Status s = osnoise.Set("print_stack", "0"); !s) return s;
  }
  // The user-space interface needs NO_OSNOISE_WORKLOAD (no kernel threads); the kernel's
  // threads need it on. Kernels before 6.2 have no options file and always run their threads.
  if (user || std::filesystem::exists(osnoise.dir() + "/options")) {
    if (Status s = osnoise.SetOption("OSNOISE_WORKLOAD", !user); !s) return s;
  }
  return Status::Ok();
}

/// Where the tracer is, and whether the run uses its user-space interface; a usage error for
/// a plan the tracer cannot run, a resource error for a kernel that lacks what it asks.
struct TimerlatSetup {
  std::string tracefs;
  std::string osnoise_dir;
  bool user = false;
};

Expected<TimerlatSetup> CheckTimerlatPlan(const TimerlatPlan& plan) {
  if (plan.cpus.empty()) return UsageError("--wake timerlat: no CPU to measure on");
  const int64_t period_us = plan.period_ns / 1000;
  if (period_us < kTimerlatMinPeriodUs || period_us > kTimerlatMaxPeriodUs ||
      plan.period_ns % 1000 != 0) {
    return UsageError(fmt::format(
        "--wake timerlat: interval {} ns is not a whole number of microseconds from {} to {} us "
        "(the timerlat tracer's timerlat_period_us range): give e.g. -i 1000",
        plan.period_ns, kTimerlatMinPeriodUs, kTimerlatMaxPeriodUs));
  }
  auto tracefs = FindTimerlatTracefs(plan.tracefs_dir);
  if (!tracefs) return tracefs.error();
  const std::string osnoise_dir = *tracefs + "/osnoise";
  const bool has_user = std::filesystem::exists(fmt::format("{}/per_cpu/cpu{}/timerlat_fd",
                                                            osnoise_dir, plan.cpus.front())) &&
                        std::filesystem::exists(osnoise_dir + "/options");
  if (plan.mode == "user" && !has_user) {
    return ResourceError(fmt::format(
        "--wake timerlat: this kernel has no timerlat user-space interface ({}/per_cpu/cpu{}/"
        "timerlat_fd; Linux 6.6+)",
        osnoise_dir, plan.cpus.front()));
  }
  return TimerlatSetup{*tracefs, osnoise_dir,
                       plan.mode == "user" || (plan.mode == "auto" && has_user)};
}

/// Until the duration is over or SIGINT/SIGTERM (taken synchronously by stop_within): true
/// when a signal ended it.
bool WaitOutTheRun(const TimerlatPlan& plan, int64_t start) {
  for (;;) {
    const int64_t left =
        plan.duration_ns > 0 ? start + plan.duration_ns - MonotonicNs() : int64_t{100'000'000};
    if (plan.duration_ns > 0 && left <= 0) return false;
    const int64_t wait = std::min<int64_t>(left, 100'000'000);
    if (plan.stop_within ? plan.stop_within(wait)
                         : (std::this_thread::sleep_for(std::chrono::nanoseconds(wait)), false)) {
      return true;
    }
  }
}

/// Each CPU's measuring thread: rtpulse's own (user mode) or the kernel's timerlat/N, whose
/// policy and priority are read back.
void NameTheThreads(const TimerlatPlan& plan, const TimerlatUserThreads* threads,
                    std::vector<TimerlatCpu>& cpus) {
  for (size_t i = 0; i < cpus.size(); ++i) {
    TimerlatCpu& c = cpus[i];
    c.tid = threads != nullptr ? threads->tid(i) : TimerlatKernelThread(plan.cpus[i]);
    if (threads != nullptr) {
      c.policy = plan.policy_name;
      c.priority = plan.priority;
    } else {
      // The kernel's thread runs at the kernel's choice; say what it was.
      sched_param param{};
      const int policy = c.tid > 0 ? sched_getscheduler(c.tid) : -1;
      c.policy = policy >= 0 ? KernelPolicyName(policy) : "unknown";
      c.priority = policy >= 0 && sched_getparam(c.tid, &param) == 0 ? param.sched_priority : 0;
    }
  }
}

/// What the run did to osnoise/ and how, and every loss it saw.
void NoteTheRun(const TimerlatPlan& plan, bool user, const std::vector<std::string>& changes,
                const Status& restored, const TimerlatUserThreads* threads,
                TimerlatResult& result) {
  result.notes.push_back(
      user ? fmt::format("timerlat: the kernel's user-space interface, one rtpulse thread per CPU "
                         "({} priority {}) reading osnoise/per_cpu/cpuN/timerlat_fd",
                         plan.policy_name, plan.priority)
           : "timerlat: the kernel's own timerlat/N threads (no user-space interface in this "
             "kernel; their policy and priority are the kernel's)");
  for (const auto& c : changes) {
    result.notes.push_back("timerlat: osnoise/" + c + (restored ? " (restored)" : ""));
  }
  if (!restored) {
    result.warnings.push_back("timerlat: osnoise/ could not be restored: " +
                              restored.error().message);
  }
  if (threads != nullptr) {
    for (const auto& w : threads->warnings()) result.warnings.push_back(w);
    if (auto e = threads->read_error(); !e.empty()) {
      result.warnings.push_back("timerlat: a thread stopped early: " + e);
    }
  }
  for (const auto& c : result.cpus) {
    if (c.irq_lost + c.thread_lost > 0) {
      result.warnings.push_back(fmt::format(
          "timerlat: CPU {}: {} IRQ and {} thread records lost from the trace buffer (sequence "
          "gaps), counted as missed",
          c.cpu, c.irq_lost, c.thread_lost));
    }
    if (c.irq.count() == 0) {
      result.warnings.push_back(fmt::format("timerlat: CPU {}: no activation recorded", c.cpu));
    }
  }
  if (result.trace.events_lost > 0) {
    result.warnings.push_back(fmt::format("timerlat: the kernel reported {} lost trace events",
                                          result.trace.events_lost));
  }
}

}  // namespace

Expected<TimerlatResult> RunTimerlat(const TimerlatPlan& plan) {
  auto setup = CheckTimerlatPlan(plan);
  if (!setup) return setup.error();
  const bool user = setup->user;

  TimerlatResult result;
  result.mode = user ? "user" : "kernel";
  OsnoiseSettings osnoise(setup->osnoise_dir);
  if (Status s = TimerlatConfigure(osnoise, plan, user); !s) return s.error();
  const std::vector<std::string> changes = osnoise.Changes();

  TimerlatCollector collector(plan.cpus, plan.period_ns);
  SessionPlan session_plan;
  session_plan.cpus = plan.cpus;
  session_plan.timerlat = true;
  session_plan.tracefs_dir = setup->tracefs;
  auto opened = TraceSession::Open(session_plan);
  if (!opened) {
    return ResourceError("--wake timerlat: " + opened.error().message);
  }
  std::unique_ptr<TraceSession> session = std::move(*opened);
  session->SetTimerlatCallback([&collector, &plan](const TraceEvent& e) {
    collector.OnEvent(e);
    if (plan.on_sample && e.kind == EventKind::kTimerlat &&
        e.timerlat_context == kTimerlatThreadContext) {
      plan.on_sample(
          {e.cpu, static_cast<uint64_t>(e.number), e.ts_ns - e.timerlat_latency_ns, e.ts_ns});
    }
  });
  session->StartReader();

  result.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  const int64_t start = MonotonicNs();
  std::optional<TimerlatUserThreads> threads;
  if (user) {
    threads.emplace(plan, setup->osnoise_dir);
    if (Status s = threads->Start(); !s) {
      threads->Stop();
      session->StopReader();
      session.reset();
      return s.error();
    }
  }
  result.interrupted = WaitOutTheRun(plan, start);
  result.duration_ns = MonotonicNs() - start;
  result.end_realtime_ns = ClockNs(CLOCK_REALTIME);
  // Order matters: the user threads close their files, then the tracer stops (the session
  // removes its instance), then osnoise/ is restored.
  if (threads) threads->Stop();
  session->StopReader();
  result.trace = session->stats();
  session.reset();
  const Status restored = osnoise.Restore();

  result.cpus = std::move(collector.cpus());
  const TimerlatUserThreads* user_threads = threads ? &*threads : nullptr;
  NameTheThreads(plan, user_threads, result.cpus);
  if (const std::string mounted = TracefsMountNote();
      plan.tracefs_dir.empty() && !mounted.empty()) {
    result.notes.push_back("timerlat: " + mounted);
  }
  NoteTheRun(plan, user, changes, restored, user_threads, result);
  return result;
}

}  // namespace rtpulse::trace
