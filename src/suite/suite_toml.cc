// Suite TOML files (docs/suite-config.md). Every error names FILE:LINE:COL of the offending
// key or value, the bad value and the fix, the way a compiler reports a source error.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "core/parse.h"
#include "core/printable.h"
#include "core/suggest.h"
#include "load/spec.h"
#include "suite/suite_config.h"

namespace rtpulse::suite {
namespace {

const std::vector<std::string> kSuiteKeys = {"name",   "description",      "duration",
                                             "settle", "interval",         "priority",
                                             "wake",   "monitor_interval", "scenario"};
const std::vector<std::string> kScenarioKeys = {"name", "description", "loads", "duration",
                                                "settle"};

/// How a node looks in an error: scalars as written in TOML, tables and arrays by type.
std::string Show(const toml::node& node) {
  if (node.is_table()) return "a table";
  if (node.is_array()) return "an array";
  if (const auto* text = node.as_string()) return fmt::format("\"{}\"", text->get());
  std::ostringstream out;
  node.visit([&](const auto& v) { out << v; });
  return out.str();
}

/// "a+b" -> {"a", "b"}, keeping empty pieces so "a+" can be reported. A "cmd:" piece takes
/// the rest of the string, '+' included (a command line may hold one).
std::vector<std::string> SplitPlus(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t plus = text.find('+'); plus != std::string::npos; plus = text.find('+', start)) {
    if (text.compare(start, 4, "cmd:") == 0) break;
    out.push_back(text.substr(start, plus - start));
    start = plus + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

std::vector<std::string> WakeNames() {
  std::vector<std::string> names;
  for (measure::WakePath p : measure::kAllWakePaths) names.emplace_back(WakePathName(p));
  return names;
}

class SuiteParser {
 public:
  SuiteParser(std::string_view file, const std::vector<int>& online_cpus)
      : file_(file), scope_{online_cpus, {}} {}

  /// "file:line:col: what"; `what` may quote the file (keys, strings, the TOML parser's
  /// "last read" bytes), so its non-printable bytes are escaped.
  Error At(const toml::source_region& where, const std::string& what) const {
    return UsageError(fmt::format("{}:{}:{}: {}", Printable(file_), where.begin.line,
                                  where.begin.column, Printable(what)));
  }

  Expected<SuiteConfig> Parse(const toml::table& root) {
    SuiteConfig config;
    config.source = file_;
    if (Status s = CheckKeys(root, kSuiteKeys, ""); !s) return s.error();
    if (Status s = ParseSettings(root, config); !s) return s.error();
    const toml::node* list = root.get("scenario");
    if (list == nullptr) {
      return At({{1, 1}, {1, 1}, {}},
                "the suite has no scenario; add one, e.g. [[scenario]] with name = \"idle\"");
    }
    const toml::array* array = list->as_array();
    if (array != nullptr && array->empty()) {
      return At(list->source(), "the scenario list is empty; add at least one [[scenario]]");
    }
    if (array == nullptr || !array->is_array_of_tables()) {
      return At(list->source(),
                "'scenario' must be a list of tables: write each one as "
                "[[scenario]] followed by its keys");
    }
    for (const toml::node& node : *array) {
      auto scenario = ParseScenario(*node.as_table());
      if (!scenario) return scenario.error();
      config.scenarios.push_back(std::move(*scenario));
    }
    return config;
  }

 private:
  /// Rejects keys outside `known`, suggesting the closest one. A table iterates in key order,
  /// so of several unknown keys the first in the file is reported.
  Status CheckKeys(const toml::table& table, const std::vector<std::string>& known,
                   std::string_view where) const {
    const toml::key* first = nullptr;
    for (const auto& [key, value] : table) {
      if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
      const auto& at = key.source().begin;
      if (first == nullptr || at.line < first->source().begin.line ||
          (at.line == first->source().begin.line && at.column < first->source().begin.column)) {
        first = &key;
      }
    }
    if (first == nullptr) return Status::Ok();
    const std::string name(first->str());
    const std::string guess = ClosestName(name, known);
    return At(first->source(),
              fmt::format("unknown key '{}'{}; {}", name, where,
                          guess.empty() ? fmt::format("known keys: {}", fmt::join(known, ", "))
                                        : fmt::format("did you mean '{}'?", guess)));
  }

  Expected<std::string> String(const toml::node& node, std::string_view key,
                               std::string_view example) const {
    if (const auto* s = node.as_string()) return s->get();
    return At(node.source(), fmt::format("{} must be a string, not {}; write e.g. {} = {}", key,
                                         Show(node), key, example));
  }

  /// One string of an array.
  Expected<std::string> Element(const toml::node& node, std::string_view key,
                                std::string_view example) const {
    if (const auto* s = node.as_string()) return s->get();
    return At(node.source(), fmt::format("each {} entry must be a string, not {}; write e.g. "
                                         "{} = {}",
                                         key, Show(node), key, example));
  }

  Expected<std::string> Line(const toml::node& node, std::string_view key) const {
    auto text = String(node, key, "\"1 CPU busy + light io\"");
    if (text && text->find_first_of("\r\n") != std::string::npos) {
      return At(node.source(), fmt::format("{} must be one line; shorten it", key));
    }
    return text;
  }

  Expected<std::string> Name(const toml::node& node, std::string_view what) const {
    auto name = String(node, "name", "\"heavy-io\"");
    if (name && !IsValidName(*name)) {
      return At(node.source(),
                fmt::format("{} name \"{}\" is not valid; use lower-case letters, digits, '-' and "
                            "'_', starting with a letter or digit (it names a directory), at "
                            "most 64 characters",
                            what, *name));
    }
    return name;
  }

  /// A duration as the CLI's --duration takes it ("30s", "10m", "1h", "500ms").
  Expected<int64_t> Duration(const toml::node& node, std::string_view key, bool zero_ok) const {
    auto text = String(node, key, "\"10m\"");
    if (!text) return text.error();
    auto ns = ParseDurationNs(*text);
    if (!ns) return At(node.source(), fmt::format("{}: {}", key, ns.error().message));
    if (*ns < 0 || (*ns == 0 && !zero_ok)) {
      return At(node.source(), fmt::format("{} \"{}\" must be {}; write e.g. {} = \"10m\"", key,
                                           *text, zero_ok ? "0 or more" : "above zero", key));
    }
    return ns;
  }

  /// A period as the CLI's --interval takes it ("1ms", "500us", "5s").
  Expected<int64_t> Period(const toml::node& node, std::string_view key,
                           std::string_view example) const {
    auto text = String(node, key, example);
    if (!text) return text.error();
    auto ns = ParseTimeNs(*text);
    if (!ns) return At(node.source(), fmt::format("{}: {}", key, ns.error().message));
    constexpr int64_t kHourNs = 3'600'000'000'000;
    if (*ns <= 0 || *ns > kHourNs) {
      return At(node.source(), fmt::format("{} \"{}\" must be above zero and at most an hour; "
                                           "write e.g. {} = {}",
                                           key, *text, key, example));
    }
    return ns;
  }

  Expected<int> Priority(const toml::node& node) const {
    const auto* v = node.as_integer();
    if (v == nullptr || v->get() < 1 || v->get() > 99) {
      return At(node.source(), fmt::format("priority {} is not valid; give a SCHED_FIFO priority "
                                           "from 1 to 99, e.g. priority = 80",
                                           Show(node)));
    }
    return static_cast<int>(v->get());
  }

  /// wake = ["abs", "timerfd"] or wake = "abs,timerfd".
  Expected<std::vector<measure::WakePath>> Wake(const toml::node& node) const {
    std::vector<std::pair<std::string, const toml::node*>> items;
    if (const auto* text = node.as_string()) {
      std::istringstream in(text->get());
      for (std::string item; std::getline(in, item, ',');) items.emplace_back(item, &node);
    } else if (const auto* array = node.as_array()) {
      for (const toml::node& element : *array) {
        auto name = Element(element, "wake", "[\"abs\", \"timerfd\"]");
        if (!name) return name.error();
        items.emplace_back(*name, &element);
      }
    } else {
      return At(node.source(), fmt::format("wake must be a list of wake paths, not {}; write e.g. "
                                           "wake = [\"abs\", \"timerfd\"]",
                                           Show(node)));
    }
    std::vector<measure::WakePath> paths;
    const std::vector<std::string> names = WakeNames();
    for (const auto& [name, where] : items) {
      const auto path = measure::WakePathFromName(name);
      if (!path) {
        const std::string guess = ClosestName(name, names);
        return At(where->source(),
                  fmt::format("unknown wake path \"{}\"; {}use one of {}", name,
                              guess.empty() ? "" : fmt::format("did you mean \"{}\"? ", guess),
                              fmt::join(names, ", ")));
      }
      if (std::find(paths.begin(), paths.end(), *path) != paths.end()) {
        return At(where->source(), fmt::format("wake path \"{}\" is listed twice; drop one", name));
      }
      paths.push_back(*path);
    }
    if (paths.empty()) {
      return At(node.source(), "wake is empty; write e.g. wake = [\"abs\"]");
    }
    return paths;
  }

  Status ParseSettings(const toml::table& root, SuiteConfig& c) const {
    if (const auto* n = root.get("name")) {
      auto v = Name(*n, "suite");
      if (!v) return v.error();
      c.name = *v;
    }
    if (const auto* n = root.get("description")) {
      auto v = Line(*n, "description");
      if (!v) return v.error();
      c.description = *v;
    }
    if (const auto* n = root.get("duration")) {
      auto v = Duration(*n, "duration", false);
      if (!v) return v.error();
      c.duration_ns = *v;
    }
    if (const auto* n = root.get("settle")) {
      auto v = Duration(*n, "settle", true);
      if (!v) return v.error();
      c.settle_ns = *v;
    }
    if (const auto* n = root.get("interval")) {
      auto v = Period(*n, "interval", "\"1ms\"");
      if (!v) return v.error();
      c.interval_ns = *v;
    }
    if (const auto* n = root.get("priority")) {
      auto v = Priority(*n);
      if (!v) return v.error();
      c.priority = *v;
    }
    if (const auto* n = root.get("wake")) {
      auto v = Wake(*n);
      if (!v) return v.error();
      c.wake = std::move(*v);
    }
    if (const auto* n = root.get("monitor_interval")) {
      auto v = Period(*n, "monitor_interval", "\"5s\"");
      if (!v) return v.error();
      c.monitor_interval_ns = *v;
    }
    return Status::Ok();
  }

  /// { command = ["python3", "app.py"], cpus = "1", instances = 2 }: the user's program as a
  /// load, its argv as written (no splitting, no shell).
  Expected<load::LoadSpec> CommandTable(const toml::table& table, const Scenario& s) const {
    static const std::vector<std::string> kCommandKeys = {"command", "cpus", "instances", "nice",
                                                          "policy",  "prio", "grace"};
    if (Status st = CheckKeys(table, kCommandKeys, " in a command load"); !st) return st.error();
    const toml::node* command = table.get("command");
    const toml::array* argv_node = command != nullptr ? command->as_array() : nullptr;
    if (argv_node == nullptr || argv_node->empty()) {
      return At(command != nullptr ? command->source() : table.source(),
                "a command load needs command = [\"program\", \"arg\", ...] (a non-empty list "
                "of strings)");
    }
    std::vector<std::string> argv;
    for (const toml::node& word : *argv_node) {
      auto text = Element(word, "command", "[\"python3\", \"app.py\"]");
      if (!text) return text.error();
      argv.push_back(*text);
    }
    std::vector<std::string> options;
    for (const auto& [key, value] : table) {
      if (key.str() == "command") continue;
      if (const auto* text = value.as_string()) {
        options.push_back(fmt::format("{}={}", key.str(), text->get()));
      } else if (const auto* number = value.as_integer()) {
        options.push_back(fmt::format("{}={}", key.str(), number->get()));
      } else {
        return At(value.source(), fmt::format("{} must be a string or a whole number, not {}",
                                              key.str(), Show(value)));
      }
    }
    auto spec = load::CommandLoadSpec(argv, options, scope_);
    if (!spec) {
      Error e = At(table.source(),
                   fmt::format("scenario '{}': {} (docs/loads.md)", s.name, spec.error().message));
      e.code = spec.error().code;
      return e;
    }
    return spec;
  }

  /// loads = ["cpu:cpus=3", "io"]: each string is one or more SPECs joined by '+'.
  Status Loads(const toml::node& node, Scenario& s) const {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      return At(node.source(), fmt::format("loads must be a list of load SPECs, not {}; write "
                                           "e.g. loads = [\"cpu:cpus=3\", \"io:intensity=25\"]",
                                           Show(node)));
    }
    for (const toml::node& element : *array) {
      if (const toml::table* table = element.as_table()) {
        auto spec = CommandTable(*table, s);
        if (!spec) return spec.error();
        s.load_specs.push_back(spec->text);
        s.loads.push_back(std::move(*spec));
        continue;
      }
      auto text = Element(element, "loads", "[\"cpu:cpus=3\", \"io\"]");
      if (!text) return text.error();
      const std::vector<std::string> pieces = SplitPlus(*text);
      if (std::find(pieces.begin(), pieces.end(), "") != pieces.end()) {
        return At(element.source(), fmt::format("empty load in \"{}\"; write e.g. \"cpu:cpus=3\", "
                                                "or \"cpu:cpus=3+io\" for two",
                                                *text));
      }
      for (const std::string& piece : pieces) {
        auto spec = load::ParseLoadSpec(piece, scope_);
        if (!spec) {
          Error e = At(element.source(), fmt::format("scenario '{}': {} (docs/loads.md)", s.name,
                                                     spec.error().message));
          e.code = spec.error().code;  // stress-ng not installed stays a resource error
          return e;
        }
        s.load_specs.push_back(piece);
        s.loads.push_back(std::move(*spec));
      }
    }
    return Status::Ok();
  }

  Expected<Scenario> ParseScenario(const toml::table& table) {
    if (Status st = CheckKeys(table, kScenarioKeys, " in [[scenario]]"); !st) return st.error();
    Scenario s;
    const toml::node* name = table.get("name");
    if (name == nullptr) {
      return At(table.source(), "[[scenario]] has no name; add e.g. name = \"idle\"");
    }
    auto valid = Name(*name, "scenario");
    if (!valid) return valid.error();
    s.name = *valid;
    if (std::find(names_.begin(), names_.end(), s.name) != names_.end()) {
      return At(name->source(), fmt::format("scenario name \"{}\" is used twice; rename one "
                                            "(it names the result directory)",
                                            s.name));
    }
    names_.push_back(s.name);
    if (const auto* n = table.get("loads")) {
      if (Status st = Loads(*n, s); !st) return st.error();
    }
    if (const auto* n = table.get("description")) {
      auto v = Line(*n, "description");
      if (!v) return v.error();
      s.description = *v;
    } else {
      s.description =
          s.load_specs.empty() ? "no load" : fmt::format("{}", fmt::join(s.load_specs, " + "));
    }
    if (const auto* n = table.get("duration")) {
      auto v = Duration(*n, "duration", false);
      if (!v) return v.error();
      s.duration_ns = *v;
    }
    if (const auto* n = table.get("settle")) {
      auto v = Duration(*n, "settle", true);
      if (!v) return v.error();
      s.settle_ns = *v;
    }
    return s;
  }

  std::string file_;
  load::CpuScope scope_;
  std::vector<std::string> names_;
};

}  // namespace

Expected<SuiteConfig> ParseSuiteToml(std::string_view text, std::string_view file_name,
                                     const std::vector<int>& online_cpus) {
  SuiteParser parser(file_name, online_cpus);
#if TOML_EXCEPTIONS
  try {
    return parser.Parse(toml::parse(text, file_name));
  } catch (const toml::parse_error& e) {
    return parser.At(
        e.source(), fmt::format("{}; fix the TOML syntax (docs/suite-config.md)", e.description()));
  }
#else
  toml::parse_result result = toml::parse(text, file_name);
  if (!result) {
    return parser.At(result.error().source(),
                     fmt::format("{}; fix the TOML syntax (docs/suite-config.md)",
                                 result.error().description()));
  }
  return parser.Parse(result.table());
#endif
}

}  // namespace rtpulse::suite
