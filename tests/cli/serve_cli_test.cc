// `rtpulse serve` under a real Prometheus (Debian's prometheus and promtool): the exposition
// validated, every query of the example dashboard and every alert rule executed against the
// scraped data, histogram_quantile and the max against rtpulse's own numbers within the
// documented bucket error, injected delays seen as such; and the batch runs' --textfile read
// by a real node_exporter and recomputed from the run's samples (docs/fleet.md).

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "e2e/worker_threads.h"
#include "monitor/monitor_test_util.h"
#include "support/http_client.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace rtpulse {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testutil::HttpGet;

bool HaveProgram(const std::string& path) {
  return std::filesystem::exists(path);
}

/// Polls `ready` every 200 ms for up to `limit`.
bool WaitFor(const std::function<bool()>& ready, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return ready();
}

/// The bucket bounds of docs/fleet.md, in seconds.
std::vector<double> Bounds() {
  std::vector<double> b;
  for (double decade = 1e-6; decade < 0.05; decade *= 10) {
    for (double m : {1.0, 1.25, 1.6, 2.0, 2.5, 3.2, 4.0, 5.0, 6.4, 8.0}) b.push_back(m * decade);
  }
  b.push_back(0.1);
  return b;
}

/// An instant query against Prometheus' HTTP API at `time` (Unix seconds, "" = now).
json Query(uint16_t port, const std::string& expr, const std::string& time = "") {
  std::string target = "/api/v1/query?query=" + testutil::UrlEncode(expr);
  if (!time.empty()) target += "&time=" + time;
  const testutil::HttpReply reply = HttpGet(port, target);
  if (reply.status != 200)
    return json{{"status", "http " + std::to_string(reply.status)}, {"body", reply.body}};
  return json::parse(reply.body, nullptr, false);
}

/// The value of each series of a vector result, keyed by one label.
std::map<std::string, double> ByLabel(const json& answer, const std::string& label) {
  std::map<std::string, double> out;
  if (!answer.is_object() || answer.value("status", "") != "success") return out;
  for (const auto& r : answer["data"]["result"]) {
    const std::string key = r["metric"].value(label, "");
    out[key] = std::stod(r["value"][1].get<std::string>());
  }
  return out;
}

size_t ResultCount(const json& answer) {
  if (!answer.is_object() || answer.value("status", "") != "success") return 0;
  return answer["data"]["result"].size();
}

struct ServeSetup {
  monitor::testing::PiFixture pi;  // Pi 5 /sys and /proc, fake vcgencmd (throttled "now")
  uint16_t serve_port = testutil::FreeLoopbackPort();
};

testutil::ProcessOptions PiEnvironment(const monitor::testing::PiFixture& pi) {
  testutil::ProcessOptions o;
  o.timeout = 280'000ms;
  o.extra_env = {"RTPULSE_SYSROOT=" + pi.root(), "PATH=" + pi.bin() + ":/usr/bin:/bin"};
  return o;
}

TEST(ServeCli, RealPrometheusScrapesItAndItsNumbersAgree) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root (SCHED_FIFO probes)";
  for (const char* tool : {"/usr/bin/prometheus", "/usr/bin/promtool"}) {
    if (!HaveProgram(tool)) GTEST_SKIP() << tool << " missing: apt-get install prometheus";
  }
  ServeSetup s;
  const std::string metrics_port = std::to_string(s.serve_port);
  testutil::BackgroundProcess serve(
      {RTPULSE_BINARY, "serve", "--listen", "127.0.0.1:" + metrics_port, "-i", "1000", "--inject",
       "2ms@10Hz", "--refresh", "500ms", "--monitor-interval", "500ms", "--json",
       s.pi.out() + "/serve.json"},
      PiEnvironment(s.pi));
  ASSERT_TRUE(WaitFor(
      [&] { return HttpGet(s.serve_port, "/metrics").status == 200 || serve.Exited(); }, 60s));
  ASSERT_FALSE(serve.Exited()) << serve.Stop().err;

  // The text format passes promtool's checks; OpenMetrics is what Prometheus asks for.
  ASSERT_TRUE(WaitFor(
      [&] {
        return HttpGet(s.serve_port, "/metrics").body.find("rtpulse_latency_seconds_count{") !=
               std::string::npos;
      },
      30s));
  const testutil::HttpReply text = HttpGet(s.serve_port, "/metrics");
  EXPECT_NE(text.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  std::ofstream(s.pi.out() + "/metrics.txt") << text.body;
  const auto lint = testutil::RunProcess(
      {"/bin/sh", "-c", "/usr/bin/promtool check metrics < '" + s.pi.out() + "/metrics.txt'"});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  const testutil::HttpReply om = HttpGet(
      s.serve_port, "/metrics",
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
      "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1");
  EXPECT_NE(om.headers.find("Content-Type: application/openmetrics-text; version=1.0.0"),
            std::string::npos);
  EXPECT_TRUE(om.body.ends_with("# EOF\n"));
  for (const char* family :
       {"rtpulse_system_info{", "rtpulse_check_status{", "rtpulse_temperature_celsius{",
        "rtpulse_throttled{", "rtpulse_board_power_watts ", "rtpulse_injected_delays_total{"}) {
    EXPECT_NE(text.body.find(family), std::string::npos) << family;
  }

  // A real Prometheus scraping it every second, with the example alert rules loaded.
  const uint16_t prom_port = testutil::FreeLoopbackPort();
  const std::string rules =
      std::string(RTPULSE_SOURCE_DIR) + "/examples/prometheus/rtpulse.rules.yml";
  std::ofstream(s.pi.out() + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
      << "rule_files:\n  - " << rules << "\n"
      << "scrape_configs:\n  - job_name: rtpulse\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  testutil::ProcessOptions prom_options;
  prom_options.timeout = 280'000ms;
  testutil::BackgroundProcess prometheus(
      {"/usr/bin/prometheus", "--config.file=" + s.pi.out() + "/prometheus.yml",
       "--storage.tsdb.path=" + s.pi.out() + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
      prom_options);
  // Ten scrapes at least, so rate() over 20 s has points at both ends.
  const bool scraped = WaitFor(
      [&] {
        const auto n = ByLabel(Query(prom_port, "count_over_time(up{job=\"rtpulse\"}[1m])"), "job");
        return !n.empty() && n.begin()->second >= 10;
      },
      90s);
  ASSERT_TRUE(scraped) << prometheus.Stop().err;
  EXPECT_EQ(ByLabel(Query(prom_port, "up"), "job")["rtpulse"], 1.0)
      << "Prometheus failed to parse a scrape";

  // One evaluation time for every query: each sees the same scrape of every series.
  const std::string at =
      std::to_string(static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count()) /
                     1000.0);
  const std::vector<double> bounds = Bounds();
  const auto p99 =
      ByLabel(Query(prom_port, "rtpulse_latency_percentile_seconds{percentile=\"99\"}", at), "cpu");
  const auto hq99 = ByLabel(
      Query(prom_port, "histogram_quantile(0.99, rtpulse_latency_seconds_bucket)", at), "cpu");
  const auto max = ByLabel(Query(prom_port, "rtpulse_latency_max_seconds", at), "cpu");
  const auto hq1 =
      ByLabel(Query(prom_port, "histogram_quantile(1, rtpulse_latency_seconds_bucket)", at), "cpu");
  const auto count = ByLabel(Query(prom_port, "rtpulse_latency_seconds_count", at), "cpu");
  const auto at_2ms =
      ByLabel(Query(prom_port, "rtpulse_latency_seconds_bucket{le=\"0.002\"}", at), "cpu");
  const auto injected = ByLabel(Query(prom_port, "rtpulse_injected_delays_total", at), "cpu");
  const auto missed = ByLabel(Query(prom_port, "rtpulse_missed_activations_total", at), "cpu");
  const auto degraded = ByLabel(Query(prom_port, "rtpulse_probe_degraded", at), "cpu");
  ASSERT_FALSE(p99.empty());
  for (const auto& [cpu, rtpulse_p99] : p99) {
    SCOPED_TRACE("cpu " + cpu);
    // rtpulse's p99 is its bucket's upper edge (the sample's bucket edge, clamped to the max):
    // Prometheus counts that bucket at the first bound at or above it, so histogram_quantile
    // interpolates inside that Prometheus bucket (or, for a p99 clamped to the max, up to
    // the next one).
    const size_t k = static_cast<size_t>(
        std::lower_bound(bounds.begin(), bounds.end(), rtpulse_p99 * (1 - 1e-12)) - bounds.begin());
    const double lo = k == 0 ? 0 : bounds[k - 1];
    const bool clamped = rtpulse_p99 >= max.at(cpu);  // the nearest rank is the max itself
    const double hi = k >= bounds.size()
                          ? bounds.back()
                          : bounds[std::min(k + (clamped ? 1 : 0), bounds.size() - 1)];
    EXPECT_GE(hq99.at(cpu), lo * (1 - 1e-9)) << "p99 " << rtpulse_p99;
    EXPECT_LE(hq99.at(cpu), hi * (1 + 1e-9)) << "p99 " << rtpulse_p99;
    // The max's Prometheus bucket: histogram_quantile(1) is its upper bound (the last finite
    // bound when the max is above 100 ms).
    const double m = max.at(cpu);
    if (m <= bounds.back()) {
      EXPECT_GE(hq1.at(cpu) * (1 + 1e-9), m);
      const size_t j = static_cast<size_t>(
          std::lower_bound(bounds.begin(), bounds.end(), hq1.at(cpu) * (1 - 1e-12)) -
          bounds.begin());
      EXPECT_TRUE(j == 0 || bounds[j - 1] < m * (1 + 1.0 / 512))
          << "max " << m << " hq(1) " << hq1.at(cpu);
    } else {
      EXPECT_DOUBLE_EQ(hq1.at(cpu), bounds.back());
    }
    // Ground truth: every injected 2 ms spin delays one wake-up past 2 ms (the one in flight
    // at the snapshot may not be counted yet), and with a 1 ms period each is a missed one.
    EXPECT_GE(injected.at(cpu), 5.0);
    EXPECT_GE(count.at(cpu) - at_2ms.at(cpu), injected.at(cpu) - 1);
    EXPECT_GE(missed.at(cpu), 1.0);
    EXPECT_EQ(degraded.at(cpu), 0.0);
  }

  // Every panel of the example dashboard returns data.
  const json dashboard = json::parse(
      std::ifstream(std::string(RTPULSE_SOURCE_DIR) + "/examples/grafana/rtpulse-fleet.json"));
  size_t queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "20s");
      expr = std::regex_replace(expr, std::regex(R"(\$instance)"), ".*");
      const json answer = Query(prom_port, expr);
      EXPECT_GT(ResultCount(answer), 0U) << panel["title"] << ": " << expr << "\n" << answer.dump();
      ++queries;
    }
  }
  EXPECT_EQ(queries, dashboard["panels"].size());
  const std::string instances = dashboard["templating"]["list"][1]["definition"];
  EXPECT_EQ(instances, "label_values(rtpulse_system_info, instance)");
  EXPECT_GT(ResultCount(Query(prom_port, "rtpulse_system_info")), 0U);

  // Every alert rule evaluates without error, and with the injected delays, the fake
  // firmware's under-voltage and this kernel (not PREEMPT_RT) each one's expression has data.
  ASSERT_TRUE(WaitFor(
      [&] {
        const testutil::HttpReply r = HttpGet(prom_port, "/api/v1/rules");
        const json j = json::parse(r.body, nullptr, false);
        if (!j.is_object() || j.value("status", "") != "success") return false;
        size_t evaluated = 0;
        for (const auto& g : j["data"]["groups"]) {
          for (const auto& rule : g["rules"]) {
            // Prometheus reports 0001-01-01T00:00:00Z before a rule's first evaluation.
            if (rule.value("lastEvaluation", "").rfind("0001", 0) != 0) ++evaluated;
          }
        }
        return evaluated == 4;
      },
      30s));
  const json rules_answer = json::parse(HttpGet(prom_port, "/api/v1/rules").body);
  size_t alerts = 0;
  for (const auto& g : rules_answer["data"]["groups"]) {
    for (const auto& rule : g["rules"]) {
      EXPECT_EQ(rule["health"], "ok") << rule.dump();
      EXPECT_GT(ResultCount(Query(prom_port, rule["query"])), 0U)
          << rule["name"] << ": " << rule["query"];
      ++alerts;
    }
  }
  EXPECT_EQ(alerts, 4U);

  const testutil::ProcessResult prom_result = prometheus.Stop();
  // SIGTERM: a clean stop, the summary, the run's JSON, and the port free again.
  const testutil::ProcessResult result = serve.Stop();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("# serve: "), std::string::npos) << result.out;
  EXPECT_LT(result.signal_to_exit_seconds, 10.0);
  const json run = json::parse(std::ifstream(s.pi.out() + "/serve.json"));
  EXPECT_FALSE(run["thread"].empty()) << run.dump().substr(0, 400);
  // Every CPU probed (the default): the server has no CPU of its own, and says so on stderr,
  // in /metrics and in the JSON.
  EXPECT_NE(result.err.find("beside a probe"), std::string::npos) << result.err;
  EXPECT_NE(text.body.find("beside a probe"), std::string::npos);
  EXPECT_NE(run.dump().find("beside a probe"), std::string::npos);
  // The port is free for the next serve at once (the scrapes' connections in TIME_WAIT do not
  // hold it: serve binds with SO_REUSEADDR).
  const auto again = testutil::RunRtpulse(
      {"serve", "--listen", "127.0.0.1:" + metrics_port, "-D", "1s", "-q"}, PiEnvironment(s.pi));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(prom_result.exit_code, 0) << prom_result.err;
}

/// The pid of the running process whose command line holds `needle`, or 0.
int FindProcess(const std::string& needle) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = testutil::ReadFile(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos && cmdline.find("rtpulse") != std::string::npos)
      return std::stoi(name);
  }
  return 0;
}

/// Every thread of process `pid` as e2e::ParseTaskSched reads /proc/PID/task/TID.
std::vector<e2e::TaskSched> Tasks(int pid) {
  std::vector<e2e::TaskSched> tasks;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    auto task = e2e::ParseTaskSched(testutil::ReadFile(entry.path().string() + "/stat"),
                                    testutil::ReadFile(entry.path().string() + "/status"));
    EXPECT_TRUE(task) << entry.path();
    if (task) tasks.push_back(*task);
  }
  return tasks;
}

TEST(ServeCli, TheServerThreadRunsSchedOtherOffTheProbesCpu) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root (SCHED_FIFO probes)";
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  const uint16_t port = testutil::FreeLoopbackPort();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  testutil::BackgroundProcess serve(
      {RTPULSE_BINARY, "serve", "--listen", where, "--cpus", "1", "-D", "30s", "--json", "-"});
  ASSERT_TRUE(
      WaitFor([&] { return HttpGet(port, "/metrics").status == 200 || serve.Exited(); }, 60s));
  ASSERT_FALSE(serve.Exited()) << serve.Stop().err;
  const int pid = FindProcess(where);
  ASSERT_GT(pid, 0);
  int servers = 0;
  int probes = 0;
  for (const e2e::TaskSched& t : Tasks(pid)) {
    if (t.name.rfind("MHD", 0) == 0) {  // libmicrohttpd's thread
      ++servers;
      EXPECT_EQ(t.policy, "other") << t.name;
      EXPECT_EQ(t.cpus.find('1'), std::string::npos) << t.name << " " << t.cpus;
    }
    if (t.policy == "fifo") {
      ++probes;
      EXPECT_EQ(t.cpus, "1") << t.name;
    }
  }
  EXPECT_EQ(servers, 1);
  EXPECT_EQ(probes, 1);
  // A CPU of its own: no warning. With --json -, stdout is the JSON alone.
  const testutil::ProcessResult result = serve.Stop();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("beside a probe"), std::string::npos) << result.err;
  const json run = json::parse(result.out, nullptr, false);
  ASSERT_TRUE(run.is_object()) << result.out.substr(0, 400);
  EXPECT_NE(result.err.find("# serve: "), std::string::npos) << result.err;
}

TEST(ServeCli, BadListenAndAPortInUseAreOneLineExit2) {
  testutil::TempDir dir;
  for (const char* bad : {"localhost:99999", "[::1", "1.2.3.4:80:80"}) {
    auto r = testutil::RunRtpulse({"serve", "--listen", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--listen"), std::string::npos) << r.err;
  }
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--wake", "busy"},
                                             {"-i", "10"},
                                             {"--priority", "0"},
                                             {"--refresh", "10ms"},
                                             {"--cpus", "999"},
                                             {"--inject", "2ms"},
                                             {"--max-connections", "0"}}) {
    std::vector<std::string> args = {"serve"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = testutil::RunRtpulse(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // Every path a months-long service cannot use is refused with the list it can.
  for (const char* wake : {"busy", "deadline", "itimer", "gpio", "nosuch"}) {
    auto r = testutil::RunRtpulse({"serve", "--wake", wake});
    EXPECT_EQ(r.exit_code, 2) << wake << " " << r.err;
    EXPECT_EQ(r.err, std::string("rtpulse: error: --wake '") + wake +
                         "': serve takes one of abs, rel, timerfd, posix, epoll, xthread (busy "
                         "spins a whole CPU; deadline, itimer and gpio: use rtpulse latency)\n");
  }
  // A port another program listens on.
  uint16_t port = 0;
  const int fd = testutil::ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto r = testutil::RunRtpulse({"serve", "--listen", where, "-D", "5s"});
  ::close(fd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "rtpulse: error: --listen " + where +
                       ": the address is in use (another rtpulse serve or exporter?): stop it or "
                       "give another port, e.g. --listen 127.0.0.1:" +
                       std::to_string(port + 1) + "\n");
}

}  // namespace
}  // namespace rtpulse
