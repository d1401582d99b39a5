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
class Preprocessor {
 public:
  /// Fixes the sizes: source frames of `src_w` x `src_h`, the model's input shape.
  Status Prepare(const PreprocessSpec& spec, int src_w, int src_h, const ModelShape& model);
  /// `out` gets shape {1, 3, in_h, in_w}; usage error if `image` is not src_w x src_h.
  Status Run(const Image& image, Tensor& out);
  /// A source-pixel point in the model's output map (after crop and resize), or nullopt when
  /// the crop cuts it away.
  std::optional<std::pair<double, double>> SourceToOutput(double x, double y) const;

 private:
  PreprocessSpec spec_;
  int src_w_ = 0, src_h_ = 0;
  int crop_x_ = 0, crop_y_ = 0, crop_w_ = 0, crop_h_ = 0;
  ModelShape model_;
  std::vector<uint8_t> resized_;  ///< in_h x in_w x 3 scratch.
};

/// s and t of metric = s * relative + t over the reference points (ordinary least squares,
/// the normal equations of the 2-parameter fit), with its fit quality.
struct DepthFit {
  double scale = 0;
  double shift = 0;
  double rms_residual_m = 0;
  size_t points = 0;  ///< References inside the output map that were used.
};

/// Usage error with fewer than 2 points or all relative values equal (the fit is undefined:
/// named, never a made-up scale). Points are (relative, metric) pairs.
Expected<DepthFit> FitScaleShift(const std::vector<double>& relative,
                                 const std::vector<double>& metric);

struct DecisionSpec {
  FracRect roi = {0.35, 0.5, 0.65, 1.0};  ///< --roi, of the output map: ahead, lower half.
  double percentile = 5;  ///< The ROI's depth is this percentile of its metric depths.
  double near_m = 1.0;    ///< --near: obstacle when the ROI depth drops below it.
  double clear_m = 1.25;  ///< --clear: clear again only above it (hysteresis; >= near_m).
};

/// What postprocessing found in one frame.
struct Decision {
  DepthFit fit;
  double roi_depth_m = 0;  ///< The ROI's percentile depth, metric.
  bool obstacle = false;   ///< The state after this frame (hysteresis applied).
  bool changed = false;    ///< The state differs from the previous frame's.
};

/// Scale/shift fit, ROI percentile and the hysteresis state machine (starts "clear").
class Postprocessor {
 public:
  /// `references` are in source pixels; `pre` maps them to the output map (those cut away
  /// by the crop are left out; fewer than 2 left is a usage error naming --reference).
  Status Prepare(const DecisionSpec& spec, const ModelShape& model, const Preprocessor& pre,
                 const std::vector<ReferencePoint>& references);
  /// Updates the references (a source whose references move with each frame, e.g. synthetic).
  Status SetReferences(const Preprocessor& pre, const std::vector<ReferencePoint>& references);
  Status Run(const Tensor& relative_depth, Decision& out);

 private:
  DecisionSpec spec_;
  ModelShape model_;
  std::vector<int> ref_index_;  ///< Output-map element of each reference (nearest pixel).
  std::vector<double> ref_metric_;
  std::vector<double> scratch_relative_;
  std::vector<double> roi_values_;
  bool obstacle_ = false;
};

}  // namespace rtpulse::e2e
