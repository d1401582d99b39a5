// The pipeline's overhead outside inference (bench/e2e/README.md): rtpulse's preprocess and
// postprocess + decision (src/e2e/processing.h) per frame, on inputs it writes for
// bench/e2e/seed_stages.py to time the seed's same operations in Python. Numbers only.
//
// rtpulse_e2e_pipeline_overhead --inputs DIR [--frames N]
//   writes DIR/frame_K.u8 (1242x375 BGR), DIR/depth_K.f32 (1x1x256x256 relative depth) for K
//   in 0..7, DIR/references.csv (x,y,depth_m in source pixels), then times N frames cycling
//   over them and prints one JSON line: per stage the median and p99 (nearest rank) in us.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/clock.h"
#include "e2e/processing.h"

namespace {

using rtpulse::e2e::Decision;
using rtpulse::e2e::DecisionSpec;
using rtpulse::e2e::Image;
using rtpulse::e2e::ModelShape;
using rtpulse::e2e::Postprocessor;
using rtpulse::e2e::Preprocessor;
using rtpulse::e2e::PreprocessSpec;
using rtpulse::e2e::ReferencePoint;
using rtpulse::e2e::Tensor;

constexpr int kSrcW = 1242, kSrcH = 375, kModel = 256, kInputs = 8;
constexpr double kFocalPx = 1242, kCameraHeightM = 1.5, kHorizonRow = 187.5;

double GroundDepth(double y) {
  return y > kHorizonRow + 1 ? kFocalPx * kCameraHeightM / (y - kHorizonRow) : 60.0;
}

bool WriteBytes(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return out.good();
}

double NearestRankUs(std::vector<int64_t> ns, double p) {
  std::sort(ns.begin(), ns.end());
  const size_t n = ns.size();
  size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  k = std::clamp<size_t>(k, 1, n);
  return static_cast<double>(ns[k - 1]) / 1000.0;
}

void PrintStage(const char* name, const std::vector<int64_t>& ns, bool last) {
  std::printf("\"%s\": {\"median_us\": %.2f, \"p99_us\": %.2f}%s", name, NearestRankUs(ns, 50),
              NearestRankUs(ns, 99), last ? "" : ", ");
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  long frames = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--inputs" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--frames" && i + 1 < argc) {
      frames = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: rtpulse_e2e_pipeline_overhead --inputs DIR [--frames N] (got %s)\n",
                   a.c_str());
      return 2;
    }
  }
  if (dir.empty() || frames < 100) {
    std::fprintf(stderr, "error: --inputs DIR is required and --frames must be >= 100\n");
    return 2;
  }
  // Inputs: a textured road scene and a relative map that follows the ground plane (0.1 per
  // metre) with an obstacle block ahead at a distance that varies by input, plus noise.
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 0.01);
  std::uniform_int_distribution<int> grain(-20, 20);
  std::vector<Image> images(kInputs);
  std::vector<Tensor> depths(kInputs);
  for (int k = 0; k < kInputs; ++k) {
    Image& img = images[static_cast<size_t>(k)];
    img.Reshape(kSrcW, kSrcH);
    for (size_t p = 0; p < img.bgr.size(); ++p) {
      const double x = static_cast<double>(p / 3 % kSrcW), y = static_cast<double>(p / 3 / kSrcW);
      const double v = 120 + 60 * std::sin(0.03 * x + 0.11 * y + k) + grain(rng);
      img.bgr[p] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
    }
    Tensor& d = depths[static_cast<size_t>(k)];
    d.shape = {1, 1, kModel, kModel};
    d.data.resize(static_cast<size_t>(kModel) * kModel);
    const double obstacle_m = 0.6 + 0.3 * k;
    for (int v = 0; v < kModel; ++v) {
      const double ground = GroundDepth((v + 0.5) * kSrcH / kModel);
      for (int u = 0; u < kModel; ++u) {
        const bool block = u >= 100 && u < 156 && v >= 150;
        d.data[static_cast<size_t>(v) * kModel + static_cast<size_t>(u)] =
            static_cast<float>(0.1 * (block ? obstacle_m : ground) + noise(rng));
      }
    }
    if (!WriteBytes(dir + "/frame_" + std::to_string(k) + ".u8", img.bgr.data(), img.bgr.size()) ||
        !WriteBytes(dir + "/depth_" + std::to_string(k) + ".f32", d.data.data(),
                    d.data.size() * sizeof(float))) {
      std::fprintf(stderr, "error: cannot write the inputs into %s\n", dir.c_str());
      return 1;
    }
  }
  // 40 ground references left and right of the ROI, rows below the horizon.
  std::vector<ReferencePoint> refs;
  std::ofstream csv(dir + "/references.csv");
  csv << "x,y,depth_m\n";
  for (int i = 0; i < 40; ++i) {
    const double x = (i % 2 ? 150.0 : 1000.0) + 3.0 * i;
    const double y = 200.0 + 4.3 * i;
    refs.push_back({x, y, GroundDepth(y)});
    csv << x << "," << y << "," << GroundDepth(y) << "\n";
  }
  csv.close();

  ModelShape shape;
  shape.in_channels = 3;
  shape.in_width = shape.in_height = kModel;
  shape.out_channels = 1;
  shape.out_width = shape.out_height = kModel;
  Preprocessor pre;
  Postprocessor post;
  const auto prepared = pre.Prepare(PreprocessSpec{}, kSrcW, kSrcH, shape);
  if (!prepared) return std::fprintf(stderr, "error: %s\n", prepared.error().message.c_str()), 1;
  const auto posted = post.Prepare(DecisionSpec{}, shape, pre, refs);
  if (!posted) return std::fprintf(stderr, "error: %s\n", posted.error().message.c_str()), 1;

  Tensor input;
  Decision decision;
  std::vector<int64_t> pre_ns, post_ns, total_ns;
  pre_ns.reserve(static_cast<size_t>(frames));
  post_ns.reserve(static_cast<size_t>(frames));
  total_ns.reserve(static_cast<size_t>(frames));
  double first_depth = 0;
  long obstacles = 0;
  for (long f = -50; f < frames; ++f) {  // 50 warm-up frames
    const size_t k = static_cast<size_t>((f + 50) % kInputs);
    const int64_t t0 = rtpulse::MonotonicNs();
    if (!pre.Run(images[k], input)) return 1;
    const int64_t t1 = rtpulse::MonotonicNs();
    if (!post.Run(depths[k], decision)) return 1;
    const int64_t t2 = rtpulse::MonotonicNs();
    if (f == -50) first_depth = decision.roi_depth_m;
    if (f < 0) continue;
    obstacles += decision.obstacle;
    pre_ns.push_back(t1 - t0);
    post_ns.push_back(t2 - t1);
    total_ns.push_back(t2 - t0);
  }
  std::printf("{\"impl\": \"rtpulse C++\", \"frames\": %ld, ", frames);
  PrintStage("preprocess", pre_ns, false);
  PrintStage("postprocess", post_ns, false);
  PrintStage("total", total_ns, false);
  std::printf("\"first_roi_depth_m\": %.9g, \"obstacle_frames\": %ld}\n", first_depth, obstacles);
  return 0;
}
