#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "e2e/image.h"

// The first stage of `rtpulse e2e` (docs/e2e.md, "Sources"): where frames come from, and when
// each was captured. Every source writes into a caller-owned CapturedFrame so a steady-state
// read allocates nothing (the buffers keep their size from frame to frame).
namespace rtpulse::e2e {

enum class SourceKind {
  kSynthetic,  ///< Rendered scene of known depth (default; needs nothing attached).
  kVideo,      ///< A video file, decoded by OpenCV's videoio (FFMPEG backend).
  kImages,     ///< A folder of images (.png, .jpg, .jpeg, .bmp, .ppm), name order.
  kV4l2,       ///< A V4L2 capture device (/dev/videoN): USB cameras, libcamera's V4L2 route.
};

/// What the capture timestamp marks, as the source knows it.
enum class TimestampSource {
  kRead,  ///< No driver timestamp: capture_ns is when the read began; the pipeline takes the
          ///< frame's release as its capture time (docs/e2e.md, "Modes").
  kDriverStartOfExposure,  ///< V4L2_BUF_FLAG_TSTAMP_SRC_SOE.
  kDriverEndOfFrame,       ///< V4L2_BUF_FLAG_TSTAMP_SRC_EOF (most UVC and test drivers).
};
std::string_view TimestampSourceName(TimestampSource source);  ///< "read", "driver-soe", ...

/// --source: "synthetic", "synthetic:WxH", "video:PATH", "images:DIR", "v4l2:DEVICE"
/// (DEVICE e.g. /dev/video0), with options after commas: video and images ",loop"; v4l2
/// ",WxH" and ",Ffps" (e.g. "v4l2:/dev/video0,640x480,30fps"). A usage error naming the text
/// and the forms otherwise.
struct SourceSpec {
  SourceKind kind = SourceKind::kSynthetic;
  std::string path;  ///< File, folder or device; empty for synthetic.
  /// Synthetic frame size (a driving camera's), or V4L2's asked size (0 x 0 unless given:
  /// the size the device is set to). Unused by video and images (the file's own size).
  int width = 1242;
  int height = 375;
  double fps = 0;     ///< V4L2: the frame rate asked of the driver (0: its default).
  bool loop = false;  ///< Video and images: start again at the end instead of stopping.
  std::string text;   ///< As given, for messages and result.json.
};
Expected<SourceSpec> ParseSourceSpec(std::string_view text);

/// One frame and its timing (CLOCK_MONOTONIC ns).
struct CapturedFrame {
  Image image;
  uint64_t seq = 0;           ///< The source's frame number (V4L2: the driver's sequence).
  int64_t capture_ns = 0;     ///< Driver timestamp when there is one, else read_start_ns.
  int64_t read_start_ns = 0;  ///< When rtpulse asked for the frame.
  int64_t read_end_ns = 0;    ///< When the frame was decoded into `image`.
  uint32_t lost_before = 0;   ///< Frames the driver dropped before this one (sequence gap).
};

/// A frame source. Open() does everything that can fail for a reason the user can fix (file
/// missing or not decodable, device absent or busy, unsupported format); Read() only fails on
/// an I/O error mid-run.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual Status Open() = 0;
  /// Fills `frame`; false at the end of a finite source (video/images without loop).
  virtual Expected<bool> Read(CapturedFrame& frame) = 0;
  virtual TimestampSource timestamp_source() const = 0;
  /// e.g. "video clip.mp4 (1242x375, 10 fps, 300 frames, OpenCV FFMPEG)".
  virtual std::string Describe() const = 0;
  /// The source's own reference depths for the current frame, when it has some (synthetic:
  /// points of its ground plane, in source pixels); empty otherwise (then --reference).
  virtual std::vector<ReferencePoint> References() const { return {}; }
  /// The same into `out` (replacing its contents), for the pipeline's capture thread: a
  /// source that overrides it fills in place, without allocating once `out` has the capacity
  /// (the synthetic source); the default copies References().
  virtual void FillReferences(std::vector<ReferencePoint>& out) const { out = References(); }
  /// The source paces itself (a camera delivers at its frame rate): the pipeline's periodic
  /// mode then waits on the source, not on a timer.
  virtual bool SelfPaced() const { return false; }
};

/// A source for `spec` (not yet opened). Video and images need OpenCV (RTPULSE_INFERENCE):
/// without it a resource error naming the package.
Expected<std::unique_ptr<FrameSource>> MakeSource(const SourceSpec& spec);
/// Whether this build decodes video files and images (OpenCV's videoio and imgcodecs).
bool OpenCvSourcesCompiledIn();

/// --reference FILE: CSV lines "x,y,depth_m" (source pixels, metres; '#' comments, an
/// optional header line "x,y,depth_m"). Errors name FILE:LINE and the value.
Expected<std::vector<ReferencePoint>> ReadReferenceFile(const std::string& path);

/// The synthetic scene (docs/e2e.md, "Synthetic frames"): a camera `camera_height_m` above a
/// flat ground, looking along it, with an obstacle whose distance follows a fixed schedule
/// (approaching and receding, so decisions flip). Public so tests know the ground truth.
struct SyntheticScene {
  int width = 1242;
  int height = 375;
  double focal_px = 0;  ///< 0: width (about 53 degrees horizontal field of view).
  double camera_height_m = 1.5;
  double horizon_row = 0;  ///< 0: height / 2.
  /// Obstacle distance (m) in frame `seq`: a triangle wave between far_m and near_m.
  double near_m = 0.5;
  double far_m = 8.0;
  uint64_t period_frames = 100;
  /// The obstacle: an upright box standing on the ground, centred on the optical axis.
  double obstacle_width_m = 0.4;
  double obstacle_height_m = 1.8;
  double ObstacleDistance(uint64_t seq) const;
  /// Ground-plane depth (along the optical axis) at row `y`, metres; +infinity at and above
  /// the horizon (that row is sky).
  double GroundDepth(double y) const;
  double Focal() const { return focal_px > 0 ? focal_px : width; }
  double Horizon() const { return horizon_row > 0 ? horizon_row : height / 2.0; }
  /// Where the obstacle of frame `seq` is drawn, in unclipped pixel coordinates: a pixel
  /// (x, y) is the obstacle's when left <= x <= right and top <= y <= bottom.
  struct Box {
    double left = 0, right = 0, top = 0, bottom = 0;
  };
  Box ObstacleBox(uint64_t seq) const;
};

}  // namespace rtpulse::e2e
