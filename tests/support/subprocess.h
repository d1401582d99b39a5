#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rtpulse::testutil {

/// What a child process did.
struct ProcessResult {
  int exit_code = -1;                  ///< Exit status, or 128 + signal when killed by one.
  std::string out;                     ///< Everything written to stdout.
  std::string err;                     ///< Everything written to stderr.
  double seconds = 0;                  ///< Wall time from start to exit.
  double signal_to_exit_seconds = -1;  ///< From sending `signal` to exit (-1: none sent).
};

struct ProcessOptions {
  std::chrono::milliseconds timeout{120'000};
  /// Send this signal after `signal_after` (0 = none), and once `signal_when` (if set,
  /// polled about every 20 ms from then on) returns true: a test that must hit a state
  /// signals on the state, not on a guess of how long the child takes to reach it.
  int signal = 0;
  std::chrono::milliseconds signal_after{0};
  std::function<bool()> signal_when;
  /// Run as this uid/gid (e.g. nobody) when set; the test must be root to use it. When that
  /// user cannot reach argv[0] (a checkout under a 0700 home), a copy of it in a fresh 0755
  /// folder under /tmp runs instead.
  std::optional<unsigned> run_as_uid;
  /// "NAME=value" sets NAME in the child's environment (replacing an inherited value);
  /// a bare "NAME" removes it.
  std::vector<std::string> extra_env;
};

/// `path` as a user `uid` can reach it: the original when every folder above it lets that
/// user search it and the file lets it read (or, `executable`, run) it; else a copy in a fresh
/// 0755 folder under /tmp, removed on destruction. A checkout under a 0700 home (Debian 12's
/// default for new users) is out of `nobody`'s reach, and a test that runs code as nobody
/// must not fail because of where the project was cloned.
class ReachableCopy {
 public:
  ReachableCopy(const std::string& path, unsigned uid, bool executable = false);
  ~ReachableCopy();
  ReachableCopy(const ReachableCopy&) = delete;
  ReachableCopy& operator=(const ReachableCopy&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

/// Runs argv[0] with argv, capturing stdout/stderr. The child gets its own process group;
/// on timeout the group is killed and exit_code is -1.
ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

/// A ProcessOptions::signal_when that turns true `delay` after `state` first returned true
/// (`state` is not asked again once it has): "signal 1.5 s after the run reached X".
std::function<bool()> WhenStateHeldFor(std::function<bool()> state,
                                       std::chrono::milliseconds delay);

/// Convenience: runs the rtpulse binary built with the tests.
ProcessResult RunRtpulse(const std::vector<std::string>& args, const ProcessOptions& options = {});

/// RunProcess on a thread of its own, for a server the test talks to while it runs (rtpulse
/// serve, Prometheus, node_exporter). Stop() sends `options.signal` (SIGTERM when 0) and waits
/// for the exit; the destructor stops a process still running.
class BackgroundProcess {
 public:
  BackgroundProcess(std::vector<std::string> argv, ProcessOptions options = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  /// True once the process has exited (on its own, or after Stop()).
  bool Exited() const { return done_; }
  /// Signals the process (unless it exited already) and returns what it did.
  ProcessResult Stop();

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  ProcessResult result_;
  std::thread thread_;
};

/// A fresh empty folder under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  /// Names of every entry in the folder.
  std::vector<std::string> List() const;

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
bool IsRoot();

/// Every live process (zombies excluded, this one too) whose environment holds `marker`:
/// a test puts a unique NAME=value into a child's environment and every process the child
/// starts inherits it, so what is left after a stop is found however it was reparented.
/// Beware: while a marked process execs (the tuning guardian running `rtpulse __mark-killed`),
/// its environment reads empty for a moment, so one empty answer does not mean "all gone";
/// wait for known pids with WaitGone() too.
std::set<int> MarkedProcesses(const std::string& marker);

/// The tuning guardians named by every tuning_journal.json under `dir` (`guardian_pid`, the
/// pid they keep across their exec of `rtpulse __mark-killed`); 0 entries skipped.
std::set<int> JournalGuardians(const std::string& dir);

/// Waits up to `limit` for each of `pids` to be gone (no /proc entry, or a zombie); returns
/// the ones still alive.
std::set<int> WaitGone(const std::set<int>& pids, std::chrono::milliseconds limit);

}  // namespace rtpulse::testutil
