// The synthetic source (docs/e2e.md, "Synthetic frames"): a rendered scene of known depth, so
// the pipeline runs with nothing attached and the postprocess has exact references.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/clock.h"
#include "e2e/sources.h"

namespace rtpulse::e2e {
namespace {

uint8_t SyntheticClampByte(double v) {
  return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

constexpr size_t kSyntheticMaxReferences = 32;  // 4 rows x 8 columns.

class SyntheticSource final : public FrameSource {
 public:
  explicit SyntheticSource(const SourceSpec& spec) {
    scene_.width = spec.width;
    scene_.height = spec.height;
  }

  Status Open() override {
    RenderBackground();
    return Status::Ok();
  }

  // Copies the static background and paints this frame's obstacle over it: no allocation
  // once `frame.image` has the size (tests/e2e/synthetic_alloc_test.cc).
  Expected<bool> Read(CapturedFrame& frame) override {
    frame.read_start_ns = MonotonicNs();
    frame.image.Reshape(scene_.width, scene_.height);
    std::memcpy(frame.image.bgr.data(), background_.data(), background_.size());
    PaintObstacle(next_seq_, frame.image);
    frame.seq = next_seq_;
    frame.capture_ns = frame.read_start_ns;
    frame.lost_before = 0;
    frame.read_end_ns = MonotonicNs();
    current_seq_ = next_seq_++;
    return true;
  }

  TimestampSource timestamp_source() const override { return TimestampSource::kRead; }

  std::string Describe() const override {
    return fmt::format(
        "synthetic {}x{} (flat ground seen from {} m, an obstacle approaching from {} m to {} m "
        "and back every {} frames; exact ground-plane depths)",
        scene_.width, scene_.height, scene_.camera_height_m, scene_.far_m, scene_.near_m,
        scene_.period_frames);
  }

  // Up to 32 ground points of the current frame: 4 rows spread over the ground below the
  // horizon, 8 columns near the left and right edges, less those the obstacle hides.
  std::vector<ReferencePoint> References() const override {
    std::vector<ReferencePoint> points;
    FillReferences(points);
    return points;
  }

  void FillReferences(std::vector<ReferencePoint>& points) const override {
    points.clear();
    points.reserve(kSyntheticMaxReferences);  // No-op once there: no allocation per frame.
    const double horizon = scene_.Horizon();
    const SyntheticScene::Box box = scene_.ObstacleBox(current_seq_);
    for (int k = 0; k < 4; ++k) {
      const double y = std::round(horizon + (scene_.height - 1 - horizon) * (k + 1) / 4.0);
      if (y <= horizon || y > scene_.height - 1) continue;
      for (int j = 0; j < 8; ++j) {
        const double edge = std::round(scene_.width * (0.01 + 0.025 * (j % 4)));
        const double x = j < 4 ? edge : scene_.width - 1 - edge;
        if (x >= box.left && x <= box.right && y >= box.top && y <= box.bottom) continue;
        points.push_back({x, y, scene_.GroundDepth(y)});
      }
    }
  }

 private:
  // Sky above the horizon; below it a 1 m checkerboard on the ground, darker with depth.
  void RenderBackground() {
    const int w = scene_.width;
    const int h = scene_.height;
    background_.assign(static_cast<size_t>(w) * static_cast<size_t>(h) * 3, 0);
    const double horizon = scene_.Horizon();
    const double f = scene_.Focal();
    const double cx = w / 2.0;
    for (int y = 0; y < h; ++y) {
      uint8_t* row = background_.data() + static_cast<size_t>(y) * static_cast<size_t>(w) * 3;
      const double z = scene_.GroundDepth(y);
      if (!std::isfinite(z)) {
        const double t = y / std::max(horizon, 1.0);
        for (int x = 0; x < w; ++x) {
          row[3 * x] = SyntheticClampByte(235 - 40 * t);
          row[3 * x + 1] = SyntheticClampByte(190 - 30 * t);
          row[3 * x + 2] = SyntheticClampByte(140 - 30 * t);
        }
        continue;
      }
      const double shade = 1 / (1 + z / 20);
      for (int x = 0; x < w; ++x) {
        const double ground_x = (x - cx) * z / f;
        const auto cell = static_cast<int64_t>(std::floor(ground_x) + std::floor(z));
        const double base = (cell & 1) != 0 ? 200 : 110;
        const uint8_t v = SyntheticClampByte(20 + base * shade);
        row[3 * x] = v;
        row[3 * x + 1] = v;
        row[3 * x + 2] = v;
      }
    }
  }

  // Blue 0 marks the obstacle (sky and ground always have some blue): red brighter when
  // near, six vertical stripes of green.
  void PaintObstacle(uint64_t seq, Image& image) const {
    const SyntheticScene::Box box = scene_.ObstacleBox(seq);
    const int x0 = std::max(0, static_cast<int>(std::ceil(box.left)));
    const int x1 = std::min(scene_.width - 1, static_cast<int>(std::floor(box.right)));
    const int y0 = std::max(0, static_cast<int>(std::ceil(box.top)));
    const int y1 = std::min(scene_.height - 1, static_cast<int>(std::floor(box.bottom)));
    const double d = scene_.ObstacleDistance(seq);
    const uint8_t red = SyntheticClampByte(80 + 175 / (1 + d / 4));
    const double stripe = std::max(1.0, (box.right - box.left) / 6);
    for (int y = y0; y <= y1; ++y) {
      uint8_t* row =
          image.bgr.data() + static_cast<size_t>(y) * static_cast<size_t>(image.width) * 3;
      for (int x = x0; x <= x1; ++x) {
        const auto band = static_cast<int64_t>(std::floor((x - box.left) / stripe));
        row[3 * x] = 0;
        row[3 * x + 1] = (band & 1) != 0 ? 90 : 40;
        row[3 * x + 2] = red;
      }
    }
  }

  SyntheticScene scene_;
  std::vector<uint8_t> background_;
  uint64_t next_seq_ = 0;
  uint64_t current_seq_ = 0;
};

}  // namespace

std::unique_ptr<FrameSource> MakeSyntheticSource(const SourceSpec& spec) {
  return std::make_unique<SyntheticSource>(spec);
}

}  // namespace rtpulse::e2e
