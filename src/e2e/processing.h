#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "e2e/image.h"
#include "e2e/inference.h"

// The stages around inference (docs/e2e.md, "Preprocess, postprocess, decision"), as the seed
// application does them: crop, resize to the model's input, normalise; then the network's
// relative depth aligned to metric depth by a least-squares scale and shift against reference
// depths, a region of interest, and a threshold with hysteresis. Each stage runs on buffers
// prepared before the first frame: no allocation per frame once the sizes are known.
namespace rtpulse::e2e {

/// A rectangle in fractions of an image (0..1 each way): x0 < x1, y0 < y1.
struct FracRect {
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
};
/// "X0,Y0,X1,Y1" in fractions; a usage error naming `option` and the text otherwise.
Expected<FracRect> ParseFracRect(std::string_view option, std::string_view text);

struct PreprocessSpec {
  FracRect crop;  ///< --crop, of the source frame (default: all of it).
  /// Per-channel normalisation of RGB values scaled to 0..1: (v - mean) / std. The defaults
  /// are ImageNet's, what depth networks of the MiDaS family expect.
  double mean[3] = {0.485, 0.456, 0.406};
  double std[3] = {0.229, 0.224, 0.225};
};

/// Crop, resize (bilinear, OpenCV's INTER_LINEAR) to the model's input, BGR -> RGB, scale to
/// 0..1, normalise, HWC -> NCHW float32.
///
/// The resize is OpenCV's INTER_LINEAR arithmetic for 8-bit images (pixel-centre geometry,
/// 11-bit fixed-point weights, its vector path's rounding) computed from tables built in
/// Prepare: cv::resize itself allocates its tables on every call (two heap blocks), which the
/// pipeline's no-allocation rule forbids. The tests compare the bytes and the tensor with
/// Python's cv2.resize + NumPy (docs/e2e.md states the tolerance).
class Preprocessor {
 public:
  /// Fixes the sizes: source frames of `src_w` x `src_h`, the model's input shape. Usage
  /// errors: a crop that rounds to no pixel (names --crop), a model input that is not 3
  /// channels, sizes <= 0.
  Status Prepare(const PreprocessSpec& spec, int src_w, int src_h, const ModelShape& model);
  /// `out` gets shape {1, 3, in_h, in_w}; usage error if `image` is not src_w x src_h.
  Status Run(const Image& image, Tensor& out);
  /// A source-pixel point in the model's output map (after crop and resize), or nullopt when
  /// the crop cuts it away. Continuous coordinates with 0 = the left/top edge, pixel i
  /// covering [i, i + 1) (as ReferencePoint): the mapping is (x - crop_x) * out_w / crop_w,
  /// which is where cv::resize's pixel-centre rule puts a point. The model's output map is
  /// taken to cover the same field as its input.
  std::optional<std::pair<double, double>> SourceToOutput(double x, double y) const;
  /// The inverse: a point of the output map in source pixels.
  std::pair<double, double> OutputToSource(double u, double v) const;

  /// The crop in source pixels (rounded from the fractions: floor(f * size + 0.5)).
  int crop_x() const { return crop_x_; }
  int crop_y() const { return crop_y_; }
  int crop_w() const { return crop_w_; }
  int crop_h() const { return crop_h_; }
  /// The last frame's resized crop, in_h x in_w x 3 bytes, BGR (for tests and figures).
  const std::vector<uint8_t>& resized() const { return resized_; }

 private:
  void ResizeRow(const uint8_t* src_row, int32_t* dst) const;
  const int32_t* HorizontalRow(const uint8_t* crop_origin, int row, int keep_row);

  PreprocessSpec spec_;
  int src_w_ = 0, src_h_ = 0;
  int crop_x_ = 0, crop_y_ = 0, crop_w_ = 0, crop_h_ = 0;
  ModelShape model_;
  std::vector<uint8_t> resized_;  ///< in_h x in_w x 3 scratch.
  // Resize tables (OpenCV's): per output pixel its first source byte and two weights, per
  // output row its two source rows and two weights; two horizontally resized rows cached.
  std::vector<int> xofs_;
  std::vector<int16_t> xalpha_;
  int xmax_ = 0;  ///< Output pixels from here on read one source pixel (right border).
  std::vector<int> yofs_;
  std::vector<int16_t> ybeta_;
  std::vector<int32_t> hrows_[2];
  int hrow_src_[2] = {-1, -1};
  float norm_mul_[3] = {0, 0, 0}, norm_add_[3] = {0, 0, 0};  ///< RGB order.
  bool prepared_ = false;
};

/// s and t of metric = s * relative + t over the reference points (ordinary least squares,
/// the normal equations of the 2-parameter fit), with its fit quality.
struct DepthFit {
  double scale = 0;
  double shift = 0;
  double rms_residual_m = 0;
  /// Coefficient of determination (1 - residual / total sum of squares): how much of the
  /// references' depth spread the relative map explains; 0 when the references all have one
  /// depth. A scale-free measure, so "a tiny scale" is judged by it (docs/e2e.md).
  double r2 = 0;
  size_t points = 0;  ///< References inside the output map that were used.
};

/// Usage error with fewer than 2 points, sizes that differ, a value that is not finite, or all
/// relative values equal (the fit is undefined: named, never a made-up scale). Points are
/// (relative, metric) pairs. Computed on centred sums in long double (stable when the values
/// sit far from 0). A negative scale is a valid fit (inverse-depth networks), not an error.
Expected<DepthFit> FitScaleShift(const std::vector<double>& relative,
                                 const std::vector<double>& metric);

struct DecisionSpec {
  FracRect roi = {0.35, 0.5, 0.65, 1.0};  ///< --roi, of the output map: ahead, lower half.
  double percentile = 5;  ///< The ROI's depth is this percentile of its metric depths.
  double near_m = 1.0;    ///< --near: obstacle when the ROI depth drops below it.
  double clear_m = 1.25;  ///< --clear: clear again only above it (hysteresis; >= near_m).
  /// No reference depths (a camera or video without --reference): no metric scale, so no
  /// depth and no decision; each frame's ROI percentile of the raw map is still taken (the
  /// reference fit is skipped: slightly cheaper; docs/e2e.md, "Timing only").
  bool timing_only = false;
};

/// Whether a frame's ROI depth is known (docs/e2e.md, "Preprocess, postprocess, decision").
enum class DepthStatus {
  kOk,
  kWeakFit,     ///< Known but poorly explained: the fit's r2 < kWeakFitR2 (a tiny scale).
  kNoFit,       ///< Fewer than 2 finite references or all their relative values equal.
  kRoiInvalid,  ///< No finite value in the ROI.
  kTimingOnly,  ///< DecisionSpec::timing_only: no reference depths, no metric depth.
};
std::string_view DepthStatusName(DepthStatus status);  ///< "ok", "weak-fit", "no-fit", ...
/// Below this r2 a fit is flagged weak: the relative map explains less than a tenth of the
/// references' depth spread.
inline constexpr double kWeakFitR2 = 0.1;

/// What postprocessing found in one frame.
struct Decision {
  DepthFit fit;
  /// The ROI's percentile depth, metric; NaN when status is kNoFit or kRoiInvalid (then the
  /// state is held from the previous frame).
  double roi_depth_m = 0;
  DepthStatus status = DepthStatus::kOk;
  /// The fit's scale is negative: the network's output grows as depth falls (inverse depth,
  /// the MiDaS family). The linear fit is used as it is, never flipped; this says so.
  bool inverse = false;
  size_t roi_pixels = 0;  ///< ROI size in output pixels.
  size_t roi_valid = 0;   ///< Of them, finite relative values (the percentile's sample).
  bool obstacle = false;  ///< The state after this frame (hysteresis applied).
  bool changed = false;   ///< The state differs from the previous frame's.
};

/// Scale/shift fit, ROI percentile and the hysteresis state machine (starts "clear").
class Postprocessor {
 public:
  /// `references` are in source pixels; `pre` maps them to the output map (those cut away
  /// by the crop are left out; fewer than 2 left is a usage error naming --reference, unless
  /// `spec.timing_only`, which uses none).
  /// Usage errors also for --clear below --near, a non-finite or non-positive --near, a
  /// percentile outside 0..100, a ROI that rounds to no pixel (names --roi), a model output
  /// that is not 1 channel.
  Status Prepare(const DecisionSpec& spec, const ModelShape& model, const Preprocessor& pre,
                 const std::vector<ReferencePoint>& references);
  /// Updates the references (a source whose references move with each frame, e.g. synthetic).
  Status SetReferences(const Preprocessor& pre, const std::vector<ReferencePoint>& references);
  /// One frame: fit, ROI percentile (nearest rank), hysteresis. Usage error only when the
  /// tensor is not the model's output shape; an undefined fit or an invalid ROI is data
  /// (Decision::status), not an error.
  Status Run(const Tensor& relative_depth, Decision& out);

  /// The ROI in output pixels: columns [roi_x0, roi_x1), rows [roi_y0, roi_y1).
  int roi_x0() const { return roi_x0_; }
  int roi_y0() const { return roi_y0_; }
  int roi_x1() const { return roi_x1_; }
  int roi_y1() const { return roi_y1_; }
  /// Output-map element (row * out_w + col) of each kept reference.
  const std::vector<int>& reference_index() const { return ref_index_; }

 private:
  Status MapReferences(const Preprocessor& pre, const std::vector<ReferencePoint>& references);
  /// The ROI's `spec_.percentile` (nearest rank) of scale * r + shift over its finite values
  /// r of the map `rel`; `valid` gets their count, nullopt when there is none.
  std::optional<double> RoiPercentile(const float* rel, double scale, double shift, size_t& valid);

  DecisionSpec spec_;
  ModelShape model_;
  bool prepared_ = false;
  int roi_x0_ = 0, roi_y0_ = 0, roi_x1_ = 0, roi_y1_ = 0;
  std::vector<int> ref_index_;  ///< Output-map element of each reference (nearest pixel).
  std::vector<double> ref_metric_;
  std::vector<double> scratch_relative_;
  std::vector<double> scratch_metric_;
  std::vector<double> roi_values_;
  bool obstacle_ = false;
};

}  // namespace rtpulse::e2e
