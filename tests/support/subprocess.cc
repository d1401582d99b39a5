#include "support/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>

#include "support/test_paths.h"

extern char** environ;

namespace rtpulse::testutil {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

namespace {

/// True when every folder above `path` lets `uid` (a member of `gid` only) search it, and the
/// file itself lets it do `need` (S_IXOTH: what execve() needs; S_IROTH: what open() for
/// reading needs), both read from the owner, group or other bits that apply to it.
bool Reachable(const std::filesystem::path& path, uid_t uid, gid_t gid, mode_t need) {
  auto allows = [&](const std::filesystem::path& p, mode_t other) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    if (st.st_uid == uid) return (st.st_mode & (other << 6)) != 0;
    if (st.st_gid == gid) return (st.st_mode & (other << 3)) != 0;
    return (st.st_mode & other) != 0;
  };
  const std::filesystem::path absolute = std::filesystem::absolute(path);
  for (auto dir = absolute.parent_path();; dir = dir.parent_path()) {
    if (!allows(dir, S_IXOTH)) return false;
    if (dir == dir.parent_path()) break;
  }
  return allows(absolute, need);
}

}  // namespace

ReachableCopy::ReachableCopy(const std::string& path, unsigned uid, bool executable) : path_(path) {
  const auto id = static_cast<uid_t>(uid);
  if (Reachable(path, id, id, executable ? S_IXOTH : S_IROTH)) return;
  std::string tmpl = "/tmp/rtpulse-copy-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  dir_ = tmpl;
  namespace fs = std::filesystem;
  constexpr fs::perms kOpen = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir_, kOpen);
  path_ = dir_ + "/" + fs::path(path).filename().string();
  fs::copy_file(path, path_);
  fs::permissions(path_, executable ? kOpen
                                    : kOpen & ~(fs::perms::owner_exec | fs::perms::group_exec |
                                                fs::perms::others_exec));
}

ReachableCopy::~ReachableCopy() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  std::optional<ReachableCopy> copy;
  if (options.run_as_uid) copy.emplace(argv.at(0), *options.run_as_uid, /*executable=*/true);
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) std::abort();
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
  for (const auto& e : options.extra_env) {
    // getenv() returns the first match, so an override must replace, not append.
    const std::string name = e.substr(0, e.find('='));
    std::erase_if(env_storage, [&](const std::string& have) {
      return have.compare(0, name.size() + 1, name + "=") == 0;
    });
    if (e.find('=') != std::string::npos) env_storage.push_back(e);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  if (copy) args[0] = copy->path();
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);

  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    // The test process may block signals (the engine does); the child starts clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (options.run_as_uid) {
      if (setgid(*options.run_as_uid) != 0 || setuid(*options.run_as_uid) != 0) _exit(126);
    }
    execve(cargs[0], cargs.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  bool signalled = false;
  Clock::time_point signal_time{};
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const double elapsed_ms = Since(start) * 1000.0;
    if (options.signal != 0 && !signalled &&
        elapsed_ms >= static_cast<double>(options.signal_after.count()) &&
        (!options.signal_when || options.signal_when())) {
      kill(pid, options.signal);
      signalled = true;
      signal_time = Clock::now();
    }
    if (elapsed_ms > static_cast<double>(options.timeout.count())) {
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, 20) < 0) continue;
    for (auto& f : fds) {
      if (f.fd < 0 || (f.revents & (POLLIN | POLLHUP)) == 0) continue;
      const ssize_t n = read(f.fd, buf, sizeof(buf));
      if (n <= 0) {
        close(f.fd);
        f.fd = -1;
        --open_fds;
      } else {
        (f.fd == out_pipe[0] ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.seconds = Since(start);
  if (signalled) {
    result.signal_to_exit_seconds =
        std::chrono::duration<double>(Clock::now() - signal_time).count();
  }
  if (Since(start) * 1000.0 > static_cast<double>(options.timeout.count())) {
    result.exit_code = -1;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

BackgroundProcess::BackgroundProcess(std::vector<std::string> argv, ProcessOptions options) {
  if (options.signal == 0) options.signal = SIGTERM;
  options.signal_after = std::chrono::milliseconds{0};
  options.signal_when = [this] { return stop_.load(); };
  thread_ = std::thread([this, argv = std::move(argv), options = std::move(options)] {
    result_ = RunProcess(argv, options);
    done_ = true;
  });
}

BackgroundProcess::~BackgroundProcess() {
  if (thread_.joinable()) (void)Stop();
}

ProcessResult BackgroundProcess::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return result_;
}

ProcessResult RunRtpulse(const std::vector<std::string>& args, const ProcessOptions& options) {
  std::vector<std::string> argv{RTPULSE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, options);
}

TempDir::TempDir() {
  std::string tmpl = "/tmp/rtpulse-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  path_ = tmpl;
  // Readable by anyone so a test may run the binary as an unprivileged user here.
  std::filesystem::permissions(path_, std::filesystem::perms::all);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::List() const {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path_)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

std::function<bool()> WhenStateHeldFor(std::function<bool()> state,
                                       std::chrono::milliseconds delay) {
  auto since = std::make_shared<std::optional<Clock::time_point>>();
  return [state = std::move(state), delay, since] {
    if (!*since) {
      if (!state()) return false;
      *since = Clock::now();
    }
    return Clock::now() - **since >= delay;
  };
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsRoot() {
  return geteuid() == 0;
}

std::set<int> MarkedProcesses(const std::string& marker) {
  std::set<int> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::ifstream env(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    if (text.find(marker) == std::string::npos) continue;
    const std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') continue;
    pids.insert(pid);
  }
  closedir(proc);
  return pids;
}

std::set<int> JournalGuardians(const std::string& dir) {
  std::set<int> pids;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return pids;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() != "tuning_journal.json") continue;
    const std::string text = ReadFile(it->path().string());
    const size_t key = text.find("\"guardian_pid\"");
    if (key == std::string::npos) continue;
    const size_t colon = text.find(':', key);
    if (colon == std::string::npos) continue;
    const int pid = std::atoi(text.c_str() + colon + 1);
    if (pid > 0) pids.insert(pid);
  }
  return pids;
}

std::set<int> WaitGone(const std::set<int>& pids, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::set<int> alive = pids;
  for (;;) {
    for (auto it = alive.begin(); it != alive.end();) {
      const std::string stat = ReadFile("/proc/" + std::to_string(*it) + "/stat");
      const size_t paren = stat.rfind(')');
      const bool zombie =
          paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
      it = stat.empty() || zombie ? alive.erase(it) : std::next(it);
    }
    if (alive.empty() || std::chrono::steady_clock::now() > deadline) return alive;
    usleep(10'000);
  }
}

}  // namespace rtpulse::testutil
