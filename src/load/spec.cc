#include "load/spec.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <sstream>

#include "core/cpus.h"
#include "core/fs_root.h"
#include "core/parse.h"
#include "core/printable.h"
#include "core/suggest.h"
#include "load/registry.h"

namespace rtpulse::load {
namespace {

const std::vector<std::string> kCommonKeys = {"cpus", "nice", "policy", "prio", "intensity"};

std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(sep, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) out.push_back(static_cast<int>(cpu));
  }
  return out;
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Expected<int64_t> SignedInt(const std::string& text, const std::string& key) {
  const bool negative = !text.empty() && text[0] == '-';
  auto v = ParseInt(negative ? text.substr(1) : text, key);
  if (!v) return v;
  return negative ? -*v : *v;
}

Status ApplyCommon(const std::string& key, const std::string& value, LoadParams& p) {
  const std::string where = fmt::format("{}={}", key, value);
  if (key == "cpus") {
    auto cpus = ParseCpuList(value);
    if (!cpus || cpus->empty())
      return UsageError(where + " is not a CPU list; give e.g. cpus=0-1,3");
    p.cpus = *cpus;
  } else if (key == "intensity") {
    auto v = ParseInt(value, key);
    if (!v || *v < 1 || *v > 100) {
      return UsageError(where + " is not valid; give a duty cycle from 1 to 100 (percent)");
    }
    p.intensity = static_cast<int>(*v);
  } else if (key == "nice") {
    auto v = SignedInt(value, key);
    if (!v || *v < -20 || *v > 19) return UsageError(where + " is not valid; give -20 to 19");
    p.nice = static_cast<int>(*v);
  } else if (key == "prio") {
    auto v = ParseInt(value, key);
    if (!v || *v < 1 || *v > 99) return UsageError(where + " is not valid; give 1 to 99");
    p.priority = static_cast<int>(*v);
  } else if (key == "policy") {
    const auto policy = SchedPolicyFromName(value);
    if (!policy) {
      return UsageError(where + " is not known; give policy=other, batch, idle, fifo or rr");
    }
    p.policy = *policy;
  }
  return Status::Ok();
}

/// Applies `key=value` words, checking each key against the common and the load's own keys.
Status ApplyOptions(const std::vector<std::string>& words, const LoadDescriptor& d,
                    const std::string& spec, LoadParams& p) {
  std::vector<std::string> allowed = kCommonKeys;
  std::vector<std::string> own;
  for (const auto& o : d.options) own.emplace_back(o.key);
  allowed.insert(allowed.end(), own.begin(), own.end());
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& word : words) {
    if (word.empty()) continue;
    const auto eq = word.find('=');
    if (eq == std::string::npos) {
      // "cpus=0,2": the comma separates CPUs, not options.
      if (!pairs.empty() && pairs.back().first == "cpus") {
        pairs.back().second += "," + word;
        continue;
      }
      return UsageError(
          fmt::format("load '{}': '{}' is not key=value", Printable(spec), Printable(word)));
    }
    pairs.emplace_back(word.substr(0, eq), word.substr(eq + 1));
  }
  for (const auto& [key, value] : pairs) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const std::string guess = ClosestName(key, allowed);
      return UsageError(
          fmt::format("load '{}': unknown option '{}'{}", Printable(spec), Printable(key),
                      guess.empty() ? fmt::format(" (options: {})", fmt::join(allowed, ", "))
                                    : fmt::format(". Did you mean '{}'?", guess)));
    }
    // A plain reference: clang before 16 refuses a lambda capturing a structured binding.
    const std::string& name = key;
    if (std::count_if(pairs.begin(), pairs.end(), [&](const auto& e) { return e.first == name; }) >
        1) {
      return UsageError(
          fmt::format("load '{}': option '{}' given twice", Printable(spec), Printable(key)));
    }
    if (Status s = ApplyCommon(key, value, p); !s) {
      return UsageError(fmt::format("load '{}': {}", Printable(spec), s.error().message));
    }
    if (std::find(own.begin(), own.end(), key) != own.end()) p.options.emplace_back(key, value);
  }
  return Status::Ok();
}

Status CheckPlacement(const std::string& spec, const CpuScope& scope, LoadParams& p) {
  const std::vector<int>& online = scope.online;
  const std::vector<int>& allowed = scope.allowed;
  for (const int cpu : p.cpus) {
    if (!Contains(online, cpu)) {
      return UsageError(fmt::format("load '{}': CPU {} is not online (online: {})", spec, cpu,
                                    FormatCpuList(online)));
    }
    if (!allowed.empty() && !Contains(allowed, cpu)) {
      return UsageError(fmt::format("load '{}': CPU {} is outside this process's affinity ({})",
                                    spec, cpu, FormatCpuList(allowed)));
    }
  }
  if (p.cpus.empty()) {
    for (const int cpu : online) {
      if (allowed.empty() || Contains(allowed, cpu)) p.cpus.push_back(cpu);
    }
  }
  const bool realtime = IsRealtime(p.policy);
  if (realtime && p.priority == 0) {
    return UsageError(fmt::format("load '{}': policy fifo/rr needs prio=1..99", spec));
  }
  if (!realtime && p.priority != 0) {
    return UsageError(fmt::format("load '{}': prio= needs policy=fifo or policy=rr", spec));
  }
  return Status::Ok();
}

/// Options, placement, the load's own checks and whether it can run here.
Expected<LoadSpec> FinishSpec(LoadSpec spec, const std::vector<std::string>& words,
                              const LoadDescriptor& d, const CpuScope& scope) {
  if (Status s = ApplyOptions(words, d, spec.text, spec.params); !s) return s.error();
  if (Status s = CheckPlacement(spec.text, scope, spec.params); !s) return s.error();
  Status s = CheckLoadOptions(d, spec.params);
  if (s && d.validate != nullptr) s = d.validate(spec.params);
  if (!s) return Error{s.error().code, fmt::format("load '{}': {}", spec.text, s.error().message)};
  if (const std::string why = d.supported(); !why.empty()) {
    return ResourceError(fmt::format("load '{}': {}", spec.text, why));
  }
  return spec;
}

}  // namespace

CpuScope LocalCpuScope() {
  return {OnlineCpus(FsRoot::Live()), AllowedCpus()};
}

Expected<LoadSpec> ParseLoadSpec(std::string_view text) {
  return ParseLoadSpec(text, LocalCpuScope());
}

Expected<LoadSpec> ParseLoadSpec(std::string_view text, const CpuScope& scope) {
  LoadSpec spec;
  spec.text = std::string(text);
  const auto colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (spec.name.empty()) {
    return UsageError(fmt::format("load '{}' has no name; give e.g. cpu:cpus=0", Printable(text)));
  }
  auto found = FindLoad(spec.name);
  if (!found) return found.error();
  const LoadDescriptor& d = **found;
  const std::string rest =
      colon == std::string_view::npos ? "" : std::string(text.substr(colon + 1));

  std::vector<std::string> words;
  if (d.name == std::string_view("cmd")) {
    // Leading key=value words are rtpulse's; from the first other word on, the command line,
    // split on blanks (no quoting), or given whole to /bin/sh -c with shell=1.
    size_t at = 0;
    for (;;) {
      at = rest.find_first_not_of(" \t", at);
      if (at == std::string::npos) break;
      const size_t end = std::min(rest.find_first_of(" \t", at), rest.size());
      const std::string word = rest.substr(at, end - at);
      if (word[0] == '-' || word.find('=') == std::string::npos) break;
      for (auto& piece : Split(word, ',')) words.push_back(piece);
      at = end;
    }
    const std::string command = at == std::string::npos ? "" : rest.substr(at);
    std::istringstream in(command);
    for (std::string word; in >> word;) spec.params.args.push_back(word);
    if (std::find(words.begin(), words.end(), "shell=1") != words.end() && !command.empty()) {
      spec.params.args = {"/bin/sh", "-c", command};
    }
  } else if (d.name == std::string_view("stress-ng")) {
    // Leading key=value words are rtpulse's; from the first '-' word on, stress-ng's.
    std::istringstream in(rest);
    bool passing = false;
    for (std::string word; in >> word;) {
      passing = passing || word[0] == '-' || word.find('=') == std::string::npos;
      if (passing) {
        spec.params.args.push_back(word);
      } else {
        for (auto& piece : Split(word, ',')) words.push_back(piece);
      }
    }
  } else {
    words = Split(rest, ',');
  }
  return FinishSpec(std::move(spec), words, d, scope);
}

Expected<LoadSpec> CommandLoadSpec(const std::vector<std::string>& argv,
                                   const std::vector<std::string>& options, const CpuScope& scope) {
  LoadSpec spec;
  spec.name = "cmd";
  spec.params.args = argv;
  // The text names the command for reports; a word with blanks is shown in double quotes.
  std::vector<std::string> shown;
  for (const auto& a : argv) {
    shown.push_back(a.find_first_of(" \t") == std::string::npos ? a : "\"" + a + "\"");
  }
  spec.text = fmt::format("cmd:{}{}{}", fmt::join(options, ","), options.empty() ? "" : " ",
                          fmt::join(shown, " "));
  auto found = FindLoad("cmd");
  if (!found) return found.error();
  return FinishSpec(std::move(spec), options, **found, scope);
}

Expected<std::vector<LoadSpec>> ParseLoadSpecs(const std::vector<std::string>& args) {
  std::vector<LoadSpec> specs;
  for (const auto& arg : args) {
    std::vector<std::string> pieces = Split(arg, '+');
    for (size_t i = 0; i < pieces.size(); ++i) {
      // A command line may hold '+': cmd takes the rest of its argument.
      if (pieces[i].rfind("cmd:", 0) == 0) {
        for (size_t k = i + 1; k < pieces.size(); ++k) pieces[i] += "+" + pieces[k];
        pieces.resize(i + 1);
      }
    }
    for (const auto& piece : pieces) {
      if (piece.empty()) {
        return UsageError(
            fmt::format("empty load in '{}'; join loads as cpu+memory", Printable(arg)));
      }
      auto spec = ParseLoadSpec(piece);
      if (!spec) return spec.error();
      specs.push_back(std::move(*spec));
    }
  }
  if (specs.empty()) return UsageError("no load given; give e.g. cpu:cpus=0 (see docs/loads.md)");
  return specs;
}

}  // namespace rtpulse::load
