// Does the memory load reach >= 80 % of the bandwidth a plain copy loop reaches on the same
// machine? Rounds on one pinned CPU: three plain copy loops (the fastest is the reference)
// and the load's own kernel inline, over a buffer the size the load uses, then the real
// `memory` load (rtpulse_load's LoadSet, the code `rtpulse load` runs) for the same time.
// See bench/README.md; `--help` for options and exit codes.
//
// Bytes are counted the way src/load/memory_load.cc counts them: every byte read plus every
// byte written by the program (its update pass over a block counts the block twice). A
// memcpy of n bytes therefore counts 2n. Write-allocate (RFO) reads that the hardware adds are
// not counted on either side. MB = 1e6 bytes, as in the load report.

#include <pthread.h>
#include <sched.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/exit_code.h"
#include "core/parse.h"
#include "load/builtins.h"
#include "load/load_set.h"
#include "load/spec.h"

namespace rtpulse {
namespace {

constexpr int kTargetMissed = 4;            // Measured, and the load is below the target.
constexpr size_t kBlockBytes = 256 * 1024;  // memory_load.cc's step, for the blocked copy

constexpr const char* kHelp = R"(usage: memory_load_bandwidth [options]

Runs plain copy loops, then the rtpulse `memory` load, on one pinned CPU over a buffer of
the load's size, and prints the load's bandwidth as a fraction of the fastest copy loop's
(the scenario-suite target: >= 0.80). Bytes count as read + written, as the load counts.

  --cpu N          CPU to pin both to (default 0)
  --mb N           buffer size in MiB (default: the load's own, max(64, 4 x last-level cache))
  --duration T     length of each run, e.g. 2s, 500ms (default 1s)
  --rounds N       rounds of every loop then the load; the verdict uses the median
                   ratio over rounds (default 3; about 5 x duration per round)
  --target R       the ratio to reach (default 0.80)
  -h, --help       this text

Exit codes: 0 target met, 4 measured but below the target, 1 a run failed,
2 bad usage, 3 cannot pin to the CPU or allocate the buffer.
)";

struct Options {
  int cpu = 0;
  int64_t mb = 0;
  int64_t duration_ns = kNsPerSec;
  int rounds = 3;
  double target = 0.80;
};

struct Rate {
  double mb_per_s = 0;
  double seconds = 0;
};

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "error: %s (see --help)\n", message.c_str());
  std::exit(ToInt(ExitCode::kUsage));
}

int64_t IntArg(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  auto v = ParseInt(text, what);
  if (!v || *v < min || *v > max) {
    Usage(std::string(what) + " must be a whole number in [" + std::to_string(min) + ", " +
          std::to_string(max) + "], got '" + std::string(text) + "'");
  }
  return *v;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  o.mb = std::max<int64_t>(64, 4 * load::LoadCacheBytes() / (1024 * 1024));
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) Usage("unknown option or missing value: '" + std::string(arg) + "'");
    const std::string_view value = argv[++i];
    if (arg == "--cpu") {
      o.cpu = static_cast<int>(IntArg(value, "--cpu", 0, 4095));
    } else if (arg == "--mb") {
      o.mb = IntArg(value, "--mb", 2, 1 << 20);
    } else if (arg == "--rounds") {
      o.rounds = static_cast<int>(IntArg(value, "--rounds", 1, 100));
    } else if (arg == "--duration") {
      auto ns = ParseTimeNs(value, kNsPerSec);
      if (!ns || *ns < 100 * kNsPerMs) Usage("--duration must be at least 100ms, e.g. 2s");
      o.duration_ns = *ns;
    } else if (arg == "--target") {
      char* end = nullptr;
      const std::string text(value);
      o.target = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() || !(o.target > 0)) {
        Usage("--target must be a ratio such as 0.8, got '" + text + "'");
      }
    } else {
      Usage("unknown option '" + std::string(arg) + "'");
    }
  }
  return o;
}

bool PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(cpu), &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/// The reference loops. Each makes whole passes over its buffer until the time is up and
/// counts bytes read + bytes written, as the load does.
enum class Loop {
  kMemcpyWhole,  ///< memcpy of each half in one call: glibc's large-copy path (on x86 it
                 ///< switches to non-temporal stores above a threshold of about the LLC).
  kMemcpyBlock,  ///< memcpy in 256 KiB calls, the load's block size: ordinary stores.
  kStream,       ///< SSE2 loads + non-temporal stores, 64 bytes per step (x86 only).
  kUpdate,       ///< The load's own kernel inline (p[i] += 1 over 256 KiB blocks): the
                 ///< ceiling for the load, so load / update shows the harness's overhead.
};

constexpr Loop kLoops[] = {Loop::kMemcpyWhole, Loop::kMemcpyBlock, Loop::kStream, Loop::kUpdate};

bool Available(Loop loop) {
#if defined(__SSE2__)
  (void)loop;
  return true;
#else
  return loop != Loop::kStream;
#endif
}

void StreamCopy(const char* src, char* dst, size_t bytes) {
#if defined(__SSE2__)
  // Both halves start page-aligned (see MeasureLoop) and every size here is a multiple of 64.
  const auto* s = reinterpret_cast<const __m128i*>(src);
  auto* d = reinterpret_cast<__m128i*>(dst);
  for (size_t i = 0; i < bytes / sizeof(__m128i); i += 4) {
    const __m128i a = _mm_load_si128(s + i);
    const __m128i b = _mm_load_si128(s + i + 1);
    const __m128i c = _mm_load_si128(s + i + 2);
    const __m128i e = _mm_load_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// One pass; returns the bytes it counts.
uint64_t Pass(Loop loop, char* buffer, size_t bytes) {
  const size_t half = bytes / 2;
  switch (loop) {
    case Loop::kMemcpyWhole:
      std::memcpy(buffer + half, buffer, half);
      break;
    case Loop::kMemcpyBlock:
      for (size_t off = 0; off < half; off += kBlockBytes) {
        std::memcpy(buffer + half + off, buffer + off, std::min(kBlockBytes, half - off));
      }
      break;
    case Loop::kStream:
      StreamCopy(buffer, buffer + half, half);
      break;
    case Loop::kUpdate: {
      auto* words = reinterpret_cast<uint64_t*>(buffer);
      for (size_t i = 0; i < bytes / sizeof(uint64_t); ++i) words[i] += 1;
      // Keep the compiler from merging passes.
      asm volatile("" : : "r"(words) : "memory");
      return 2 * bytes;
    }
  }
  asm volatile("" : : "r"(buffer) : "memory");
  return 2 * half;  // read + written
}

/// `loop` on its own thread pinned to `cpu`, over a buffer of the load's size (a copy goes
/// from one half to the other). The buffer is allocated and touched first: no page fault is
/// timed.
bool MeasureLoop(const Options& o, Loop loop, Rate& out) {
  bool ok = true;
  std::thread t([&] {
    if (!PinThisThread(o.cpu)) {
      ok = false;
      return;
    }
    const size_t bytes = static_cast<size_t>(o.mb) * 1024 * 1024;
    void* mem = std::aligned_alloc(4096, bytes);
    if (mem == nullptr) {
      ok = false;
      return;
    }
    auto* buffer = static_cast<char*>(mem);
    std::memset(buffer, 1, bytes);
    uint64_t counted = 0;
    const int64_t start = MonotonicNs();
    int64_t now = start;
    while (now - start < o.duration_ns) {
      counted += Pass(loop, buffer, bytes);
      now = MonotonicNs();
    }
    std::free(mem);
    const double seconds = static_cast<double>(now - start) / 1e9;
    out = {static_cast<double>(counted) / 1e6 / seconds, seconds};
  });
  t.join();
  return ok;
}

/// The real memory load, started and stopped through the library, as `rtpulse load` does.
int MeasureLoad(const Options& o, Rate& out, double& busy_percent) {
  auto spec =
      load::ParseLoadSpec("memory:cpus=" + std::to_string(o.cpu) + ",mb=" + std::to_string(o.mb));
  if (!spec) {
    std::fprintf(stderr, "error: %s\n", spec.error().message.c_str());
    return ToInt(spec.error().code);
  }
  load::LoadSet set({*spec});
  if (Status s = set.Start(); !s) {
    std::fprintf(stderr, "error: %s\n", s.error().message.c_str());
    return ToInt(s.error().code);
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(o.duration_ns));
  set.Stop();
  const load::LoadReport r = set.Reports().at(0);
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: memory load: %s\n", w.c_str());
  out = {r.mb_per_second, r.seconds};
  busy_percent = r.cpu_use.empty() ? -1 : r.cpu_use[0].busy_percent;
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

/// Warn, don't fail: what makes the numbers noisier than a quiet machine's.
void PrintEnvironment(const Options& o) {
  std::printf("buffer: %lld MiB (last-level cache %lld KiB), CPU %d, %d round(s) of %.1f s each\n",
              static_cast<long long>(o.mb), static_cast<long long>(load::LoadCacheBytes() / 1024),
              o.cpu, o.rounds, static_cast<double>(o.duration_ns) / 1e9);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      if (line.find(" hypervisor") != std::string::npos) {
        std::printf("warning: running in a VM: the host shares the memory bus with other guests\n");
      }
      break;
    }
  }
  std::printf("load average at start: %s\n", LoadAverage().c_str());
}

const char* LoopName(Loop loop) {
  switch (loop) {
    case Loop::kMemcpyWhole:
      return "memcpy";
    case Loop::kMemcpyBlock:
      return "memcpy256K";
    case Loop::kStream:
      return "nt-stream";
    case Loop::kUpdate:
      return "update";
  }
  return "?";
}

int Run(const Options& o) {
  PrintEnvironment(o);
  std::vector<double> ratios;
  std::vector<double> loads;
  std::vector<double> copies;
  std::vector<double> overheads;
  std::printf("\nMB/s (read + written, 1 MB = 1e6 bytes)\n%-6s", "round");
  for (const Loop loop : kLoops) {
    if (Available(loop)) std::printf(" %11s", LoopName(loop));
  }
  std::printf(" %11s %7s %7s %12s\n", "load", "busy %", "ratio", "load/update");
  for (int round = 0; round < o.rounds; ++round) {
    std::printf("%-6d", round + 1);
    double copy = 0;    // the best copy loop: the reference
    double update = 0;  // the load's kernel without the load around it
    for (const Loop loop : kLoops) {
      if (!Available(loop)) continue;
      Rate rate;
      if (!MeasureLoop(o, loop, rate)) {
        std::fprintf(stderr, "\nerror: cannot pin to CPU %d or allocate %lld MiB\n", o.cpu,
                     static_cast<long long>(o.mb));
        return ToInt(ExitCode::kResource);
      }
      std::printf(" %11.0f", rate.mb_per_s);
      std::fflush(stdout);
      if (loop == Loop::kUpdate) {
        update = rate.mb_per_s;
      } else {
        copy = std::max(copy, rate.mb_per_s);
      }
    }
    Rate load;
    double busy = 0;
    if (const int rc = MeasureLoad(o, load, busy); rc != 0) return rc;
    const double ratio = load.mb_per_s / copy;
    std::printf(" %11.0f %7.0f %7.3f %12.3f\n", load.mb_per_s, busy, ratio, load.mb_per_s / update);
    std::fflush(stdout);
    ratios.push_back(ratio);
    loads.push_back(load.mb_per_s);
    copies.push_back(copy);
    overheads.push_back(load.mb_per_s / update);
  }
  const double ratio = Median(ratios);
  std::printf("\nmedian over rounds: best copy loop %.0f MB/s, memory load %.0f MB/s\n",
              Median(copies), Median(loads));
  std::printf("load / best copy loop: %.3f (target >= %.2f); load / same kernel inline: %.3f\n",
              ratio, o.target, Median(overheads));
  std::printf("load average at end: %s\n", LoadAverage().c_str());
  if (ratio < o.target) {
    std::printf("verdict: FAIL, the memory load reaches %.0f%% of the copy loop\n", 100 * ratio);
    return kTargetMissed;
  }
  std::printf("verdict: PASS, the memory load reaches %.0f%% of the copy loop\n", 100 * ratio);
  return 0;
}

}  // namespace
}  // namespace rtpulse

int main(int argc, char** argv) {
  return rtpulse::Run(rtpulse::ParseArgs(argc, argv));
}
