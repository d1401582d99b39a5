#include "load/registry.h"

#include <fmt/format.h>

#include <vector>

#include "core/parse.h"
#include "core/printable.h"
#include "core/suggest.h"
#include "load/builtins.h"

namespace rtpulse::load {
namespace {

const std::vector<LoadDescriptor>& Table() {
  static const std::vector<LoadDescriptor> table = {
      CpuLoad(),    MemoryLoad(), CacheLoad(),    IoLoad(),
      SwitchLoad(), NetLoad(),    StressNgLoad(), CommandLoad(),
  };
  return table;
}

}  // namespace

std::string LoadParams::Option(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : options) {
    if (k == key) return v;
  }
  return fallback;
}

std::span<const LoadDescriptor> Loads() {
  return Table();
}

Expected<const LoadDescriptor*> FindLoad(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& d : Table()) {
    if (name == d.name) return &d;
    names.emplace_back(d.name);
  }
  const std::string guess = ClosestName(name, names);
  if (!guess.empty()) {
    return UsageError(fmt::format("unknown load '{}'. Did you mean '{}'?", Printable(name), guess));
  }
  return UsageError(
      fmt::format("unknown load '{}' (loads: {})", Printable(name), fmt::join(names, ", ")));
}

std::unique_ptr<Load> CreateLoad(const LoadSpec& spec) {
  auto d = FindLoad(spec.name);
  if (!d) std::abort();  // ParseLoadSpec only accepts names in the table.
  return (*d)->create(spec);
}

namespace {

Status CheckLoadOption(const LoadOption& o, const std::string& text) {
  using Kind = LoadOption::Kind;
  switch (o.kind) {
    case Kind::kWhole: {
      auto value = ParseInt(text, o.key);
      if (!value || *value < o.min || *value > o.max) {
        return UsageError(fmt::format("{}={} is not valid; give a whole number from {} to {}",
                                      o.key, Printable(text), o.min, o.max));
      }
      return Status::Ok();
    }
    case Kind::kFlag:
      if (text != "0" && text != "1") {
        return UsageError(
            fmt::format("{0}={1} is not valid; give {0}=1 or {0}=0", o.key, Printable(text)));
      }
      return Status::Ok();
    case Kind::kChoice: {
      for (const auto& c : o.choices) {
        if (text == c) return Status::Ok();
      }
      std::vector<std::string> each;
      for (const auto& c : o.choices) each.push_back(fmt::format("{}={}", o.key, c));
      return UsageError(fmt::format("{}={} is not known; give {}", o.key, Printable(text),
                                    fmt::join(each, " or ")));
    }
    case Kind::kTime: {
      auto ns = ParseTimeNs(text);
      if (!ns || *ns < o.min || *ns > o.max) {
        return UsageError(fmt::format(
            "{0}={1} is not valid; give a time from {2} to {3} with its unit, e.g. {0}={4}", o.key,
            Printable(text), FormatTimeNs(o.min), FormatTimeNs(o.max), o.fallback));
      }
      return Status::Ok();
    }
    case Kind::kText:
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

Status CheckLoadOptions(const LoadDescriptor& d, const LoadParams& params) {
  for (const auto& [key, value] : params.options) {
    for (const auto& o : d.options) {
      if (key != o.key) continue;
      if (Status s = CheckLoadOption(o, value); !s) return s;
    }
  }
  return Status::Ok();
}

int64_t WholeOption(const LoadParams& params, const LoadOption& option) {
  const std::string text = params.Option(option.key, "");
  if (!text.empty()) {
    if (auto v = ParseInt(text, option.key)) return *v;
  }
  if (option.machine_default != nullptr) return option.machine_default();
  return ParseInt(option.fallback, option.key).value();
}

bool FlagOption(const LoadParams& params, const LoadOption& option) {
  return params.Option(option.key, option.fallback) == "1";
}

int64_t TimeOption(const LoadParams& params, const LoadOption& option) {
  if (auto ns = ParseTimeNs(params.Option(option.key, option.fallback))) return *ns;
  return ParseTimeNs(option.fallback).value();
}

std::string TextOption(const LoadParams& params, const LoadOption& option) {
  return params.Option(option.key, option.fallback);
}

std::string DescribeLoadOption(const LoadOption& o) {
  using Kind = LoadOption::Kind;
  std::string values;
  switch (o.kind) {
    case Kind::kWhole:
      values = fmt::format("{}..{}", o.min, o.max);
      break;
    case Kind::kFlag:
      values = "0|1";
      break;
    case Kind::kChoice:
      values = fmt::format("{}", fmt::join(o.choices, "|"));
      break;
    case Kind::kTime:
      values = fmt::format("{}..{}", FormatTimeNs(o.min), FormatTimeNs(o.max));
      break;
    case Kind::kText:
      values = "PATH";
      break;
  }
  return fmt::format("{}={}", o.key, values);
}

}  // namespace rtpulse::load
