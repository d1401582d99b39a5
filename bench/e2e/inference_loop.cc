// rtpulse's OpenCV backend called in a plain loop on a constant input, one inference's wall
// time per line (ms): the rtpulse side of bench/e2e/inference_vs_cv2, whose other side is
// Python's cv2.dnn on the same model, input and thread count (bench/e2e/README.md, "Inference
// against cv2.dnn"). Numbers only.
//
// Usage: rtpulse_e2e_inference_loop MODEL THREADS FRAMES [INPUT_W INPUT_H]
// Exit: 0 measured, 2 bad usage, 3 the model or backend missing.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/clock.h"
#include "e2e/inference.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL THREADS FRAMES [INPUT_W INPUT_H]\n", argv[0]);
    return 2;
  }
  const std::string model = argv[1];
  const int threads = std::atoi(argv[2]);
  const int frames = std::atoi(argv[3]);
  if (threads < 1 || frames < 1) {
    std::fprintf(stderr, "THREADS and FRAMES must be whole numbers >= 1\n");
    return 2;
  }
  auto made = rtpulse::e2e::MakeBackend(rtpulse::e2e::BackendKind::kOpenCv);
  if (!made) {
    std::fprintf(stderr, "%s\n", made.error().message.c_str());
    return 3;
  }
  rtpulse::e2e::InferenceBackend& backend = **made;
  if (argc == 6) backend.RequestInputSize(std::atoi(argv[4]), std::atoi(argv[5]));
  if (rtpulse::Status s = backend.Load(model, threads); !s) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 3;
  }
  const rtpulse::e2e::ModelShape& shape = backend.shape();
  rtpulse::e2e::Tensor input;
  input.shape = {1, shape.in_channels, shape.in_height, shape.in_width};
  input.data.assign(input.ElementCount(), 0.25F);  // the Python side's np.full(..., 0.25)
  rtpulse::e2e::Tensor output;
  for (int i = 0; i < 3; ++i) (void)backend.Run(input, output);  // warm, as the other side
  for (int i = 0; i < frames; ++i) {
    const int64_t t0 = rtpulse::MonotonicNs();
    if (rtpulse::Status s = backend.Run(input, output); !s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return 1;
    }
    std::printf("%.6f\n", static_cast<double>(rtpulse::MonotonicNs() - t0) / 1e6);
  }
  return 0;
}
