#include "e2e/onnx_info.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

#include "core/printable.h"

namespace rtpulse::e2e {
namespace {

// The protobuf wire format (protobuf.dev, "Encoding"): each field is a varint key
// (number << 3 | wire type) followed by a varint, 8 bytes, 4 bytes or a length-delimited run.
// Only what the ONNX signature needs: ModelProto.graph = 7; GraphProto.initializer = 5,
// input = 11, output = 12; TensorProto.name = 8; ValueInfoProto.name = 1, type = 2;
// TypeProto.tensor_type = 1; TypeProto.Tensor.shape = 2; TensorShapeProto.dim = 1;
// Dimension.dim_value = 1 (dim_param = 2 is symbolic).
struct OnnxField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;
  std::string_view bytes;  // wire type 2
};

class OnnxWireReader {
 public:
  explicit OnnxWireReader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  // False at a malformed or truncated field.
  bool Next(OnnxField& field) {
    uint64_t key = 0;
    if (!Varint(key)) return false;
    field.number = static_cast<uint32_t>(key >> 3);
    field.wire_type = static_cast<uint32_t>(key & 7);
    switch (field.wire_type) {
      case 0:
        return Varint(field.varint);
      case 1:
        return Skip(8);
      case 5:
        return Skip(4);
      case 2: {
        uint64_t len = 0;
        if (!Varint(len) || len > data_.size() - pos_) return false;
        field.bytes = data_.substr(pos_, len);
        pos_ += len;
        return true;
      }
      default:
        return false;  // groups (3, 4) are not in ONNX; anything else is not protobuf
    }
  }

 private:
  bool Varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Skip(size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

// Calls `visit(field)` for each field of `message`; false when it is malformed.
template <typename Visit>
bool ForEachOnnxField(std::string_view message, Visit visit) {
  OnnxWireReader reader(message);
  OnnxField field;
  while (!reader.done()) {
    if (!reader.Next(field)) return false;
    if (!visit(field)) return false;
  }
  return true;
}

struct OnnxValueInfo {
  std::string name;
  std::vector<int64_t> dims;
};

bool ParseOnnxDims(std::string_view shape, std::vector<int64_t>& dims) {
  return ForEachOnnxField(shape, [&](const OnnxField& f) {
    if (f.number != 1 || f.wire_type != 2) return true;
    int64_t value = -1;
    const bool ok = ForEachOnnxField(f.bytes, [&](const OnnxField& d) {
      if (d.number == 1 && d.wire_type == 0) value = static_cast<int64_t>(d.varint);
      return true;
    });
    dims.push_back(value);
    return ok;
  });
}

bool ParseOnnxValueInfo(std::string_view message, OnnxValueInfo& info) {
  return ForEachOnnxField(message, [&](const OnnxField& f) {
    if (f.number == 1 && f.wire_type == 2) info.name = std::string(f.bytes);
    if (f.number != 2 || f.wire_type != 2) return true;
    return ForEachOnnxField(f.bytes, [&](const OnnxField& t) {
      if (t.number != 1 || t.wire_type != 2) return true;
      return ForEachOnnxField(t.bytes, [&](const OnnxField& s) {
        if (s.number != 2 || s.wire_type != 2) return true;
        return ParseOnnxDims(s.bytes, info.dims);
      });
    });
  });
}

}  // namespace

Expected<OnnxSignature> ReadOnnxSignature(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return UsageError(fmt::format("model {}: cannot be read ({}); give a readable .onnx file",
                                  Printable(path), std::strerror(errno)));
  }
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto malformed = [&](std::string_view what) {
    return UsageError(fmt::format(
        "model {}: not a valid ONNX model ({}); the file may be truncated: write it again or "
        "give another",
        Printable(path), what));
  };
  std::optional<std::string_view> graph;
  const bool ok = ForEachOnnxField(data, [&](const OnnxField& f) {
    if (f.number == 7 && f.wire_type == 2) graph = f.bytes;
    return true;
  });
  if (!ok) return malformed("a protobuf field runs past the end of the file");
  if (!graph) return malformed("no graph");
  std::set<std::string> initializers;
  std::vector<OnnxValueInfo> inputs;
  OnnxSignature signature;
  const bool graph_ok = ForEachOnnxField(*graph, [&](const OnnxField& f) {
    if (f.wire_type != 2) return true;
    if (f.number == 5) {
      return ForEachOnnxField(f.bytes, [&](const OnnxField& t) {
        if (t.number == 8 && t.wire_type == 2) initializers.insert(std::string(t.bytes));
        return true;
      });
    }
    if (f.number == 11 || f.number == 12) {
      OnnxValueInfo info;
      if (!ParseOnnxValueInfo(f.bytes, info)) return false;
      if (f.number == 11) {
        inputs.push_back(std::move(info));
      } else {
        signature.outputs.push_back(std::move(info.dims));
      }
    }
    return true;
  });
  if (!graph_ok) return malformed("a protobuf field of the graph is malformed");
  for (auto& input : inputs) {
    if (!initializers.contains(input.name)) signature.inputs.push_back(std::move(input.dims));
  }
  if (signature.inputs.empty() || signature.outputs.empty()) {
    return malformed("the graph declares no input or no output");
  }
  return signature;
}

}  // namespace rtpulse::e2e
