// OpenCV DNN running ONNX models (Debian libopencv-dev) on its own CPU backend.
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <regex>

#include "core/printable.h"
#include "e2e/backends.h"
#include "e2e/onnx_info.h"

namespace rtpulse::e2e {
namespace {

/// Whether this OpenCV runs its parallel loops on TBB: its build information's "Parallel
/// framework:" line (OpenCV 4.6 has no call that names the framework in use).
bool OpenCvBuiltOnTbb() {
  const std::string& info = cv::getBuildInformation();
  const size_t at = info.find("Parallel framework:");
  if (at == std::string::npos) return false;
  const size_t end = info.find('\n', at);
  return info.substr(at, end == std::string::npos ? std::string::npos : end - at).find("TBB") !=
         std::string::npos;
}

/// OpenCV's error as one line: its description (e.err, where the ONNX importer names the node
/// and its operator on lines of their own) without the "OpenCV(4.6.0) FILE:LINE: error:"
/// prefix of e.msg, and the OpenCV function that raised it.
std::string OpenCvError(const cv::Exception& e) {
  // The ONNX importer quotes the inner error whole, prefix included: that goes too.
  static const std::regex kPrefix(R"(OpenCV\([^)]*\) \S+:\d+: error: \(-?\d+:[^)]*\) )");
  std::string text = std::regex_replace(OneLine(e.err.empty() ? e.msg : e.err), kPrefix, "");
  if (!e.func.empty()) text += " (in OpenCV's " + e.func + ")";
  return text;
}

/// The CPUs the calling thread may run on (sched_getaffinity); 0 when not known.
int OpenCvAllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

class OpenCvDnnBackend final : public InferenceBackend {
 public:
  Status Load(const std::string& model_path, int threads) override {
    if (Status s = CheckThreads(threads); !s) return s;
    if (Status s = CheckModelFile(model_path); !s) return s;
    auto signature = ReadOnnxSignature(model_path);
    if (!signature) return signature.error();
    const auto& in = signature->inputs.front();
    const auto& out = signature->outputs.front();
    if (signature->inputs.size() != 1 || in.size() != 4 || out.size() != 4 ||
        (in[0] != 1 && in[0] != -1)) {
      return UsageError(fmt::format(
          "model {}: {} input(s), the first {}-D, and a {}-D output; a depth model has one "
          "input 1x3xHxW and one output 1x1xHxW",
          Printable(model_path), signature->inputs.size(), in.size(), out.size()));
    }
    shape_ = {static_cast<int>(in[1]),  static_cast<int>(in[2]),  static_cast<int>(in[3]),
              static_cast<int>(out[1]), static_cast<int>(out[2]), static_cast<int>(out[3])};
    if (Status s = ApplyRequestedInputSize(model_path, shape_); !s) return s;
    // A symbolic output size is known after the trial run below; the input's must be fixed.
    if (shape_.out_height < 0) shape_.out_height = shape_.in_height;
    if (shape_.out_width < 0) shape_.out_width = shape_.in_width;
    if (Status s = CheckDepthShape(model_path, shape_); !s) return s;
    // OpenCV logs an import error on stderr as well as throwing it: the error says it once.
    const auto log_level = cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    struct RestoreLogLevel {
      cv::utils::logging::LogLevel level;
      ~RestoreLogLevel() { cv::utils::logging::setLogLevel(level); }
    } restore{log_level};
    try {
      net_ = cv::dnn::readNetFromONNX(model_path);
      net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const cv::Exception& e) {
      return UsageError(
          fmt::format("model {}: OpenCV DNN cannot import it ({}); give an ONNX "
                      "model of operators OpenCV 4.6 supports",
                      Printable(model_path), OpenCvError(e)));
    }
    // OpenCV's worker pool is process-wide: this sets it for every cv call of the process.
    on_tbb_ = OpenCvBuiltOnTbb();
    // TBB runs at most as many threads as the CPUs it found when it started and prints a
    // stray warning on stderr when asked for more: on TBB the request is capped at the CPUs
    // this thread may run on (what TBB finds when it starts here), which costs nothing.
    const int cpus = OpenCvAllowedCpus();
    cv::setNumThreads(on_tbb_ && cpus > 0 ? std::min(threads, cpus) : threads);
    // getNumThreads() echoes what was set. On TBB (Debian's build) the workers are TBB's,
    // which caps them at the CPUs it found when it started (and says so on stderr), so the
    // count is not known here: -1, and the pipeline counts the workers in /proc
    // (PipelineResult::workers_seen).
    threads_ = on_tbb_ ? -1 : cv::getNumThreads();
    Tensor zeros;
    zeros.shape = {1, shape_.in_channels, shape_.in_height, shape_.in_width};
    zeros.data.assign(zeros.ElementCount(), 0.0F);
    Tensor out_tensor;
    loaded_ = true;
    if (Status s = Run(zeros, out_tensor); !s) {
      loaded_ = false;
      return UsageError(fmt::format("model {}: {}", Printable(model_path), s.error().message));
    }
    shape_.out_channels = out_tensor.shape[1];
    shape_.out_height = out_tensor.shape[2];
    shape_.out_width = out_tensor.shape[3];
    return CheckDepthShape(model_path, shape_);
  }

  Status Run(const Tensor& input, Tensor& output) override {
    if (!loaded_) return Failure("opencv backend: Run before a successful Load");
    const std::vector<int> want = {1, shape_.in_channels, shape_.in_height, shape_.in_width};
    if (input.shape != want || input.data.size() != input.ElementCount()) {
      return UsageError(fmt::format("input tensor {} does not match the model's input {}",
                                    FormatShape(input.shape), FormatShape(want)));
    }
    try {
      // A header over the caller's data: setInput copies it into the network's own blob.
      const cv::Mat blob(4, want.data(), CV_32F, const_cast<float*>(input.data.data()));
      net_.setInput(blob);
      net_.forward(out_blobs_);
    } catch (const cv::Exception& e) {
      return Failure(fmt::format("OpenCV DNN inference failed: {}", OpenCvError(e)));
    }
    const cv::Mat& result = out_blobs_.front();
    if (result.dims != 4 || result.type() != CV_32F) {
      return Failure(
          fmt::format("OpenCV DNN output has {} dimensions; a depth model gives 4 "
                      "(1x1xHxW)",
                      result.dims));
    }
    output.shape = {result.size[0], result.size[1], result.size[2], result.size[3]};
    const size_t n = output.ElementCount();
    output.data.resize(n);
    const cv::Mat contiguous = result.isContinuous() ? result : result.clone();
    std::copy_n(contiguous.ptr<float>(), n, output.data.data());
    return Status::Ok();
  }

  std::string name() const override { return fmt::format("opencv-dnn {} CPU", CV_VERSION); }
  std::string why() const override {
    std::string text =
        "OpenCV's own CPU backend (DNN_BACKEND_OPENCV, DNN_TARGET_CPU): Debian's build has no "
        "accelerator target on this path";
    if (on_tbb_) {
      text +=
          "; its worker pool is TBB's, which caps the threads at the CPUs it found at start "
          "(a request above the CPUs this thread may use is lowered to them; the workers "
          "used are those seen in /proc during the run)";
    }
    return text;
  }
  int threads() const override { return threads_; }
  const ModelShape& shape() const override { return shape_; }

 private:
  cv::dnn::Net net_;
  std::vector<cv::Mat> out_blobs_;
  ModelShape shape_;
  int threads_ = 0;
  bool on_tbb_ = false;  ///< OpenCV's parallel framework is TBB.
  bool loaded_ = false;
};

}  // namespace

std::unique_ptr<InferenceBackend> MakeOpenCvBackend() {
  return std::make_unique<OpenCvDnnBackend>();
}

}  // namespace rtpulse::e2e
