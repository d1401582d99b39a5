#include "measure/perf_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/fs_root.h"

namespace rtpulse::measure {
namespace {

struct PerfCounterEvent {
  uint32_t type;
  uint64_t config;
};

PerfCounterEvent PerfEventOf(Counter counter) {
  switch (counter) {
    case Counter::kInstructions:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS};
    case Counter::kCycles:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
    case Counter::kCacheReferences:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES};
    case Counter::kCacheMisses:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES};
    case Counter::kStalledCyclesFrontend:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND};
    case Counter::kStalledCyclesBackend:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND};
    case Counter::kContextSwitches:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES};
    case Counter::kCpuMigrations:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS};
    case Counter::kPageFaults:
      return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS};
  }
  return {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY};
}

/// Portable errno names (strerrorname_np is glibc-only).
std::string PerfErrnoName(int err) {
  switch (err) {
    case ENOENT:
      return "ENOENT";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case ENODEV:
      return "ENODEV";
    case ENOSYS:
      return "ENOSYS";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ESRCH:
      return "ESRCH";
    case EINVAL:
      return "EINVAL";
    case EMFILE:
      return "EMFILE";
    case ENFILE:
      return "ENFILE";
    case EBUSY:
      return "EBUSY";
    default:
      return "errno " + std::to_string(err);
  }
}

std::string PerfParanoidLevel() {
  const auto level = FsRoot::Live().ReadLine("/proc/sys/kernel/perf_event_paranoid");
  if (!level || level->empty()) return "unknown (/proc/sys/kernel/perf_event_paranoid unreadable)";
  return *level;
}

int OpenPerfEvent(Counter counter, pid_t tid, bool exclude_kernel) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  const PerfCounterEvent event = PerfEventOf(counter);
  attr.type = event.type;
  attr.size = sizeof attr;
  attr.config = event.config;
  attr.disabled = 1;
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

bool PerfNotOffered(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == ENOSYS;
}

bool PerfRefused(int err) {
  return err == EACCES || err == EPERM;
}

std::string PerfNotOfferedReason(Counter counter, int err) {
  if (err == ENOSYS) return "not supported here: this kernel has no perf events (ENOSYS)";
  if (IsHardwareCounter(counter)) {
    return "not supported here: the kernel offers no hardware counter '" +
           std::string(CounterName(counter)) + "' (no PMU, e.g. in a VM, or not on this CPU) (" +
           PerfErrnoName(err) + ")";
  }
  return "not supported here: the kernel does not count '" + std::string(CounterName(counter)) +
         "' (" + PerfErrnoName(err) + ")";
}

std::string PerfRefusedReason(int err) {
  return "not permitted: perf_event_paranoid is " + PerfParanoidLevel() + " (" +
         PerfErrnoName(err) +
         "; fix: run as root or with CAP_PERFMON, or sysctl kernel.perf_event_paranoid=1)";
}

}  // namespace

std::string_view CounterName(Counter counter) {
  switch (counter) {
    case Counter::kInstructions:
      return "instructions";
    case Counter::kCycles:
      return "cycles";
    case Counter::kCacheReferences:
      return "cache-references";
    case Counter::kCacheMisses:
      return "cache-misses";
    case Counter::kStalledCyclesFrontend:
      return "stalled-cycles-frontend";
    case Counter::kStalledCyclesBackend:
      return "stalled-cycles-backend";
    case Counter::kContextSwitches:
      return "context-switches";
    case Counter::kCpuMigrations:
      return "cpu-migrations";
    case Counter::kPageFaults:
      return "page-faults";
  }
  return "unknown";
}

bool IsHardwareCounter(Counter counter) {
  return PerfEventOf(counter).type == PERF_TYPE_HARDWARE;
}

ThreadCounters::~ThreadCounters() {
  CloseAll();
}

void ThreadCounters::CloseAll() {
  for (const int fd : fds_) {
    if (fd >= 0) close(fd);
  }
  fds_.clear();
  user_only_.clear();
  unsupported_.clear();
  open_ = false;
}

Status ThreadCounters::Open(pid_t tid) {
  if (open_) {
    return Failure("perf counters are already open for this thread; open a new ThreadCounters");
  }
  for (const Counter counter : kAllCounters) {
    int fd = OpenPerfEvent(counter, tid, /*exclude_kernel=*/false);
    int err = fd < 0 ? errno : 0;
    bool user_only = false;
    // Context switches and migrations happen in kernel mode: counted in user mode only they
    // would read 0, a false value, so they are reported as refused instead.
    const bool user_mode_meaningful =
        counter != Counter::kContextSwitches && counter != Counter::kCpuMigrations;
    if (fd < 0 && PerfRefused(err) && user_mode_meaningful) {
      fd = OpenPerfEvent(counter, tid, /*exclude_kernel=*/true);
      err = fd < 0 ? errno : 0;
      user_only = fd >= 0;
    }
    std::string why;
    if (fd < 0) {
      if (PerfNotOffered(err)) {
        why = PerfNotOfferedReason(counter, err);
      } else if (PerfRefused(err)) {
        why = PerfRefusedReason(err);
      } else {
        const std::string name(CounterName(counter));
        CloseAll();
        if (err == ESRCH) {
          return Failure("perf counters: thread " + std::to_string(tid) +
                         " does not exist (ESRCH); open them while the thread runs");
        }
        return Failure("perf counters: opening '" + name + "' for thread " + std::to_string(tid) +
                       " failed: " + std::strerror(err) + " (" + PerfErrnoName(err) + ")");
      }
    }
    fds_.push_back(fd);
    user_only_.push_back(user_only);
    unsupported_.push_back(why);
  }
  open_ = true;
  return Status::Ok();
}

void ThreadCounters::Enable() {
  for (const int fd : fds_) {
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  }
}

void ThreadCounters::Disable() {
  for (const int fd : fds_) {
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  }
}

std::vector<CounterReading> ThreadCounters::Read() const {
  std::vector<CounterReading> out;
  size_t i = 0;
  for (const Counter counter : kAllCounters) {
    CounterReading r;
    r.counter = counter;
    if (!open_) {
      r.unsupported = "not opened (ThreadCounters::Open was not called or failed)";
    } else if (fds_[i] < 0) {
      r.unsupported = unsupported_[i];
    } else {
      uint64_t data[3] = {0, 0, 0};  // value, time enabled, time running
      const ssize_t n = read(fds_[i], data, sizeof data);
      if (n != static_cast<ssize_t>(sizeof data)) {
        r.unsupported = std::string("not read: ") + (n < 0 ? std::strerror(errno) : "short read");
      } else if (data[1] > 0 && data[2] == 0) {
        // Enabled but never on the PMU (every slot taken by other events): no value exists.
        r.unsupported = "not counted: enabled for " + std::to_string(data[1]) +
                        " ns but never scheduled on the PMU (too many events)";
      } else {
        r.supported = true;
        r.user_only = user_only_[i];
        r.multiplexed = data[2] < data[1];
        r.value = r.multiplexed ? static_cast<uint64_t>(static_cast<long double>(data[0]) *
                                                        static_cast<long double>(data[1]) /
                                                        static_cast<long double>(data[2]))
                                : data[0];
      }
    }
    out.push_back(std::move(r));
    ++i;
  }
  return out;
}

}  // namespace rtpulse::measure
