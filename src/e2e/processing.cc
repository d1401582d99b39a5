#include "e2e/processing.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/printable.h"

namespace rtpulse::e2e {
namespace {

// OpenCV's INTER_LINEAR fixed point for 8-bit images (imgproc/src/resize.cpp): weights in
// units of 1/2048; the vertical pass works on (sum >> 4) with 16-bit high multiplies and a
// rounding shift by 2 (its vector path, which OpenCV 4.6 takes for every element: checked
// against cv2.resize on rows that are not whole vector groups too).
constexpr int kProcResizeCoefBits = 11;
constexpr int kProcResizeCoefScale = 1 << kProcResizeCoefBits;

int16_t ProcResizeWeight(float w) {
  // saturate_cast<short>(float) rounds to nearest, ties to even (cvRound).
  const long r = std::lrint(w * static_cast<float>(kProcResizeCoefScale));
  return static_cast<int16_t>(std::clamp<long>(r, std::numeric_limits<int16_t>::min(),
                                               std::numeric_limits<int16_t>::max()));
}

uint8_t ProcClampToByte(int v) {
  return static_cast<uint8_t>(std::clamp(v, 0, 255));
}

// The vector path's arithmetic, element by element (v_mul_hi of int16, then v_rshr_pack_u<2>).
uint8_t ProcVerticalRounding(int32_t s0, int32_t s1, int16_t b0, int16_t b1) {
  const int32_t h0 = (static_cast<int16_t>(s0 >> 4) * static_cast<int32_t>(b0)) >> 16;
  const int32_t h1 = (static_cast<int16_t>(s1 >> 4) * static_cast<int32_t>(b1)) >> 16;
  return ProcClampToByte((h0 + h1 + 2) >> 2);
}

// A fraction of `size` as a pixel edge: floor(f * size + 0.5).
int ProcFracToPixel(double f, int size) {
  return static_cast<int>(std::floor(f * static_cast<double>(size) + 0.5));
}

std::string ProcFormatRect(const FracRect& r) {
  return fmt::format("{:g},{:g},{:g},{:g}", r.x0, r.y0, r.x1, r.y1);
}

bool ProcFracRectValid(const FracRect& r) {
  const auto in01 = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1; };
  return in01(r.x0) && in01(r.y0) && in01(r.x1) && in01(r.y1) && r.x0 < r.x1 && r.y0 < r.y1;
}

// The fit on `n` points, no allocation: what both FitScaleShift and the per-frame path use.
enum class ProcFitOutcome { kOk, kTooFew, kEqualRelative };

ProcFitOutcome ProcFitPoints(const double* relative, const double* metric, size_t n,
                             DepthFit& fit) {
  fit = DepthFit{};
  fit.points = n;
  if (n < 2) return ProcFitOutcome::kTooFew;
  // Centred sums (the normal equations after subtracting the means): no cancellation when
  // the values sit far from zero.
  long double mean_r = 0, mean_m = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_r += static_cast<long double>(relative[i]);
    mean_m += static_cast<long double>(metric[i]);
  }
  mean_r /= static_cast<long double>(n);
  mean_m /= static_cast<long double>(n);
  long double sxx = 0, sxy = 0, syy = 0, max_abs_r = 0;
  for (size_t i = 0; i < n; ++i) {
    const long double dr = static_cast<long double>(relative[i]) - mean_r;
    const long double dm = static_cast<long double>(metric[i]) - mean_m;
    sxx += dr * dr;
    sxy += dr * dm;
    syy += dm * dm;
    max_abs_r = std::max(max_abs_r, std::fabs(static_cast<long double>(relative[i])));
  }
  // Equal relative values (to 1e-12 of their magnitude): the scale is undefined.
  const long double spread = std::sqrt(sxx / static_cast<long double>(n));
  if (spread <= 1e-12L * std::max(max_abs_r, 1e-300L)) return ProcFitOutcome::kEqualRelative;
  const long double scale = sxy / sxx;
  const long double shift = mean_m - scale * mean_r;
  long double ss_res = 0;
  for (size_t i = 0; i < n; ++i) {
    const long double e = static_cast<long double>(metric[i]) -
                          (scale * static_cast<long double>(relative[i]) + shift);
    ss_res += e * e;
  }
  fit.scale = static_cast<double>(scale);
  fit.shift = static_cast<double>(shift);
  fit.rms_residual_m = static_cast<double>(std::sqrt(ss_res / static_cast<long double>(n)));
  fit.r2 = syy > 0 ? static_cast<double>(std::max(0.0L, 1.0L - ss_res / syy)) : 0.0;
  return ProcFitOutcome::kOk;
}

// numpy.percentile(method="inverted_cdf"): the smallest value whose empirical CDF reaches p,
// 0-based rank ceil(n * p / 100) - 1, computed as NumPy does so the ranks agree exactly.
size_t ProcNearestRank(size_t n, double percentile) {
  const double q = percentile / 100.0;
  const double virtual_index = static_cast<double>(n) * q - 1.0;
  double rank = std::floor(virtual_index);
  if (virtual_index - rank > 0) rank += 1;
  if (rank < 0) rank = 0;
  return std::min(static_cast<size_t>(rank), n - 1);
}

}  // namespace

Expected<FracRect> ParseFracRect(std::string_view option, std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format(
        "{} \"{}\": {}; expected X0,Y0,X1,Y1 as fractions 0..1 of the image with X0 < X1 and "
        "Y0 < Y1, e.g. {} 0,0.25,1,1",
        option, Printable(text), why, option));
  };
  double v[4] = {0, 0, 0, 0};
  size_t begin = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t comma = text.find(',', begin);
    const bool last = i == 3;
    if (last != (comma == std::string_view::npos)) {
      return bad(last ? "more than 4 values" : "fewer than 4 values");
    }
    const std::string_view part = text.substr(begin, last ? text.npos : comma - begin);
    const char* first = part.data();
    const char* end = part.data() + part.size();
    const auto [ptr, ec] = std::from_chars(first, end, v[i]);
    if (part.empty() || ec != std::errc() || ptr != end) {
      return bad(fmt::format("\"{}\" is not a number", Printable(part)));
    }
    if (!std::isfinite(v[i])) {
      return bad(fmt::format("\"{}\" is not a finite number", Printable(part)));
    }
    if (v[i] < 0 || v[i] > 1) {
      return bad(fmt::format("{} is outside 0..1", Printable(part)));
    }
    begin = comma + 1;
  }
  if (v[0] >= v[2]) return bad(fmt::format("X0 {:g} is not below X1 {:g}", v[0], v[2]));
  if (v[1] >= v[3]) return bad(fmt::format("Y0 {:g} is not below Y1 {:g}", v[1], v[3]));
  return FracRect{v[0], v[1], v[2], v[3]};
}

Status Preprocessor::Prepare(const PreprocessSpec& spec, int src_w, int src_h,
                             const ModelShape& model) {
  prepared_ = false;
  if (src_w <= 0 || src_h <= 0) {
    return UsageError(fmt::format("preprocess: source frame size {}x{} is empty", src_w, src_h));
  }
  if (model.in_channels != 3 || model.in_width <= 0 || model.in_height <= 0 ||
      model.out_width <= 0 || model.out_height <= 0) {
    return UsageError(fmt::format(
        "preprocess: model input 1x{}x{}x{} is not a 3-channel image (give a depth model "
        "taking 1x3xHxW)",
        model.in_channels, model.in_height, model.in_width));
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(spec.mean[c]) || !std::isfinite(spec.std[c]) || spec.std[c] <= 0) {
      return UsageError(
          fmt::format("preprocess: normalisation mean {:g} / std {:g} of channel {} is not "
                      "usable (std must be > 0)",
                      spec.mean[c], spec.std[c], c));
    }
  }
  if (!ProcFracRectValid(spec.crop)) {
    return UsageError(fmt::format("--crop {}: give X0,Y0,X1,Y1 in 0..1 with X0 < X1, Y0 < Y1",
                                  ProcFormatRect(spec.crop)));
  }
  const int x0 = ProcFracToPixel(spec.crop.x0, src_w), x1 = ProcFracToPixel(spec.crop.x1, src_w);
  const int y0 = ProcFracToPixel(spec.crop.y0, src_h), y1 = ProcFracToPixel(spec.crop.y1, src_h);
  if (x1 - x0 < 1 || y1 - y0 < 1) {
    return UsageError(fmt::format(
        "--crop {}: keeps {}x{} pixels of the {}x{} frame; widen it to at least one pixel",
        ProcFormatRect(spec.crop), std::max(0, x1 - x0), std::max(0, y1 - y0), src_w, src_h));
  }
  spec_ = spec;
  src_w_ = src_w;
  src_h_ = src_h;
  crop_x_ = x0;
  crop_y_ = y0;
  crop_w_ = x1 - x0;
  crop_h_ = y1 - y0;
  model_ = model;
  const int in_w = model.in_width, in_h = model.in_height;
  resized_.assign(static_cast<size_t>(in_w) * static_cast<size_t>(in_h) * 3, 0);

  // The tables of OpenCV's resizeGeneric_ for INTER_LINEAR (fx computed in float as there).
  const double scale_x = 1.0 / (static_cast<double>(in_w) / crop_w_);
  const double scale_y = 1.0 / (static_cast<double>(in_h) / crop_h_);
  const int row_elems = in_w * 3;
  // Per output pixel (the three channels share the source pixel and the weights).
  xofs_.assign(static_cast<size_t>(in_w), 0);
  xalpha_.assign(static_cast<size_t>(in_w) * 2, 0);
  xmax_ = in_w;
  for (int dx = 0; dx < in_w; ++dx) {
    float fx = static_cast<float>((dx + 0.5) * scale_x - 0.5);
    int sx = static_cast<int>(std::floor(fx));
    fx -= static_cast<float>(sx);
    if (sx < 0) fx = 0, sx = 0;
    if (sx + 1 >= crop_w_) {
      xmax_ = std::min(xmax_, dx);
      if (sx >= crop_w_ - 1) fx = 0, sx = crop_w_ - 1;
    }
    const auto d = static_cast<size_t>(dx);
    xofs_[d] = sx * 3;
    xalpha_[d * 2] = ProcResizeWeight(1.f - fx);
    xalpha_[d * 2 + 1] = ProcResizeWeight(fx);
  }
  yofs_.assign(static_cast<size_t>(in_h) * 2, 0);
  ybeta_.assign(static_cast<size_t>(in_h) * 2, 0);
  for (int dy = 0; dy < in_h; ++dy) {
    float fy = static_cast<float>((dy + 0.5) * scale_y - 0.5);
    const int sy = static_cast<int>(std::floor(fy));
    fy -= static_cast<float>(sy);
    // Rows clamped into the crop, weights kept (as OpenCV does for rows).
    yofs_[static_cast<size_t>(dy) * 2] = std::clamp(sy, 0, crop_h_ - 1);
    yofs_[static_cast<size_t>(dy) * 2 + 1] = std::clamp(sy + 1, 0, crop_h_ - 1);
    ybeta_[static_cast<size_t>(dy) * 2] = ProcResizeWeight(1.f - fy);
    ybeta_[static_cast<size_t>(dy) * 2 + 1] = ProcResizeWeight(fy);
  }
  for (auto& row : hrows_) row.assign(static_cast<size_t>(row_elems), 0);
  hrow_src_[0] = hrow_src_[1] = -1;
  // RGB planes: (v / 255 - mean) / std = v * mul + add.
  for (int c = 0; c < 3; ++c) {
    norm_mul_[c] = static_cast<float>(1.0 / (255.0 * spec.std[c]));
    norm_add_[c] = static_cast<float>(-spec.mean[c] / spec.std[c]);
  }
  prepared_ = true;
  return Status::Ok();
}

void Preprocessor::ResizeRow(const uint8_t* src_row, int32_t* dst) const {
  const int in_w = model_.in_width;
  int dx = 0;
  for (; dx < xmax_; ++dx, dst += 3) {
    const uint8_t* p = src_row + xofs_[static_cast<size_t>(dx)];
    const int32_t a0 = xalpha_[static_cast<size_t>(dx) * 2];
    const int32_t a1 = xalpha_[static_cast<size_t>(dx) * 2 + 1];
    dst[0] = p[0] * a0 + p[3] * a1;
    dst[1] = p[1] * a0 + p[4] * a1;
    dst[2] = p[2] * a0 + p[5] * a1;
  }
  for (; dx < in_w; ++dx, dst += 3) {
    const uint8_t* p = src_row + xofs_[static_cast<size_t>(dx)];
    for (int k = 0; k < 3; ++k) dst[k] = p[k] * kProcResizeCoefScale;
  }
}

const int32_t* Preprocessor::HorizontalRow(const uint8_t* crop_origin, int row, int keep_row) {
  for (int s = 0; s < 2; ++s) {
    if (hrow_src_[s] == row) return hrows_[s].data();
  }
  // Into the slot that does not hold the other row this output row needs.
  const int slot = hrow_src_[0] == keep_row ? 1 : 0;
  const size_t stride = static_cast<size_t>(src_w_) * 3;
  ResizeRow(crop_origin + static_cast<size_t>(row) * stride, hrows_[slot].data());
  hrow_src_[slot] = row;
  return hrows_[slot].data();
}

Status Preprocessor::Run(const Image& image, Tensor& out) {
  if (!prepared_) return Failure("preprocess: Run before a successful Prepare");
  if (image.width != src_w_ || image.height != src_h_ ||
      image.bgr.size() != static_cast<size_t>(src_w_) * static_cast<size_t>(src_h_) * 3) {
    return UsageError(fmt::format(
        "preprocess: frame is {}x{}, the pipeline was prepared for {}x{} (a source must keep "
        "its frame size)",
        image.width, image.height, src_w_, src_h_));
  }
  const int in_w = model_.in_width, in_h = model_.in_height;
  const size_t plane = static_cast<size_t>(in_w) * static_cast<size_t>(in_h);
  if (out.shape.size() != 4 || out.shape[0] != 1 || out.shape[1] != 3 || out.shape[2] != in_h ||
      out.shape[3] != in_w) {
    out.shape = {1, 3, in_h, in_w};
  }
  out.data.resize(plane * 3);
  const uint8_t* origin =
      image.bgr.data() +
      (static_cast<size_t>(crop_y_) * static_cast<size_t>(src_w_) + static_cast<size_t>(crop_x_)) *
          3;
  const int row_elems = in_w * 3;
  float* planes[3] = {out.data.data(), out.data.data() + plane, out.data.data() + 2 * plane};
  for (int dy = 0; dy < in_h; ++dy) {
    const int r0 = yofs_[static_cast<size_t>(dy) * 2];
    const int r1 = yofs_[static_cast<size_t>(dy) * 2 + 1];
    const int32_t* s0 = HorizontalRow(origin, r0, r1);
    const int32_t* s1 = HorizontalRow(origin, r1, r0);
    const int16_t b0 = ybeta_[static_cast<size_t>(dy) * 2];
    const int16_t b1 = ybeta_[static_cast<size_t>(dy) * 2 + 1];
    uint8_t* bytes = resized_.data() + static_cast<size_t>(dy) * static_cast<size_t>(row_elems);
    for (int e = 0; e < row_elems; ++e) bytes[e] = ProcVerticalRounding(s0[e], s1[e], b0, b1);
    // BGR bytes -> RGB planes, normalised.
    const size_t base = static_cast<size_t>(dy) * static_cast<size_t>(in_w);
    for (int x = 0; x < in_w; ++x) {
      const uint8_t* px = bytes + static_cast<size_t>(x) * 3;
      for (int c = 0; c < 3; ++c) {
        planes[c][base + static_cast<size_t>(x)] =
            static_cast<float>(px[2 - c]) * norm_mul_[c] + norm_add_[c];
      }
    }
  }
  return Status::Ok();
}

std::optional<std::pair<double, double>> Preprocessor::SourceToOutput(double x, double y) const {
  if (!prepared_ || !std::isfinite(x) || !std::isfinite(y)) return std::nullopt;
  if (x < crop_x_ || x >= crop_x_ + crop_w_ || y < crop_y_ || y >= crop_y_ + crop_h_) {
    return std::nullopt;
  }
  return std::make_pair((x - crop_x_) * model_.out_width / crop_w_,
                        (y - crop_y_) * model_.out_height / crop_h_);
}

std::pair<double, double> Preprocessor::OutputToSource(double u, double v) const {
  if (!prepared_) return {0, 0};
  return {crop_x_ + u * crop_w_ / model_.out_width, crop_y_ + v * crop_h_ / model_.out_height};
}

Expected<DepthFit> FitScaleShift(const std::vector<double>& relative,
                                 const std::vector<double>& metric) {
  if (relative.size() != metric.size()) {
    return UsageError(fmt::format("depth fit: {} relative values but {} reference depths",
                                  relative.size(), metric.size()));
  }
  for (size_t i = 0; i < relative.size(); ++i) {
    if (!std::isfinite(relative[i]) || !std::isfinite(metric[i])) {
      return UsageError(
          fmt::format("depth fit: point {} (relative {:g}, depth {:g} m) is not finite", i,
                      relative[i], metric[i]));
    }
  }
  DepthFit fit;
  switch (ProcFitPoints(relative.data(), metric.data(), relative.size(), fit)) {
    case ProcFitOutcome::kOk:
      return fit;
    case ProcFitOutcome::kTooFew:
      return UsageError(fmt::format(
          "depth fit: {} reference point(s); a scale and a shift need at least 2 (give more "
          "with --reference)",
          relative.size()));
    case ProcFitOutcome::kEqualRelative:
      break;
  }
  return UsageError(fmt::format(
      "depth fit: the {} reference points all have relative depth {:g}, so no scale can be "
      "fitted (place references at different depths)",
      relative.size(), relative.front()));
}

std::string_view DepthStatusName(DepthStatus status) {
  switch (status) {
    case DepthStatus::kOk:
      return "ok";
    case DepthStatus::kWeakFit:
      return "weak-fit";
    case DepthStatus::kNoFit:
      return "no-fit";
    case DepthStatus::kRoiInvalid:
      return "roi-invalid";
    case DepthStatus::kTimingOnly:
      return "timing-only";
  }
  return "?";
}

Status Postprocessor::Prepare(const DecisionSpec& spec, const ModelShape& model,
                              const Preprocessor& pre,
                              const std::vector<ReferencePoint>& references) {
  prepared_ = false;
  if (!std::isfinite(spec.near_m) || spec.near_m <= 0) {
    return UsageError(
        fmt::format("--near {:g}: must be a distance > 0 m, e.g. --near 1.0", spec.near_m));
  }
  if (!std::isfinite(spec.clear_m) || spec.clear_m < spec.near_m) {
    return UsageError(fmt::format(
        "--clear {:g} is below --near {:g}: the state clears only above --clear, so give "
        "--clear >= --near (e.g. --clear {:g})",
        spec.clear_m, spec.near_m, spec.near_m * 1.25));
  }
  if (!std::isfinite(spec.percentile) || spec.percentile < 0 || spec.percentile > 100) {
    return UsageError(fmt::format("ROI percentile {:g} is outside 0..100", spec.percentile));
  }
  if (model.out_channels != 1 || model.out_width <= 0 || model.out_height <= 0) {
    return UsageError(fmt::format(
        "postprocess: model output 1x{}x{}x{} is not one depth map (give a model with a "
        "1x1xHxW output)",
        model.out_channels, model.out_height, model.out_width));
  }
  if (!ProcFracRectValid(spec.roi)) {
    return UsageError(fmt::format("--roi {}: give X0,Y0,X1,Y1 in 0..1 with X0 < X1, Y0 < Y1",
                                  ProcFormatRect(spec.roi)));
  }
  const int x0 = ProcFracToPixel(spec.roi.x0, model.out_width);
  const int x1 = ProcFracToPixel(spec.roi.x1, model.out_width);
  const int y0 = ProcFracToPixel(spec.roi.y0, model.out_height);
  const int y1 = ProcFracToPixel(spec.roi.y1, model.out_height);
  if (x1 - x0 < 1 || y1 - y0 < 1) {
    return UsageError(fmt::format("--roi {}: keeps no pixel of the {}x{} depth map; widen it",
                                  ProcFormatRect(spec.roi), model.out_width, model.out_height));
  }
  spec_ = spec;
  model_ = model;
  roi_x0_ = x0;
  roi_x1_ = x1;
  roi_y0_ = y0;
  roi_y1_ = y1;
  roi_values_.assign(static_cast<size_t>(x1 - x0) * static_cast<size_t>(y1 - y0), 0.0);
  obstacle_ = false;
  prepared_ = true;
  if (spec.timing_only) return Status::Ok();
  const Status mapped = MapReferences(pre, references);
  if (!mapped) prepared_ = false;
  return mapped;
}

Status Postprocessor::SetReferences(const Preprocessor& pre,
                                    const std::vector<ReferencePoint>& references) {
  if (!prepared_) return Failure("postprocess: SetReferences before a successful Prepare");
  return MapReferences(pre, references);
}

Status Postprocessor::MapReferences(const Preprocessor& pre,
                                    const std::vector<ReferencePoint>& references) {
  // Capacity for every given point, so a source whose references move keeps its buffers.
  if (ref_index_.capacity() < references.size()) {
    ref_index_.reserve(references.size());
    ref_metric_.reserve(references.size());
    scratch_relative_.reserve(references.size());
    scratch_metric_.reserve(references.size());
  }
  ref_index_.clear();
  ref_metric_.clear();
  for (const ReferencePoint& r : references) {
    if (!std::isfinite(r.depth_m)) continue;
    const auto uv = pre.SourceToOutput(r.x, r.y);
    if (!uv) continue;
    // The nearest output pixel centre to (u, v) is pixel floor(u), floor(v).
    const int col = std::clamp(static_cast<int>(std::floor(uv->first)), 0, model_.out_width - 1);
    const int row = std::clamp(static_cast<int>(std::floor(uv->second)), 0, model_.out_height - 1);
    ref_index_.push_back(row * model_.out_width + col);
    ref_metric_.push_back(r.depth_m);
  }
  scratch_relative_.resize(ref_index_.size());
  scratch_metric_.resize(ref_index_.size());
  if (ref_index_.size() < 2) {
    return UsageError(fmt::format(
        "--reference: {} of the {} reference depth point(s) fall inside the crop; the depth "
        "fit needs at least 2 (add points with --reference FILE or widen --crop)",
        ref_index_.size(), references.size()));
  }
  return Status::Ok();
}

std::optional<double> Postprocessor::RoiPercentile(const float* rel, double scale, double shift,
                                                   size_t& valid) {
  const size_t w = static_cast<size_t>(model_.out_width);
  size_t k = 0;
  for (int y = roi_y0_; y < roi_y1_; ++y) {
    const float* row = rel + static_cast<size_t>(y) * w;
    for (int x = roi_x0_; x < roi_x1_; ++x) {
      const float r = row[x];
      if (std::isfinite(r)) roi_values_[k++] = scale * static_cast<double>(r) + shift;
    }
  }
  valid = k;
  if (k == 0) return std::nullopt;
  const size_t rank = ProcNearestRank(k, spec_.percentile);
  const auto first = roi_values_.begin();
  std::nth_element(first, first + static_cast<std::ptrdiff_t>(rank),
                   first + static_cast<std::ptrdiff_t>(k));
  return roi_values_[rank];
}

Status Postprocessor::Run(const Tensor& relative_depth, Decision& out) {
  if (!prepared_) return Failure("postprocess: Run before a successful Prepare");
  const size_t w = static_cast<size_t>(model_.out_width);
  if (relative_depth.data.size() != w * static_cast<size_t>(model_.out_height)) {
    return UsageError(
        fmt::format("postprocess: depth map has {} values, the model's output is 1x1x{}x{}",
                    relative_depth.data.size(), model_.out_height, model_.out_width));
  }
  const float* rel = relative_depth.data.data();
  const bool was_obstacle = obstacle_;
  out = Decision{};
  out.roi_pixels = roi_values_.size();
  if (spec_.timing_only) {
    // The ROI's percentile of the raw map, as the metric path takes it (a unit scale), then
    // nothing is decided: there is no scale to a depth.
    (void)RoiPercentile(rel, 1.0, 0.0, out.roi_valid);
    out.status = DepthStatus::kTimingOnly;
    out.roi_depth_m = std::numeric_limits<double>::quiet_NaN();
    out.obstacle = false;
    out.changed = false;
    return Status::Ok();
  }

  size_t n = 0;
  for (size_t i = 0; i < ref_index_.size(); ++i) {
    const float r = rel[ref_index_[i]];
    if (!std::isfinite(r)) continue;
    scratch_relative_[n] = static_cast<double>(r);
    scratch_metric_[n] = ref_metric_[i];
    ++n;
  }
  const ProcFitOutcome outcome =
      ProcFitPoints(scratch_relative_.data(), scratch_metric_.data(), n, out.fit);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (outcome != ProcFitOutcome::kOk) {
    out.status = DepthStatus::kNoFit;
    out.roi_depth_m = nan;
  } else {
    out.inverse = out.fit.scale < 0;
    const std::optional<double> depth =
        RoiPercentile(rel, out.fit.scale, out.fit.shift, out.roi_valid);
    if (!depth) {
      out.status = DepthStatus::kRoiInvalid;
      out.roi_depth_m = nan;
    } else {
      out.roi_depth_m = *depth;
      out.status = out.fit.r2 < kWeakFitR2 ? DepthStatus::kWeakFit : DepthStatus::kOk;
    }
  }
  // Hysteresis from "clear": obstacle below near, clear again above clear; a frame whose
  // depth is not known holds the state.
  if (!std::isnan(out.roi_depth_m)) {
    if (!obstacle_ && out.roi_depth_m < spec_.near_m) obstacle_ = true;
    if (obstacle_ && out.roi_depth_m > spec_.clear_m) obstacle_ = false;
  }
  out.obstacle = obstacle_;
  out.changed = obstacle_ != was_obstacle;
  return Status::Ok();
}

}  // namespace rtpulse::e2e
