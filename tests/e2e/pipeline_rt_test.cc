// The pipeline's threads under SCHED_FIFO (src/e2e/pipeline.h, docs/e2e.md "Threads"): the
// capture, inference and backend worker threads read back from the kernel by the threads
// themselves and by the test, against the pipeline's own /proc check; a refused policy.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "e2e/pipeline.h"
#include "e2e/pipeline_support.h"
#include "support/subprocess.h"

namespace rtpulse::e2e {
namespace {

using pipetest::RealStages;

// What a thread reads of itself in the kernel, inside the thread: the independent side of the
// pipeline's /proc check.
struct SelfSched {
  int tid = 0;
  int policy = -1;
  int priority = -1;
  std::set<int> cpus;
};
SelfSched ReadSelfSched(int tid) {
  SelfSched out;
  out.tid = tid;
  out.policy = sched_getscheduler(tid);
  sched_param param{};
  sched_getparam(tid, &param);
  out.priority = param.sched_priority;
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(tid, sizeof(set), &set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(static_cast<size_t>(cpu), &set)) out.cpus.insert(cpu);
  }
  return out;
}

TEST(PipelineRtTest, CaptureInferenceAndWorkerThreadsRunAsAskedReadBackFromTheKernel) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO";
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 CPUs";
  RealStages real;
  real.Load(3);  // OpenCV: the calling thread and a pool of worker threads.
  PipelineSettings settings;
  settings.frames = 10;
  settings.warmup_frames = 2;
  settings.capture = {"fifo", 80, {0}};
  settings.inference = {"fifo", 70, {1}};
  settings.threads_before_backend = real.threads_before;
  std::mutex mutex;
  std::vector<SelfSched> seen_inside;
  settings.before_loop = [&] {
    const SelfSched self = ReadSelfSched(static_cast<int>(syscall(SYS_gettid)));
    std::lock_guard lock(mutex);
    seen_inside.push_back(self);
  };
  PipelineStages stages = real.Stages();
  std::atomic<bool> stop{false};
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 10u);
  ASSERT_EQ(seen_inside.size(), 2u);
  std::map<int, SelfSched> inside;
  for (const SelfSched& s : seen_inside) inside[s.tid] = s;

  int capture = 0, inference = 0, workers = 0;
  for (const ThreadCheck& t : result->threads) {
    SCOPED_TRACE(t.role + " " + std::to_string(t.tid));
    EXPECT_TRUE(t.as_asked) << t.note;
    EXPECT_EQ(t.policy, "fifo");
    SelfSched kernel;
    if (t.role == "worker") {
      ++workers;
      kernel = ReadSelfSched(t.tid);  // OpenCV's pool outlives the run.
    } else {
      ASSERT_EQ(inside.count(t.tid), 1u);
      kernel = inside[t.tid];
      (t.role == "capture" ? capture : inference)++;
    }
    EXPECT_EQ(kernel.policy, SCHED_FIFO);
    const bool is_capture = t.role == "capture";
    EXPECT_EQ(kernel.priority, is_capture ? 80 : 70);
    EXPECT_EQ(t.priority, kernel.priority);
    EXPECT_EQ(kernel.cpus, std::set<int>{is_capture ? 0 : 1});
    EXPECT_EQ(t.cpus, is_capture ? "0" : "1");
  }
  EXPECT_EQ(capture, 1);
  EXPECT_EQ(inference, 1);
  EXPECT_GE(workers, 1) << "OpenCV with 3 threads has a worker pool";
  // Independently: the threads of the process at fifo 70 are the inference thread's peers
  // the pipeline found (the inference thread itself has ended).
  int fifo70 = 0;
  for (int tid : ListProcessThreads()) {
    const SelfSched s = ReadSelfSched(tid);
    if (s.policy == SCHED_FIFO && s.priority == 70) ++fifo70;
  }
  EXPECT_EQ(fifo70, workers);
  // More inference threads than the one CPU given: the seed's mismatch, said.
  const std::string want = std::to_string(workers + 1) + " inference threads on 1 CPUs";
  bool noted = false;
  for (const std::string& note : result->notes) noted |= note.find(want) != std::string::npos;
  EXPECT_TRUE(noted) << "no note '" << want << "'";
}

TEST(PipelineRtTest, ARefusedPolicyIsAResourceErrorNamingTheOption) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root to drop privileges in a child";
  // What nobody cannot reach from a checkout in a 0700 home, readied as root: the inference
  // module mapped (MakeBackend keeps it for the process, so the child inherits it) and the
  // model copied. The child forks before any thread exists here, then drops root and loads
  // the stages.
  ASSERT_TRUE(MakeBackend(BackendKind::kOpenCv).has_value());
  const testutil::ReachableCopy model(std::string(RTPULSE_MODELS_DIR) + "/depth-tiny.onnx", 65534);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Without CAP_SYS_NICE and with RLIMIT_RTPRIO 0, SCHED_FIFO is refused (EPERM).
    const rlimit no_rt{0, 0};
    if (setrlimit(RLIMIT_RTPRIO, &no_rt) != 0) _exit(9);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(10);
    RealStages real;
    real.Load(1, model.path());
    if (::testing::Test::HasFailure()) _exit(14);
    PipelineStages stages = real.Stages();
    PipelineSettings settings;
    settings.frames = 3;
    settings.capture = {"fifo", 80, {}};
    std::atomic<bool> stop{false};
    auto result = RunPipeline(settings, stages, stop);
    if (result.has_value()) _exit(11);
    if (result.error().code != ExitCode::kResource) _exit(12);
    if (result.error().message.find("--capture-policy fifo:80") == std::string::npos) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "9/10 setrlimit/setuid failed, 11 no error, 12 not a resource error, 13 the message "
         "does not name the option, 14 the stages did not load as nobody";
}

}  // namespace
}  // namespace rtpulse::e2e
