// The latency command's observer without a run: -M's redraw rule on the plain live view, and
// SIGUSR2's block in the shared-memory file, from injected probe snapshots.
#include "cli/live_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"

namespace rtpulse::cli {
namespace {

std::vector<measure::LiveProbe> Probes(int64_t max_us) {
  measure::LiveProbe p;
  p.index = 0;
  p.tid = 4242;
  p.priority = 80;
  p.interval_ns = 1000 * kNsPerUs;
  p.count = 100;
  p.cur_ns = 7 * kNsPerUs;
  p.min_ns = 5 * kNsPerUs;
  p.max_ns = max_us * kNsPerUs;
  p.avg_ns = 9.0 * kNsPerUs;
  p.p99_ns = 8 * kNsPerUs;
  return {p};
}

/// What the plain live view printed for ticks of these maxima, 6 s apart (past its 5 s pace).
std::string Ticks(bool refresh_on_max, const std::vector<int64_t>& maxima) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  {
    LiveView view(LiveMode::kPlain, out, false, 0, 0, {"abs"});
    if (refresh_on_max) view.RefreshOnMax();
    int64_t at = 0;
    for (int64_t max : maxima) {
      view.OnTick(Probes(max), at);
      at += 6 * kNsPerSec;
    }
  }
  std::fclose(out);
  std::string printed(text, size);
  std::free(text);
  return printed;
}

size_t StatusLineCount(const std::string& text) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("T:", 0) == 0) ++n;
  }
  return n;
}

// cyclictest -M: the view changes only when a maximum grew; without it, every paced tick.
TEST(LiveViewTest, RefreshOnMaxDrawsOnlyWhenAMaximumGrew) {
  const std::vector<int64_t> maxima = {10, 10, 12, 12, 11, 30};
  EXPECT_EQ(StatusLineCount(Ticks(false, maxima)), 6u);
  const std::string drawn = Ticks(true, maxima);
  EXPECT_EQ(StatusLineCount(drawn), 3u) << drawn;  // 10, 12, 30
  EXPECT_NE(drawn.find("Max:      30"), std::string::npos) << drawn;
}

// SIGUSR2: cyclictest's block, its status line without rtpulse's P99 and Miss, in the file.
TEST(LiveViewTest, SigusrTwoWritesTheBlockIntoTheSharedFile) {
  const std::string name = "/rtpulse-live-view-test-" + std::to_string(::getpid());
  sys::SharedStats shared(name);
  ASSERT_EQ(shared.warning(), "");
  LiveView view(LiveMode::kOff, stdout, false, 0, 0, {"abs"});
  view.ShareStats(&shared);
  view.OnStatsRequest(Probes(12), measure::StatsRequest::kSharedMemory);
  std::ifstream file("/dev/shm" + name);
  std::stringstream got;
  got << file.rdbuf();
  EXPECT_EQ(got.str(),
            "#---------------------------\n"
            "# cyclictest current status:\n"
            "T: 0 ( 4242) P:80 I:1000 C:    100 Min:      5 Act:    7 Avg:    9 Max:      12\n"
            "#---------------------------\n");
  // A second request replaces the content instead of adding to it.
  view.OnStatsRequest(Probes(40), measure::StatsRequest::kSharedMemory);
  std::ifstream again("/dev/shm" + name);
  std::stringstream second;
  second << again.rdbuf();
  EXPECT_EQ(StatusLineCount(second.str()), 1u) << second.str();
  EXPECT_NE(second.str().find("Max:      40"), std::string::npos) << second.str();
}

}  // namespace
}  // namespace rtpulse::cli
