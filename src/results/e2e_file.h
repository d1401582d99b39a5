#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/e2e_result.h"

// An e2e scenario's e2e.json (docs/e2e.md, "Files"): the source, model and backend, the
// settings as asked, the threads as the kernel reports them, the frame counts, every stage's
// statistics and the notes. Written by the e2e workload, read back by ReadE2eFile.
namespace rtpulse::results {

struct E2eThreadSpecFile {
  std::string policy;  ///< "other", "fifo", "rr"
  int priority = 0;
  std::vector<int> cpus;  ///< [] = not pinned
};

/// A pipeline thread as the kernel reports it after the warm-up.
struct E2eThreadFile {
  int tid = 0;
  std::string name;
  std::string role;  ///< "capture", "inference", "worker"
  std::string policy;
  int priority = 0;
  std::string cpus;  ///< Cpus_allowed_list
  bool as_asked = true;
  std::string note;
};

struct E2eFile {
  std::string scenario;
  std::string configuration;
  struct Source {
    std::string spec, describe, timestamp_source;
    int frame_width = 0, frame_height = 0;
    std::string references;  ///< The reference file, or "the source's own".
  } source;
  struct Model {
    std::string path, input_shape, output_shape, label;
  } model;
  struct Backend {
    std::string kind, name, why;
    int threads_asked = 0;
    std::optional<int> threads;  ///< nullopt: not known (threads_from says so)
    std::string threads_from;
  } backend;
  struct Settings {
    std::string mode;  ///< "back-to-back" or "periodic"
    double fps = 0;
    int64_t deadline_ns = 0, period_ns = 0;
    uint64_t frames = 0, warmup_frames = 0;
    E2eThreadSpecFile capture, inference;
    std::array<double, 4> crop{}, roi{};  ///< x0, y0, x1, y1 fractions
    double near_m = 0, clear_m = 0;
    std::string alert;
    std::optional<std::string> loopback;
    bool loaded = false;
    std::vector<std::string> loads;
  } settings;
  std::vector<E2eThreadFile> threads;
  struct Counts {
    uint64_t frames = 0, frames_asked = 0;
    bool source_ran_out = false;
    uint64_t released = 0, dropped = 0, lost = 0, misses = 0, loopback_timeouts = 0;
    std::optional<double> throughput_fps;  ///< nullopt: not known (written as null)
    int64_t start_ns = 0, end_ns = 0;
    bool interrupted = false, source_ended = false;
  } counts;
  /// Every stage of kE2eStageNames; nullopt for a stage with no value (no frame reached it).
  std::map<std::string, std::optional<E2eStageStats>> stages;
  std::string latency_quantity;
  std::vector<std::string> notes;
};

nlohmann::json ToJson(const E2eFile& file);
/// Every field of `doc`; a missing field or one of the wrong type is a usage error naming it.
Expected<E2eFile> E2eFileFromJson(const nlohmann::json& doc);
/// Reads and parses an e2e.json; errors name the file.
Expected<E2eFile> ReadE2eFile(const std::string& path);

}  // namespace rtpulse::results
