#include "monitor/sources.h"

namespace rtpulse::monitor {

std::vector<std::unique_ptr<Source>> DefaultSources(const FsRoot& root, const CommandRunner& runner,
                                                    std::chrono::milliseconds vcgencmd_timeout) {
  std::vector<std::unique_ptr<Source>> s;
  s.push_back(MakeThermalSource(root));
  s.push_back(MakeCpufreqSource(root));
  s.push_back(MakeVcgencmdSource(runner, vcgencmd_timeout));
  s.push_back(MakeLimitsSource(root));
  s.push_back(MakeLoadSource(root));
  s.push_back(MakeCpuStatSource(root));
  s.push_back(MakeMemorySource(root));
  s.push_back(MakeInterruptsSource(root));
  s.push_back(MakeSoftirqsSource(root));
  return s;
}

}  // namespace rtpulse::monitor
