#include "results/explain_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/printable.h"

namespace rtpulse::results {
namespace {

using nlohmann::json;

constexpr const char* kExplainPartKinds[] = {"irq",  "softirq", "thread",
                                             "wake", "idle",    "unaccounted"};
constexpr const char* kExplainChainKinds[] = {"unknown", "direct", "deferred", "cross-cpu",
                                              "running"};
constexpr const char* kExplainEventSets[] = {"lean", "full"};

json ExplainPartJson(const ExplainPart& p) {
  return {{"kind", p.kind}, {"name", p.name}, {"ns", p.ns}, {"count", p.count}};
}

json ExplainSpikeJson(const SpikeExplanation& s) {
  json parts = json::array();
  for (const auto& p : s.parts) parts.push_back(ExplainPartJson(p));
  return {{"thread", s.thread},
          {"cpu", s.cpu},
          {"seq", s.seq},
          {"expected_ns", s.expected_ns},
          {"latency_ns", s.latency_ns},
          {"chain", s.chain},
          {"chain_thread", s.chain_thread},
          {"probe_tid", s.probe_tid},
          {"complete", s.complete},
          {"incomplete_reason", s.incomplete_reason},
          {"verdict", s.verdict},
          {"parts", std::move(parts)},
          {"window_file", s.window_file},
          {"explained_after_ns", s.explained_after_ns}};
}

json ExplainCausesJson(const std::vector<ExplainCause>& causes) {
  json rows = json::array();
  for (const auto& c : causes) {
    rows.push_back({{"kind", c.kind},
                    {"name", c.name},
                    {"total_ns", c.total_ns},
                    {"spikes", c.spikes},
                    {"max_ns", c.max_ns}});
  }
  return rows;
}

/// Reads one field of an "explain" object, naming its JSON path ("explain.spikes[2].cpu")
/// in every error: the file is hand-editable and the reader is its only gate.
class ExplainFields {
 public:
  ExplainFields(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string At(const char* key) const { return path_ + "." + key; }

  /// The member, or an error naming it when it is missing.
  Expected<const json*> Member(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end()) {
      return UsageError(fmt::format(
          "{}: missing (rewrite the file with rtpulse, or remove the whole \"explain\" object)",
          At(key)));
    }
    return &*it;
  }

  template <typename T>
  Status Integer(const char* key, T* out) const {
    auto m = Member(key);
    if (!m) return m.error();
    const json& v = **m;
    if (!v.is_number_integer()) {
      return UsageError(fmt::format("{}: {} is not an integer", At(key), Printable(v.dump())));
    }
    // nlohmann keeps non-negative numbers from a file as unsigned, negative ones as signed.
    const bool negative = v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0;
    bool fits = false;
    if (negative) {
      if constexpr (std::is_signed_v<T>) {
        fits = v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min());
      }
    } else {
      fits = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    if (!fits) {
      return UsageError(fmt::format("{}: {} is out of range ({} to {})", At(key), v.dump(),
                                    std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    }
    *out = negative ? static_cast<T>(v.get<int64_t>()) : static_cast<T>(v.get<uint64_t>());
    return Status::Ok();
  }

  /// A duration or count that cannot be negative.
  Status NonNegative(const char* key, int64_t* out) const {
    if (auto s = Integer(key, out); !s) return s;
    if (*out < 0) return UsageError(fmt::format("{}: {} is negative", At(key), *out));
    return Status::Ok();
  }

  Status String(const char* key, std::string* out) const {
    auto m = Member(key);
    if (!m) return m.error();
    if (!(*m)->is_string()) {
      return UsageError(fmt::format("{}: {} is not a string", At(key), Printable((*m)->dump())));
    }
    *out = (*m)->get<std::string>();
    return Status::Ok();
  }

  /// A string that must be one of `names`.
  template <size_t N>
  Status Name(const char* key, const char* const (&names)[N], std::string* out) const {
    if (auto s = String(key, out); !s) return s;
    if (std::find(std::begin(names), std::end(names), *out) == std::end(names)) {
      return UsageError(fmt::format("{}: '{}' is not one of {}", At(key), Printable(*out),
                                    fmt::join(names, ", ")));
    }
    return Status::Ok();
  }

  Status Bool(const char* key, bool* out) const {
    auto m = Member(key);
    if (!m) return m.error();
    if (!(*m)->is_boolean()) {
      return UsageError(
          fmt::format("{}: {} is not true or false", At(key), Printable((*m)->dump())));
    }
    *out = (*m)->get<bool>();
    return Status::Ok();
  }

  Status Strings(const char* key, std::vector<std::string>* out) const {
    auto m = Member(key);
    if (!m) return m.error();
    if (!(*m)->is_array()) {
      return UsageError(
          fmt::format("{}: {} is not a list of strings", At(key), Printable((*m)->dump())));
    }
    out->clear();
    for (size_t i = 0; i < (*m)->size(); ++i) {
      const json& v = (**m)[i];
      if (!v.is_string()) {
        return UsageError(
            fmt::format("{}[{}]: {} is not a string", At(key), i, Printable(v.dump())));
      }
      out->push_back(v.get<std::string>());
    }
    return Status::Ok();
  }

  /// A list of positive tids.
  Status Tids(const char* key, std::vector<int>* out) const {
    auto m = Member(key);
    if (!m) return m.error();
    if (!(*m)->is_array()) {
      return UsageError(
          fmt::format("{}: {} is not a list of thread ids", At(key), Printable((*m)->dump())));
    }
    out->clear();
    for (size_t i = 0; i < (*m)->size(); ++i) {
      const json& v = (**m)[i];
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          v.get<int64_t>() > std::numeric_limits<int>::max()) {
        return UsageError(fmt::format("{}[{}]: {} is not a thread id (0 or more)", At(key), i,
                                      Printable(v.dump())));
      }
      out->push_back(v.get<int>());
    }
    return Status::Ok();
  }

  /// An array of objects, each handed to `each` with its own path.
  template <typename F>
  Status Objects(const char* key, F each) const {
    auto m = Member(key);
    if (!m) return m.error();
    if (!(*m)->is_array()) {
      return UsageError(fmt::format("{}: {} is not a list", At(key), Printable((*m)->dump())));
    }
    for (size_t i = 0; i < (*m)->size(); ++i) {
      const json& v = (**m)[i];
      const std::string where = fmt::format("{}[{}]", At(key), i);
      if (!v.is_object()) {
        return UsageError(fmt::format("{}: {} is not an object", where, Printable(v.dump())));
      }
      if (auto s = each(ExplainFields(v, where)); !s) return s;
    }
    return Status::Ok();
  }

 private:
  const json& object_;
  std::string path_;
};

/// Runs the checks in order and stops at the first failure.
Status ExplainAll(std::initializer_list<Status> checks) {
  for (const auto& s : checks) {
    if (!s) return s;
  }
  return Status::Ok();
}

Status ExplainPartFromJson(const ExplainFields& f, ExplainPart* p) {
  return ExplainAll({f.Name("kind", kExplainPartKinds, &p->kind), f.String("name", &p->name),
                     f.NonNegative("ns", &p->ns), f.Integer("count", &p->count)});
}

Status ExplainSpikeFromJson(const ExplainFields& f, SpikeExplanation* s) {
  if (auto st = ExplainAll(
          {f.Integer("thread", &s->thread), f.Integer("cpu", &s->cpu), f.Integer("seq", &s->seq),
           f.Integer("expected_ns", &s->expected_ns), f.NonNegative("latency_ns", &s->latency_ns),
           f.Name("chain", kExplainChainKinds, &s->chain),
           f.String("chain_thread", &s->chain_thread), f.Integer("probe_tid", &s->probe_tid),
           f.Bool("complete", &s->complete), f.String("incomplete_reason", &s->incomplete_reason),
           f.String("verdict", &s->verdict), f.String("window_file", &s->window_file),
           f.NonNegative("explained_after_ns", &s->explained_after_ns)});
      !st) {
    return st;
  }
  if (s->cpu < 0) return UsageError(fmt::format("{}: {} is negative", f.At("cpu"), s->cpu));
  if (auto st = f.Objects("parts",
                          [&](const ExplainFields& pf) -> Status {
                            ExplainPart p;
                            if (auto ps = ExplainPartFromJson(pf, &p); !ps) return ps;
                            s->parts.push_back(std::move(p));
                            return Status::Ok();
                          });
      !st) {
    return st;
  }
  // The attribution's invariant: every ns of the window goes to exactly one part.
  int64_t sum = 0;
  for (const auto& p : s->parts) {
    if (__builtin_add_overflow(sum, p.ns, &sum)) {
      return UsageError(fmt::format("{}: the parts' ns overflow 64 bits", f.At("parts")));
    }
  }
  if (sum != s->latency_ns) {
    return UsageError(fmt::format(
        "{}: the parts add up to {} ns but latency_ns is {} (every ns of a late wake-up goes "
        "to exactly one part; rewrite the file with rtpulse)",
        f.At("parts"), sum, s->latency_ns));
  }
  return Status::Ok();
}

Status ExplainCausesFromJson(const ExplainFields& f, const char* key,
                             std::vector<ExplainCause>* out) {
  return f.Objects(key, [&](const ExplainFields& cf) -> Status {
    ExplainCause c;
    if (auto st =
            ExplainAll({cf.Name("kind", kExplainPartKinds, &c.kind), cf.String("name", &c.name),
                        cf.NonNegative("total_ns", &c.total_ns), cf.Integer("spikes", &c.spikes),
                        cf.NonNegative("max_ns", &c.max_ns)});
        !st) {
      return st;
    }
    if (c.max_ns > c.total_ns) {
      return UsageError(fmt::format("{}: {} ns is more than total_ns {} ns", cf.At("max_ns"),
                                    c.max_ns, c.total_ns));
    }
    out->push_back(std::move(c));
    return Status::Ok();
  });
}

Status ExplainCostFromJson(const ExplainFields& f, ExplainCostResult* c) {
  return ExplainAll(
      {f.Integer("samples_without", &c->samples_without),
       f.Integer("samples_with", &c->samples_with), f.Integer("p50_without_ns", &c->p50_without_ns),
       f.Integer("p99_without_ns", &c->p99_without_ns), f.Integer("p50_with_ns", &c->p50_with_ns),
       f.Integer("p99_with_ns", &c->p99_with_ns)});
}

Status ExplainTraceFromJson(const ExplainFields& f, ExplainResult* e, const json& trace) {
  // Written since --explain-events; a file from before traced the full set.
  e->event_set = "full";
  if (trace.contains("event_set")) {
    if (auto st = f.Name("event_set", kExplainEventSets, &e->event_set); !st) return st;
  }
  // Written since the probes' tids are published; older files traced no syscall filter.
  if (trace.contains("syscall_filter")) {
    auto m = f.Member("syscall_filter");
    if (!(*m)->is_object()) {
      return UsageError(
          fmt::format("{}: {} is not an object", f.At("syscall_filter"), Printable((*m)->dump())));
    }
    const ExplainFields sf(**m, f.At("syscall_filter"));
    bool applied = false;
    if (auto st = ExplainAll({sf.Bool("applied", &applied), sf.String("filter", &e->syscall_filter),
                              sf.String("reason", &e->syscall_note)});
        !st) {
      return st;
    }
    if (applied == e->syscall_filter.empty()) {
      return UsageError(fmt::format("{}: applied is {} but the filter is '{}'", sf.At("applied"),
                                    applied, Printable(e->syscall_filter)));
    }
  }
  return ExplainAll(
      {f.String("instance", &e->instance), f.Strings("events_enabled", &e->events_enabled),
       f.Strings("events_missing", &e->events_missing), f.Integer("events_read", &e->events_read),
       f.Integer("events_lost", &e->events_lost),
       f.NonNegative("reader_cpu_ns", &e->reader_cpu_ns)});
}

Status ExplainCountsCheck(const ExplainFields& f, const ExplainResult& e) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(e.spikes_explained, e.spikes_not_explained, &sum) ||
      sum != e.spikes_seen) {
    return UsageError(fmt::format(
        "{}: spikes_explained {} + spikes_not_explained {} is not spikes_seen {} (every spike "
        "is either explained or counted as not explained)",
        f.path(), e.spikes_explained, e.spikes_not_explained, e.spikes_seen));
  }
  if (e.spikes.size() > e.spikes_explained) {
    return UsageError(fmt::format("{}: {} spikes listed but spikes_explained is {}", f.At("spikes"),
                                  e.spikes.size(), e.spikes_explained));
  }
  if (!e.active && e.unavailable_reason.empty()) {
    return UsageError(fmt::format(
        "{}: active is false but unavailable_reason is empty (an inactive trace always says "
        "why)",
        f.At("unavailable_reason")));
  }
  return Status::Ok();
}

}  // namespace

json ExplainProbeTidsJson(const std::vector<ExplainProbeThreads>& paths) {
  json out = json::array();
  for (const auto& p : paths) {
    out.push_back({{"wake", p.wake}, {"tids", p.tids}, {"helper_tids", p.helper_tids}});
  }
  return out;
}

nlohmann::json ExplainToJson(const ExplainResult& e) {
  json spikes = json::array();
  for (const auto& s : e.spikes) spikes.push_back(ExplainSpikeJson(s));
  json cost = nullptr;
  if (e.cost) {
    cost = {
        {"samples_without", e.cost->samples_without}, {"samples_with", e.cost->samples_with},
        {"p50_without_ns", e.cost->p50_without_ns},   {"p99_without_ns", e.cost->p99_without_ns},
        {"p50_with_ns", e.cost->p50_with_ns},         {"p99_with_ns", e.cost->p99_with_ns}};
  }
  return {{"threshold_ns", e.threshold_ns},
          {"active", e.active},
          {"unavailable_reason", e.unavailable_reason},
          {"spikes_seen", e.spikes_seen},
          {"spikes_explained", e.spikes_explained},
          {"spikes_not_explained", e.spikes_not_explained},
          {"spikes", std::move(spikes)},
          {"causes_by_time", ExplainCausesJson(e.causes_by_time)},
          {"causes_by_count", ExplainCausesJson(e.causes_by_count)},
          {"trace",
           {{"instance", e.instance},
            {"event_set", e.event_set},
            {"events_enabled", e.events_enabled},
            {"events_missing", e.events_missing},
            {"events_read", e.events_read},
            {"events_lost", e.events_lost},
            {"reader_cpu_ns", e.reader_cpu_ns},
            {"syscall_filter",
             {{"applied", !e.syscall_filter.empty()},
              {"filter", e.syscall_filter},
              {"reason", e.syscall_note}}}}},
          {"probe_tids", ExplainProbeTidsJson(e.probe_tids)},
          {"cost", std::move(cost)},
          {"notes", e.notes}};
}

Expected<ExplainResult> ExplainFromJson(const nlohmann::json& j) {
  if (!j.is_object()) {
    return UsageError(fmt::format("explain: {} is not an object", Printable(j.dump())));
  }
  const ExplainFields f(j, "explain");
  ExplainResult e;
  if (auto st = ExplainAll({f.Integer("threshold_ns", &e.threshold_ns), f.Bool("active", &e.active),
                            f.String("unavailable_reason", &e.unavailable_reason),
                            f.Integer("spikes_seen", &e.spikes_seen),
                            f.Integer("spikes_explained", &e.spikes_explained),
                            f.Integer("spikes_not_explained", &e.spikes_not_explained),
                            f.Strings("notes", &e.notes)});
      !st) {
    return st.error();
  }
  if (e.threshold_ns <= 0) {
    return UsageError(
        fmt::format("{}: {} is not a positive threshold", f.At("threshold_ns"), e.threshold_ns));
  }
  auto spikes = f.Objects("spikes", [&](const ExplainFields& sf) -> Status {
    SpikeExplanation s;
    if (auto st = ExplainSpikeFromJson(sf, &s); !st) return st;
    e.spikes.push_back(std::move(s));
    return Status::Ok();
  });
  if (!spikes) return spikes.error();
  if (auto st = ExplainCausesFromJson(f, "causes_by_time", &e.causes_by_time); !st) {
    return st.error();
  }
  if (auto st = ExplainCausesFromJson(f, "causes_by_count", &e.causes_by_count); !st) {
    return st.error();
  }
  auto trace = f.Member("trace");
  if (!trace) return trace.error();
  if (!(*trace)->is_object()) {
    return UsageError(
        fmt::format("{}: {} is not an object", f.At("trace"), Printable((*trace)->dump())));
  }
  if (auto st = ExplainTraceFromJson(ExplainFields(**trace, f.At("trace")), &e, **trace); !st) {
    return st.error();
  }
  if (j.contains("probe_tids")) {
    auto tids = f.Objects("probe_tids", [&](const ExplainFields& pf) -> Status {
      ExplainProbeThreads p;
      if (auto st = ExplainAll({pf.String("wake", &p.wake), pf.Tids("tids", &p.tids),
                                pf.Tids("helper_tids", &p.helper_tids)});
          !st) {
        return st;
      }
      e.probe_tids.push_back(std::move(p));
      return Status::Ok();
    });
    if (!tids) return tids.error();
  }
  auto cost = f.Member("cost");
  if (!cost) return cost.error();
  if (!(*cost)->is_null()) {
    if (!(*cost)->is_object()) {
      return UsageError(fmt::format("{}: {} is neither null nor an object", f.At("cost"),
                                    Printable((*cost)->dump())));
    }
    ExplainCostResult c;
    if (auto st = ExplainCostFromJson(ExplainFields(**cost, f.At("cost")), &c); !st) {
      return st.error();
    }
    e.cost = c;
  }
  if (auto st = ExplainCountsCheck(f, e); !st) return st.error();
  return e;
}

}  // namespace rtpulse::results
