// cpu: integer and floating-point arithmetic in registers, no memory traffic.
#include <cmath>

#include "load/builtins.h"
#include "load/worker.h"

namespace rtpulse::load {
namespace {

class CpuWork final : public Work {
 public:
  Status Setup() override { return Status::Ok(); }
  void Step(uint64_t& ops, uint64_t& /*bytes*/) override {
    // About 20 us of dependent arithmetic; one op = one loop of 1000 iterations.
    for (int i = 0; i < 1000; ++i) {
      x_ = std::sqrt(x_ * 1.000001 + 3.0);
      n_ = n_ * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    ++ops;
    sink_ = sink_ + x_ + static_cast<double>(n_ >> 60);
  }

 private:
  double x_ = 1.0;
  uint64_t n_ = 1;
  volatile double sink_ = 0;  // Keeps the arithmetic from being optimised away.
};

}  // namespace

LoadDescriptor CpuLoad() {
  return {"cpu",
          "CPU execution units: arithmetic in registers, busy for <intensity>% of each 10 ms",
          {},
          true,
          &AlwaysSupported,
          nullptr,
          [](const LoadSpec& spec) {
            return MakeWorkerLoad(spec,
                                  [](const LoadParams&) -> std::unique_ptr<Work> {
                                    return std::make_unique<CpuWork>();
                                  },
                                  {"loops", false, true});
          }};
}

}  // namespace rtpulse::load
