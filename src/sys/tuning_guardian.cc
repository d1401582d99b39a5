#include "sys/tuning_guardian.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <thread>

namespace rtpulse::sys {
namespace {

// Protocol, parent to guardian: 'S' PATH '\0' ORIGINAL '\0' per changed file; 'H' REPORT '\0'
// once the parent has written the originals back itself but has not yet written its final
// result (REPORT: what after_restore reads if the parent dies before 'D'); 'D' when the
// guardian may go. Guardian to parent: 'R' when ready.
constexpr char kRecord = 'S';
constexpr char kHandover = 'H';
constexpr char kDone = 'D';
constexpr char kReady = 'R';

/// The guardian's memory, mapped once in the child (no malloc after fork). Far above need: a
/// Raspberry Pi 5 has about 100 IRQs, a large server a few thousand, at ~60 bytes a record.
constexpr size_t kDataBytes = size_t{8} << 20;
constexpr size_t kMaxRecords = 65536;
/// How often the guardian checks that its parent still lives, in case a forked child of the
/// parent (a load worker) keeps the socket open after the parent died.
constexpr int kParentCheckMs = 500;
/// A restoration that takes longer is stuck on a kernel file: the guardian must not linger.
constexpr unsigned kRestoreLimitS = 30;
constexpr auto kReadyTimeout = std::chrono::seconds(5);
constexpr auto kExitTimeout = std::chrono::seconds(5);
/// The socket's number in the guardian after the inherited descriptors are closed.
constexpr int kGuardianFd = 3;

/// What the guardian has received: raw bytes and where each complete record starts.
struct Received {
  char* data = nullptr;
  size_t length = 0;
  size_t parsed = 0;
  uint32_t* offsets = nullptr;
  size_t count = 0;
  bool corrupt = false;
  /// After 'H': the parent's own restore report (in `data`, NUL-terminated), else nullptr.
  const char* handover = nullptr;
};

/// Indexes the complete records received so far; true once the parent said it is done.
bool ParseRecords(Received& r) {
  while (!r.corrupt && r.parsed < r.length) {
    if (r.data[r.parsed] == kDone) return true;
    if (r.data[r.parsed] == kHandover) {
      const char* text = r.data + r.parsed + 1;
      const auto* text_end = static_cast<const char*>(
          std::memchr(text, '\0', static_cast<size_t>(r.data + r.length - text)));
      if (text_end == nullptr) break;
      r.handover = text;
      r.parsed = static_cast<size_t>(text_end + 1 - r.data);
      continue;
    }
    if (r.data[r.parsed] != kRecord) {
      r.corrupt = true;  // cannot happen (one writer); keep what was indexed
      break;
    }
    const char* end = r.data + r.length;
    const char* path = r.data + r.parsed + 1;
    const auto* path_end =
        static_cast<const char*>(std::memchr(path, '\0', static_cast<size_t>(end - path)));
    if (path_end == nullptr) break;
    const char* value = path_end + 1;
    const auto* value_end =
        static_cast<const char*>(std::memchr(value, '\0', static_cast<size_t>(end - value)));
    if (value_end == nullptr) break;
    if (r.count < kMaxRecords) r.offsets[r.count++] = static_cast<uint32_t>(r.parsed);
    r.parsed = static_cast<size_t>(value_end + 1 - r.data);
  }
  return false;
}

/// Reads what is available; false on end-of-file or a broken socket.
bool ReadMore(int fd, Received& r) {
  char overflow[256];
  char* into = r.length < kDataBytes ? r.data + r.length : overflow;
  const size_t room = r.length < kDataBytes ? kDataBytes - r.length : sizeof(overflow);
  const ssize_t n = ::read(fd, into, room);
  if (n > 0) {
    if (into != overflow) r.length += static_cast<size_t>(n);
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

/// After the parent died: whatever it sent is already queued; read it without blocking (a
/// forked child of the parent may still hold the socket open, so end-of-file may never come).
bool DrainIsDone(int fd, Received& r) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  for (;;) {
    const size_t before = r.length;
    if (!ReadMore(fd, r) || r.length == before) break;
  }
  return ParseRecords(r);
}

/// Appends `text` or a number to a fixed buffer (no snprintf after fork).
struct Line {
  char text[512];
  size_t length = 0;
  void Add(const char* s) {
    while (*s != '\0' && length < sizeof(text)) text[length++] = *s++;
  }
  void Add(uint64_t n) {
    char digits[24];
    size_t count = 0;
    do {
      digits[count++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n != 0);
    while (count > 0 && length < sizeof(text)) text[length++] = digits[--count];
  }
};

/// Writes `line` whole to `fd` (a memfd: short writes only on a full memory).
void WriteLine(int fd, const Line& line) {
  size_t done = 0;
  while (done < line.length) {
    const ssize_t n = ::write(fd, line.text + done, line.length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

/// Writes every original back, newest first, and says so on the inherited stderr. With
/// `report_fd` >= 0, also writes there what after_restore reads (see the header).
void RestoreAll(const Received& r, KernelFileWriter writer, pid_t parent, int report_fd) {
  ::alarm(kRestoreLimitS);
  uint64_t failed = 0;
  int* errors = reinterpret_cast<int*>(r.offsets + kMaxRecords);
  for (size_t i = r.count; i-- > 0;) {
    const char* path = r.data + r.offsets[i] + 1;
    const char* value = path + std::strlen(path) + 1;
    errors[i] = writer(path, std::string_view(value, std::strlen(value)));
    if (errors[i] != 0) ++failed;
  }
  if (report_fd >= 0) {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    Line time;
    time.Add("T\t");
    time.Add(static_cast<uint64_t>(now.tv_sec) * 1'000'000'000U +
             static_cast<uint64_t>(now.tv_nsec));
    time.Add("\n");
    WriteLine(report_fd, time);
    for (size_t i = 0; i < r.count; ++i) {
      Line entry;
      entry.Add(static_cast<uint64_t>(errors[i]));
      entry.Add("\t");
      entry.Add(r.data + r.offsets[i] + 1);
      entry.Add("\n");
      // A path longer than the line is cut: never report it as restored under another name.
      if (entry.length < sizeof(entry.text)) WriteLine(report_fd, entry);
    }
  }
  Line line;
  line.Add("rtpulse: tuning guardian: rtpulse (pid ");
  line.Add(static_cast<uint64_t>(parent));
  line.Add(") ended without restoring its tunings; wrote ");
  line.Add(static_cast<uint64_t>(r.count - failed));
  line.Add(" original values back");
  if (failed > 0) {
    line.Add(", ");
    line.Add(failed);
    line.Add(" refused");
  }
  line.Add("\n");
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, line.text, line.length);
}

/// The guardian's line on the inherited stderr when the parent died after its own restore.
void SayHandedOver(pid_t parent) {
  Line line;
  line.Add("rtpulse: tuning guardian: rtpulse (pid ");
  line.Add(static_cast<uint64_t>(parent));
  line.Add(") ended after restoring its tunings itself, before its final result was written\n");
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, line.text, line.length);
}

/// Signals, scheduling, CPUs and descriptors of the new guardian. A Ctrl-C reaches the whole
/// foreground process group: the guardian leaves it and ignores those signals, so the parent's
/// orderly restore wins and the guardian only acts when the parent is really gone.
int PrepareGuardian(int fd, const cpu_set_t& cpus, bool pin) {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < 32; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &action, nullptr);
  }
  action.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
    ::sigaction(sig, &action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
  // Restoring files needs no real-time priority; holding the parent's would compete with the
  // measurement it protects.
  sched_param param{};
  ::sched_setscheduler(0, SCHED_OTHER, &param);
  if (pin) ::sched_setaffinity(0, sizeof(cpus), &cpus);

  if (fd != kGuardianFd) ::dup2(fd, kGuardianFd);
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(null_fd, STDOUT_FILENO);
    if (fd == STDERR_FILENO) ::dup2(null_fd, STDERR_FILENO);
  }
  // stderr stays for the one line after a restore; results files, sockets and pipes of the
  // parent must not be held open by the guardian.
  ::close_range(kGuardianFd + 1, ~0U, 0);
  return kGuardianFd;
}

/// after_restore, made ready before fork(): argv pointers into strings the parent owns (the
/// child's copy of its memory keeps them).
struct AfterRestore {
  std::vector<std::string> args;
  std::vector<char*> argv;
};

/// Execs after_restore with what RestoreAll wrote on its stdin; returns only when that fails.
void ExecAfterRestore(int report_fd, char* const* argv) {
  ::lseek(report_fd, 0, SEEK_SET);
  ::dup2(report_fd, STDIN_FILENO);
  ::close(report_fd);
  ::alarm(kRestoreLimitS);  // the same limit for recording it
  ::execv("/proc/self/exe", argv);
  const char text[] = "rtpulse: tuning guardian: cannot run rtpulse to mark the result killed\n";
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, text, sizeof(text) - 1);
}

[[noreturn]] void RunGuardian(int fd, pid_t parent, KernelFileWriter writer, const cpu_set_t& cpus,
                              bool pin, char* const* after_restore) {
  fd = PrepareGuardian(fd, cpus, pin);
  void* memory = ::mmap(nullptr, kDataBytes + kMaxRecords * (sizeof(uint32_t) + sizeof(int)),
                        PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) ::_exit(1);
  Received r;
  r.data = static_cast<char*>(memory);
  r.offsets = reinterpret_cast<uint32_t*>(r.data + kDataBytes);
  if (::write(fd, &kReady, 1) != 1) ::_exit(1);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, kParentCheckMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      if (!ReadMore(fd, r)) break;
      if (ParseRecords(r)) ::_exit(0);
    } else if (::getppid() != parent) {
      if (DrainIsDone(fd, r)) ::_exit(0);
      break;
    }
  }
  if (ParseRecords(r)) ::_exit(0);
  const int report_fd = after_restore != nullptr ? ::memfd_create("rtpulse-restored", 0) : -1;
  if (r.handover != nullptr) {
    // The parent restored every file itself and died before its final result: nothing to
    // write back, only the result to mark, with the parent's own report.
    SayHandedOver(parent);
    if (report_fd >= 0) {
      Line text;
      for (const char* c = r.handover; *c != '\0'; ++c) {
        if (text.length == sizeof(text.text)) {
          WriteLine(report_fd, text);
          text.length = 0;
        }
        text.text[text.length++] = *c;
      }
      WriteLine(report_fd, text);
      ExecAfterRestore(report_fd, after_restore);
    }
    ::_exit(0);
  }
  RestoreAll(r, writer, parent, report_fd);
  if (report_fd >= 0) ExecAfterRestore(report_fd, after_restore);
  ::_exit(0);
}

std::string ExitText(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return fmt::format("status {}", status);
}

/// Reaps `pid` within `limit`, killing it past that. "" when it exited with 0.
std::string Reap(pid_t pid, std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return "";  // reaped elsewhere (SIGCHLD ignored): nothing to wait for
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return fmt::format("did not exit within {} s and was killed",
                         std::chrono::duration_cast<std::chrono::seconds>(limit).count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return "ended with " + ExitText(status);
}

}  // namespace

int WriteKernelFile(const char* path, std::string_view content) {
  const int fd = ::open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t done = 0;
  int error = 0;
  // sysfs and procfs take a value in one write(); a short one only happens on regular files.
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  return error;
}

Expected<std::unique_ptr<TuneGuardian>> TuneGuardian::Start(
    KernelFileWriter writer, const std::vector<int>& housekeeping_cpus,
    const std::vector<std::string>& after_restore) {
  AfterRestore after;
  after.args = after_restore;
  for (auto& arg : after.args) after.argv.push_back(arg.data());
  after.argv.push_back(nullptr);
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return ResourceError(
        fmt::format("tuning guardian: socketpair: {}; nothing was tuned", std::strerror(errno)));
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  bool pin = false;
  for (int cpu : housekeeping_cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
      CPU_SET(static_cast<size_t>(cpu), &cpus);
      pin = true;
    }
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return ResourceError(
        fmt::format("tuning guardian: fork: {}; nothing was tuned", std::strerror(error)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunGuardian(fds[1], parent, writer, cpus, pin,
                after.args.empty() ? nullptr : after.argv.data());
  }
  ::close(fds[1]);
  std::unique_ptr<TuneGuardian> guardian(new TuneGuardian(pid, fds[0], parent));
  pollfd p{fds[0], POLLIN, 0};
  char reply = 0;
  const int timeout_ms = static_cast<int>(std::chrono::milliseconds(kReadyTimeout).count());
  if (::poll(&p, 1, timeout_ms) != 1 || ::read(fds[0], &reply, 1) != 1 || reply != kReady) {
    guardian->finished_ = true;
    ::close(fds[0]);
    const std::string why = Reap(pid, std::chrono::seconds(0));
    return ResourceError(fmt::format("tuning guardian (pid {}) did not start{}; nothing was tuned",
                                     pid, why.empty() ? "" : ": it " + why));
  }
  return guardian;
}

TuneGuardian::~TuneGuardian() {
  [[maybe_unused]] const Status ignored = Finish();
}

Status TuneGuardian::Remember(const std::string& path, std::string_view original) {
  if (handed_over_)
    return Failure(fmt::format("tuning guardian handed over; '{}' left alone", path));
  if (path.find('\0') != std::string::npos || original.find('\0') != std::string_view::npos) {
    return Failure(fmt::format("'{}' holds a NUL byte; the guardian cannot keep it", path));
  }
  std::string message;
  message.reserve(path.size() + original.size() + 3);
  message += kRecord;
  message += path;
  message += '\0';
  message += original;
  message += '\0';
  // Room for the final 'D'.
  if (bytes_sent_ + message.size() + 1 > kDataBytes || records_sent_ >= kMaxRecords) {
    return Failure(
        fmt::format("tuning guardian is full ({} files); '{}' left alone", records_sent_, path));
  }
  if (Status sent = Send(message); !sent) return sent;
  bytes_sent_ += message.size();
  ++records_sent_;
  return Status::Ok();
}

Status TuneGuardian::Handover(std::string_view report) {
  if (report.find('\0') != std::string_view::npos) {
    return Failure("the restore report holds a NUL byte; the guardian cannot keep it");
  }
  if (handed_over_) return Failure("tuning guardian already handed over");
  if (bytes_sent_ + report.size() + 3 > kDataBytes) {
    return Failure(fmt::format("tuning guardian is full; its restore report ({} bytes) left out",
                               report.size()));
  }
  std::string message;
  message.reserve(report.size() + 2);
  message += kHandover;
  message += report;
  message += '\0';
  if (Status sent = Send(message); !sent) return sent;
  bytes_sent_ += message.size();
  handed_over_ = true;
  return Status::Ok();
}

Status TuneGuardian::Send(std::string_view message) {
  if (finished_) return Failure("tuning guardian already finished");
  size_t done = 0;
  while (done < message.size()) {
    const ssize_t n =
        ::send(socket_fd_, message.data() + done, message.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Failure(
          fmt::format("tuning guardian (pid {}) is gone: {}", pid_, std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status TuneGuardian::Finish() {
  if (finished_) return Status::Ok();
  if (::getpid() != owner_pid_) {
    finished_ = true;
    ::close(socket_fd_);
    return Status::Ok();
  }
  const Status told = Send(std::string_view(&kDone, 1));
  finished_ = true;
  ::close(socket_fd_);
  const std::string why = Reap(pid_, kExitTimeout);
  if (!told) return told;
  if (!why.empty()) return Failure(fmt::format("tuning guardian (pid {}) {}", pid_, why));
  return Status::Ok();
}

}  // namespace rtpulse::sys
