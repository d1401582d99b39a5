#include "e2e/frame_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

#include "core/parse.h"
#include "core/printable.h"
#include "e2e/sources.h"

namespace rtpulse::e2e {
namespace {

constexpr const char* kSourceForms =
    "use synthetic, synthetic:WxH, video:PATH[,loop], images:DIR[,loop] or "
    "v4l2:DEVICE[,WxH][,Ffps] (e.g. v4l2:/dev/video0,640x480,30fps)";

Error SourceSpecError(std::string_view text, std::string_view why) {
  return UsageError(fmt::format("--source {}: {}; {}", Printable(text), why, kSourceForms));
}

// "WxH" with both sides in [16, 16384]; nullopt when `text` is not of that form.
std::optional<std::pair<int, int>> ParseFrameSize(std::string_view text) {
  const size_t x = text.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  int w = 0;
  int h = 0;
  const std::string_view ws = text.substr(0, x);
  const std::string_view hs = text.substr(x + 1);
  const auto rw = std::from_chars(ws.data(), ws.data() + ws.size(), w);
  const auto rh = std::from_chars(hs.data(), hs.data() + hs.size(), h);
  if (ws.empty() || hs.empty() || rw.ec != std::errc() || rw.ptr != ws.data() + ws.size() ||
      rh.ec != std::errc() || rh.ptr != hs.data() + hs.size()) {
    return std::nullopt;
  }
  return std::make_pair(w, h);
}

bool ValidFrameSide(int side) {
  return side >= 16 && side <= 16384;
}

// Splits off the trailing ",option" tokens the kind accepts; what remains is the path (so a
// path may itself hold commas as long as its last part is no option).
Status ParseSourceOptions(std::string_view text, std::string_view& rest, SourceSpec& spec) {
  while (true) {
    const size_t comma = rest.rfind(',');
    if (comma == std::string_view::npos) return Status::Ok();
    const std::string_view option = rest.substr(comma + 1);
    const bool file_kind = spec.kind == SourceKind::kVideo || spec.kind == SourceKind::kImages;
    if (file_kind && option == "loop") {
      spec.loop = true;
    } else if (spec.kind == SourceKind::kV4l2 && ParseFrameSize(option)) {
      const auto size = *ParseFrameSize(option);
      if (!ValidFrameSide(size.first) || !ValidFrameSide(size.second)) {
        return SourceSpecError(text, fmt::format("frame size {} is out of range (16 to 16384 "
                                                 "pixels a side)",
                                                 Printable(option)));
      }
      spec.width = size.first;
      spec.height = size.second;
    } else if (spec.kind == SourceKind::kV4l2 && option.size() > 3 &&
               option.substr(option.size() - 3) == "fps") {
      const std::string number(option.substr(0, option.size() - 3));
      char* end = nullptr;
      const double fps = std::strtod(number.c_str(), &end);
      if (end != number.c_str() + number.size() || !(fps > 0) || fps > 10000) {
        return SourceSpecError(text, fmt::format("frame rate {} is not a number of frames per "
                                                 "second in (0, 10000]",
                                                 Printable(option)));
      }
      spec.fps = fps;
    } else {
      return Status::Ok();
    }
    rest = rest.substr(0, comma);
  }
}

}  // namespace

std::string_view TimestampSourceName(TimestampSource source) {
  switch (source) {
    case TimestampSource::kRead:
      return "read";
    case TimestampSource::kDriverStartOfExposure:
      return "driver-soe";
    case TimestampSource::kDriverEndOfFrame:
      return "driver-eof";
  }
  return "read";
}

Expected<SourceSpec> ParseSourceSpec(std::string_view text) {
  SourceSpec spec;
  spec.text = std::string(text);
  if (text == "synthetic") return spec;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return SourceSpecError(text, "unknown source");
  const std::string_view kind = text.substr(0, colon);
  std::string_view rest = text.substr(colon + 1);
  if (kind == "synthetic") {
    const auto size = ParseFrameSize(rest);
    if (!size) return SourceSpecError(text, fmt::format("{} is not WxH", Printable(rest)));
    if (!ValidFrameSide(size->first) || !ValidFrameSide(size->second)) {
      return SourceSpecError(text, "the frame size is out of range (16 to 16384 pixels a side)");
    }
    spec.width = size->first;
    spec.height = size->second;
    return spec;
  }
  if (kind == "video") {
    spec.kind = SourceKind::kVideo;
  } else if (kind == "images") {
    spec.kind = SourceKind::kImages;
  } else if (kind == "v4l2") {
    spec.kind = SourceKind::kV4l2;
    spec.width = 0;
    spec.height = 0;
  } else {
    return SourceSpecError(text, fmt::format("unknown source kind {}", Printable(kind)));
  }
  if (Status s = ParseSourceOptions(text, rest, spec); !s) return s.error();
  if (rest.empty()) return SourceSpecError(text, "the path is empty");
  spec.path = std::string(rest);
  return spec;
}

bool OpenCvSourcesCompiledIn() {
  return RTPULSE_HAVE_OPENCV != 0;
}

Expected<std::unique_ptr<FrameSource>> MakeSource(const SourceSpec& spec) {
  switch (spec.kind) {
    case SourceKind::kSynthetic:
      return MakeSyntheticSource(spec);
    case SourceKind::kV4l2:
      return MakeV4l2Source(spec);
    case SourceKind::kVideo:
    case SourceKind::kImages:
      if (!OpenCvSourcesCompiledIn()) {
        return ResourceError(fmt::format(
            "--source {}: video files and images are decoded by OpenCV, which is not in this "
            "build of rtpulse (built without RTPULSE_INFERENCE); apt-get install libopencv-dev "
            "and rebuild, or use --source synthetic or v4l2:DEVICE",
            Printable(spec.text)));
      }
      return spec.kind == SourceKind::kVideo ? MakeVideoSource(spec) : MakeImagesSource(spec);
  }
  return UsageError("--source: unknown kind");
}

std::string SourceBaseName(const std::string& path) {
  std::string_view view = path;
  while (view.size() > 1 && view.back() == '/') view.remove_suffix(1);
  const size_t slash = view.rfind('/');
  return Printable(slash == std::string_view::npos ? view : view.substr(slash + 1));
}

// ---- --reference FILE ---------------------------------------------------------------------------

namespace {

Expected<double> ParseReferenceNumber(const std::string& path, int line_no, std::string_view field,
                                      std::string_view what) {
  const std::string_view trimmed = TrimBlanks(field);
  double value = 0;
  const auto r = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value);
  if (trimmed.empty() || r.ec != std::errc() || r.ptr != trimmed.data() + trimmed.size() ||
      !std::isfinite(value)) {
    return UsageError(
        fmt::format("--reference {}:{}: {} {} is not a number (lines are "
                    "x,y,depth_m: source pixels and metres)",
                    Printable(path), line_no, what, Printable(trimmed)));
  }
  return value;
}

}  // namespace

Expected<std::vector<ReferencePoint>> ReadReferenceFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return UsageError(
        fmt::format("--reference {}: cannot read it ({}); give a CSV file of "
                    "x,y,depth_m lines",
                    Printable(path), std::strerror(errno)));
  }
  std::vector<ReferencePoint> points;
  std::string line;
  int line_no = 0;
  bool seen_data = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string_view text = TrimBlanks(line);
    if (text.empty() || text.front() == '#') continue;
    if (!seen_data && points.empty() && text == "x,y,depth_m") {
      seen_data = true;
      continue;
    }
    seen_data = true;
    std::vector<std::string_view> fields;
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      fields.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (fields.size() != 3) {
      return UsageError(fmt::format("--reference {}:{}: {} has {} fields, not 3 (x,y,depth_m)",
                                    Printable(path), line_no, Printable(text), fields.size()));
    }
    const auto x = ParseReferenceNumber(path, line_no, fields[0], "x");
    if (!x) return x.error();
    const auto y = ParseReferenceNumber(path, line_no, fields[1], "y");
    if (!y) return y.error();
    const auto depth = ParseReferenceNumber(path, line_no, fields[2], "depth_m");
    if (!depth) return depth.error();
    if (*x < 0 || *y < 0) {
      return UsageError(
          fmt::format("--reference {}:{}: the point ({}, {}) is outside the "
                      "frame (pixels count from 0 at the top left)",
                      Printable(path), line_no, *x, *y));
    }
    if (*depth <= 0) {
      return UsageError(
          fmt::format("--reference {}:{}: depth_m {} is not a positive distance "
                      "in metres",
                      Printable(path), line_no, *depth));
    }
    points.push_back({*x, *y, *depth});
  }
  if (in.bad()) {
    return UsageError(
        fmt::format("--reference {}: read error ({})", Printable(path), std::strerror(errno)));
  }
  if (points.empty()) {
    return UsageError(
        fmt::format("--reference {}: no points in it; give lines x,y,depth_m", Printable(path)));
  }
  return points;
}

// ---- The synthetic scene ------------------------------------------------------------------------

double SyntheticScene::ObstacleDistance(uint64_t seq) const {
  const uint64_t period = std::max<uint64_t>(period_frames, 1);
  const double phase = static_cast<double>(seq % period) / static_cast<double>(period);
  const double t = phase < 0.5 ? 2 * phase : 2 - 2 * phase;
  return far_m - (far_m - near_m) * t;
}

double SyntheticScene::GroundDepth(double y) const {
  const double below = y - Horizon();
  if (below <= 0) return std::numeric_limits<double>::infinity();
  return Focal() * camera_height_m / below;
}

SyntheticScene::Box SyntheticScene::ObstacleBox(uint64_t seq) const {
  const double d = ObstacleDistance(seq);
  const double f = Focal();
  const double cx = width / 2.0;
  Box box;
  box.left = cx - f * obstacle_width_m / 2 / d;
  box.right = cx + f * obstacle_width_m / 2 / d;
  box.top = Horizon() - f * (obstacle_height_m - camera_height_m) / d;
  box.bottom = Horizon() + f * camera_height_m / d;
  return box;
}

}  // namespace rtpulse::e2e
