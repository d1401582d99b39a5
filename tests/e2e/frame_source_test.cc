// The sources every build has (synthetic, V4L2's errors on this machine), --source and
// --reference parsing, and the synthetic scene against tests/e2e/source_truth.py, an
// independent computation of the formulas docs/e2e.md states.
#include "e2e/frame_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "e2e/sources.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

const std::string kTruth = std::string(RTPULSE_SOURCE_DIR) + "/tests/e2e/source_truth.py";

testutil::ProcessResult RunTruth(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", kTruth};
  argv.insert(argv.end(), args.begin(), args.end());
  return testutil::RunProcess(argv);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- --source
// -------------------------------------------------------------------------------------

TEST(SourceSpecTest, EveryFormParses) {
  const auto synthetic = ParseSourceSpec("synthetic");
  ASSERT_TRUE(synthetic);
  EXPECT_EQ(synthetic->kind, SourceKind::kSynthetic);
  EXPECT_EQ(synthetic->width, 1242);
  EXPECT_EQ(synthetic->height, 375);
  const auto sized = ParseSourceSpec("synthetic:640x480");
  ASSERT_TRUE(sized);
  EXPECT_EQ(sized->width, 640);
  EXPECT_EQ(sized->height, 480);
  const auto video = ParseSourceSpec("video:/data/clip,1.mp4,loop");
  ASSERT_TRUE(video);
  EXPECT_EQ(video->kind, SourceKind::kVideo);
  EXPECT_EQ(video->path, "/data/clip,1.mp4");
  EXPECT_TRUE(video->loop);
  const auto images = ParseSourceSpec("images:frames");
  ASSERT_TRUE(images);
  EXPECT_EQ(images->kind, SourceKind::kImages);
  EXPECT_EQ(images->path, "frames");
  EXPECT_FALSE(images->loop);
  const auto v4l2 = ParseSourceSpec("v4l2:/dev/video0");
  ASSERT_TRUE(v4l2);
  EXPECT_EQ(v4l2->kind, SourceKind::kV4l2);
  EXPECT_EQ(v4l2->path, "/dev/video0");
  EXPECT_EQ(v4l2->width, 0) << "v4l2 keeps the device's size unless asked";
  EXPECT_EQ(v4l2->fps, 0);
  const auto v4l2_opts = ParseSourceSpec("v4l2:/dev/video2,640x480,29.97fps");
  ASSERT_TRUE(v4l2_opts);
  EXPECT_EQ(v4l2_opts->path, "/dev/video2");
  EXPECT_EQ(v4l2_opts->width, 640);
  EXPECT_EQ(v4l2_opts->height, 480);
  EXPECT_DOUBLE_EQ(v4l2_opts->fps, 29.97);
  EXPECT_EQ(v4l2_opts->text, "v4l2:/dev/video2,640x480,29.97fps");
}

TEST(SourceSpecTest, BadFormsAreUsageErrorsNamingTheTextAndTheForms) {
  for (const char* bad : {"camera", "webcam:/dev/video0", "synthetic:640", "synthetic:8x8",
                          "synthetic:640x480x3", "video:", "images:,loop", "v4l2:/dev/video0,0fps",
                          "v4l2:/dev/video0,abcfps", "v4l2:/dev/video0,4x4"}) {
    const auto spec = ParseSourceSpec(bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_EQ(spec.error().code, ExitCode::kUsage) << bad;
    EXPECT_TRUE(Contains(spec.error().message, bad)) << spec.error().message;
    EXPECT_TRUE(Contains(spec.error().message, "v4l2:DEVICE")) << spec.error().message;
  }
  // An option of another kind is part of the path, not silently taken.
  const auto video = ParseSourceSpec("video:a.mp4,640x480");
  ASSERT_TRUE(video);
  EXPECT_EQ(video->path, "a.mp4,640x480");
}

TEST(SourceSpecTest, TimestampSourceNames) {
  EXPECT_EQ(TimestampSourceName(TimestampSource::kRead), "read");
  EXPECT_EQ(TimestampSourceName(TimestampSource::kDriverStartOfExposure), "driver-soe");
  EXPECT_EQ(TimestampSourceName(TimestampSource::kDriverEndOfFrame), "driver-eof");
}

TEST(SourceSpecTest, WithoutOpenCvVideoAndImagesNameThePackage) {
  if (OpenCvSourcesCompiledIn()) GTEST_SKIP() << "this build has OpenCV (opencv_sources_test)";
  for (const char* text : {"video:a.mp4", "images:dir"}) {
    const auto source = MakeSource(*ParseSourceSpec(text));
    ASSERT_FALSE(source);
    EXPECT_EQ(source.error().code, ExitCode::kResource);
    EXPECT_TRUE(Contains(source.error().message, "libopencv-dev")) << source.error().message;
  }
}

// The rtpulse binary stays lean: video and image decoding (OpenCV videoio, imgcodecs: ~250 MB
// of libraries with FFmpeg, GStreamer and GDAL) is a module loaded only when such a source is
// opened, so linking rtpulse_e2e maps none of it (opencv_sources_test checks the other side).
TEST(SourceSpecTest, LinkingTheSourcesLoadsNoVideoOrImageLibrary) {
  const std::string maps = testutil::ReadFile("/proc/self/maps");
  ASSERT_FALSE(maps.empty());
  EXPECT_FALSE(Contains(maps, "libopencv_videoio")) << "videoio linked into rtpulse_e2e";
  EXPECT_FALSE(Contains(maps, "libopencv_imgcodecs")) << "imgcodecs linked into rtpulse_e2e";
  EXPECT_FALSE(Contains(maps, "librtpulse_e2e_media"));
  // The inference backends too (issue 31: a probe as light as cyclictest): OpenCV and Arm NN
  // are the inference module's, loaded with the first model (inference_backends_test).
  EXPECT_FALSE(Contains(maps, "libopencv_")) << "OpenCV linked into rtpulse_e2e";
  EXPECT_FALSE(Contains(maps, "libarmnn")) << "Arm NN linked into rtpulse_e2e";
  EXPECT_FALSE(Contains(maps, "librtpulse_e2e_inference"));
}

// ---- --reference
// ----------------------------------------------------------------------------------

TEST(ReferenceFileTest, ReadsPointsSkippingHeaderCommentsAndBlankLines) {
  testutil::TempDir dir;
  std::ofstream(dir.File("ref.csv")) << "# surveyed markers\nx,y,depth_m\n10,300,4.5\n\n"
                                        " 620.5 , 200 , 12\r\n# end\n";
  const auto points = ReadReferenceFile(dir.File("ref.csv"));
  ASSERT_TRUE(points) << points.error().message;
  ASSERT_EQ(points->size(), 2u);
  EXPECT_DOUBLE_EQ((*points)[0].x, 10);
  EXPECT_DOUBLE_EQ((*points)[0].y, 300);
  EXPECT_DOUBLE_EQ((*points)[0].depth_m, 4.5);
  EXPECT_DOUBLE_EQ((*points)[1].x, 620.5);
  EXPECT_DOUBLE_EQ((*points)[1].depth_m, 12);
}

TEST(ReferenceFileTest, BadLinesNameFileLineAndValue) {
  testutil::TempDir dir;
  const std::map<std::string, std::vector<std::string>> cases = {
      {"1,2,3\n4,five,6\n", {":2:", "y", "five", "not a number"}},
      {"1,2\n", {":1:", "2 fields"}},
      {"1,2,3,4\n", {":1:", "4 fields"}},
      {"1,2,0\n", {":1:", "depth_m 0", "positive"}},
      {"1,2,-3\n", {":1:", "depth_m -3"}},
      {"-1,2,3\n", {":1:", "outside the frame"}},
      {"1,2,nan\n", {":1:", "nan"}},
      {"x,y,depth_m\n# nothing\n", {"no points"}},
      {"1,2,3\nx,y,depth_m\n", {":2:", "x", "not a number"}},
  };
  for (const auto& [text, parts] : cases) {
    std::ofstream(dir.File("bad.csv")) << text;
    const auto points = ReadReferenceFile(dir.File("bad.csv"));
    ASSERT_FALSE(points) << text;
    EXPECT_EQ(points.error().code, ExitCode::kUsage);
    EXPECT_TRUE(Contains(points.error().message, dir.File("bad.csv"))) << points.error().message;
    for (const std::string& part : parts) {
      EXPECT_TRUE(Contains(points.error().message, part))
          << part << " in " << points.error().message;
    }
  }
  const auto missing = ReadReferenceFile(dir.File("none.csv"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_TRUE(Contains(missing.error().message, "none.csv"));
}

// ---- The synthetic scene
// --------------------------------------------------------------------------

struct SceneTruth {
  struct Frame {
    double distance = 0, left = 0, right = 0, top = 0, bottom = 0;
    int x0 = 0, x1 = 0, y0 = 0;
  };
  std::map<uint64_t, Frame> frames;
  std::map<int, double> row_depth;
};

SceneTruth ComputeSceneInPython(int width, int height, const std::vector<uint64_t>& seqs) {
  std::vector<std::string> args = {"scene", std::to_string(width), std::to_string(height)};
  for (uint64_t s : seqs) args.push_back(std::to_string(s));
  const auto run = RunTruth(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  SceneTruth truth;
  std::istringstream in(run.out);
  std::string kind;
  while (in >> kind) {
    if (kind == "seq") {
      uint64_t seq = 0;
      SceneTruth::Frame f;
      in >> seq >> f.distance >> f.left >> f.right >> f.top >> f.bottom >> f.x0 >> f.x1 >> f.y0;
      truth.frames[seq] = f;
    } else {
      int y = 0;
      double depth = 0;
      in >> y >> depth;
      truth.row_depth[y] = depth;
    }
  }
  return truth;
}

const std::vector<uint64_t> kSeqs = {0, 1, 17, 49, 50, 51, 73, 99, 100, 250, 12345};

TEST(SyntheticSceneTest, DistanceDepthAndBoxMatchThePythonFormulas) {
  const SyntheticScene scene;
  const SceneTruth truth = ComputeSceneInPython(1242, 375, kSeqs);
  ASSERT_EQ(truth.frames.size(), kSeqs.size());
  for (uint64_t seq : kSeqs) {
    const auto& t = truth.frames.at(seq);
    EXPECT_NEAR(scene.ObstacleDistance(seq), t.distance, 1e-12) << seq;
    const SyntheticScene::Box box = scene.ObstacleBox(seq);
    EXPECT_NEAR(box.left, t.left, 1e-9);
    EXPECT_NEAR(box.right, t.right, 1e-9);
    EXPECT_NEAR(box.top, t.top, 1e-9);
    EXPECT_NEAR(box.bottom, t.bottom, 1e-9);
  }
  EXPECT_DOUBLE_EQ(scene.ObstacleDistance(0), 8.0);
  EXPECT_DOUBLE_EQ(scene.ObstacleDistance(50), 0.5);
  ASSERT_EQ(truth.row_depth.size(), 187u);  // rows 188 ... 374 lie below the horizon 187.5
  for (const auto& [y, depth] : truth.row_depth) {
    EXPECT_NEAR(scene.GroundDepth(y), depth, 1e-12 * depth) << y;
  }
  EXPECT_TRUE(std::isinf(scene.GroundDepth(187.5)));
  EXPECT_TRUE(std::isinf(scene.GroundDepth(0)));
}

std::unique_ptr<FrameSource> OpenSynthetic(const std::string& text) {
  auto source = MakeSource(*ParseSourceSpec(text));
  EXPECT_TRUE(source);
  EXPECT_TRUE((*source)->Open());
  return std::move(*source);
}

TEST(SyntheticSourceTest, FramesAreDeterministicAndTimed) {
  auto a = OpenSynthetic("synthetic");
  auto b = OpenSynthetic("synthetic");
  EXPECT_EQ(a->timestamp_source(), TimestampSource::kRead);
  EXPECT_FALSE(a->SelfPaced());
  EXPECT_TRUE(Contains(a->Describe(), "synthetic 1242x375")) << a->Describe();
  CapturedFrame fa;
  CapturedFrame fb;
  std::vector<uint8_t> first;
  for (uint64_t i = 0; i < 60; ++i) {
    ASSERT_TRUE(*a->Read(fa));
    ASSERT_TRUE(*b->Read(fb));
    EXPECT_EQ(fa.seq, i);
    EXPECT_EQ(fa.image.width, 1242);
    EXPECT_EQ(fa.image.height, 375);
    ASSERT_EQ(fa.image.bgr.size(), 1242u * 375u * 3u);
    EXPECT_EQ(fa.image.bgr, fb.image.bgr) << "frame " << i;
    EXPECT_EQ(fa.capture_ns, fa.read_start_ns);
    EXPECT_LE(fa.read_start_ns, fa.read_end_ns);
    EXPECT_EQ(fa.lost_before, 0u);
    if (i == 0) first = fa.image.bgr;
  }
  EXPECT_NE(first, fa.image.bgr) << "the obstacle moves";
}

// The obstacle is where the formula puts it: blue 0 marks its pixels (docs/e2e.md).
TEST(SyntheticSourceTest, ObstaclePixelsAreWhereThePythonBoxIs) {
  const SceneTruth truth = ComputeSceneInPython(1242, 375, kSeqs);
  auto source = OpenSynthetic("synthetic");
  CapturedFrame frame;
  for (uint64_t i = 0; i <= 250; ++i) {
    ASSERT_TRUE(*source->Read(frame));
    if (truth.frames.count(i) == 0) continue;
    const auto& t = truth.frames.at(i);
    const int w = frame.image.width;
    const auto blue = [&](int x, int y) {
      return frame.image
          .bgr[(static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3];
    };
    const int y = 374;  // the box always reaches below the bottom row in the default scene
    int x0 = -1;
    int x1 = -1;
    for (int x = 0; x < w; ++x) {
      if (blue(x, y) == 0) {
        if (x0 < 0) x0 = x;
        x1 = x;
      }
    }
    EXPECT_EQ(x0, t.x0) << "frame " << i;
    EXPECT_EQ(x1, t.x1) << "frame " << i;
    int y0 = -1;
    for (int yy = 0; yy < frame.image.height && y0 < 0; ++yy) {
      if (blue(w / 2, yy) == 0) y0 = yy;
    }
    EXPECT_EQ(y0, t.y0) << "frame " << i;
    int obstacle = 0;
    for (size_t k = 0; k < frame.image.bgr.size(); k += 3) obstacle += frame.image.bgr[k] == 0;
    EXPECT_EQ(obstacle, (t.x1 - t.x0 + 1) * (374 - t.y0 + 1)) << "frame " << i;
  }
}

TEST(SyntheticSourceTest, ReferencesAreVisibleGroundPointsWithTheirExactDepth) {
  const SceneTruth truth = ComputeSceneInPython(1242, 375, {});
  auto source = OpenSynthetic("synthetic");
  CapturedFrame frame;
  for (uint64_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(*source->Read(frame));
    const auto refs = source->References();
    ASSERT_EQ(refs.size(), 32u) << "frame " << i;  // the default box never hides the edges
    for (const ReferencePoint& p : refs) {
      ASSERT_EQ(p.y, std::round(p.y));
      ASSERT_EQ(truth.row_depth.count(static_cast<int>(p.y)), 1u) << p.y;
      EXPECT_NEAR(p.depth_m, truth.row_depth.at(static_cast<int>(p.y)), 1e-12 * p.depth_m);
      const size_t at = (static_cast<size_t>(p.y) * 1242 + static_cast<size_t>(p.x)) * 3;
      EXPECT_NE(frame.image.bgr[at], 0) << "a reference on the obstacle at " << p.x << "," << p.y;
      EXPECT_EQ(frame.image.bgr[at], frame.image.bgr[at + 2]) << "ground is grey";
    }
  }
  // A small frame where the near obstacle hides every point: none rather than wrong ones.
  auto small = OpenSynthetic("synthetic:64x48");
  for (uint64_t i = 0; i <= 50; ++i) ASSERT_TRUE(*small->Read(frame));
  SyntheticScene scene;
  scene.width = 64;
  scene.height = 48;
  const auto box = scene.ObstacleBox(50);
  for (const ReferencePoint& p : small->References()) {
    EXPECT_FALSE(p.x >= box.left && p.x <= box.right && p.y >= box.top && p.y <= box.bottom);
  }
}

// ---- YUYV conversion against OpenCV's (python3-opencv)
// -------------------------------------------

TEST(YuyvTest, ConversionMatchesOpenCvWithinOneLevel) {
  testutil::TempDir dir;
  const int w = 64;
  const int h = 16;
  std::vector<uint8_t> yuyv(static_cast<size_t>(w) * h * 2);
  std::mt19937 rng(7);
  for (auto& b : yuyv) b = static_cast<uint8_t>(rng());
  // Limited-range extremes too: black, white, saturated chroma.
  for (int k = 0; k < 8; ++k) {
    const uint8_t sample[4][4] = {
        {16, 128, 16, 128}, {235, 128, 235, 128}, {81, 90, 81, 240}, {0, 0, 255, 255}};
    std::copy(sample[k % 4], sample[k % 4] + 4, yuyv.begin() + 4 * k);
  }
  std::ofstream(dir.File("in.yuyv"), std::ios::binary)
      .write(reinterpret_cast<const char*>(yuyv.data()), static_cast<std::streamsize>(yuyv.size()));
  const auto run = testutil::RunProcess(
      {"/usr/bin/python3", "-c",
       "import cv2, numpy as np, sys\n"
       "a = np.fromfile(sys.argv[1], np.uint8).reshape(int(sys.argv[3]), int(sys.argv[4]), 2)\n"
       "cv2.cvtColor(a, cv2.COLOR_YUV2BGR_YUYV).tofile(sys.argv[2])\n",
       dir.File("in.yuyv"), dir.File("out.bgr"), std::to_string(h), std::to_string(w)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string expected = testutil::ReadFile(dir.File("out.bgr"));
  ASSERT_EQ(expected.size(), static_cast<size_t>(w) * h * 3);
  std::vector<uint8_t> padded(static_cast<size_t>(w * 2 + 8) * h, 0xEE);
  for (int y = 0; y < h; ++y) {
    std::copy_n(yuyv.begin() + y * w * 2, w * 2, padded.begin() + y * (w * 2 + 8));
  }
  std::vector<uint8_t> bgr(expected.size());
  YuyvToBgr(padded.data(), static_cast<size_t>(w) * 2 + 8, w, h, bgr.data());
  int worst = 0;
  for (size_t i = 0; i < bgr.size(); ++i) {
    worst = std::max(worst, std::abs(int{bgr[i]} - int{static_cast<uint8_t>(expected[i])}));
  }
  EXPECT_LE(worst, 1) << "largest difference from cv2.cvtColor";
  EXPECT_EQ(bgr[0], 0);        // Y 16: black
  EXPECT_EQ(bgr[3 * 2], 255);  // Y 235: white
}

// ---- V4L2 errors this machine can show (the device itself: the QEMU guest with vivid)
// -------------

TEST(V4l2SourceTest, MissingDeviceNonDeviceAndNonV4l2AreUsageErrors) {
  testutil::TempDir dir;
  std::ofstream(dir.File("file")) << "x";
  const std::map<std::string, std::string> cases = {
      {"v4l2:" + dir.File("video9"), "does not exist"},
      {"v4l2:" + dir.File("file"), "not a character device"},
      {"v4l2:/dev/null", "not a V4L2 device"},
  };
  for (const auto& [text, why] : cases) {
    auto source = MakeSource(*ParseSourceSpec(text));
    ASSERT_TRUE(source);
    const Status s = (*source)->Open();
    ASSERT_FALSE(s) << text;
    EXPECT_EQ(s.error().code, ExitCode::kUsage) << s.error().message;
    EXPECT_TRUE(Contains(s.error().message, text.substr(5))) << s.error().message;
    EXPECT_TRUE(Contains(s.error().message, why)) << s.error().message;
  }
}

}  // namespace
}  // namespace rtpulse::e2e
