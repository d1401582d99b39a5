#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/fs_root.h"

// Reading the fields of a results file's JSON object into its type: the first problem is
// kept with the field's path ("settings.capture.policy is missing"), so a reader returns one
// usage error that names it. Used by the readers of control.json, e2e.json, sweep.json and
// interference.json, which read their file with ReadJsonDocument.
namespace rtpulse::results {

/// The JSON document in `path`; usage errors name the file and, when it cannot be read, what
/// to give instead (`what`: "an e2e scenario's e2e.json").
inline Expected<nlohmann::json> ReadJsonDocument(const std::string& path, const char* what) {
  const auto text = ReadWholeFile(path);
  if (!text) return UsageError(fmt::format("{}: cannot be read; give {}", path, what));
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return UsageError(fmt::format("{}: not JSON", path));
  return doc;
}

class JsonFields {
 public:
  /// `where` prefixes every field's name in an error ("settings." for a nested object).
  JsonFields(const nlohmann::json& doc, std::string where, std::string* error)
      : doc_(doc), where_(std::move(where)), error_(error) {}

  template <typename T>
  void Get(const char* key, T& out) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return;
    // The JSON library converts between kinds (true to 1, 1.5 to 1, -1 to 2^64 - 1): a number
    // field takes only a number of its kind, a flag only true or false.
    if (const char* want = KindMismatch<T>(*v)) {
      Fail(key, fmt::format("is {}, not {}", Describe(*v), want));
      return;
    }
    try {
      out = v->get<T>();
    } catch (const nlohmann::json::exception&) {
      Fail(key, fmt::format("is {}, not the expected type", v->type_name()));
    }
  }
  /// null: nullopt. The field must be there (a missing one is named, as for Get).
  template <typename T>
  void GetOptional(const char* key, std::optional<T>& out) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr || v->is_null()) return;
    T value{};
    Get(key, value);
    out = value;
  }
  /// A field that files of an earlier release lack: absent leaves `out` as it is.
  template <typename T>
  void GetIfPresent(const char* key, T& out) {
    if (doc_.is_object() && doc_.contains(key)) Get(key, out);
  }
  /// Whether the field is there (an optional object: read it with Nested only then).
  bool Has(const char* key) const { return doc_.is_object() && doc_.contains(key); }
  /// The field, or nullptr (and the error) when it is missing.
  const nlohmann::json* Find(const char* key) {
    if (!doc_.is_object()) {
      Fail(key, "has no object around it");
      return nullptr;
    }
    const auto it = doc_.find(key);
    if (it == doc_.end()) {
      Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  /// The list under `key`, each element read by `read(JsonFields element, T& into)` (its errors
  /// under "key.index."); a missing field or one that is not a list is named.
  template <typename T, typename Read>
  void GetList(const char* key, std::vector<T>& out, Read read) {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) {
      Fail(key, fmt::format("is {}, not a list", v->type_name()));
      return;
    }
    JsonFields items(*v, where_ + key + ".", error_);
    out.resize(v->size());
    for (size_t i = 0; i < v->size(); ++i) read(items.At(i), out[i]);
  }
  /// The fields of a nested object, its errors under this one's path.
  JsonFields Nested(const char* key) {
    const nlohmann::json* v = Find(key);
    return JsonFields(v != nullptr ? *v : Empty(), where_ + key + ".", error_);
  }
  /// The fields of element `index` of this list (its errors under "list.index.").
  JsonFields At(size_t index) {
    const std::string key = std::to_string(index);
    if (!doc_.is_array() || index >= doc_.size()) {
      Fail(key, "is not in the list");
      return JsonFields(Empty(), where_ + key + ".", error_);
    }
    return JsonFields(doc_[index], where_ + key + ".", error_);
  }
  void Fail(const std::string& key, const std::string& what) {
    if (error_->empty()) *error_ = fmt::format("field '{}{}' {}", where_, key, what);
  }

 private:
  /// What `v` would have to be to fill a T, when it is not that; nullptr when it fits (or T
  /// is not a scalar: its own conversion checks it).
  template <typename T>
  static const char* KindMismatch(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, bool>) {
      return v.is_boolean() ? nullptr : "true or false";
    } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      const bool fits = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      return fits ? nullptr : "a whole number of 0 or more";
    } else if constexpr (std::is_integral_v<T>) {
      return v.is_number_integer() ? nullptr : "a whole number";
    } else if constexpr (std::is_floating_point_v<T>) {
      return v.is_number() ? nullptr : "a number";
    } else {
      return nullptr;
    }
  }
  /// The value's kind, a number with its value ("number -1", "number 1.5").
  static std::string Describe(const nlohmann::json& v) {
    if (v.is_number()) return "number " + v.dump();
    return v.type_name();
  }
  static const nlohmann::json& Empty() {
    static const nlohmann::json empty = nlohmann::json::object();
    return empty;
  }

  const nlohmann::json& doc_;
  std::string where_;
  std::string* error_;
};

}  // namespace rtpulse::results
