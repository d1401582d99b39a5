#include "monitor/sampler.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/atomic_file.h"
#include "core/file_owner.h"
#include "core/timestamp.h"

namespace rtpulse::monitor {
namespace {

/// SCHED_IDLE runs only when a CPU has nothing else to do, below every nice level, so the
/// sampler (and the vcgencmd it spawns, which inherit it) never competes with a probe.
std::string LowerPriority() {
  sched_param param{};
  if (sched_setscheduler(0, SCHED_IDLE, &param) == 0) return "sampler thread runs at SCHED_IDLE";
  const std::string why = std::strerror(errno);
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) == 0) {
    return fmt::format("SCHED_IDLE refused ({}); sampler thread runs at nice 19", why);
  }
  return fmt::format("could not lower the sampler's priority ({})", why);
}

}  // namespace

Expected<std::unique_ptr<Sampler>> Sampler::Open(const std::string& csv_path,
                                                 SamplerOptions options,
                                                 std::vector<std::unique_ptr<Source>> sources) {
  if (options.interval_ns <= 0) {
    return UsageError("monitor interval must be greater than 0 (e.g. 5s or 500ms)");
  }
  std::vector<std::string> notes;
  std::vector<Column> columns;
  std::vector<size_t> widths;
  for (auto& source : sources) {
    auto found = source->Start(notes);
    widths.push_back(found.size());
    for (auto& c : found) columns.push_back(std::move(c));
  }
  if (csv_path.empty()) {
    return std::unique_ptr<Sampler>(new Sampler(nullptr, std::move(options), std::move(sources),
                                                std::move(widths), std::move(columns),
                                                std::move(notes)));
  }
  std::FILE* csv = std::fopen(csv_path.c_str(), "w");
  if (csv == nullptr) {
    const Error e = WriteError("cannot create", csv_path, errno);
    return e.code == ExitCode::kFailure ? UsageError(e.message + "; choose a writable folder") : e;
  }
  HandOver(::fileno(csv));
  std::string header = "timestamp,elapsed_s";
  for (const auto& c : columns) header += "," + c.name;
  header += ",scenario\n";
  if (std::fputs(header.c_str(), csv) < 0 || std::fflush(csv) != 0) {
    std::fclose(csv);
    return Failure(fmt::format("cannot write '{}': {}", csv_path, std::strerror(errno)));
  }
  return std::unique_ptr<Sampler>(new Sampler(csv, std::move(options), std::move(sources),
                                              std::move(widths), std::move(columns),
                                              std::move(notes)));
}

Sampler::Sampler(std::FILE* csv, SamplerOptions options,
                 std::vector<std::unique_ptr<Source>> sources, std::vector<size_t> widths,
                 std::vector<Column> columns, std::vector<std::string> notes)
    : csv_(csv),
      options_(std::move(options)),
      sources_(std::move(sources)),
      widths_(std::move(widths)),
      columns_(std::move(columns)),
      notes_(std::move(notes)),
      stats_(columns_, options_.thresholds_c),
      row_(columns_.size()) {}

Sampler::~Sampler() {
  (void)Stop();
  if (csv_ != nullptr) std::fclose(csv_);
}

std::vector<std::string> Sampler::notes() const {
  std::lock_guard lock(mutex_);
  return notes_;
}

std::vector<double> Sampler::Latest() const {
  std::lock_guard lock(latest_mutex_);
  return latest_.empty() ? std::vector<double>(columns_.size(), kNaN) : latest_;
}

uint64_t Sampler::rows() const {
  std::lock_guard lock(mutex_);
  return stats_.rows();
}

Status Sampler::SampleAt(int64_t monotonic_ns, int64_t realtime_ns) {
  std::lock_guard lock(mutex_);
  size_t offset = 0;
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (widths_[s] == 0) continue;
    sources_[s]->Sample(monotonic_ns, std::span<double>(row_).subspan(offset, widths_[s]));
    offset += widths_[s];
  }
  if (first_ns_ < 0) first_ns_ = monotonic_ns;
  stats_.Add(monotonic_ns, row_);
  {
    std::lock_guard latest(latest_mutex_);
    latest_ = row_;
  }
  if (csv_ == nullptr) return Status::Ok();
  std::string line = fmt::format("{},{:.3f}", UtcIsoMillis(realtime_ns),
                                 static_cast<double>(monotonic_ns - first_ns_) / 1e9);
  for (size_t i = 0; i < row_.size(); ++i) line += "," + FormatValue(row_[i], columns_[i].kind);
  line += "," + scenario_ + "\n";
  // One flush per row: a crash or kill keeps every completed row.
  if (std::fputs(line.c_str(), csv_) < 0 || std::fflush(csv_) != 0) {
    Error e = Failure(fmt::format("cannot append to the monitor log: {}", std::strerror(errno)));
    if (!write_error_) write_error_ = e;
    return e;
  }
  return Status::Ok();
}

void Sampler::SetScenario(const std::string& name) {
  std::string cell = name;
  for (char& c : cell) {
    if (c == ',' || c == '"' || c == '\n' || c == '\r') c = '_';
  }
  std::lock_guard lock(mutex_);
  scenario_ = std::move(cell);
}

void Sampler::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Sampler::Run() {
  const std::string priority = LowerPriority();
  {
    std::lock_guard lock(mutex_);
    notes_.push_back(priority);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t k = 0;; ++k) {
    (void)SampleOnce();
    // A fixed grid: a slow vcgencmd delays one sample, not every later one.
    const auto next = start + std::chrono::nanoseconds((k + 1) * options_.interval_ns);
    std::unique_lock lock(mutex_);
    if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
  }
}

Status Sampler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (write_error_) return *write_error_;
  return Status::Ok();
}

std::string Sampler::StatsText(bool interrupted) const {
  std::lock_guard lock(mutex_);
  return FormatStats(stats_, {options_.interval_ns, notes_, interrupted});
}

Status Sampler::WriteStats(const std::string& path, bool interrupted) const {
  return WriteFileAtomic(path, StatsText(interrupted));
}

}  // namespace rtpulse::monitor
