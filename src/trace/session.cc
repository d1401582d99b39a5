#include "trace/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/cpus.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/tracefs_mount.h"

#if RTPULSE_HAVE_TRACEFS
#include <event-parse.h>
extern "C" {
#include <kbuffer.h>
}
#include <trace-seq.h>

// tracefs.h does not compile as C++ (an int passed as an enum in an inline function), so
// the few libtracefs 1.6 functions used here are declared as the library exports them.
extern "C" {
struct tracefs_instance;
struct tracefs_cpu;
struct tracefs_instance* tracefs_instance_alloc(const char* tracing_dir, const char* name);
void tracefs_instance_free(struct tracefs_instance* instance);
int tracefs_event_file_write(struct tracefs_instance* instance, const char* system,
                             const char* event, const char* file, const char* str);
char** tracefs_system_events(const char* tracing_dir, const char* system);
void tracefs_list_free(char** list);
int tracefs_load_cmdlines(const char* tracing_dir, struct tep_handle* tep);
struct tracefs_cpu* tracefs_cpu_alloc_fd(int fd, int subbuf_size, bool nonblock);
void tracefs_cpu_close(struct tracefs_cpu* tcpu);
int tracefs_cpu_read(struct tracefs_cpu* tcpu, void* buffer, bool nonblock);
}
#endif

namespace rtpulse::trace {

std::string_view EventSetName(EventSet set) {
  return set == EventSet::kFull ? "full" : "lean";
}

std::optional<EventSet> ParseEventSet(std::string_view text) {
  if (text == "lean") return EventSet::kLean;
  if (text == "full") return EventSet::kFull;
  return std::nullopt;
}

bool TracingCompiledIn() {
  return RTPULSE_HAVE_TRACEFS != 0;
}

#if RTPULSE_HAVE_TRACEFS

// Not anonymous: TraceSession::Impl holds these types, and a unity build (the sanitizer and
// arm64 stages) would then give Impl members of internal-linkage types (-Wsubobject-linkage).
inline namespace session_internal {

constexpr const char* kSessionMountFix = "mount -t tracefs nodev /sys/kernel/tracing";

/// Instance names in use by this process's sessions: slot 0 is "rtpulse-PID", slot K
/// "rtpulse-PID-K" (an explainer and a timerlat measurement may each hold one).
std::mutex g_session_slots_mu;
std::vector<bool> g_session_slots;

int TakeSessionSlot() {
  std::lock_guard<std::mutex> lock(g_session_slots_mu);
  for (size_t i = 0; i < g_session_slots.size(); ++i) {
    if (!g_session_slots[i]) {
      g_session_slots[i] = true;
      return static_cast<int>(i);
    }
  }
  g_session_slots.push_back(true);
  return static_cast<int>(g_session_slots.size() - 1);
}

void ReleaseSessionSlot(int slot) {
  std::lock_guard<std::mutex> lock(g_session_slots_mu);
  if (slot >= 0 && static_cast<size_t>(slot) < g_session_slots.size()) {
    g_session_slots[static_cast<size_t>(slot)] = false;
  }
}

bool SessionFileExists(const std::string& path, int* error_out) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return true;
  if (error_out != nullptr) *error_out = errno;
  return false;
}

#if RTPULSE_HAVE_TRACEFS
/// What libtracefs' tracefs_local_events_system() loads for decoding (the ring buffer's header
/// page, the formats of `systems`' events, the kernel's symbols, the saved comms), but with
/// /proc/kallsyms read in one go: libtracefs grows its buffer 4 KiB at a time, and under the
/// sanitizers every realloc copies, so its 5 MB took 14 s (ASan) to over a minute (TSan) per
/// session start. Nullptr when the header page cannot be read.
tep_handle* SessionLoadEvents(const std::string& dir, const char* const* systems) {
  tep_handle* tep = tep_alloc();
  if (tep == nullptr) return nullptr;
  auto header = ReadWholeFile(dir + "/events/header_page");
  if (!header) {
    tep_free(tep);
    return nullptr;
  }
  (void)tep_parse_header_page(tep, header->data(), header->size(), sizeof(long));
  for (const char* const* system = systems; *system != nullptr; ++system) {
    char** events = tracefs_system_events(dir.c_str(), *system);
    if (events == nullptr) continue;  // not in this kernel
    for (char** event = events; *event != nullptr; ++event) {
      const auto format =
          ReadWholeFile(fmt::format("{}/events/{}/{}/format", dir, *system, *event));
      // A format the parser does not know only loses that event, as in libtracefs.
      if (format) (void)tep_parse_event(tep, format->data(), format->size(), *system);
    }
    tracefs_list_free(events);
  }
  if (const auto symbols = ReadWholeFile("/proc/kallsyms")) {
    (void)tep_parse_kallsyms(tep, symbols->c_str());
  }
  (void)tracefs_load_cmdlines(dir.c_str(), tep);
  return tep;
}
#endif

/// Writes `value` to a tracefs control file; returns errno (0 = ok).
int SessionWriteFile(const std::string& path, std::string_view value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int error = n < 0 ? errno : (static_cast<size_t>(n) == value.size() ? 0 : EIO);
  ::close(fd);
  return error;
}

bool SessionPermissionError(int error) {
  return error == EACCES || error == EPERM;
}

std::string SessionPermissionFix() {
  return "run rtpulse as root (or with CAP_SYS_ADMIN): tracefs is only open to root";
}

/// tracing_cpumask's format: 32-bit hex groups, most significant first, comma separated.
std::string SessionCpuMask(const std::vector<int>& cpus) {
  int max_cpu = 0;
  for (int cpu : cpus) max_cpu = std::max(max_cpu, cpu);
  std::vector<uint32_t> groups(static_cast<size_t>(max_cpu / 32 + 1), 0);
  for (int cpu : cpus) groups[static_cast<size_t>(cpu / 32)] |= 1U << (cpu % 32);
  std::string mask;
  for (size_t i = groups.size(); i-- > 0;) {
    if (!mask.empty()) mask += ',';
    mask +=
        i + 1 == groups.size() ? fmt::format("{:x}", groups[i]) : fmt::format("{:08x}", groups[i]);
  }
  return mask;
}

bool SessionProcessAlive(int pid) {
  return kill(pid, 0) == 0 || errno == EPERM;
}

/// Removes "rtpulse-N" instances whose process N is gone (a SIGKILLed run leaves one).
void SessionRemoveStaleInstances(const std::string& instances_dir) {
  DIR* dir = opendir(instances_dir.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    constexpr std::string_view kPrefix = "rtpulse-";
    if (name.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string_view digits = name.substr(kPrefix.size());
    int pid = 0;
    const char* const last = digits.data() + digits.size();
    auto [end, ec] = std::from_chars(digits.data(), last, pid);
    if (ec != std::errc() || pid <= 0) continue;
    if (end != last) {  // "rtpulse-PID-K"
      int slot = 0;
      if (*end != '-') continue;
      const auto [slot_end, slot_ec] = std::from_chars(end + 1, last, slot);
      if (slot_ec != std::errc() || slot_end != last) continue;
    }
    if (pid == getpid() || SessionProcessAlive(pid)) continue;
    stale.emplace_back(name);
  }
  closedir(dir);
  for (const std::string& name : stale) (void)rmdir((instances_dir + "/" + name).c_str());
}

/// The events of event.h as (system, event); irq_vectors and ipi are enabled per system.
/// `lean`: read by the attribution (attribution.cc: sched_switch, sched_waking, the hard-IRQ
/// and softirq frames, softirq_raise for the deferred chain, hrtimer_expire_entry for "timer
/// irq"); the others only in EventSet::kFull.
struct SessionWantedEvent {
  const char* system;
  const char* event;
  bool lean;
};
constexpr SessionWantedEvent kSessionEvents[] = {
    {"sched", "sched_switch", true},
    {"sched", "sched_waking", true},
    {"sched", "sched_wakeup", false},
    // A thread's name at the spike: an exec or a prctl renames it while it runs (no switch).
    {"task", "task_rename", true},
    {"irq", "irq_handler_entry", true},
    {"irq", "irq_handler_exit", true},
    {"irq", "softirq_raise", true},
    {"irq", "softirq_entry", true},
    {"irq", "softirq_exit", true},
    {"timer", "hrtimer_start", false},
    {"timer", "hrtimer_expire_entry", true},
    {"timer", "hrtimer_expire_exit", false},
    {"workqueue", "workqueue_execute_start", false},
    {"workqueue", "workqueue_execute_end", false},
    {"power", "cpu_idle", false},
};

std::vector<std::string> SessionListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

constexpr const char* kSessionSoftirqNames[] = {"HI",       "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
                                                "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU"};

void SessionCopyName(std::array<char, 32>& out, std::string_view text) {
  const size_t n = std::min(text.size(), out.size() - 1);
  // An empty view may hold a null pointer (a field the event lacks): memcpy must not see it.
  if (n > 0) std::memcpy(out.data(), text.data(), n);
  out[n] = '\0';
}

/// Field offsets of one event id, looked up once.
struct SessionEventDecoder {
  EventKind kind = EventKind::kOther;
  tep_event* event = nullptr;
  tep_format_field* common_pid = nullptr;
  tep_format_field* f[8] = {};  // meaning depends on kind (see MakeDecoder)
  std::string vector_name;      // irq_vectors: event name without _entry/_exit
  bool timerlat = false;
};

struct SessionStoredEvent {
  TraceEvent ev;
  uint64_t raw_pos = 0;  ///< Absolute position in the CPU's raw byte store.
  uint32_t raw_len = 0;
};

/// When the kernel reported lost events: between the previous read's last event and this one.
struct SessionLostSpan {
  int64_t from_ns;
  int64_t to_ns;
};

struct SessionCpuStore {
  int cpu = 0;
  tracefs_cpu* tcpu = nullptr;
  kbuffer* kbuf = nullptr;
  std::deque<SessionStoredEvent> events;
  std::deque<char> raw;
  uint64_t raw_base = 0;  ///< Absolute position of raw.front().
  int64_t newest_ns = std::numeric_limits<int64_t>::min();
  int64_t dropped_newest_ns = std::numeric_limits<int64_t>::min();
  std::deque<SessionLostSpan> lost;
  uint64_t missed_reported = 0;        ///< kbuffer_missed_events sums.
  bool missed_unknown = false;         ///< A sub-buffer said "missed" without a count.
  uint64_t unreadable_subbuffers = 0;  ///< Sub-buffers kbuffer could not load.
};

uint64_t SessionReadNumber(tep_format_field* field, const void* data) {
  unsigned long long value = 0;
  if (field == nullptr || tep_read_number_field(field, data, &value) != 0) return 0;
  return value;
}

void SessionReadComm(tep_format_field* field, const void* data, int size, Comm& out) {
  out.fill('\0');
  if (field == nullptr || field->offset + field->size > size) return;
  const size_t n = std::min(static_cast<size_t>(field->size), out.size() - 1);
  std::memcpy(out.data(), static_cast<const char*>(data) + field->offset, n);
  out[out.size() - 1] = '\0';
}

/// A __data_loc / char[] string field.
std::string_view SessionReadString(tep_format_field* field, const void* data, int size) {
  if (field == nullptr) return {};
  const char* base = static_cast<const char*>(data);
  if ((field->flags & TEP_FIELD_IS_DYNAMIC) != 0) {
    const uint64_t loc = SessionReadNumber(field, data);
    int offset = static_cast<int>(loc & 0xffff);
    const int len = static_cast<int>((loc >> 16) & 0xffff);
    if ((field->flags & TEP_FIELD_IS_RELATIVE) != 0) offset += field->offset + field->size;
    if (offset < 0 || offset + len > size) return {};
    return std::string_view(base + offset, strnlen(base + offset, static_cast<size_t>(len)));
  }
  if (field->offset + field->size > size) return {};
  return std::string_view(base + field->offset,
                          strnlen(base + field->offset, static_cast<size_t>(field->size)));
}

/// One stored event of a window and the CPU store it is in.
struct SessionWindowLine {
  const SessionCpuStore* store;
  const SessionStoredEvent* event;
};

}  // namespace session_internal

struct TraceSession::Impl {
  /// RenderWindow()'s text; call with `mu` held.
  std::string RenderWindowLocked(int64_t from_ns, int64_t to_ns,
                                 const std::vector<int>& wanted_cpus) const;

  SessionPlan plan;
  std::string dir;           ///< tracefs mount.
  std::string instance_dir;  ///< dir/instances/name.
  std::string name;
  bool instance_created = false;
  int slot = -1;
  tep_handle* tep = nullptr;
  tracefs_instance* instance = nullptr;
  int subbuf_size = 4096;
  std::vector<char> buffer;
  std::vector<SessionCpuStore> cpus;
  std::unordered_map<int, SessionEventDecoder> decoders;
  std::unordered_map<int, Comm> comms;
  std::function<void(const TraceEvent&)> timerlat_callback;
  SessionStats stats;

  mutable std::mutex mu;  ///< Store, tep handle, decoders, reads.
  std::thread reader;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  std::atomic<int64_t> reader_cpu_ns{0};

  ~Impl() { Teardown(); }

  /// raw_syscalls sys_enter/sys_exit filtered to exactly `pids` (the filter written before
  /// the event is enabled, so no unfiltered syscall is recorded); a later call replaces it.
  Status ApplySyscallFilter(const std::vector<int>& pids);

  // TraceSession::Open's steps, in order.
  Status CheckTimerlatTracer() const;
  Status CreateInstance();
  Status WriteInstanceFile(const std::string& file, const std::string& value) const;
  /// trace_clock mono, the buffer size and the CPU mask; `cpus` gets the CPUs traced.
  Status SetClockBufferAndCpus(std::vector<int>& cpus);
  Status EnableEvent(const std::string& system, const std::string& event);
  Status EnableEvents();
  Status LoadFormats();
  Status OpenReaders(const std::vector<int>& cpus);

  void Teardown() {
    StopReaderThread();
    for (SessionCpuStore& store : cpus) {
      if (store.tcpu != nullptr) tracefs_cpu_close(store.tcpu);
      if (store.kbuf != nullptr) kbuffer_free(store.kbuf);
      store.tcpu = nullptr;
      store.kbuf = nullptr;
    }
    if (instance_created) {
      (void)SessionWriteFile(instance_dir + "/tracing_on", "0");
      if (plan.timerlat) (void)SessionWriteFile(instance_dir + "/current_tracer", "nop");
      (void)rmdir(instance_dir.c_str());
      instance_created = false;
    }
    if (instance != nullptr) tracefs_instance_free(instance);
    instance = nullptr;
    if (tep != nullptr) tep_free(tep);
    tep = nullptr;
    ReleaseSessionSlot(slot);
    slot = -1;
  }

  void StopReaderThread() {
    if (!reader.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(stop_mu);
      stop = true;
    }
    stop_cv.notify_all();
    reader.join();
  }

  const SessionEventDecoder& Decoder(int id) {
    auto it = decoders.find(id);
    if (it != decoders.end()) return it->second;
    return decoders.emplace(id, MakeDecoder(id)).first->second;
  }

  SessionEventDecoder MakeDecoder(int id) {
    SessionEventDecoder d;
    d.event = tep_find_event(tep, id);
    if (d.event == nullptr) return d;
    d.common_pid = tep_find_common_field(d.event, "common_pid");
    const std::string_view system = d.event->system;
    const std::string_view event_name = d.event->name;
    auto field = [&](const char* n) { return tep_find_field(d.event, n); };
    if (system == "sched" && event_name == "sched_switch") {
      d.kind = EventKind::kSchedSwitch;
      d.f[0] = field("prev_comm");
      d.f[1] = field("prev_pid");
      d.f[2] = field("prev_prio");
      d.f[3] = field("prev_state");
      d.f[4] = field("next_comm");
      d.f[5] = field("next_pid");
      d.f[6] = field("next_prio");
    } else if (system == "sched" &&
               (event_name == "sched_waking" || event_name == "sched_wakeup")) {
      d.kind = event_name == "sched_waking" ? EventKind::kSchedWaking : EventKind::kSchedWakeup;
      d.f[0] = field("comm");
      d.f[1] = field("pid");
      d.f[2] = field("prio");
      d.f[3] = field("target_cpu");
    } else if (system == "irq" &&
               (event_name == "irq_handler_entry" || event_name == "irq_handler_exit")) {
      d.kind = event_name == "irq_handler_entry" ? EventKind::kIrqEntry : EventKind::kIrqExit;
      d.f[0] = field("irq");
      d.f[1] = field("name");
    } else if (system == "irq" && event_name.substr(0, 8) == "softirq_") {
      d.kind = event_name == "softirq_raise"   ? EventKind::kSoftirqRaise
               : event_name == "softirq_entry" ? EventKind::kSoftirqEntry
                                               : EventKind::kSoftirqExit;
      d.f[0] = field("vec");
    } else if (system == "irq_vectors" &&
               (event_name.ends_with("_entry") || event_name.ends_with("_exit"))) {
      const bool entry = event_name.ends_with("_entry");
      d.kind = entry ? EventKind::kVectorEntry : EventKind::kVectorExit;
      d.vector_name = std::string(event_name.substr(0, event_name.size() - (entry ? 6 : 5)));
      d.f[0] = field("vector");
    } else if (system == "timer" && event_name == "hrtimer_start") {
      d.kind = EventKind::kHrtimerStart;
      d.f[0] = field("hrtimer");
      d.f[1] = field("function");
      d.f[2] = field("expires");
    } else if (system == "timer" && event_name == "hrtimer_expire_entry") {
      d.kind = EventKind::kHrtimerExpireEntry;
      d.f[0] = field("hrtimer");
      d.f[1] = field("function");
    } else if (system == "timer" && event_name == "hrtimer_expire_exit") {
      d.kind = EventKind::kHrtimerExpireExit;
      d.f[0] = field("hrtimer");
    } else if (system == "ipi") {
      d.kind = EventKind::kIpi;
      d.f[0] = field("cpu");
      d.f[1] = field("callback");
      d.f[2] = field("reason");
    } else if (system == "workqueue" &&
               (event_name == "workqueue_execute_start" || event_name == "workqueue_execute_end")) {
      d.kind =
          event_name == "workqueue_execute_start" ? EventKind::kWorkStart : EventKind::kWorkEnd;
      d.f[0] = field("work");
      d.f[1] = field("function");
    } else if (system == "raw_syscalls" &&
               (event_name == "sys_enter" || event_name == "sys_exit")) {
      d.kind = event_name == "sys_enter" ? EventKind::kSyscallEnter : EventKind::kSyscallExit;
      d.f[0] = field("id");
    } else if (system == "power" && event_name == "cpu_idle") {
      d.kind = EventKind::kCpuIdle;
      d.f[0] = field("state");
    } else if (system == "task" && event_name == "task_rename") {
      d.kind = EventKind::kTaskRename;
      d.f[0] = field("pid");  // Absent in later kernels: the task renaming itself is common_pid.
      d.f[1] = field("newcomm");
    } else if (system == "ftrace" && event_name == "timerlat") {
      d.kind = EventKind::kTimerlat;
      d.f[0] = field("seqnum");
      d.f[1] = field("context");
      d.f[2] = field("timer_latency");
    }
    return d;
  }

  void SetFunctionName(TraceEvent& ev, uint64_t address) {
    const char* symbol = tep_find_function(tep, address);
    if (symbol != nullptr) {
      SessionCopyName(ev.name, symbol);
    } else if (address != 0) {
      SessionCopyName(ev.name, fmt::format("0x{:x}", address));
    }
  }

  void LearnComm(int pid, const Comm& comm) {
    if (comm[0] != '\0') comms[pid] = comm;
  }

  /// Decodes one record into `ev`; returns false for records without an event (padding).
  bool Decode(int cpu, uint64_t ts, void* data, int size, TraceEvent& ev) {
    tep_record record{};
    record.ts = ts;
    record.data = data;
    record.size = size;
    record.cpu = cpu;
    const int id = tep_data_type(tep, &record);
    const SessionEventDecoder& d = Decoder(id);
    ev = TraceEvent{};
    ev.ts_ns = static_cast<int64_t>(ts);
    ev.cpu = cpu;
    ev.kind = d.kind;
    ev.pid = static_cast<int32_t>(SessionReadNumber(d.common_pid, data));
    switch (d.kind) {
      case EventKind::kSchedSwitch:
        SessionReadComm(d.f[0], data, size, ev.prev_comm);
        ev.prev_pid = static_cast<int32_t>(SessionReadNumber(d.f[1], data));
        ev.prev_prio = static_cast<int32_t>(SessionReadNumber(d.f[2], data));
        // Since 4.14 a preempted task is reported as TASK_REPORT_MAX (0x100, printed "R+"),
        // the states proper in the bits below it: event.h's contract is 0 = preempted.
        ev.prev_state = static_cast<int64_t>(SessionReadNumber(d.f[3], data) & 0xff);
        SessionReadComm(d.f[4], data, size, ev.next_comm);
        ev.next_pid = static_cast<int32_t>(SessionReadNumber(d.f[5], data));
        ev.next_prio = static_cast<int32_t>(SessionReadNumber(d.f[6], data));
        LearnComm(ev.prev_pid, ev.prev_comm);
        LearnComm(ev.next_pid, ev.next_comm);
        break;
      case EventKind::kSchedWaking:
      case EventKind::kSchedWakeup:
        SessionReadComm(d.f[0], data, size, ev.next_comm);
        ev.next_pid = static_cast<int32_t>(SessionReadNumber(d.f[1], data));
        ev.next_prio = static_cast<int32_t>(SessionReadNumber(d.f[2], data));
        ev.target_cpu = static_cast<int32_t>(SessionReadNumber(d.f[3], data));
        LearnComm(ev.next_pid, ev.next_comm);
        break;
      case EventKind::kIrqEntry:
      case EventKind::kIrqExit:
        ev.number = static_cast<int32_t>(SessionReadNumber(d.f[0], data));
        SessionCopyName(ev.name, SessionReadString(d.f[1], data, size));
        break;
      case EventKind::kSoftirqRaise:
      case EventKind::kSoftirqEntry:
      case EventKind::kSoftirqExit: {
        ev.number = static_cast<int64_t>(SessionReadNumber(d.f[0], data));
        const size_t n = sizeof(kSessionSoftirqNames) / sizeof(kSessionSoftirqNames[0]);
        if (ev.number >= 0 && static_cast<size_t>(ev.number) < n) {
          SessionCopyName(ev.name, kSessionSoftirqNames[ev.number]);
        }
        break;
      }
      case EventKind::kVectorEntry:
      case EventKind::kVectorExit:
        ev.number = static_cast<int32_t>(SessionReadNumber(d.f[0], data));
        SessionCopyName(ev.name, d.vector_name);
        break;
      case EventKind::kHrtimerStart:
        ev.address = SessionReadNumber(d.f[0], data);
        SetFunctionName(ev, SessionReadNumber(d.f[1], data));
        ev.expires_ns = static_cast<int64_t>(SessionReadNumber(d.f[2], data));
        break;
      case EventKind::kHrtimerExpireEntry:
        ev.address = SessionReadNumber(d.f[0], data);
        SetFunctionName(ev, SessionReadNumber(d.f[1], data));
        break;
      case EventKind::kHrtimerExpireExit:
        ev.address = SessionReadNumber(d.f[0], data);
        break;
      case EventKind::kIpi:
        ev.number = d.f[0] != nullptr ? static_cast<int64_t>(SessionReadNumber(d.f[0], data)) : -1;
        if (d.f[1] != nullptr) {
          SetFunctionName(ev, SessionReadNumber(d.f[1], data));
        } else {
          SessionCopyName(ev.name, d.event->name);
        }
        break;
      case EventKind::kWorkStart:
      case EventKind::kWorkEnd:
        ev.address = SessionReadNumber(d.f[0], data);
        if (d.f[1] != nullptr) SetFunctionName(ev, SessionReadNumber(d.f[1], data));
        break;
      case EventKind::kSyscallEnter:
      case EventKind::kSyscallExit:
        ev.number = static_cast<int64_t>(SessionReadNumber(d.f[0], data));
        break;
      case EventKind::kCpuIdle:
        ev.number = static_cast<int32_t>(static_cast<uint32_t>(SessionReadNumber(d.f[0], data)));
        break;
      case EventKind::kTaskRename:
        ev.next_pid =
            d.f[0] != nullptr ? static_cast<int32_t>(SessionReadNumber(d.f[0], data)) : ev.pid;
        SessionReadComm(d.f[1], data, size, ev.next_comm);
        LearnComm(ev.next_pid, ev.next_comm);
        break;
      case EventKind::kTimerlat:
        ev.number = static_cast<int64_t>(SessionReadNumber(d.f[0], data));
        ev.timerlat_context = static_cast<int32_t>(SessionReadNumber(d.f[1], data));
        ev.timerlat_latency_ns = static_cast<int64_t>(SessionReadNumber(d.f[2], data));
        break;
      case EventKind::kOther:
        if (d.event != nullptr) SessionCopyName(ev.name, d.event->name);
        break;
    }
    return true;
  }

  void Store(SessionCpuStore& store, const TraceEvent& ev, const void* data, int size) {
    SessionStoredEvent stored;
    stored.ev = ev;
    stored.raw_pos = store.raw_base + store.raw.size();
    stored.raw_len = static_cast<uint32_t>(size);
    const char* bytes = static_cast<const char*>(data);
    store.raw.insert(store.raw.end(), bytes, bytes + size);
    store.events.push_back(stored);
    store.newest_ns = std::max(store.newest_ns, ev.ts_ns);
  }

  void Trim(SessionCpuStore& store) {
    if (store.newest_ns == std::numeric_limits<int64_t>::min()) return;  // nothing stored yet
    const int64_t keep_from = store.newest_ns - plan.retention_ns;
    while (!store.events.empty() && (store.events.front().ev.ts_ns < keep_from ||
                                     store.events.size() > plan.max_events_per_cpu)) {
      const SessionStoredEvent& front = store.events.front();
      store.dropped_newest_ns = std::max(store.dropped_newest_ns, front.ev.ts_ns);
      const uint64_t end = front.raw_pos + front.raw_len;
      store.events.pop_front();
      const uint64_t next =
          store.events.empty() ? store.raw_base + store.raw.size() : store.events.front().raw_pos;
      const uint64_t drop =
          std::min<uint64_t>(std::max(end, next) - store.raw_base, store.raw.size());
      store.raw.erase(store.raw.begin(), store.raw.begin() + static_cast<ptrdiff_t>(drop));
      store.raw_base += drop;
    }
    while (!store.lost.empty() && store.lost.front().to_ns < keep_from) store.lost.pop_front();
  }

  /// Parses one sub-buffer read from `store`'s trace_pipe_raw.
  void ParseSubbuffer(SessionCpuStore& store, int bytes) {
    stats.bytes_read += static_cast<uint64_t>(bytes);
    if (kbuffer_load_subbuffer(store.kbuf, buffer.data()) < 0) {
      // Its events are gone for us: a gap from the last event to the next one read.
      ++store.unreadable_subbuffers;
      store.missed_unknown = true;
      store.lost.push_back({store.newest_ns, std::numeric_limits<int64_t>::max()});
      return;
    }
    const int missed = kbuffer_missed_events(store.kbuf);
    unsigned long long ts = 0;
    void* data = kbuffer_read_event(store.kbuf, &ts);
    if (data != nullptr && !store.lost.empty() &&
        store.lost.back().to_ns == std::numeric_limits<int64_t>::max()) {
      store.lost.back().to_ns = static_cast<int64_t>(ts);
    }
    if (missed != 0) {
      if (missed > 0) {
        store.missed_reported += static_cast<uint64_t>(missed);
      } else {
        store.missed_unknown = true;
      }
      const int64_t first = data != nullptr ? static_cast<int64_t>(ts) : store.newest_ns;
      store.lost.push_back({store.newest_ns, first});
    }
    while (data != nullptr) {
      const int size = kbuffer_event_size(store.kbuf);
      TraceEvent ev;
      if (Decode(store.cpu, ts, data, size, ev)) {
        Store(store, ev, data, size);
        ++stats.events_read;
        if (ev.kind == EventKind::kTimerlat && timerlat_callback) timerlat_callback(ev);
      }
      data = kbuffer_next_event(store.kbuf, &ts);
    }
  }

  /// Reads what the kernel holds for one CPU now. Caller holds mu.
  void ReadCpu(SessionCpuStore& store) {
    // A bound, so a flood cannot keep the reader here forever: one buffer's worth of pages.
    const size_t max_reads = plan.buffer_kb_per_cpu * 1024 / static_cast<size_t>(subbuf_size) + 16;
    for (size_t i = 0; i < max_reads; ++i) {
      const int n = tracefs_cpu_read(store.tcpu, buffer.data(), true);
      if (n <= 0) break;
      ParseSubbuffer(store, n);
    }
    Trim(store);
  }

  void ReadAll() {
    for (SessionCpuStore& store : cpus) ReadCpu(store);
  }

  void ReaderLoop() {
    pthread_setname_np(pthread_self(), "rtpulse-trace");
    (void)LeaveMeasuredCpus(plan.cpus);
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(stop_mu);
        if (stop_cv.wait_for(lock, std::chrono::nanoseconds(plan.read_interval_ns),
                             [this] { return stop; })) {
          break;
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        ReadAll();
      }
      timespec t{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      reader_cpu_ns.store(static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec);
    }
    std::lock_guard<std::mutex> lock(mu);
    ReadAll();
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    reader_cpu_ns.store(static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec);
  }

  /// The kernel's own count of events it could not keep (per_cpu/cpuN/stats).
  uint64_t KernelOverruns(int cpu) const {
    const auto text = ReadWholeFile(fmt::format("{}/per_cpu/cpu{}/stats", instance_dir, cpu));
    if (!text) return 0;
    uint64_t total = 0;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      for (std::string_view key : {"overrun: ", "commit overrun: ", "dropped events: "}) {
        if (line.rfind(key, 0) == 0) {
          uint64_t value = 0;
          const char* begin = line.data() + key.size();
          std::from_chars(begin, line.data() + line.size(), value);
          total += value;
        }
      }
    }
    return total;
  }

  std::string CommOf(int pid) const {
    if (pid == 0) return "<idle>";
    auto it = comms.find(pid);
    if (it == comms.end()) return "<...>";
    return std::string(it->second.data());
  }
};

TraceSession::TraceSession() : impl_(std::make_unique<Impl>()) {}
TraceSession::~TraceSession() = default;

namespace {

/// tracefs mount point for `plan` or an error naming the mount command / root.
Expected<std::string> SessionFindTracefs(const std::string& wanted, std::string& mount_note) {
  std::vector<std::string> candidates;
  if (!wanted.empty()) {
    candidates.push_back(wanted);
  } else {
    MountTracefsIfAbsent();  // as root, when nobody has
    mount_note = TracefsMountNote();
    candidates.assign(std::begin(kTracefsDirs), std::end(kTracefsDirs));
  }
  for (const std::string& dir : candidates) {
    int error = 0;
    if (SessionFileExists(dir + "/tracing_on", &error)) return dir;
    if (SessionPermissionError(error)) {
      return ResourceError(
          fmt::format("cannot open the kernel trace at {}: permission denied "
                      "(fix: {})",
                      dir, SessionPermissionFix()));
    }
  }
  return ResourceError(
      fmt::format("no tracefs at {} (fix: {}, as root; the kernel needs CONFIG_FTRACE)",
                  wanted.empty() ? std::string("/sys/kernel/tracing") : wanted, kSessionMountFix));
}

Error SessionWriteError(const std::string& path, std::string_view value, int error) {
  if (SessionPermissionError(error)) {
    return ResourceError(fmt::format("cannot write '{}' to {}: {} (fix: {})", value, path,
                                     std::strerror(error), SessionPermissionFix()));
  }
  return ResourceError(
      fmt::format("cannot write '{}' to {}: {}", value, path, std::strerror(error)));
}

}  // namespace

Status TraceSession::Impl::CheckTimerlatTracer() const {
  if (!plan.timerlat) return Status::Ok();
  const auto tracers = ReadWholeFile(dir + "/available_tracers").value_or("");
  std::istringstream words(tracers);
  std::string word;
  bool found = false;
  while (words >> word) found = found || word == "timerlat";
  if (!found) {
    return ResourceError(
        "the kernel has no timerlat tracer (not in " + dir +
        "/available_tracers: built without CONFIG_TIMERLAT_TRACER); fix: a kernel with "
        "CONFIG_TIMERLAT_TRACER=y, or another --wake path");
  }
  return Status::Ok();
}

Status TraceSession::Impl::CreateInstance() {
  SessionRemoveStaleInstances(dir + "/instances");
  if (SessionFileExists(instance_dir, nullptr) && rmdir(instance_dir.c_str()) != 0) {
    return ResourceError(fmt::format(
        "the trace instance {} is busy ({}): another tracer holds it (fix: close the reader "
        "of {}, or rmdir it)",
        instance_dir, std::strerror(errno), instance_dir));
  }
  if (mkdir(instance_dir.c_str(), 0700) != 0) {
    const int error = errno;
    if (SessionPermissionError(error)) {
      return ResourceError(fmt::format("cannot create the trace instance {}: {} (fix: {})",
                                       instance_dir, std::strerror(error), SessionPermissionFix()));
    }
    return ResourceError(
        fmt::format("cannot create the trace instance {}: {}", instance_dir, std::strerror(error)));
  }
  instance_created = true;
  instance = tracefs_instance_alloc(dir.c_str(), name.c_str());
  if (instance == nullptr) {
    return ResourceError(fmt::format("libtracefs cannot open the instance {}", instance_dir));
  }
  return WriteInstanceFile("tracing_on", "0");
}

Status TraceSession::Impl::WriteInstanceFile(const std::string& file,
                                             const std::string& value) const {
  const std::string path = instance_dir + "/" + file;
  const int error = SessionWriteFile(path, value);
  if (error != 0) return SessionWriteError(path, value, error);
  return Status::Ok();
}

Status TraceSession::Impl::SetClockBufferAndCpus(std::vector<int>& traced) {
  const std::string clocks = ReadWholeFile(instance_dir + "/trace_clock").value_or("");
  std::istringstream words(clocks);
  std::string word;
  bool mono = false;
  while (words >> word) mono = mono || word == "mono" || word == "[mono]";
  if (!mono) {
    return ResourceError(fmt::format(
        "the kernel has no 'mono' trace clock (trace_clock offers: {}): the trace cannot "
        "line up with CLOCK_MONOTONIC; fix: a kernel of 4.0 or newer",
        clocks.empty() ? std::string("nothing") : clocks.substr(0, clocks.find('\n'))));
  }
  if (Status st = WriteInstanceFile("trace_clock", "mono"); !st) return st;
  if (Status st = WriteInstanceFile("buffer_size_kb", std::to_string(plan.buffer_kb_per_cpu));
      !st) {
    return st;
  }
  traced = plan.cpus.empty() ? OnlineCpus(FsRoot::Live()) : plan.cpus;
  std::sort(traced.begin(), traced.end());
  traced.erase(std::unique(traced.begin(), traced.end()), traced.end());
  if (!plan.cpus.empty()) return WriteInstanceFile("tracing_cpumask", SessionCpuMask(traced));
  return Status::Ok();
}

/// The event if this kernel has it, else recorded as missing.
Status TraceSession::Impl::EnableEvent(const std::string& system, const std::string& event) {
  const std::string id = system + ":" + event;
  if (!SessionFileExists(dir + "/events/" + system + "/" + event + "/format", nullptr)) {
    stats.events_missing.push_back(id);
    return Status::Ok();
  }
  if (tracefs_event_file_write(instance, system.c_str(), event.c_str(), "enable", "1") < 0) {
    return SessionWriteError(instance_dir + "/events/" + id + "/enable", "1", errno);
  }
  stats.events_enabled.push_back(id);
  return Status::Ok();
}

Status TraceSession::Impl::EnableEvents() {
  const bool full = plan.events == EventSet::kFull;
  stats.event_set = std::string(EventSetName(plan.events));
  for (const SessionWantedEvent& wanted : kSessionEvents) {
    if (!full && !wanted.lean) continue;
    if (Status st = EnableEvent(wanted.system, wanted.event); !st) return st;
  }
  // irq_vectors: hard-IRQ frames (lean); ipi: only who sent which IPI (full).
  for (const char* system : {"irq_vectors", "ipi"}) {
    if (!full && std::string_view(system) == "ipi") continue;
    std::vector<std::string> events;
    for (const std::string& event : SessionListDir(dir + "/events/" + system)) {
      const bool vector = std::string_view(system) == "irq_vectors";
      if (vector && !(std::string_view(event).ends_with("_entry") ||
                      std::string_view(event).ends_with("_exit"))) {
        continue;
      }
      if (!SessionFileExists(dir + "/events/" + system + "/" + event + "/format", nullptr)) {
        continue;
      }
      events.push_back(event);
    }
#if defined(__x86_64__) || defined(__i386__)
    const bool expected = true;
#else
    const bool expected = std::string_view(system) == "ipi";
#endif
    if (events.empty() && expected) stats.events_missing.push_back(std::string(system) + ":*");
    for (const std::string& event : events) {
      if (Status st = EnableEvent(system, event); !st) return st;
    }
  }
  if (full && !plan.syscall_pids.empty()) {
    if (Status st = ApplySyscallFilter(plan.syscall_pids); !st) return st;
  }
  if (plan.timerlat) return WriteInstanceFile("current_tracer", "timerlat");
  return Status::Ok();
}

/// Formats of the kernel's events (and the header page, kallsyms) for decoding, and the
/// size of the buffer's sub-pages.
Status TraceSession::Impl::LoadFormats() {
  const char* systems[] = {"sched",     "task",  "irq",          "irq_vectors", "timer", "ipi",
                           "workqueue", "power", "raw_syscalls", "ftrace",      nullptr};
  tep = SessionLoadEvents(dir, systems);
  if (tep == nullptr) {
    return ResourceError(fmt::format("cannot read the event formats under {}/events", dir));
  }
  subbuf_size = std::max(tep_get_sub_buffer_size(tep), 4096);
  if (auto kb = ReadWholeFile(instance_dir + "/buffer_subbuf_size_kb")) {
    int value = 0;
    std::from_chars(kb->data(), kb->data() + kb->size(), value);
    subbuf_size = std::max(subbuf_size, value * 1024);
  }
  buffer.assign(static_cast<size_t>(subbuf_size), 0);
  return Status::Ok();
}

/// One raw reader per traced CPU (trace_pipe_raw, non-blocking).
Status TraceSession::Impl::OpenReaders(const std::vector<int>& traced) {
  const kbuffer_long_size lsize = tep_get_long_size(tep) == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8;
  for (int cpu : traced) {
    SessionCpuStore store;
    store.cpu = cpu;
    const std::string path = fmt::format("{}/per_cpu/cpu{}/trace_pipe_raw", instance_dir, cpu);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      return ResourceError(
          fmt::format("cannot open {}: {} (is CPU {} online?)", path, std::strerror(errno), cpu));
    }
    store.tcpu = tracefs_cpu_alloc_fd(fd, subbuf_size, true);
    if (store.tcpu == nullptr) {
      ::close(fd);
      return ResourceError(fmt::format("libtracefs cannot read {}", path));
    }
    store.kbuf = kbuffer_alloc(lsize, KBUFFER_ENDIAN_SAME_AS_HOST);
    if (store.kbuf == nullptr) {
      cpus.push_back(store);
      return Failure("out of memory for the trace reader");
    }
    if (tep_is_old_format(tep)) kbuffer_set_old_format(store.kbuf);
    cpus.push_back(store);
  }
  return Status::Ok();
}

Expected<std::unique_ptr<TraceSession>> TraceSession::Open(const SessionPlan& plan) {
  std::string mount_note;
  auto dir = SessionFindTracefs(plan.tracefs_dir, mount_note);
  if (!dir) return dir.error();
  if (plan.buffer_kb_per_cpu == 0) return UsageError("trace buffer size 0 kB: give at least 1");
  if (plan.retention_ns <= 0 || plan.read_interval_ns <= 0 || plan.max_events_per_cpu == 0) {
    return UsageError("trace retention, read interval and event bound must be positive");
  }
  std::unique_ptr<TraceSession> session(new TraceSession());
  Impl& s = *session->impl_;
  s.plan = plan;
  s.dir = *dir;
  s.slot = TakeSessionSlot();
  s.name = s.slot == 0 ? fmt::format("rtpulse-{}", getpid())
                       : fmt::format("rtpulse-{}-{}", getpid(), s.slot);
  s.instance_dir = s.dir + "/instances/" + s.name;
  s.stats.instance = s.name;
  s.stats.tracefs_dir = s.dir;
  s.stats.tracefs_mount_note = mount_note;
  // In this order; on an error the session's destructor removes what was made.
  std::vector<int> traced;
  if (Status st = s.CheckTimerlatTracer(); !st) return st.error();
  if (Status st = s.CreateInstance(); !st) return st.error();
  if (Status st = s.SetClockBufferAndCpus(traced); !st) return st.error();
  if (Status st = s.EnableEvents(); !st) return st.error();
  if (Status st = s.LoadFormats(); !st) return st.error();
  if (Status st = s.OpenReaders(traced); !st) return st.error();
  if (Status st = s.WriteInstanceFile("trace", ""); !st) return st.error();
  if (Status st = s.WriteInstanceFile("tracing_on", "1"); !st) return st.error();
  return session;
}

void TraceSession::StartReader() {
  Impl& s = *impl_;
  if (s.reader.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(s.stop_mu);
    s.stop = false;
  }
  s.reader = std::thread([&s] { s.ReaderLoop(); });
}

void TraceSession::StopReader() {
  impl_->StopReaderThread();
}

bool TraceSession::Flush(int cpu, int64_t until_ns) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  bool complete = true;
  for (SessionCpuStore& store : s.cpus) {
    if (cpu >= 0 && store.cpu != cpu) continue;
    s.ReadCpu(store);
    complete = complete && store.newest_ns >= until_ns;
  }
  return complete;
}

// The stored events of `cpus` (all when empty) with from_ns <= ts <= to_ns, each CPU's last
// sched_switch before from_ns first, all in timestamp order; `loss` (if given) says whether
// a lost-events span (kernel) or the store bound (trimmed) touches the interval. Window() and
// RenderWindow() both cut their windows here. Call with the session's lock held.
std::vector<SessionWindowLine> SessionSelectWindow(const std::vector<SessionCpuStore>& stores,
                                                   int64_t from_ns, int64_t to_ns,
                                                   const std::vector<int>& cpus, WindowLoss* loss) {
  std::vector<SessionWindowLine> lines;
  WindowLoss found;
  for (const SessionCpuStore& store : stores) {
    if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), store.cpu) == cpus.end()) continue;
    const auto& events = store.events;
    auto first =
        std::lower_bound(events.begin(), events.end(), from_ns,
                         [](const SessionStoredEvent& e, int64_t t) { return e.ev.ts_ns < t; });
    for (auto it = first; it != events.begin();) {
      --it;
      if (it->ev.kind == EventKind::kSchedSwitch) {
        lines.push_back({&store, &*it});
        break;
      }
    }
    for (auto it = first; it != events.end() && it->ev.ts_ns <= to_ns; ++it) {
      lines.push_back({&store, &*it});
    }
    for (const SessionLostSpan& span : store.lost) {
      if (span.to_ns >= from_ns && span.from_ns <= to_ns) found.kernel = true;
    }
    if (store.dropped_newest_ns >= from_ns) found.trimmed = true;
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const SessionWindowLine& a, const SessionWindowLine& b) {
                     return a.event->ev.ts_ns < b.event->ev.ts_ns;
                   });
  if (loss != nullptr) *loss = found;
  return lines;
}

std::vector<TraceEvent> TraceSession::Window(int64_t from_ns, int64_t to_ns,
                                             const std::vector<int>& cpus, WindowLoss* loss,
                                             WindowText* text) const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<TraceEvent> out;
  for (const SessionWindowLine& line : SessionSelectWindow(s.cpus, from_ns, to_ns, cpus, loss)) {
    out.push_back(line.event->ev);
  }
  if (text != nullptr) text->text = s.RenderWindowLocked(text->from_ns, text->to_ns, cpus);
  return out;
}

std::string TraceSession::RenderWindow(int64_t from_ns, int64_t to_ns,
                                       const std::vector<int>& cpus) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->RenderWindowLocked(from_ns, to_ns, cpus);
}

std::string TraceSession::Impl::RenderWindowLocked(int64_t from_ns, int64_t to_ns,
                                                   const std::vector<int>& wanted_cpus) const {
  const Impl& s = *this;
  WindowLoss loss;
  const std::vector<SessionWindowLine> lines =
      SessionSelectWindow(s.cpus, from_ns, to_ns, wanted_cpus, &loss);
  std::string cpu_list;
  for (const SessionCpuStore& store : s.cpus) {
    if (!wanted_cpus.empty() &&
        std::find(wanted_cpus.begin(), wanted_cpus.end(), store.cpu) == wanted_cpus.end())
      continue;
    cpu_list += (cpu_list.empty() ? "" : ",") + std::to_string(store.cpu);
  }
  std::string text = fmt::format(
      "# rtpulse trace window: instance {}, trace_clock mono, cpus {}, {}.{:09d} to {}.{:09d}\n"
      "# the first line per CPU may be the last sched_switch before the window\n",
      s.name, cpu_list, from_ns / 1'000'000'000, from_ns % 1'000'000'000, to_ns / 1'000'000'000,
      to_ns % 1'000'000'000);
  if (loss.kernel) text += "# LOST EVENTS: the kernel dropped events in this window\n";
  if (loss.trimmed) {
    text +=
        "# LOST EVENTS: rtpulse's trace store had already dropped the start of this window "
        "(explained too late)\n";
  }
  text += "# comm-pid [cpu] seconds: event: fields\n";
  std::vector<char> raw;
  trace_seq seq;
  trace_seq_init(&seq);
  for (const SessionWindowLine& line : lines) {
    const SessionStoredEvent& e = *line.event;
    const uint64_t begin = e.raw_pos - line.store->raw_base;
    raw.assign(line.store->raw.begin() + static_cast<ptrdiff_t>(begin),
               line.store->raw.begin() + static_cast<ptrdiff_t>(begin + e.raw_len));
    tep_record record{};
    record.ts = static_cast<unsigned long long>(e.ev.ts_ns);
    record.data = raw.data();
    record.size = static_cast<int>(e.raw_len);
    record.cpu = e.ev.cpu;
    const int id = tep_data_type(s.tep, &record);
    tep_event* event = tep_find_event(s.tep, id);
    trace_seq_reset(&seq);
    if (event != nullptr) tep_print_event(s.tep, &seq, &record, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&seq);
    std::string info(seq.buffer != nullptr ? seq.buffer : "", seq.len);
    for (char& c : info) {
      if (c == '\n') c = ' ';
    }
    text += fmt::format("{}-{} [{:03d}] {}.{:09d}: {}: {}\n", s.CommOf(e.ev.pid), e.ev.pid,
                        e.ev.cpu, e.ev.ts_ns / 1'000'000'000, e.ev.ts_ns % 1'000'000'000,
                        event != nullptr ? event->name : "unknown", info);
  }
  trace_seq_destroy(&seq);
  return text;
}

void TraceSession::SetRecording(bool on) {
  (void)SessionWriteFile(impl_->instance_dir + "/tracing_on", on ? "1" : "0");
}

Status TraceSession::Impl::ApplySyscallFilter(const std::vector<int>& pids) {
  if (plan.events != EventSet::kFull) {
    return Failure(
        "the lean event set traces no syscall (--explain-events full adds the probe's "
        "raw_syscalls)");
  }
  std::string filter;
  for (int pid : pids) {
    if (pid <= 0) continue;
    if (!filter.empty()) filter += " || ";
    filter += fmt::format("common_pid == {}", pid);
  }
  if (filter.empty()) return Failure("no probe thread id was known");
  for (const char* event : {"sys_enter", "sys_exit"}) {
    const std::string id = std::string("raw_syscalls:") + event;
    const std::string event_dir = instance_dir + "/events/raw_syscalls/" + event;
    if (!SessionFileExists(dir + "/events/raw_syscalls/" + event + "/format", nullptr)) {
      return ResourceError(
          fmt::format("this kernel has no {} (fix: a kernel with CONFIG_FTRACE_SYSCALLS=y)", id));
    }
    if (const int error = SessionWriteFile(event_dir + "/filter", filter); error != 0) {
      return SessionWriteError(event_dir + "/filter", filter, error);
    }
    if (const int error = SessionWriteFile(event_dir + "/enable", "1"); error != 0) {
      return SessionWriteError(event_dir + "/enable", "1", error);
    }
    std::lock_guard<std::mutex> lock(mu);
    if (std::find(stats.events_enabled.begin(), stats.events_enabled.end(), id) ==
        stats.events_enabled.end()) {
      stats.events_enabled.push_back(id);
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  stats.syscall_filter = filter;
  return Status::Ok();
}

Status TraceSession::SetSyscallPids(const std::vector<int>& pids) {
  return impl_->ApplySyscallFilter(pids);
}

void TraceSession::SetTimerlatCallback(std::function<void(const TraceEvent&)> callback) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->timerlat_callback = std::move(callback);
}

SessionStats TraceSession::stats() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  SessionStats out = s.stats;
  out.events_lost = 0;
  for (const SessionCpuStore& store : s.cpus) {
    // The kernel's overrun count and the sub-buffers' missed counts describe the same
    // events: the larger one (the kernel's, when a sub-buffer could not give a count).
    out.events_lost += std::max(store.missed_reported, s.KernelOverruns(store.cpu));
    if (store.missed_unknown && out.events_lost == 0) out.events_lost = 1;
  }
  out.reader_cpu_ns = s.reader_cpu_ns.load();
  return out;
}

const std::string& TraceSession::instance_dir() const {
  return impl_->instance_dir;
}

#else  // !RTPULSE_HAVE_TRACEFS

struct TraceSession::Impl {
  std::string instance_dir;
};

TraceSession::TraceSession() : impl_(std::make_unique<Impl>()) {}
TraceSession::~TraceSession() = default;

Expected<std::unique_ptr<TraceSession>> TraceSession::Open(const SessionPlan& /*plan*/) {
  return ResourceError(
      "this rtpulse was built without libtracefs (RTPULSE_TRACE=OFF): no kernel trace; fix: "
      "apt-get install libtracefs-dev libtraceevent-dev and rebuild with -DRTPULSE_TRACE=ON");
}
void TraceSession::StartReader() {}
void TraceSession::StopReader() {}
bool TraceSession::Flush(int, int64_t) {
  return false;
}
std::vector<TraceEvent> TraceSession::Window(int64_t, int64_t, const std::vector<int>&,
                                             WindowLoss* loss, WindowText* text) const {
  if (loss != nullptr) *loss = {};
  if (text != nullptr) text->text.clear();
  return {};
}
std::string TraceSession::RenderWindow(int64_t, int64_t, const std::vector<int>&) const {
  return {};
}
void TraceSession::SetRecording(bool) {}
Status TraceSession::SetSyscallPids(const std::vector<int>&) {
  return ResourceError("this rtpulse was built without libtracefs (RTPULSE_TRACE=OFF)");
}
void TraceSession::SetTimerlatCallback(std::function<void(const TraceEvent&)>) {}
SessionStats TraceSession::stats() const {
  return {};
}
const std::string& TraceSession::instance_dir() const {
  return impl_->instance_dir;
}

#endif  // RTPULSE_HAVE_TRACEFS

}  // namespace rtpulse::trace
