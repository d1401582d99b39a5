// A real interference measurement without the CLI (until `rtpulse control --interference` is
// wired): a periodic job on one CPU streams the next `--chunk-kb` of a work set twice the
// last-level cache each period; the four conditions' loads (suite::ConditionLoads) run as real
// rtpulse loads; suite::RunInterference interleaves the runs and reports the inflation, the
// job thread's perf counters and the verdict. Numbers only: see bench/interference/README.md.
//
// Usage: rtpulse_interference_exec [--cpu N] [--jobs N] [--reps N] [--period-us N]
//                                  [--chunk-kb N] [--json FILE]
// Exit codes: 0 measured, 1 a run failed, 2 bad usage, 130 interrupted.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/parse.h"
#include "load/builtins.h"
#include "load/load_set.h"
#include "load/spec.h"
#include "measure/perf_counters.h"
#include "suite/interference.h"

namespace rtpulse {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int /*sig*/) {
  g_stop = true;
}

struct BenchOptions {
  int cpu = 0;
  uint64_t jobs = 500;
  int reps = 3;
  int64_t period_ns = 4'000'000;
  size_t chunk_bytes = 256 * 1024;
  std::string json;
};

/// One run: the job thread pinned on `cpu` (SCHED_FIFO 50 when allowed), counters opened in
/// it before the first job and read after the last.
suite::InterferenceRun RunJobs(const BenchOptions& o, std::span<uint64_t> work_set) {
  suite::InterferenceRun run;
  std::thread job([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<size_t>(o.cpu), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    sched_param param{};
    param.sched_priority = 50;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) != 0) {
      run.warnings.emplace_back("SCHED_FIFO refused: the job ran as SCHED_OTHER");
    }
    run.exec_ns.reserve(o.jobs);
    measure::ThreadCounters counters;
    if (Status s = counters.Open(); !s) run.warnings.push_back(s.error().message);
    const size_t chunk = o.chunk_bytes / sizeof(uint64_t);
    size_t offset = 0;
    int64_t release = MonotonicNs() + o.period_ns;
    counters.Enable();
    for (uint64_t k = 0; k < o.jobs && !g_stop.load(std::memory_order_relaxed); ++k) {
      timespec ts{release / 1'000'000'000, release % 1'000'000'000};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
      const int64_t start = MonotonicNs();
      if (offset + chunk > work_set.size()) offset = 0;
      for (size_t i = 0; i < chunk; ++i) work_set[offset + i] += i;  // Read + write, streaming.
      offset += chunk;
      run.exec_ns.push_back(MonotonicNs() - start);
      release += o.period_ns;
    }
    counters.Disable();
    run.counters = counters.Read();
  });
  job.join();
  return run;
}

int Main(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--cpu")
      o.cpu = std::atoi(value);
    else if (key == "--jobs")
      o.jobs = std::strtoull(value, nullptr, 10);
    else if (key == "--reps")
      o.reps = std::atoi(value);
    else if (key == "--period-us")
      o.period_ns = std::atoll(value) * 1000;
    else if (key == "--chunk-kb")
      o.chunk_bytes = std::strtoull(value, nullptr, 10) * 1024;
    else if (key == "--json")
      o.json = value;
    else {
      std::fprintf(stderr,
                   "rtpulse_interference_exec: unknown option '%s' (see the source's header)\n",
                   key.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "rtpulse_interference_exec: option '%s' has no value\n", argv[argc - 1]);
    return 2;
  }
  suite::InterferencePlan plan;
  plan.cpu = o.cpu;
  for (const int c : load::LocalCpuScope().online) {
    if (c != o.cpu) plan.other_cpus.push_back(c);
  }
  plan.jobs_per_run = o.jobs;
  plan.repetitions = o.reps;
  plan.llc_bytes = static_cast<size_t>(load::LoadCacheBytes());
  plan.work_set_bytes = 2 * plan.llc_bytes;
  if (Status s = suite::ValidateInterferencePlan(plan); !s) {
    std::fprintf(stderr, "rtpulse_interference_exec: %s\n", s.error().message.c_str());
    return 2;
  }
  // The loads fork: without MADV_DONTFORK every page of the work set would be copy-on-write
  // after each load start, and the first write to each page in a loaded run a page fault that
  // the isolated runs never take (seen as ~16,000 page faults per run before this).
  void* map = mmap(nullptr, plan.work_set_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED || madvise(map, plan.work_set_bytes, MADV_DONTFORK) != 0) {
    std::fprintf(stderr, "rtpulse_interference_exec: work set: %s\n", std::strerror(errno));
    return 1;
  }
  std::span<uint64_t> work_set(static_cast<uint64_t*>(map), plan.work_set_bytes / sizeof(uint64_t));
  std::fill(work_set.begin(), work_set.end(), 1);
  std::vector<std::string> load_lines;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  auto report = suite::RunInterference(
      plan,
      [&](suite::InterferenceCondition c, int rep) -> Expected<suite::InterferenceRun> {
        const auto texts = suite::ConditionLoads(c, plan);
        std::vector<load::LoadSpec> parsed;
        if (!texts.empty()) {
          auto specs = load::ParseLoadSpecs(texts);
          if (!specs) return specs.error();
          parsed = std::move(*specs);
        }
        load::LoadSet loads(std::move(parsed));
        if (Status s = loads.Start(); !s) return s.error();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // Loads at full speed.
        auto run = RunJobs(o, work_set);
        loads.Stop();
        run.condition = c;
        run.repetition = rep;
        for (const auto& r : loads.Reports()) {
          load_lines.push_back(fmt::format("{} repetition {}: {} {:.1f} {}/s, {:.1f} MB/s",
                                           suite::ConditionName(c), rep, r.spec, r.ops_per_second,
                                           r.ops_unit, r.mb_per_second));
        }
        return run;
      },
      g_stop);
  if (!report) {
    std::fprintf(stderr, "rtpulse_interference_exec: %s\n", report.error().message.c_str());
    return 1;
  }
  std::printf("job on CPU %d, loads on %s, work set %zu MiB (LLC %zu KiB), %zu KiB per job\n\n%s",
              o.cpu, FormatCpuList(plan.other_cpus).c_str(), plan.work_set_bytes >> 20,
              plan.llc_bytes >> 10, o.chunk_bytes >> 10,
              suite::FormatInterference(*report).c_str());
  std::printf("\nloads as achieved:\n");
  for (const auto& line : load_lines) std::printf("  %s\n", line.c_str());
  if (!o.json.empty()) std::ofstream(o.json) << suite::InterferenceToJson(*report).dump(2) << "\n";
  return report->interrupted ? 130 : 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  return rtpulse::Main(argc, argv);
}
