// Arm NN's TfLite parser (Debian libarmnn-dev, libarmnntfliteparser-dev) running .tflite
// models: CpuAcc (NEON, Arm Compute Library) when its dynamic backend loads, else CpuRef.
#include <fmt/format.h>

#include <algorithm>
#include <armnn/ArmNN.hpp>
#include <armnn/Exceptions.hpp>
#include <armnn/Utils.hpp>
#include <armnnTfLiteParser/ITfLiteParser.hpp>
#include <filesystem>

#include "core/printable.h"
#include "e2e/backends.h"

namespace rtpulse::e2e {
namespace {

class ArmNnTfLiteBackend final : public InferenceBackend {
 public:
  ArmNnTfLiteBackend() : runtime_(nullptr, &armnn::IRuntime::Destroy) {}

  Status Load(const std::string& model_path, int threads) override {
    if (Status s = CheckThreads(threads); !s) return s;
    if (Status s = CheckModelFile(model_path); !s) return s;
    // Arm NN logs to stdout by default; its messages become our error text instead.
    armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
    armnn::IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = RTPULSE_ARMNN_BACKEND_DIR;
    runtime_ = armnn::IRuntime::Create(options);
    const auto& supported = runtime_->GetDeviceSpec().GetSupportedBackends();
    const bool has_acc = supported.count(armnn::BackendId("CpuAcc")) > 0;
    const bool has_ref = supported.count(armnn::BackendId("CpuRef")) > 0;
    if (!has_acc && !has_ref) {
      return ResourceError(fmt::format(
          "backend armnn: no Arm NN compute backend loads from {} (Arm_CpuRef_backend.so, "
          "Arm_CpuAcc_backend.so); install libarmnn-cpuref-backend22 (and "
          "libarmnn-cpuacc-backend22 on arm64)",
          RTPULSE_ARMNN_BACKEND_DIR));
    }
    device_ = has_acc ? "CpuAcc" : "CpuRef";
    if (has_acc) {
      why_ = "CpuAcc (NEON through the Arm Compute Library) loaded from " +
             std::string(RTPULSE_ARMNN_BACKEND_DIR) +
             "; Arm NN 20.08 has no option for its thread count: the library's scheduler "
             "decides";
      threads_ = -1;
    } else {
      why_ = fmt::format(
          "CpuAcc not available (no loadable Arm_CpuAcc_backend.so in {}: it exists for arm64 "
          "only, package libarmnn-cpuacc-backend22); CpuRef is Arm NN's portable reference "
          "backend, single-threaded, for correctness, not speed ({} thread(s) asked)",
          RTPULSE_ARMNN_BACKEND_DIR, threads);
      threads_ = 1;
    }
    armnn::INetworkPtr network(nullptr, &armnn::INetwork::Destroy);
    try {
      auto parser = armnnTfLiteParser::ITfLiteParser::Create();
      network = parser->CreateNetworkFromBinaryFile(model_path.c_str());
      if (parser->GetSubgraphCount() != 1) {
        return UsageError(fmt::format("model {}: {} subgraphs; a depth model has one",
                                      Printable(model_path), parser->GetSubgraphCount()));
      }
      const auto in_names = parser->GetSubgraphInputTensorNames(0);
      const auto out_names = parser->GetSubgraphOutputTensorNames(0);
      if (in_names.size() != 1 || out_names.size() != 1) {
        return UsageError(
            fmt::format("model {}: {} inputs and {} outputs; a depth model has one of each",
                        Printable(model_path), in_names.size(), out_names.size()));
      }
      input_binding_ = parser->GetNetworkInputBindingInfo(0, in_names[0]);
      output_binding_ = parser->GetNetworkOutputBindingInfo(0, out_names[0]);
    } catch (const armnn::Exception& e) {
      return UsageError(fmt::format(
          "model {}: Arm NN's TfLite parser cannot read it ({}); give a valid .tflite model of "
          "operators Arm NN 20.08 supports (the file may be truncated)",
          Printable(model_path), OneLine(e.what())));
    }
    if (Status s = TakeShape(model_path); !s) return s;
    std::vector<std::string> messages;
    try {
      std::vector<armnn::BackendId> prefs{armnn::BackendId(device_)};
      armnn::IOptimizedNetworkPtr optimized =
          armnn::Optimize(*network, prefs, runtime_->GetDeviceSpec(), armnn::OptimizerOptions(),
                          armnn::Optional<std::vector<std::string>&>(messages));
      std::string load_error;
      if (runtime_->LoadNetwork(network_id_, std::move(optimized), load_error) !=
          armnn::Status::Success) {
        return UsageError(fmt::format("model {}: Arm NN {} cannot load it: {}",
                                      Printable(model_path), device_, OneLine(load_error)));
      }
    } catch (const armnn::Exception& e) {
      std::string detail = OneLine(e.what());
      for (const auto& m : messages) detail += "; " + OneLine(m);
      return UsageError(fmt::format("model {}: Arm NN {} cannot run it ({})", Printable(model_path),
                                    device_, detail));
    }
    loaded_ = true;
    Tensor zeros;
    zeros.shape = {1, shape_.in_channels, shape_.in_height, shape_.in_width};
    zeros.data.assign(zeros.ElementCount(), 0.0F);
    Tensor out;
    if (Status s = Run(zeros, out); !s) {
      loaded_ = false;
      return UsageError(fmt::format("model {}: {}", Printable(model_path), s.error().message));
    }
    return Status::Ok();
  }

  Status Run(const Tensor& input, Tensor& output) override {
    if (!loaded_) return Failure("armnn backend: Run before a successful Load");
    const int c = shape_.in_channels;
    const int h = shape_.in_height;
    const int w = shape_.in_width;
    const std::vector<int> want = {1, c, h, w};
    if (input.shape != want || input.data.size() != input.ElementCount()) {
      return UsageError(fmt::format("input tensor {} does not match the model's input {}",
                                    FormatShape(input.shape), FormatShape(want)));
    }
    // NCHW -> NHWC, TFLite's layout.
    const auto cs = static_cast<size_t>(c);
    const auto plane = static_cast<size_t>(h) * static_cast<size_t>(w);
    nhwc_in_.resize(input.data.size());
    for (size_t ch = 0; ch < cs; ++ch) {
      for (size_t i = 0; i < plane; ++i) nhwc_in_[i * cs + ch] = input.data[ch * plane + i];
    }
    const int oc = shape_.out_channels;
    const int oh = shape_.out_height;
    const int ow = shape_.out_width;
    const auto ocs = static_cast<size_t>(oc);
    const auto out_plane = static_cast<size_t>(oh) * static_cast<size_t>(ow);
    nhwc_out_.resize(ocs * out_plane);
    try {
      const armnn::InputTensors inputs{
          {input_binding_.first,
           armnn::ConstTensor(runtime_->GetInputTensorInfo(network_id_, input_binding_.first),
                              nhwc_in_.data())}};
      const armnn::OutputTensors outputs{
          {output_binding_.first,
           armnn::Tensor(runtime_->GetOutputTensorInfo(network_id_, output_binding_.first),
                         nhwc_out_.data())}};
      if (runtime_->EnqueueWorkload(network_id_, inputs, outputs) != armnn::Status::Success) {
        return Failure(fmt::format("Arm NN {} inference failed", device_));
      }
    } catch (const armnn::Exception& e) {
      return Failure(fmt::format("Arm NN {} inference failed: {}", device_, OneLine(e.what())));
    }
    output.shape = {1, oc, oh, ow};
    output.data.resize(nhwc_out_.size());
    for (size_t ch = 0; ch < ocs; ++ch) {
      for (size_t i = 0; i < out_plane; ++i)
        output.data[ch * out_plane + i] = nhwc_out_[i * ocs + ch];
    }
    return Status::Ok();
  }

  std::string name() const override {
    return fmt::format("armnn {} {}", ARMNN_VERSION, device_.empty() ? "(none)" : device_);
  }
  std::string why() const override { return why_; }
  int threads() const override { return threads_; }
  const ModelShape& shape() const override { return shape_; }

 private:
  Status TakeShape(const std::string& model_path) {
    const armnn::TensorShape& in = input_binding_.second.GetShape();
    const armnn::TensorShape& out = output_binding_.second.GetShape();
    if (in.GetNumDimensions() != 4 || out.GetNumDimensions() != 4 || in[0] != 1) {
      return UsageError(fmt::format(
          "model {}: a {}-D input and a {}-D output; a depth model takes 1xHxWx3 and gives "
          "1xHxWx1 (TFLite NHWC)",
          Printable(model_path), in.GetNumDimensions(), out.GetNumDimensions()));
    }
    // TFLite is NHWC; ModelShape is NCHW like the rest of the pipeline.
    shape_ = {static_cast<int>(in[3]),  static_cast<int>(in[1]),  static_cast<int>(in[2]),
              static_cast<int>(out[3]), static_cast<int>(out[1]), static_cast<int>(out[2])};
    // The TFLite parser gives fixed sizes: --input-size can only agree with them.
    if (shape_.in_height > 0 && shape_.in_width > 0) {
      if (Status s = ApplyRequestedInputSize(model_path, shape_); !s) return s;
    }
    return CheckDepthShape(model_path, shape_);
  }

  armnn::IRuntimePtr runtime_;
  armnn::NetworkId network_id_ = 0;
  armnn::BindingPointInfo input_binding_;
  armnn::BindingPointInfo output_binding_;
  std::vector<float> nhwc_in_;
  std::vector<float> nhwc_out_;
  ModelShape shape_;
  std::string device_;
  std::string why_;
  int threads_ = 0;
  bool loaded_ = false;
};

}  // namespace

std::unique_ptr<InferenceBackend> MakeArmNnBackend() {
  return std::make_unique<ArmNnTfLiteBackend>();
}

}  // namespace rtpulse::e2e
