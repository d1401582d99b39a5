// rtpulse e2e end to end: the real binary on the generated models (depth-tiny for speed, the
// default model where a frame must take longer than a period), synthetic frames and a video
// made here with ffmpeg. Every number the command writes is recomputed from frames.csv by
// tests/cli/e2e_truth.py; the tests here assert structure and ground truth, never a latency's
// size (the VM steals time).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "results/e2e_summary.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace {

using rtpulse::testutil::ProcessOptions;
using rtpulse::testutil::ProcessResult;
using rtpulse::testutil::ReachableCopy;
using rtpulse::testutil::ReadFile;
using rtpulse::testutil::RunProcess;
using rtpulse::testutil::RunRtpulse;
using rtpulse::testutil::TempDir;

const std::string kTiny = std::string(RTPULSE_MODELS_DIR) + "/depth-tiny.onnx";
const std::string kDefault = std::string(RTPULSE_MODELS_DIR) + "/depth-default.onnx";

nlohmann::json E2eJsonOf(const std::string& path) {
  return nlohmann::json::parse(ReadFile(path));
}

/// tests/cli/e2e_truth.py over RUN (and the printed summary, --csv and --json files).
void ExpectE2eTruth(const std::string& run, const std::string& stdout_text,
                    const std::string& csv = "", const std::string& json = "") {
  const std::string summary = run + ".stdout";
  std::ofstream(summary) << stdout_text;
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   std::string(RTPULSE_SOURCE_DIR) + "/tests/cli/e2e_truth.py", run,
                                   "--stdout", summary};
  if (!csv.empty()) argv.insert(argv.end(), {"--csv", csv});
  if (!json.empty()) argv.insert(argv.end(), {"--json", json});
  const ProcessResult truth = RunProcess(argv);
  EXPECT_EQ(truth.exit_code, 0) << truth.out << truth.err;
  EXPECT_NE(truth.out.find("OK "), std::string::npos) << truth.out << truth.err;
}

/// A 12-frame 320x240 video made with ffmpeg's test source.
void MakeClip(const std::string& path) {
  const ProcessResult ff =
      RunProcess({"/usr/bin/ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                  "testsrc=size=320x240:rate=10", "-frames:v", "12", "-pix_fmt", "yuv420p", path});
  ASSERT_EQ(ff.exit_code, 0) << ff.err;
}

std::vector<std::string> E2eArgs(const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"e2e", "-q", "-o", out};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(E2eCli, SyntheticBackToBackEveryNumberRecomputed) {
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r =
      RunRtpulse(E2eArgs(run, {"--model", kTiny, "--frames", "30", "--warmup", "2", "--csv",
                               dir.File("seed.csv"), "--json", dir.File("summary.json")}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* f :
       {"result.json", "system_info.json", "system_info.txt", "baseline/e2e_inference_latency.csv",
        "baseline/frames.csv", "baseline/e2e_statistics.txt", "baseline/samples.bin",
        "baseline/e2e.json", "figures/e2e_stages.dat", "figures/e2e_stages.gp"}) {
    EXPECT_TRUE(std::filesystem::exists(run + "/" + f)) << f;
  }
  ExpectE2eTruth(run, r.out, dir.File("seed.csv"), dir.File("summary.json"));
  // The summary's reader takes what the run wrote and gives the same document back.
  const auto written = E2eJsonOf(dir.File("summary.json"));
  auto summary_back = rtpulse::results::E2eSummaryFromJson(written);
  ASSERT_TRUE(summary_back) << summary_back.error().message;
  EXPECT_EQ(summary_back->scenarios.at(0).frames, 30u);
  EXPECT_EQ(summary_back->status, "complete");
  EXPECT_EQ(rtpulse::results::ToJson(*summary_back), written);
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  EXPECT_EQ(doc["counts"]["frames"], 30);
  EXPECT_EQ(doc["counts"]["dropped"], 0);
  EXPECT_EQ(doc["model"]["label"], "latency-representative, not trained");
  EXPECT_EQ(doc["model"]["input_shape"], "1x3x64x64");
  EXPECT_EQ(doc["source"]["timestamp_source"], "read");
  EXPECT_EQ(doc["settings"]["mode"], "back-to-back");
  const auto result = E2eJsonOf(run + "/result.json");
  EXPECT_EQ(result["status"], "complete");
  EXPECT_EQ(result["config"]["workload"], "e2e");
  // Back to back without --deadline: no period, nothing could miss. Misses and skipped
  // periods are not counted (null, "not counted"), never a 0; no interval is made up.
  const auto& scenario = result["scenarios"][0];
  const auto& thread = scenario["latency"]["thread"]["0"];
  EXPECT_TRUE(thread["missed_activations"].is_null()) << thread["missed_activations"];
  EXPECT_TRUE(thread["skipped_periods"].is_null()) << thread["skipped_periods"];
  EXPECT_EQ(thread["interval_ns"], 0);
  EXPECT_FALSE(thread.contains("per_period"));
  EXPECT_TRUE(scenario["summary"][0]["missed_activations"].is_null());
  EXPECT_TRUE(
      scenario["latency"]["rtpulse"]["paths"][0]["all_threads"]["missed_activations"].is_null());
  const std::string summary = ReadFile(run + "/statistical_summary.txt");
  EXPECT_NE(summary.find("not counted"), std::string::npos) << summary;
  EXPECT_EQ(summary.find(" 0/0 "), std::string::npos) << summary;
  const std::string raw = ReadFile(run + "/baseline/cyclictest_raw.txt");
  EXPECT_NE(raw.find(" I:0 "), std::string::npos) << raw;
  EXPECT_EQ(summary.find("per period"), std::string::npos) << summary;
  // The stacked figure's top (DecisionToAlert, cumulative) at p50 is the sum of the stages'
  // own p50s: the last data block's first line.
  const std::string dat = ReadFile(run + "/figures/e2e_stages.dat");
  EXPECT_NE(dat.find("DecisionToAlert"), std::string::npos);
  // The key stands outside the plot: inside at its top left it covered the labels there.
  const std::string gp = ReadFile(run + "/figures/e2e_stages.gp");
  EXPECT_NE(gp.find("set key outside right top"), std::string::npos) << gp;
  EXPECT_NE(gp.find("at graph 0.01, graph 0.96 left"), std::string::npos) << gp;
}

TEST(E2eCli, VideoFileMadeWithFfmpegEndsWithTheSource) {
  TempDir dir;
  const std::string clip = dir.File("clip.mp4");
  ASSERT_NO_FATAL_FAILURE(MakeClip(clip));
  // A video has no depths of its own: three reference points, in source pixels.
  std::ofstream(dir.File("refs.csv")) << "x,y,depth_m\n10,230,2.0\n160,200,4.0\n300,180,6.0\n";
  const std::string run = dir.File("run");
  const ProcessResult r =
      RunRtpulse(E2eArgs(run, {"--source", "video:" + clip, "--reference", dir.File("refs.csv"),
                               "--model", kTiny, "--frames", "100", "--warmup", "2"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectE2eTruth(run, r.out);
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  // 12 frames in the file, 2 of them the warm-up: the run starts at the file's first frame.
  EXPECT_EQ(doc["counts"]["frames"], 10);
  EXPECT_TRUE(doc["counts"]["source_ended"].get<bool>());
  EXPECT_EQ(doc["source"]["frame_width"], 320);
  EXPECT_EQ(doc["source"]["references"], dir.File("refs.csv"));
  // Fewer frames than --frames: the summary and e2e.json say the source ran out, with the
  // count recorded.
  EXPECT_TRUE(doc["counts"]["source_ran_out"].get<bool>());
  EXPECT_EQ(doc["counts"]["frames_asked"], 100);
  EXPECT_NE(r.out.find("baseline: the source ran out: 10 of --frames 100 frame(s) recorded"),
            std::string::npos)
      << r.out;
  // A warm-up that uses up the 12 frames would record nothing: exit 2 before anything is
  // written, naming the frames the file has, --warmup and the fixes.
  const std::string none = dir.File("none");
  const ProcessResult used_up =
      RunRtpulse(E2eArgs(none, {"--source", "video:" + clip, "--reference", dir.File("refs.csv"),
                                "--model", kTiny, "--frames", "5", "--warmup", "12"}));
  EXPECT_EQ(used_up.exit_code, 2) << used_up.out << used_up.err;
  EXPECT_NE(used_up.err.find("has 12 frame(s) and --warmup 12"), std::string::npos) << used_up.err;
  EXPECT_NE(used_up.err.find("give --warmup 11 or less"), std::string::npos) << used_up.err;
  EXPECT_NE(used_up.err.find(clip + ",loop"), std::string::npos) << used_up.err;
  EXPECT_FALSE(std::filesystem::exists(none));
}

// Issue 35 item 3: a video without reference depths is timed, not refused: every stage runs
// and is timed, no depth is known and nothing is decided, and every output says so.
TEST(E2eCli, AVideoWithoutReferencesIsTimedNotDecidedAndSaysSoEverywhere) {
  TempDir dir;
  const std::string clip = dir.File("clip.mp4");
  ASSERT_NO_FATAL_FAILURE(MakeClip(clip));
  const std::string run = dir.File("run");
  const ProcessResult r = RunRtpulse(E2eArgs(
      run, {"--source", "video:" + clip, "--model", kTiny, "--frames", "10", "--warmup", "2"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectE2eTruth(run, r.out);
  const std::string note =
      "decision: timing only: --source video:" + clip + " gives no reference depths";
  EXPECT_NE(r.out.find("warning: " + note), std::string::npos) << r.out;
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  EXPECT_NE(doc.dump().find(note), std::string::npos) << doc.dump();
  EXPECT_NE(ReadFile(run + "/result.json").find(note), std::string::npos);
  EXPECT_NE(ReadFile(run + "/baseline/e2e_statistics.txt").find(note), std::string::npos);
  EXPECT_EQ(doc["counts"]["frames"], 10);
  // Every frame: no ROI depth (empty, never 0 or "nan"), no obstacle, every stage timed.
  std::ifstream frames(run + "/baseline/frames.csv");
  std::string line;
  std::getline(frames, line);
  const auto columns = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string cell;
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    return out;
  };
  const std::vector<std::string> header = columns(line);
  const auto at = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  int rows = 0;
  while (std::getline(frames, line)) {
    const std::vector<std::string> f = columns(line);
    ASSERT_EQ(f.size(), header.size()) << line;
    EXPECT_EQ(f[at("roi_depth_m")], "") << line;
    EXPECT_EQ(f[at("obstacle")], "0") << line;
    EXPECT_GT(std::stoll(f[at("inference_ns")]), 0) << line;
    EXPECT_GT(std::stoll(f[at("postproc_ns")]), 0) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 10);
  // The folder reads back whole: the report takes its frames.csv.
  const ProcessResult report = RunRtpulse({"report", "--formats", "svg", run});
  EXPECT_EQ(report.exit_code, 0) << report.err;
}

// Issue 35 item 3: a model whose input size is symbolic (1x3x?x?) is refused with the option
// that fixes it, and runs at the size --input-size gives.
TEST(E2eCli, ASymbolicInputSizeTakesInputSize) {
  TempDir dir;
  const ProcessResult gen = RunProcess(
      {"/usr/bin/python3", std::string(RTPULSE_SOURCE_DIR) + "/tools/gen-depth-model", "--out-dir",
       dir.path(), "--name", "sym", "--symbolic-size", "--size", "64", "--width", "0.25"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string model = dir.File("sym.onnx");
  const ProcessResult refused =
      RunRtpulse(E2eArgs(dir.File("no"), {"--model", model, "--frames", "5"}));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("input shape 1x3x?x? has a symbolic size; give the size to resize "
                             "frames to with --input-size WxH"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("no")));
  const std::string run = dir.File("run");
  const ProcessResult r =
      RunRtpulse(E2eArgs(run, {"--model", model, "--input-size", "96x64", "--frames", "10"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectE2eTruth(run, r.out);
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  EXPECT_EQ(doc["model"]["input_shape"], "1x3x64x96") << doc["model"].dump();
}

TEST(E2eCli, PeriodicModeShowsDropsAndMisses) {
  // The default model takes tens of ms per frame here; at 200 frames/s (5 ms deadline) every
  // recorded frame misses and frames are dropped between them.
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r = RunRtpulse(
      E2eArgs(run, {"--model", kDefault, "--fps", "200", "--frames", "6", "--warmup", "1"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectE2eTruth(run, r.out);
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  EXPECT_EQ(doc["settings"]["deadline_ns"], 5'000'000);
  EXPECT_EQ(doc["counts"]["misses"], 6);
  EXPECT_GE(doc["counts"]["dropped"].get<int>(), 5);
  const std::string stats = ReadFile(run + "/baseline/e2e_statistics.txt");
  EXPECT_NE(stats.find("Misses: 6 "), std::string::npos) << stats;
  EXPECT_NE(stats.find("Mode: periodic at 200 frames/s, deadline 5.000000 ms"), std::string::npos);
  // result.json: the interval is the frame period, a skipped period a dropped frame, a
  // missed activation a frame above the deadline (e2e_truth.py checks e2e.json's counts
  // against frames.csv); a dropped frame has no Total, so there is no per-period block.
  const auto result = E2eJsonOf(run + "/result.json");
  const auto& thread = result["scenarios"][0]["latency"]["thread"]["0"];
  EXPECT_EQ(thread["interval_ns"], 5'000'000);
  EXPECT_EQ(thread["missed_activations"], 6);
  EXPECT_EQ(thread["skipped_periods"], doc["counts"]["dropped"]);
  EXPECT_EQ(thread["periods_elapsed"], 6 + doc["counts"]["dropped"].get<int>());
  EXPECT_FALSE(thread.contains("per_period"));
  const std::string raw = ReadFile(run + "/baseline/cyclictest_raw.txt");
  EXPECT_NE(raw.find(" I:5000 "), std::string::npos) << raw;
}

TEST(E2eCli, SweepThreadsRecommendsTheLowestP99) {
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r =
      RunRtpulse(E2eArgs(run, {"--model", kTiny, "--frames", "25", "--warmup", "2", "--sweep",
                               "threads", "--inference-cpus", "0-1"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(run + "/threads-1/frames.csv"));
  EXPECT_TRUE(std::filesystem::exists(run + "/threads-2/frames.csv"));
  EXPECT_NE(r.out.find("recommendation: "), std::string::npos) << r.out;
  ExpectE2eTruth(run, r.out);  // recomputes both p99s and the pick
  EXPECT_EQ(E2eJsonOf(run + "/threads-2/e2e.json")["backend"]["threads_asked"], 2);
}

std::vector<int> E2eWorkerTids(const nlohmann::json& doc) {
  std::vector<int> tids;
  for (const auto& t : doc["threads"]) {
    if (t["role"] == "worker") tids.push_back(t["tid"].get<int>());
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

TEST(E2eCli, WorkerThreadsStayWorkersInEveryLaterScenario) {
  // OpenCV's pool is process-wide: the worker threads-2 made still serve threads-2-loaded,
  // and must be found, scheduled and checked there too (not taken for threads from before
  // the backend's load).
  if (!rtpulse::testutil::IsRoot()) GTEST_SKIP() << "needs root for --inference-policy fifo:70";
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  TempDir dir;
  const std::string run = dir.File("run");
  const ProcessResult r = RunRtpulse(
      E2eArgs(run, {"--model", kTiny, "--frames", "15", "--warmup", "2", "--sweep", "threads",
                    "--inference-cpus", "0-1", "--inference-policy", "fifo:70", "--load", "cpu"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto plain = E2eJsonOf(run + "/threads-2/e2e.json");
  const auto loaded = E2eJsonOf(run + "/threads-2-loaded/e2e.json");
  const std::vector<int> workers = E2eWorkerTids(plain);
  ASSERT_GE(workers.size(), 1u) << plain["threads"].dump(1);
  EXPECT_EQ(E2eWorkerTids(loaded), workers) << loaded["threads"].dump(1);
  // Threads used: the backend's own count, or the inference thread and its workers seen.
  for (const auto* doc : {&plain, &loaded}) {
    if ((*doc)["backend"]["threads_from"] == "the backend") continue;
    EXPECT_EQ((*doc)["backend"]["threads"], 1 + workers.size()) << (*doc)["backend"].dump();
    EXPECT_NE(
        ReadFile(run + "/threads-2/e2e_statistics.txt")
            .find("used " + std::to_string(1 + workers.size()) + " (the inference thread and " +
                  std::to_string(workers.size()) + " worker thread(s)"),
        std::string::npos);
  }
  for (const auto& t : loaded["threads"]) {
    if (t["role"] == "capture") continue;
    EXPECT_EQ(t["policy"], "fifo") << t.dump();
    EXPECT_EQ(t["priority"], 70) << t.dump();
  }
  for (const auto& n : loaded["notes"]) {
    EXPECT_EQ(n.get<std::string>().find("0 worker thread(s)"), std::string::npos) << n;
  }
}

TEST(E2eCli, SigintMidRunLeavesAValidFolder) {
  TempDir dir;
  const std::string run = dir.File("run");
  ProcessOptions options;
  options.signal = SIGINT;
  options.signal_after = std::chrono::milliseconds(2500);
  const ProcessResult r =
      RunRtpulse(E2eArgs(run, {"--frames", "100000", "--warmup", "1"}), options);
  ASSERT_EQ(r.exit_code, 130) << r.out << r.err;
  const auto result = E2eJsonOf(run + "/result.json");
  EXPECT_EQ(result["status"], "interrupted");
  ExpectE2eTruth(run, r.out);
  const auto doc = E2eJsonOf(run + "/baseline/e2e.json");
  EXPECT_TRUE(doc["counts"]["interrupted"].get<bool>());
  EXPECT_GT(doc["counts"]["frames"].get<int>(), 0);
  EXPECT_LT(doc["counts"]["frames"].get<int>(), 100000);
}

TEST(E2eCli, ReportCompareAndWcetReadTwoE2eFolders) {
  TempDir dir;
  const std::string a = dir.File("a");
  const std::string b = dir.File("b");
  for (const auto& run : {a, b}) {
    const ProcessResult r =
        RunRtpulse(E2eArgs(run, {"--model", kTiny, "--frames", "30", "--warmup", "2"}));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // Total's max (frames.csv) as the readers print it, in us with two decimals.
  const auto doc = E2eJsonOf(a + "/baseline/e2e.json");
  const auto max_ns = doc["stages"]["Total"]["max_ns"].get<int64_t>();
  const std::string max_us = [&] {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(2);
    s << static_cast<double>(max_ns) / 1000.0;
    return s.str();
  }();
  const ProcessResult compare = RunRtpulse({"compare", a, b});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_NE(compare.out.find("samples                    30"), std::string::npos) << compare.out;
  EXPECT_NE(compare.out.find(max_us), std::string::npos) << max_us << "\n" << compare.out;
  // No deadline: compare says the misses were not counted, never 0/0.
  EXPECT_NE(compare.out.find("not counted"), std::string::npos) << compare.out;
  EXPECT_EQ(compare.out.find("0/0"), std::string::npos) << compare.out;
  const ProcessResult wcet = RunRtpulse({"wcet", a});
  EXPECT_EQ(wcet.exit_code, 0) << wcet.out << wcet.err;
  EXPECT_NE(wcet.out.find("30 samples"), std::string::npos) << wcet.out;
  const ProcessResult report = RunRtpulse({"report", a});
  EXPECT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_TRUE(std::filesystem::exists(a + "/report/index.html"));
  // The report draws the stacked stages again from frames.csv and shows them.
  EXPECT_NE(ReadFile(a + "/report/index.html").find("End-to-end stages (rtpulse e2e)"),
            std::string::npos);
  const ProcessResult elsewhere = RunRtpulse({"report", a, "--out", dir.File("rep")});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_EQ(ReadFile(dir.File("rep") + "/figures/e2e_stages.dat"),
            ReadFile(a + "/figures/e2e_stages.dat"));
  const std::string summary = ReadFile(a + "/statistical_summary.txt");
  EXPECT_NE(summary.find("baseline"), std::string::npos);
}

TEST(E2eCli, RefusedSchedulingIsAResourceErrorBeforeAnythingIsWritten) {
  if (!rtpulse::testutil::IsRoot()) GTEST_SKIP() << "needs root to run the command as nobody";
  TempDir dir;
  const std::string run = dir.File("run");
  ProcessOptions options;
  options.run_as_uid = 65534;
  const ReachableCopy model(kTiny, *options.run_as_uid);  // a checkout in a 0700 home
  const ProcessResult r = RunRtpulse(
      E2eArgs(run, {"--model", model.path(), "--frames", "5", "--inference-policy", "fifo:70"}),
      options);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--inference-policy fifo:70"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CAP_SYS_NICE"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(run));
}

struct E2eBadInput {
  std::vector<std::string> args;
  int code;
  std::string says;
};

TEST(E2eCli, BadInputNamesTheValueAndWritesNothing) {
  TempDir dir;
  std::ofstream(dir.File("empty.onnx")) << "";
  std::ofstream(dir.File("model.bin")) << "x";
  std::ofstream(dir.File("one.csv")) << "x,y,depth_m\n10,200,2.0\n";
  const std::vector<E2eBadInput> cases = {
      {{"--source", "webcam"}, 2, "webcam"},
      {{"--source", "video:" + dir.File("missing.mp4")}, 2, "missing.mp4"},
      {{"--model", dir.File("missing.onnx")}, 2, "missing.onnx"},
      {{"--model", dir.File("empty.onnx")}, 2, "empty.onnx"},
      {{"--model", dir.File("model.bin")}, 2, "model.bin"},
      {{"--backend", "tensorrt"}, 2, "tensorrt"},
      {{"--backend", "armnn"}, 2, "--backend armnn"},
      {{"--threads", "0"}, 2, "0"},
      // Not numbers: the option, the value and an example, not CLI11's "Could not convert".
      {{"--threads", "abc"}, 2, "--threads 'abc' is not a whole number: give e.g. --threads 2"},
      {{"--frames", "many"}, 2, "--frames 'many' is not a whole number"},
      {{"--near", "close"}, 2, "--near 'close' is not a number: give a distance in metres"},
      {{"--frames", "0"}, 2, "--frames 0"},
      {{"--warmup", "-1"}, 2, "--warmup -1"},
      {{"--fps", "fast"}, 2, "--fps 'fast'"},
      {{"--fps", "0"}, 2, "--fps '0'"},
      {{"--deadline", "40"}, 2, "--deadline '40' needs a unit"},
      {{"--deadline", "soon"}, 2, "--deadline"},
      {{"--crop", "0.5,0,0.2,1"}, 2, "--crop"},
      {{"--roi", "1,2"}, 2, "--roi"},
      {{"--near", "-1"}, 2, "--near -1"},
      {{"--near", "2", "--clear", "1"}, 2, "--clear 1"},
      {{"--alert", "buzzer"}, 2, "buzzer"},
      {{"--loopback", "gpio:gpiochip0:3"}, 2, "--loopback needs --alert gpio"},
      {{"--loopback", "pin7", "--alert", "stdout"}, 2, "--loopback 'pin7'"},
      {{"--capture-policy", "fifo:120"}, 2, "--capture-policy 'fifo:120'"},
      {{"--inference-policy", "batch"}, 2, "--inference-policy 'batch'"},
      {{"--inference-cpus", "999"}, 2, "CPU 999 is not online"},
      {{"--sweep", "cpus"}, 2, "--sweep 'cpus'"},
      {{"--sweep", "threads", "--threads", "2"}, 2, "drop --threads"},
      {{"--load", "nosuchload"}, 2, "nosuchload"},
      {{"--reference", dir.File("missing.csv")}, 2, "missing.csv"},
      // One point cannot scale relative depth: the file, its count and the rule are named.
      {{"--source", "synthetic:320x240", "--reference", dir.File("one.csv")},
       2,
       "--reference " + dir.File("one.csv") +
           ": 1 reference depth point(s); fitting the relative "
           "depth to metres needs 2 or more"},
      {{"--input-size", "96"}, 2, "--input-size '96': give WIDTHxHEIGHT"},
      {{"--input-size", "0x64"}, 2, "--input-size '0x64'"},
      // depth-tiny's input is fixed: a size asked for it is refused, naming both.
      {{"--input-size", "96x64"}, 2, "--input-size 96x64: model " + kTiny + " fixes its input at"},
      {{"--csv", "-"}, 2, "--csv -: "},
      {{"--alert", "stdout", "--json", "-"}, 2, "--alert stdout with --json -"},
  };
  for (const auto& c : cases) {
    const std::string run = dir.File("run");
    std::vector<std::string> args = E2eArgs(run, c.args);
    const auto has = [&](const char* option) {
      return std::find(c.args.begin(), c.args.end(), option) != c.args.end();
    };
    if (!has("--model")) args.insert(args.end(), {"--model", kTiny});
    if (!has("--frames")) args.insert(args.end(), {"--frames", "5"});
    const ProcessResult r = RunRtpulse(args);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, c.code) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << joined << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << joined << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(run)) << joined << ": wrote " << run;
  }
}

}  // namespace
