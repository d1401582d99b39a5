// The stages around inference (src/e2e/processing.h, docs/e2e.md "Preprocess, postprocess,
// decision") against an independent Python computation on the same raw data
// (processing_truth.py: cv2.resize INTER_LINEAR, NumPy normalisation, np.linalg.lstsq,
// np.percentile inverted_cdf), ground truth where it is known (a ramp image for the geometry,
// injected depth maps for the decisions), and every usage error.
#include "e2e/processing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse::e2e {
namespace {

// Bytes after the resize: equal to cv2.resize's on x86-64 (measured), one grey level allowed
// for OpenCV builds whose vector path rounds otherwise. Tensor: float32 normalisation in two
// orders of operations.
constexpr int kMaxByteDiff = 1;
constexpr double kMaxTensorDiffSameBytes = 1e-5;

const std::string& TruthScript() {
  static const std::string path =
      std::string(RTPULSE_SOURCE_DIR) + "/tests/e2e/processing_truth.py";
  return path;
}

bool PythonHasCv2AndNumpy() {
  static const bool ok =
      testutil::RunProcess({"/usr/bin/python3", "-c", "import cv2, numpy"}).exit_code == 0;
  return ok;
}

#define SKIP_WITHOUT_PYTHON()                                                      \
  if (!PythonHasCv2AndNumpy())                                                     \
  GTEST_SKIP() << "/usr/bin/python3 cannot import cv2 and numpy (apt-get install " \
                  "python3-opencv python3-numpy)"

template <typename T>
void WriteRaw(const std::string& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(T)));
  ASSERT_TRUE(out.good()) << path;
}

template <typename T>
std::vector<T> ReadRaw(const std::string& path) {
  const std::string bytes = testutil::ReadFile(path);
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

nlohmann::json RunTruth(const testutil::TempDir& dir, const nlohmann::json& job) {
  const std::string job_path = dir.File("job.json");
  std::ofstream(job_path) << job.dump();
  const auto r = testutil::RunProcess({"/usr/bin/python3", TruthScript(), job_path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

// Element (row, col) of a row-major image `w` wide with `channels` per pixel.
size_t At(int row, int col, int w, int channels = 1) {
  return (static_cast<size_t>(row) * static_cast<size_t>(w) + static_cast<size_t>(col)) *
         static_cast<size_t>(channels);
}

ModelShape Shape(int in_w, int in_h, int out_w, int out_h) {
  ModelShape s;
  s.in_channels = 3;
  s.in_width = in_w;
  s.in_height = in_h;
  s.out_channels = 1;
  s.out_width = out_w;
  s.out_height = out_h;
  return s;
}

Image RandomFrame(int w, int h, std::mt19937& rng) {
  Image img;
  img.Reshape(w, h);
  // Smooth structure plus noise, so the interpolation weights matter.
  std::uniform_int_distribution<int> noise(-40, 40);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const double base = 128 + 90 * std::sin(0.05 * x * (c + 1) + 0.08 * y);
        img.bgr[At(y, x, w, 3) + static_cast<size_t>(c)] =
            static_cast<uint8_t>(std::clamp(static_cast<int>(base) + noise(rng), 0, 255));
      }
    }
  }
  return img;
}

TEST(ParseFracRect, ReadsFourFractions) {
  const auto r = ParseFracRect("--crop", "0,0.25,1,0.75");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->x0, 0);
  EXPECT_EQ(r->y0, 0.25);
  EXPECT_EQ(r->x1, 1);
  EXPECT_EQ(r->y1, 0.75);
}

TEST(ParseFracRect, BadTextIsAUsageErrorNamingTheOptionAndTheValue) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c :
       {Case{"abc", "fewer than 4 values"}, Case{"0,0,1", "fewer than 4 values"},
        Case{"0,0,1,1,1", "more than 4 values"}, Case{"0,x,1,1", "\"x\" is not a number"},
        Case{"0,,1,1", "\"\" is not a number"}, Case{"0,0,1.5,1", "1.5 is outside 0..1"},
        Case{"-0.1,0,1,1", "-0.1 is outside 0..1"},
        Case{"0,0,nan,1", "\"nan\" is not a finite number"},
        Case{"0.5,0,0.4,1", "X0 0.5 is not below X1 0.4"},
        Case{"0.5,0,0.5,1", "X0 0.5 is not below X1 0.5"},
        Case{"0,0.9,1,0.2", "Y0 0.9 is not below Y1 0.2"}}) {
    const auto r = ParseFracRect("--roi", c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, ExitCode::kUsage) << c.text;
    const std::string& m = r.error().message;
    EXPECT_NE(m.find(std::string("--roi \"") + c.text + "\""), std::string::npos) << m;
    EXPECT_NE(m.find(c.says), std::string::npos) << c.text << ": " << m;
    EXPECT_NE(m.find("X0,Y0,X1,Y1"), std::string::npos) << m;
  }
}

TEST(Preprocessor, MatchesCv2ResizeAndNumpyNormalisationOnRandomFramesAndCrops) {
  SKIP_WITHOUT_PYTHON();
  struct Case {
    int src_w, src_h;
    FracRect crop;
    int in_w, in_h;
  };
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> frac(0.0, 0.45);
  std::vector<Case> cases = {
      {1242, 375, {0, 0, 1, 1}, 256, 256},          // the seed's frame, no crop
      {1242, 375, {0.1, 0.3, 0.9, 1.0}, 256, 256},  // a crop, downsampled across
      {640, 480, {0.2, 0.2, 0.45, 0.5}, 256, 256},  // upsampled both ways
      {333, 211, {0, 0, 1, 1}, 64, 48},             // non-square model, odd sizes
      {97, 61, {0.05, 0.1, 0.95, 0.9}, 35, 29},     // a row that is not whole vector groups
  };
  for (int i = 0; i < 3; ++i) {  // random crops of the seed's frame
    const double x0 = frac(rng), y0 = frac(rng);
    cases.push_back(
        {1242,
         375,
         {x0, y0, std::min(1.0, x0 + 0.3 + frac(rng)), std::min(1.0, y0 + 0.3 + frac(rng))},
         256,
         256});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << c.src_w << "x" << c.src_h << " crop " << c.crop.x0 << "," << c.crop.y0 << ","
                 << c.crop.x1 << "," << c.crop.y1 << " -> " << c.in_w << "x" << c.in_h);
    PreprocessSpec spec;
    spec.crop = c.crop;
    Preprocessor pre;
    ASSERT_TRUE(pre.Prepare(spec, c.src_w, c.src_h, Shape(c.in_w, c.in_h, c.in_w, c.in_h)));
    const Image frame = RandomFrame(c.src_w, c.src_h, rng);
    Tensor out;
    ASSERT_TRUE(pre.Run(frame, out));
    ASSERT_EQ(out.shape, (std::vector<int>{1, 3, c.in_h, c.in_w}));
    testutil::TempDir dir;
    WriteRaw(dir.File("frame.u8"), frame.bgr);
    const nlohmann::json truth =
        RunTruth(dir, {{"what", "preprocess"},
                       {"frame", dir.File("frame.u8")},
                       {"src_w", c.src_w},
                       {"src_h", c.src_h},
                       {"crop", {c.crop.x0, c.crop.y0, c.crop.x1, c.crop.y1}},
                       {"in_w", c.in_w},
                       {"in_h", c.in_h},
                       {"mean", {spec.mean[0], spec.mean[1], spec.mean[2]}},
                       {"std", {spec.std[0], spec.std[1], spec.std[2]}},
                       {"tensor_out", dir.File("tensor.f32")},
                       {"resized_out", dir.File("resized.u8")}});
    ASSERT_TRUE(truth.contains("crop_px"));
    EXPECT_EQ(truth["crop_px"],
              nlohmann::json::array({pre.crop_x(), pre.crop_y(), pre.crop_w(), pre.crop_h()}));
    const auto py_bytes = ReadRaw<uint8_t>(dir.File("resized.u8"));
    const auto py_tensor = ReadRaw<float>(dir.File("tensor.f32"));
    ASSERT_EQ(py_bytes.size(), pre.resized().size());
    ASSERT_EQ(py_tensor.size(), out.data.size());
    int max_byte = 0;
    size_t differing = 0;
    for (size_t k = 0; k < py_bytes.size(); ++k) {
      const int d = std::abs(int{py_bytes[k]} - int{pre.resized()[k]});
      max_byte = std::max(max_byte, d);
      differing += d != 0;
    }
    double max_tensor = 0;
    for (size_t k = 0; k < py_tensor.size(); ++k) {
      max_tensor = std::max(max_tensor, std::fabs(static_cast<double>(py_tensor[k]) -
                                                  static_cast<double>(out.data[k])));
    }
    std::cout << "resize vs cv2: max byte diff " << max_byte << " (" << differing << " of "
              << py_bytes.size() << "), tensor max abs diff " << max_tensor << "\n";
    EXPECT_LE(max_byte, kMaxByteDiff);
    EXPECT_LE(differing, py_bytes.size() / 100);
    // One grey level is 1 / (255 * std) in the tensor.
    EXPECT_LE(max_tensor, kMaxTensorDiffSameBytes + max_byte / (255.0 * 0.224));
  }
}

// A ramp B = column, G = row inside the crop: bilinear interpolation of a linear function is
// exact, so each resized byte says which source point the resize sampled for that output
// pixel's centre. OutputToSource must name the same point (a half-pixel slip shows as an
// error of half the scale: 2 grey levels here, the test allows 0.6).
TEST(Preprocessor, SourceToOutputAgreesWithWhereTheResizeSamples) {
  const int src_w = 400, src_h = 300;
  PreprocessSpec spec;
  spec.crop = {0.1, 0.2, 0.7, 0.8};  // 240 x 180 pixels from (40, 60)
  Preprocessor pre;
  const int in_w = 60, in_h = 45;  // a scale of 4 each way
  ASSERT_TRUE(pre.Prepare(spec, src_w, src_h, Shape(in_w, in_h, in_w, in_h)));
  ASSERT_EQ(pre.crop_x(), 40);
  ASSERT_EQ(pre.crop_y(), 60);
  ASSERT_EQ(pre.crop_w(), 240);
  ASSERT_EQ(pre.crop_h(), 180);
  Image img;
  img.Reshape(src_w, src_h);
  for (int y = 0; y < src_h; ++y) {
    for (int x = 0; x < src_w; ++x) {
      uint8_t* p = &img.bgr[At(y, x, src_w, 3)];
      p[0] = static_cast<uint8_t>(std::clamp(x - 40 + 5, 0, 255));
      p[1] = static_cast<uint8_t>(std::clamp(y - 60 + 5, 0, 255));
      p[2] = 77;
    }
  }
  Tensor out;
  ASSERT_TRUE(pre.Run(img, out));
  double worst = 0;
  for (int j = 1; j < in_h - 1; ++j) {  // borders clamp, the interior is exact
    for (int i = 1; i < in_w - 1; ++i) {
      const auto [sx, sy] = pre.OutputToSource(i + 0.5, j + 0.5);
      // Source pixel index of that point: its edge coordinate minus half a pixel.
      const double want_b = sx - 0.5 - 40 + 5, want_g = sy - 0.5 - 60 + 5;
      const uint8_t* px = &pre.resized()[At(j, i, in_w, 3)];
      worst = std::max({worst, std::fabs(px[0] - want_b), std::fabs(px[1] - want_g)});
      EXPECT_EQ(px[2], 77);
    }
  }
  EXPECT_LE(worst, 0.6);
}

TEST(Preprocessor, SourceToOutputRoundTripsAndCutsAwayWhatTheCropDrops) {
  PreprocessSpec spec;
  spec.crop = {0.25, 0.5, 0.75, 1.0};
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(spec, 1242, 375, Shape(256, 256, 128, 96)));
  EXPECT_EQ(pre.crop_x(), 311);  // floor(310.5 + 0.5)
  EXPECT_EQ(pre.crop_y(), 188);  // floor(187.5 + 0.5)
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 128), v(0, 96);
  for (int i = 0; i < 200; ++i) {
    const double a = u(rng), b = v(rng);
    const auto [x, y] = pre.OutputToSource(a, b);
    const auto back = pre.SourceToOutput(x, y);
    ASSERT_TRUE(back) << x << "," << y;
    EXPECT_NEAR(back->first, a, 1e-9);
    EXPECT_NEAR(back->second, b, 1e-9);
  }
  // The crop's corners map to the map's corners; outside it, nothing.
  const auto corner = pre.SourceToOutput(pre.crop_x(), pre.crop_y());
  ASSERT_TRUE(corner);
  EXPECT_EQ(corner->first, 0);
  EXPECT_EQ(corner->second, 0);
  EXPECT_FALSE(pre.SourceToOutput(pre.crop_x() - 0.01, 200));
  EXPECT_FALSE(pre.SourceToOutput(pre.crop_x() + pre.crop_w(), 200));
  EXPECT_FALSE(pre.SourceToOutput(400, pre.crop_y() - 1));
  EXPECT_FALSE(pre.SourceToOutput(400, 375));
  EXPECT_FALSE(pre.SourceToOutput(std::nan(""), 200));
}

TEST(Preprocessor, UsageErrors) {
  Preprocessor pre;
  PreprocessSpec spec;
  spec.crop = {0.5, 0, 0.5004, 1};  // 0.5 pixel of 1242: rounds to nothing
  Status s = pre.Prepare(spec, 1242, 375, Shape(256, 256, 256, 256));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("--crop"), std::string::npos) << s.error().message;
  spec.crop = {0, 0, 1.2, 1};  // not through ParseFracRect: Prepare checks it too
  s = pre.Prepare(spec, 1242, 375, Shape(256, 256, 256, 256));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--crop 0,0,1.2,1"), std::string::npos) << s.error().message;
  ModelShape gray = Shape(256, 256, 256, 256);
  gray.in_channels = 1;
  s = pre.Prepare(PreprocessSpec{}, 1242, 375, gray);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("1x1x256x256"), std::string::npos) << s.error().message;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 1242, 375, Shape(256, 256, 256, 256)));
  Image wrong;
  wrong.Reshape(640, 480);
  Tensor out;
  s = pre.Run(wrong, out);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("640x480"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("1242x375"), std::string::npos) << s.error().message;
}

void ExpectFitMatchesNumpy(const std::vector<double>& rel, const std::vector<double>& met) {
  const auto fit = FitScaleShift(rel, met);
  ASSERT_TRUE(fit) << fit.error().message;
  testutil::TempDir dir;
  WriteRaw(dir.File("rel.f64"), rel);
  WriteRaw(dir.File("met.f64"), met);
  const nlohmann::json truth = RunTruth(
      dir, {{"what", "fit"}, {"relative", dir.File("rel.f64")}, {"metric", dir.File("met.f64")}});
  ASSERT_TRUE(truth.contains("scale"));
  const double scale = truth["scale"], shift = truth["shift"], rms = truth["rms"];
  EXPECT_NEAR(fit->scale, scale, 1e-9 * std::max(1.0, std::fabs(scale))) << truth.dump();
  EXPECT_NEAR(fit->shift, shift, 1e-9 * std::max(1.0, std::fabs(shift))) << truth.dump();
  EXPECT_NEAR(fit->rms_residual_m, rms, 1e-9 * std::max(1.0, rms)) << truth.dump();
  EXPECT_NEAR(fit->r2, truth["r2"].get<double>(), 1e-9) << truth.dump();
  EXPECT_EQ(fit->points, rel.size());
}

TEST(FitScaleShift, EqualsNumpyLstsq) {
  SKIP_WITHOUT_PYTHON();
  std::mt19937 rng(42);
  std::normal_distribution<double> noise(0, 0.05);
  std::uniform_real_distribution<double> r01(0, 1);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> rel, met;
    const double s = 2 + 10 * r01(rng), t = -1 + 3 * r01(rng);
    for (int i = 0; i < 20 + trial * 30; ++i) {
      rel.push_back(r01(rng));
      met.push_back(s * rel.back() + t + noise(rng));
    }
    ExpectFitMatchesNumpy(rel, met);
  }
  // Two points: exact, no residual.
  ExpectFitMatchesNumpy({0.2, 0.7}, {1.0, 6.0});
  // Inverse depth (the MiDaS family): the scale is negative and stays so.
  std::vector<double> rel, met;
  for (double d = 0.5; d < 10; d += 0.37) {
    met.push_back(d);
    rel.push_back(1.0 / d);
  }
  ExpectFitMatchesNumpy(rel, met);
  EXPECT_LT(FitScaleShift(rel, met)->scale, 0);
  // Far from zero (a network's raw disparity around 1e6): the centred sums keep precision.
  rel.clear();
  met.clear();
  for (int i = 0; i < 50; ++i) {
    rel.push_back(1e6 + i * 0.01);
    met.push_back(3.0 + 0.5 * i * 0.01 + noise(rng) * 0.01);
  }
  ExpectFitMatchesNumpy(rel, met);
}

TEST(FitScaleShift, UndefinedFitsAreUsageErrors) {
  auto r = FitScaleShift({0.5}, {2.0});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  EXPECT_NE(r.error().message.find("at least 2"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--reference"), std::string::npos) << r.error().message;
  r = FitScaleShift({}, {});
  ASSERT_FALSE(r);
  r = FitScaleShift({0.3, 0.3, 0.3}, {1, 2, 3});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  EXPECT_NE(r.error().message.find("all have relative depth 0.3"), std::string::npos)
      << r.error().message;
  r = FitScaleShift({1e6, 1e6}, {1, 2});
  ASSERT_FALSE(r);
  r = FitScaleShift({0.1, 0.2}, {1});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("2 relative values but 1"), std::string::npos);
  r = FitScaleShift({0.1, std::nan("")}, {1, 2});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not finite"), std::string::npos) << r.error().message;
}

// The whole postprocess on a random map (NaNs in the ROI included) and random references
// (some cut away by the crop), against the Python computation from source pixels on.
TEST(Postprocessor, FitAndRoiPercentileMatchNumpy) {
  SKIP_WITHOUT_PYTHON();
  const int src_w = 1242, src_h = 375, ow = 256, oh = 256;
  PreprocessSpec pspec;
  pspec.crop = {0.05, 0.2, 0.95, 1.0};
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(pspec, src_w, src_h, Shape(256, 256, ow, oh)));
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> ux(0, src_w), uy(0, src_h), ud(1, 20);
  std::vector<ReferencePoint> refs;
  for (int i = 0; i < 60; ++i) refs.push_back({ux(rng), uy(rng), ud(rng)});
  Tensor map;
  map.shape = {1, 1, oh, ow};
  map.data.resize(static_cast<size_t>(ow) * oh);
  std::uniform_real_distribution<float> r01(0, 1);
  for (float& v : map.data) v = r01(rng);
  for (int k = 0; k < 300; ++k) map.data[At(200 + k % 50, 100 + k / 50, ow)] = NAN;
  // References carry their relative values plus noise: a fit with residuals.
  std::normal_distribution<double> noise(0, 0.3);
  for (ReferencePoint& r : refs) {
    const auto uv = pre.SourceToOutput(r.x, r.y);
    if (!uv) continue;
    const size_t idx = static_cast<size_t>(std::floor(uv->second)) * ow +
                       static_cast<size_t>(std::floor(uv->first));
    r.depth_m = 2.0 + 8.0 * static_cast<double>(map.data[idx]) + noise(rng);
  }
  for (double percentile : {0.0, 5.0, 50.0, 99.0, 100.0}) {
    SCOPED_TRACE(testing::Message() << "percentile " << percentile);
    DecisionSpec spec;
    spec.percentile = percentile;
    spec.roi = {0.3, 0.45, 0.7, 0.95};
    Postprocessor post;
    ASSERT_TRUE(post.Prepare(spec, Shape(256, 256, ow, oh), pre, refs));
    Decision d;
    ASSERT_TRUE(post.Run(map, d));
    testutil::TempDir dir;
    WriteRaw(dir.File("map.f32"), map.data);
    nlohmann::json jrefs = nlohmann::json::array();
    for (const ReferencePoint& r : refs) jrefs.push_back({r.x, r.y, r.depth_m});
    const nlohmann::json truth =
        RunTruth(dir, {{"what", "postprocess"},
                       {"relative_map", dir.File("map.f32")},
                       {"out_w", ow},
                       {"out_h", oh},
                       {"src_w", src_w},
                       {"src_h", src_h},
                       {"crop", {pspec.crop.x0, pspec.crop.y0, pspec.crop.x1, pspec.crop.y1}},
                       {"roi", {spec.roi.x0, spec.roi.y0, spec.roi.x1, spec.roi.y1}},
                       {"percentile", percentile},
                       {"references", jrefs}});
    ASSERT_TRUE(truth.contains("roi_depth"));
    EXPECT_EQ(truth["index"].get<std::vector<int>>(), post.reference_index());
    EXPECT_EQ(truth["roi_px"],
              nlohmann::json::array({post.roi_x0(), post.roi_y0(), post.roi_x1(), post.roi_y1()}));
    EXPECT_EQ(d.fit.points, truth["points"].get<size_t>());
    EXPECT_LT(d.fit.points, refs.size());  // the crop cut some away
    EXPECT_NEAR(d.fit.scale, truth["scale"].get<double>(), 1e-9);
    EXPECT_NEAR(d.fit.shift, truth["shift"].get<double>(), 1e-9);
    EXPECT_NEAR(d.fit.rms_residual_m, truth["rms"].get<double>(), 1e-9);
    EXPECT_GT(d.fit.rms_residual_m, 0.1);
    EXPECT_EQ(d.roi_valid, truth["roi_valid"].get<size_t>());
    EXPECT_EQ(d.roi_pixels, static_cast<size_t>((post.roi_x1() - post.roi_x0()) *
                                                (post.roi_y1() - post.roi_y0())));
    EXPECT_LT(d.roi_valid, d.roi_pixels);  // the NaNs were left out
    EXPECT_NEAR(d.roi_depth_m, truth["roi_depth"].get<double>(), 1e-9) << truth.dump();
    EXPECT_EQ(d.status, DepthStatus::kOk);
    EXPECT_FALSE(d.inverse);
  }
}

// Injected depth maps with an identity fit: two references outside the ROI hold relative =
// metric; the ROI holds the obstacle's distance, so the ROI depth is that distance exactly.
class Hysteresis : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pre_.Prepare(PreprocessSpec{}, 640, 480, Shape(64, 64, 64, 64)));
    DecisionSpec spec;  // near 1.0, clear 1.25, ROI ahead in the lower half
    // (x, y) in source pixels -> output (x / 10, y / 7.5): rows 3 and 7, far above the ROI.
    ASSERT_TRUE(post_.Prepare(spec, Shape(64, 64, 64, 64), pre_, {{50, 25, 2.0}, {500, 55, 20.0}}));
    map_.shape = {1, 1, 64, 64};
    map_.data.assign(64 * 64, 10.0f);
    map_.data[3 * 64 + 5] = 2.0f;
    map_.data[7 * 64 + 50] = 20.0f;
  }
  Decision Frame(float roi_depth) {
    for (int y = post_.roi_y0(); y < post_.roi_y1(); ++y) {
      for (int x = post_.roi_x0(); x < post_.roi_x1(); ++x) map_.data[At(y, x, 64)] = roi_depth;
    }
    Decision d;
    EXPECT_TRUE(post_.Run(map_, d));
    return d;
  }
  void ExpectSequence(const std::vector<float>& depths, const std::vector<int>& states) {
    ASSERT_EQ(depths.size(), states.size());
    bool previous = false;
    for (size_t i = 0; i < depths.size(); ++i) {
      const Decision d = Frame(depths[i]);
      EXPECT_NEAR(d.roi_depth_m, depths[i], 1e-5) << "frame " << i;
      EXPECT_NEAR(d.fit.scale, 1.0, 1e-9);
      EXPECT_EQ(d.obstacle, states[i] != 0) << "frame " << i << " depth " << depths[i];
      EXPECT_EQ(d.changed, (states[i] != 0) != previous) << "frame " << i;
      previous = states[i] != 0;
    }
  }
  Preprocessor pre_;
  Postprocessor post_;
  Tensor map_;
};

TEST_F(Hysteresis, ObstacleApproachesAndRecedes) {
  // Starts clear; obstacle only below 1.0 (1.0 itself is not below), clear only above 1.25.
  ExpectSequence({5.0f, 3.0f, 2.0f, 1.2f, 1.0f, 0.99f, 0.6f, 0.5f, 0.8f, 1.1f, 1.25f, 1.26f, 3.0f},
                 {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0});
}

TEST_F(Hysteresis, OscillatingAroundNearFlipsOnceNotEveryFrame) {
  ExpectSequence({1.05f, 0.95f, 1.05f, 0.95f, 1.05f, 0.95f, 1.05f, 1.2f, 0.9f, 1.3f},
                 {0, 1, 1, 1, 1, 1, 1, 1, 1, 0});
}

TEST_F(Hysteresis, StayingBetweenNearAndClearKeepsTheState) {
  ExpectSequence({1.1f, 1.2f, 1.15f, 1.24f, 0.9f, 1.1f, 1.2f, 1.15f, 1.24f},
                 {0, 0, 0, 0, 1, 1, 1, 1, 1});
}

TEST_F(Hysteresis, UnknownDepthHoldsTheStateAndSaysWhy) {
  EXPECT_TRUE(Frame(0.5).obstacle);
  // The ROI all NaN: no depth, state held.
  Decision d = Frame(NAN);
  EXPECT_EQ(d.status, DepthStatus::kRoiInvalid);
  EXPECT_TRUE(std::isnan(d.roi_depth_m));
  EXPECT_EQ(d.roi_valid, 0u);
  EXPECT_TRUE(d.obstacle);
  EXPECT_FALSE(d.changed);
  // A constant map: the references' relative values are equal, no fit, state held.
  map_.data.assign(64 * 64, 3.0f);
  Decision flat;
  ASSERT_TRUE(post_.Run(map_, flat));
  EXPECT_EQ(flat.status, DepthStatus::kNoFit);
  EXPECT_TRUE(std::isnan(flat.roi_depth_m));
  EXPECT_TRUE(flat.obstacle);
  EXPECT_FALSE(flat.changed);
  EXPECT_EQ(DepthStatusName(flat.status), "no-fit");
  EXPECT_EQ(DepthStatusName(d.status), "roi-invalid");
}

TEST(Postprocessor, InverseDepthNetworksGiveANegativeScaleThatIsShownNotFlipped) {
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 64, 64, Shape(64, 64, 64, 64)));
  // Relative = 1 / depth over a ground of rows 0..31 at depths 1..32 m; ROI (lower half) at
  // 0.8 m: the linear fit of depth on inverse depth is what it is (a poor, negative one).
  std::vector<ReferencePoint> refs;
  Tensor map;
  map.shape = {1, 1, 64, 64};
  map.data.assign(64 * 64, 1.0f / 0.8f);
  for (int row = 0; row < 32; ++row) {
    const double depth = 1.0 + row;
    for (int x = 0; x < 64; ++x) map.data[At(row, x, 64)] = static_cast<float>(1.0 / depth);
    refs.push_back({2.5, row + 0.5, depth});
  }
  Postprocessor post;
  ASSERT_TRUE(post.Prepare(DecisionSpec{}, Shape(64, 64, 64, 64), pre, refs));
  Decision d;
  ASSERT_TRUE(post.Run(map, d));
  EXPECT_TRUE(d.inverse);
  EXPECT_LT(d.fit.scale, 0);
  // The ROI depth is s / 0.8 + t exactly, the fit unchanged.
  EXPECT_NEAR(d.roi_depth_m, d.fit.scale * static_cast<double>(1.0f / 0.8f) + d.fit.shift, 1e-9);
}

TEST(Postprocessor, AFitThatExplainsLittleIsFlaggedWeak) {
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 64, 64, Shape(64, 64, 64, 64)));
  // Relative values alternate; the reference depths follow something else entirely.
  std::vector<ReferencePoint> refs;
  Tensor map;
  map.shape = {1, 1, 64, 64};
  map.data.assign(64 * 64, 0.5f);
  for (int i = 0; i < 40; ++i) {
    map.data[static_cast<size_t>(i)] = (i % 2) ? 0.9f : 0.1f;
    refs.push_back({i + 0.5, 0.5, 3.0 + ((i / 2) % 2)});
  }
  Postprocessor post;
  ASSERT_TRUE(post.Prepare(DecisionSpec{}, Shape(64, 64, 64, 64), pre, refs));
  Decision d;
  ASSERT_TRUE(post.Run(map, d));
  EXPECT_LT(d.fit.r2, kWeakFitR2);
  EXPECT_EQ(d.status, DepthStatus::kWeakFit);
  EXPECT_FALSE(std::isnan(d.roi_depth_m));  // known, and said to be weak
}

// A source without reference depths: no fit, no ROI depth, no obstacle however near the map
// says, and the ROI is still read (its cost is postprocessing's).
TEST(Postprocessor, TimingOnlyDecidesNothingWithoutReferences) {
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 64, 64, Shape(64, 64, 64, 64)));
  DecisionSpec spec;
  spec.timing_only = true;
  Postprocessor post;
  ASSERT_TRUE(post.Prepare(spec, Shape(64, 64, 64, 64), pre, {}));
  Tensor map;
  map.shape = {1, 1, 64, 64};
  map.data.assign(64 * 64, 0.01f);  // would be "near" at any positive scale
  map.data[At(40, 30, 64)] = std::numeric_limits<float>::quiet_NaN();
  for (int frame = 0; frame < 3; ++frame) {
    Decision d;
    ASSERT_TRUE(post.Run(map, d));
    EXPECT_EQ(d.status, DepthStatus::kTimingOnly);
    EXPECT_EQ(DepthStatusName(d.status), "timing-only");
    EXPECT_TRUE(std::isnan(d.roi_depth_m));
    EXPECT_FALSE(d.obstacle);
    EXPECT_FALSE(d.changed);
    EXPECT_EQ(d.fit.points, 0u);
    EXPECT_EQ(d.roi_valid + 1, d.roi_pixels);  // the NaN inside the ROI left out
  }
}

TEST(Postprocessor, UsageErrors) {
  Preprocessor pre;
  PreprocessSpec pspec;
  pspec.crop = {0.5, 0, 1, 1};
  ASSERT_TRUE(pre.Prepare(pspec, 100, 100, Shape(64, 64, 64, 64)));
  const ModelShape shape = Shape(64, 64, 64, 64);
  const std::vector<ReferencePoint> two = {{60, 10, 2}, {70, 90, 5}};
  Postprocessor post;
  // Fewer than 2 references inside the crop.
  Status s = post.Prepare(DecisionSpec{}, shape, pre, {{60, 10, 2}, {10, 10, 3}, {20, 50, 4}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("--reference: 1 of the 3"), std::string::npos)
      << s.error().message;
  s = post.Prepare(DecisionSpec{}, shape, pre, {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--reference"), std::string::npos);
  // clear < near.
  DecisionSpec spec;
  spec.near_m = 2.0;
  spec.clear_m = 1.5;
  s = post.Prepare(spec, shape, pre, two);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("--clear 1.5 is below --near 2"), std::string::npos)
      << s.error().message;
  spec.clear_m = 2.0;  // equal: allowed (no band)
  EXPECT_TRUE(post.Prepare(spec, shape, pre, two));
  spec.near_m = 0;
  s = post.Prepare(spec, shape, pre, two);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--near 0"), std::string::npos) << s.error().message;
  spec = DecisionSpec{};
  spec.percentile = 101;
  EXPECT_FALSE(post.Prepare(spec, shape, pre, two));
  spec = DecisionSpec{};
  spec.roi = {0.5, 0.5, 0.505, 1};  // a third of a pixel of 64
  s = post.Prepare(spec, shape, pre, two);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--roi"), std::string::npos) << s.error().message;
  ModelShape two_maps = shape;
  two_maps.out_channels = 2;
  EXPECT_FALSE(post.Prepare(DecisionSpec{}, two_maps, pre, two));
  // A map of the wrong size.
  ASSERT_TRUE(post.Prepare(DecisionSpec{}, shape, pre, two));
  Tensor small;
  small.shape = {1, 1, 32, 32};
  small.data.assign(32 * 32, 0.5f);
  Decision d;
  s = post.Run(small, d);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_NE(s.error().message.find("1024 values"), std::string::npos) << s.error().message;
  // SetReferences keeps the rule: fewer than 2 left is an error.
  s = post.SetReferences(pre, {{60, 10, 2}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("--reference"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::e2e
