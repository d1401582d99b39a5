// A minimal Preprocessor/Postprocessor for the pipeline tests while src/e2e/processing.cc does
// not exist yet (tests/e2e/CMakeLists.txt adds this file only then): the pipeline's tests need
// stages that do real per-frame work on real buffers and fail on a wrong frame size as the
// header says, not the seed's exact arithmetic.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "e2e/processing.h"

namespace rtpulse::e2e {
namespace {
size_t StandinSize(int v) {
  return static_cast<size_t>(v);
}
}  // namespace

Status Preprocessor::Prepare(const PreprocessSpec& spec, int src_w, int src_h,
                             const ModelShape& model) {
  spec_ = spec;
  src_w_ = src_w;
  src_h_ = src_h;
  model_ = model;
  crop_x_ = 0;
  crop_y_ = 0;
  crop_w_ = src_w;
  crop_h_ = src_h;
  resized_.assign(StandinSize(model.in_width) * StandinSize(model.in_height) * 3, 0);
  return Status::Ok();
}

Status Preprocessor::Run(const Image& image, Tensor& out) {
  if (image.width != src_w_ || image.height != src_h_) {
    return UsageError(fmt::format("frame {}x{} is not the prepared {}x{}", image.width,
                                  image.height, src_w_, src_h_));
  }
  const size_t w = StandinSize(model_.in_width);
  const size_t h = StandinSize(model_.in_height);
  out.shape = {1, 3, model_.in_height, model_.in_width};
  out.data.resize(3 * w * h);
  for (size_t y = 0; y < h; ++y) {
    for (size_t x = 0; x < w; ++x) {  // Nearest neighbour, BGR -> RGB, normalised.
      const size_t src =
          ((y * StandinSize(crop_h_) / h) * StandinSize(src_w_) + x * StandinSize(crop_w_) / w) * 3;
      for (size_t c = 0; c < 3; ++c) {
        const double v = image.bgr[src + 2 - c] / 255.0;
        out.data[(c * h + y) * w + x] = static_cast<float>((v - spec_.mean[c]) / spec_.std[c]);
      }
    }
  }
  return Status::Ok();
}

Status Postprocessor::Prepare(const DecisionSpec& spec, const ModelShape& model,
                              const Preprocessor& /*pre*/,
                              const std::vector<ReferencePoint>& /*references*/) {
  spec_ = spec;
  model_ = model;
  roi_values_.reserve(StandinSize(model.out_width) * StandinSize(model.out_height));
  return Status::Ok();
}

Status Postprocessor::Run(const Tensor& relative_depth, Decision& out) {
  const size_t w = StandinSize(model_.out_width);
  const size_t h = StandinSize(model_.out_height);
  const auto at_frac = [](double f, size_t n) {
    return static_cast<size_t>(f * static_cast<double>(n));
  };
  roi_values_.clear();
  for (size_t y = at_frac(spec_.roi.y0, h); y < at_frac(spec_.roi.y1, h); ++y) {
    for (size_t x = at_frac(spec_.roi.x0, w); x < at_frac(spec_.roi.x1, w); ++x) {
      roi_values_.push_back(static_cast<double>(relative_depth.data[y * w + x]) * 4.0);
    }
  }
  const auto at = roi_values_.begin() + static_cast<long>(roi_values_.size() / 20);
  std::nth_element(roi_values_.begin(), at, roi_values_.end());
  out.roi_depth_m = *at;
  const bool was = obstacle_;
  obstacle_ = obstacle_ ? out.roi_depth_m < spec_.clear_m : out.roi_depth_m < spec_.near_m;
  out.obstacle = obstacle_;
  out.changed = obstacle_ != was;
  return Status::Ok();
}

}  // namespace rtpulse::e2e
