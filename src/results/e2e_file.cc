#include "results/e2e_file.h"

#include <fmt/format.h>

#include "results/json_fields.h"

namespace rtpulse::results {
namespace {

using Json = nlohmann::json;

Json ThreadSpecJson(const E2eThreadSpecFile& t) {
  return {{"policy", t.policy}, {"priority", t.priority}, {"cpus", t.cpus}};
}

void ReadThreadSpec(JsonFields f, E2eThreadSpecFile& out) {
  f.Get("policy", out.policy);
  f.Get("priority", out.priority);
  f.Get("cpus", out.cpus);
}

Json StageJson(const std::optional<E2eStageStats>& s) {
  if (!s) return nullptr;
  return {{"count", s->count},   {"mean_ns", s->mean_ns}, {"std_ns", s->std_ns},
          {"min_ns", s->min_ns}, {"p50_ns", s->p50_ns},   {"p90_ns", s->p90_ns},
          {"p99_ns", s->p99_ns}, {"max_ns", s->max_ns}};
}

void ReadSource(JsonFields f, E2eFile::Source& s) {
  f.Get("spec", s.spec);
  f.Get("describe", s.describe);
  f.Get("timestamp_source", s.timestamp_source);
  f.Get("frame_width", s.frame_width);
  f.Get("frame_height", s.frame_height);
  f.Get("references", s.references);
}

void ReadModelAndBackend(JsonFields& f, E2eFile& out) {
  JsonFields m = f.Nested("model");
  m.Get("path", out.model.path);
  m.Get("input_shape", out.model.input_shape);
  m.Get("output_shape", out.model.output_shape);
  m.Get("label", out.model.label);
  JsonFields b = f.Nested("backend");
  b.Get("kind", out.backend.kind);
  b.Get("name", out.backend.name);
  b.Get("why", out.backend.why);
  b.Get("threads_asked", out.backend.threads_asked);
  b.GetOptional("threads", out.backend.threads);
  b.Get("threads_from", out.backend.threads_from);
}

void ReadSettings(JsonFields f, E2eFile::Settings& s) {
  f.Get("mode", s.mode);
  f.Get("fps", s.fps);
  f.Get("deadline_ns", s.deadline_ns);
  f.Get("period_ns", s.period_ns);
  f.Get("frames", s.frames);
  f.Get("warmup_frames", s.warmup_frames);
  ReadThreadSpec(f.Nested("capture"), s.capture);
  ReadThreadSpec(f.Nested("inference"), s.inference);
  f.Get("crop", s.crop);
  f.Get("roi", s.roi);
  f.Get("near_m", s.near_m);
  f.Get("clear_m", s.clear_m);
  f.Get("alert", s.alert);
  f.GetOptional("loopback", s.loopback);
  f.Get("loaded", s.loaded);
  f.Get("loads", s.loads);
}

void ReadThreads(JsonFields& f, std::vector<E2eThreadFile>& out) {
  const Json* list = f.Find("threads");
  if (list == nullptr) return;
  if (!list->is_array()) {
    f.Fail("threads", "is not a list");
    return;
  }
  JsonFields all = f.Nested("threads");
  for (size_t i = 0; i < list->size(); ++i) {
    JsonFields t = all.At(i);
    E2eThreadFile thread;
    t.Get("tid", thread.tid);
    t.Get("name", thread.name);
    t.Get("role", thread.role);
    t.Get("policy", thread.policy);
    t.Get("priority", thread.priority);
    t.Get("cpus", thread.cpus);
    t.Get("as_asked", thread.as_asked);
    t.Get("note", thread.note);
    out.push_back(thread);
  }
}

void ReadCounts(JsonFields f, E2eFile::Counts& c) {
  f.Get("frames", c.frames);
  f.Get("frames_asked", c.frames_asked);
  f.Get("source_ran_out", c.source_ran_out);
  f.Get("released", c.released);
  f.Get("dropped", c.dropped);
  f.Get("lost", c.lost);
  f.Get("misses", c.misses);
  f.Get("loopback_timeouts", c.loopback_timeouts);
  f.GetOptional("throughput_fps", c.throughput_fps);
  f.Get("start_ns", c.start_ns);
  f.Get("end_ns", c.end_ns);
  f.Get("interrupted", c.interrupted);
  f.Get("source_ended", c.source_ended);
}

void ReadStages(JsonFields& f, std::map<std::string, std::optional<E2eStageStats>>& out) {
  JsonFields stages = f.Nested("stages");
  for (const char* name : kE2eStageNames) {
    const Json* v = stages.Find(name);
    if (v == nullptr) return;
    if (v->is_null()) {
      out[name] = std::nullopt;
      continue;
    }
    JsonFields s = stages.Nested(name);
    E2eStageStats st;
    s.Get("count", st.count);
    s.Get("mean_ns", st.mean_ns);
    s.Get("std_ns", st.std_ns);
    s.Get("min_ns", st.min_ns);
    s.Get("max_ns", st.max_ns);
    s.Get("p50_ns", st.p50_ns);
    s.Get("p90_ns", st.p90_ns);
    s.Get("p99_ns", st.p99_ns);
    out[name] = st;
  }
}

}  // namespace

nlohmann::json ToJson(const E2eFile& f) {
  const E2eFile::Settings& s = f.settings;
  Json threads = Json::array();
  for (const auto& t : f.threads) {
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"role", t.role},
                       {"policy", t.policy},
                       {"priority", t.priority},
                       {"cpus", t.cpus},
                       {"as_asked", t.as_asked},
                       {"note", t.note}});
  }
  Json stages = Json::object();
  for (const auto& [name, st] : f.stages) stages[name] = StageJson(st);
  const E2eFile::Counts& c = f.counts;
  return {{"scenario", f.scenario},
          {"configuration", f.configuration},
          {"source",
           {{"spec", f.source.spec},
            {"describe", f.source.describe},
            {"timestamp_source", f.source.timestamp_source},
            {"frame_width", f.source.frame_width},
            {"frame_height", f.source.frame_height},
            {"references", f.source.references}}},
          {"model",
           {{"path", f.model.path},
            {"input_shape", f.model.input_shape},
            {"output_shape", f.model.output_shape},
            {"label", f.model.label}}},
          {"backend",
           {{"kind", f.backend.kind},
            {"name", f.backend.name},
            {"why", f.backend.why},
            {"threads_asked", f.backend.threads_asked},
            {"threads", f.backend.threads ? Json(*f.backend.threads) : Json(nullptr)},
            {"threads_from", f.backend.threads_from}}},
          {"settings",
           {{"mode", s.mode},
            {"fps", s.fps},
            {"deadline_ns", s.deadline_ns},
            {"period_ns", s.period_ns},
            {"frames", s.frames},
            {"warmup_frames", s.warmup_frames},
            {"capture", ThreadSpecJson(s.capture)},
            {"inference", ThreadSpecJson(s.inference)},
            {"crop", s.crop},
            {"roi", s.roi},
            {"near_m", s.near_m},
            {"clear_m", s.clear_m},
            {"alert", s.alert},
            {"loopback", s.loopback ? Json(*s.loopback) : Json(nullptr)},
            {"loaded", s.loaded},
            {"loads", s.loads}}},
          {"threads", threads},
          {"counts",
           {{"frames", c.frames},
            {"frames_asked", c.frames_asked},
            {"source_ran_out", c.source_ran_out},
            {"released", c.released},
            {"dropped", c.dropped},
            {"lost", c.lost},
            {"misses", c.misses},
            {"loopback_timeouts", c.loopback_timeouts},
            {"throughput_fps", c.throughput_fps ? Json(*c.throughput_fps) : Json(nullptr)},
            {"start_ns", c.start_ns},
            {"end_ns", c.end_ns},
            {"interrupted", c.interrupted},
            {"source_ended", c.source_ended}}},
          {"stages", stages},
          {"latency_quantity", f.latency_quantity},
          {"notes", f.notes}};
}

Expected<E2eFile> E2eFileFromJson(const nlohmann::json& doc) {
  E2eFile out;
  std::string error;
  JsonFields f(doc, "", &error);
  f.Get("scenario", out.scenario);
  f.Get("configuration", out.configuration);
  ReadSource(f.Nested("source"), out.source);
  ReadModelAndBackend(f, out);
  ReadSettings(f.Nested("settings"), out.settings);
  ReadThreads(f, out.threads);
  ReadCounts(f.Nested("counts"), out.counts);
  ReadStages(f, out.stages);
  f.Get("latency_quantity", out.latency_quantity);
  f.Get("notes", out.notes);
  if (!error.empty()) return UsageError("e2e.json: " + error);
  return out;
}

Expected<E2eFile> ReadE2eFile(const std::string& path) {
  auto doc = ReadJsonDocument(path, "an e2e scenario's e2e.json");
  if (!doc) return doc.error();
  auto file = E2eFileFromJson(*doc);
  if (!file) return UsageError(fmt::format("{}: {}", path, file.error().message));
  return file;
}

}  // namespace rtpulse::results
