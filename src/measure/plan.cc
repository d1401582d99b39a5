#include "measure/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "core/clock.h"
#include "core/printable.h"
#include "core/suggest.h"

namespace rtpulse::measure {

std::vector<ThreadPlan> PinnedThreads(const std::vector<int>& cpus, SchedPolicy policy,
                                      int priority, int64_t interval_ns) {
  std::vector<ThreadPlan> threads;
  threads.reserve(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) {
    ThreadPlan t;
    t.index = static_cast<int>(i);
    t.cpu = cpus[i];
    t.policy = policy;
    t.priority = priority;
    t.interval_ns = interval_ns;
    threads.push_back(t);
  }
  return threads;
}

std::vector<int> MeasuredCpus(const std::vector<ThreadPlan>& threads,
                              const std::vector<int>& online) {
  std::vector<int> cpus;
  for (const auto& t : threads) {
    if (t.cpu < 0) {
      cpus.insert(cpus.end(), online.begin(), online.end());
    } else {
      cpus.push_back(t.cpu);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

size_t SampleRingCapacity(const std::vector<ThreadPlan>& threads) {
  int64_t fastest_ns = kNsPerSec;
  for (const auto& t : threads)
    fastest_ns = std::min(fastest_ns, std::max<int64_t>(1, t.interval_ns));
  const int64_t per_sec = kNsPerSec / fastest_ns;
  return static_cast<size_t>(std::max<int64_t>(65536, 2 * per_sec));
}

Expected<std::vector<WakePath>> ParseWakeList(const std::string& text,
                                              const std::vector<std::string>& also) {
  std::vector<WakePath> paths;
  std::vector<std::string> names;
  for (WakePath p : kAllWakePaths) {
    names.emplace_back(WakePathName(p));
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "all") {
      paths.assign(std::begin(kAllWakePaths), std::end(kAllWakePaths));
      continue;
    }
    auto path = WakePathFromName(item);
    if (!path) {
      const std::string guess = ClosestName(item, names);
      return UsageError(fmt::format(
          "unknown wake path '{}': {}use one of {} (or 'all'){}", Printable(item),
          guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess), fmt::join(names, ", "),
          also.empty() ? "" : fmt::format("; this build also has {}", fmt::join(also, ", "))));
    }
    if (std::find(paths.begin(), paths.end(), *path) != paths.end()) {
      return UsageError(fmt::format("wake path '{}' is listed twice in --wake '{}'",
                                    Printable(item), Printable(text)));
    }
    paths.push_back(*path);
  }
  if (paths.empty()) return UsageError("--wake is empty: give e.g. --wake abs,timerfd");
  return paths;
}

void DropOnePerProcessPaths(std::vector<WakePath>& paths, size_t threads,
                            std::vector<std::string>& notes) {
  if (threads <= 1) return;
  std::erase_if(paths, [&](WakePath p) {
    const WakePathTraits* t = FindWakePathTraits(p);
    if (t == nullptr || t->one_per_process.empty()) return false;
    notes.push_back(
        fmt::format("--wake all: {} skipped ({}; it needs -t 1)", t->name, t->one_per_process));
    return true;
  });
}

Status CheckOnePerProcess(const std::vector<WakePath>& paths, size_t threads,
                          std::string_view counted, std::string_view fix) {
  if (threads <= 1) return Status::Ok();
  for (const WakePath p : paths) {
    const WakePathTraits* t = FindWakePathTraits(p);
    if (t == nullptr || t->one_per_process.empty()) continue;
    return UsageError(
        fmt::format("--wake {} needs a single thread ({}), but {} {}: {}, or use --wake posix",
                    t->name, t->one_per_process, threads, counted, fix));
  }
  return Status::Ok();
}

}  // namespace rtpulse::measure
