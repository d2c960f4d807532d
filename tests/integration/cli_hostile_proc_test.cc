// Copyright 2026 The Zeus C++ Authors.
//
// What another user controls reaches people and programs safely: a process
// (on an emulated GPU, named by a fake /proc tree through ZEUS_PROC_ROOT)
// whose comm holds invalid UTF-8 and an ESC sequence, and a proc root whose
// files are FIFOs (a bind mount in a container can hold anything).
//   * `zeus top --json` gives valid UTF-8 (U+FFFD for the bad bytes); its
//     plain frames show the ESC as text.
//   * `zeus monitor --per-process --json` (which must read ZEUS_PROC_ROOT)
//     gives valid UTF-8; its text report escapes the ESC.
//   * `zeus exporter --per-process`'s /metrics is valid UTF-8.
//   * With FIFOs at <pid>/stat, comm and cgroup, `zeus top` and the exporter
//     start, answer and end on SIGTERM.
// Waits are on readiness (a frame printed, the ready file), with generous
// deadlines; nothing sleeps.

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/proc_tree.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

#if ZEUS_TEST_HAVE_EXPORTER
#include "testing/prometheus_servers.h"
#endif

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;
using testing::WaitUntil;

// A PID no real process is likely to have (below Linux's PID_MAX_LIMIT).
constexpr std::uint32_t kFakePid = 4'000'042;
// Valid 日, an ESC sequence, two bytes never valid in UTF-8, a 3-byte character cut after 2.
constexpr char kHostileComm[] = "\xE6\x97\xA5\x1b[31mev\xFF\x80il\xE6\x97";
// What the outputs must carry instead: each bad sequence one U+FFFD.
constexpr char kValidComm[] = "\xE6\x97\xA5\x1b[31mev\xEF\xBF\xBD\xEF\xBF\xBDil\xEF\xBF\xBD";

// Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF),
// written independently of the code under test.
bool IsUtf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      lo = b == 0xE0 ? 0xA0 : 0x80;
      hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

// Ends `process` with SIGTERM; true when it exited within `deadline`. A
// process still running then is killed (SIGKILL) so the test goes on.
bool EndsOnSigterm(testing::BackgroundProcess& process, std::chrono::seconds deadline = std::chrono::seconds(30)) {
  process.Signal(SIGTERM);
  if (WaitUntil([&] { return !process.Running(); }, deadline)) return true;
  process.Signal(SIGKILL);
  process.Wait();
  return false;
}

class HostileProcTest : public ::testing::Test {
 protected:
  // One emulated GPU with the fake process on it at 50 % SM utilization,
  // sampled every 50 ms, and the fake /proc tree that names it.
  void SetUp() override {
    json gpu = {{"name", "NVIDIA A40"},      {"architecture", "ampere"},  {"min_power_limit_w", 100},
                {"max_power_limit_w", 300},  {"default_power_limit_w", 300}, {"energy_counter", true},
                {"power_w", 200.0},          {"process_sample_period_ms", 50}};
    gpu["processes"] = {{{"pid", kFakePid}, {"sm_util_percent", 50}}};
    json scenario = {{"driver_version", "550.54.15"}, {"gpus", {gpu}}};
    scenario["state_file"] = tmp_.File("emulator.state");
    scenario_ = tmp_.Write("scenario.json", scenario.dump(2));
    tree_.Add({.pid = kFakePid, .comm = kHostileComm, .uid = 0, .start_time_ticks = 777});
  }

  // Replaces <pid>/`name` of the fake process by a FIFO without a writer.
  void MakeFifo(const std::string& name) const {
    const std::string path = proc_root() + "/" + std::to_string(kFakePid) + "/" + name;
    std::filesystem::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  }

  std::string proc_root() const { return tmp_.path() + "/proc"; }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"ZEUS_PROC_ROOT", proc_root()},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  ProcessResult Zeus(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Env());
  }

  testing::TempDir tmp_;
  testing::ProcTree tree_{tmp_.path() + "/proc"};
  std::string scenario_;
};

// The JSON frames are valid UTF-8 (json::dump used to throw type_error.316
// and abort), and the name is the hostile one with each bad sequence replaced.
TEST_F(HostileProcTest, TopJsonIsValidUtf8) {
  ProcessResult r = Zeus({"top", "--json", "--iterations", "3", "--interval", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(IsUtf8(r.out));
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  const json frame = json::parse(last);
  const json& processes = frame["gpus"][0]["processes"];
  ASSERT_EQ(processes.size(), 1u) << last;
  EXPECT_EQ(processes[0]["pid"], kFakePid);
  EXPECT_EQ(processes[0]["comm"], kValidComm);
}

// Plain frames (and so the terminal's, drawn from the same lines) show the
// ESC as text: nothing another user names a process reaches the terminal raw.
TEST_F(HostileProcTest, TopPlainEscapesControlCharacters) {
  ProcessResult r = Zeus({"top", "--plain", "--iterations", "3", "--interval", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(IsUtf8(r.out));
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(r.out, HasSubstr("\xE6\x97\xA5\\x1b[31mev"));
}

// `zeus monitor --per-process` names the process from ZEUS_PROC_ROOT (the
// fake PID exists nowhere else), as valid UTF-8, and its text report (for a
// terminal) escapes the ESC.
TEST_F(HostileProcTest, MonitorPerProcessReadsTheProcRootAndGivesValidUtf8) {
  // The command runs long enough for several of the driver's 50 ms samples.
  ProcessResult r = Zeus({"monitor", "--json", "--per-process", "--", "sleep", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(IsUtf8(r.out));
  const json report = json::parse(r.out);
  ASSERT_TRUE(report.contains("per_process")) << r.out;
  const json& processes = report["per_process"][0]["processes"];
  ASSERT_EQ(processes.size(), 1u) << r.out;
  EXPECT_EQ(processes[0]["pid"], kFakePid);
  EXPECT_EQ(processes[0]["comm"], kValidComm);
  EXPECT_EQ(processes[0]["user"], "root");

  ProcessResult text = Zeus({"monitor", "--per-process", "--", "sleep", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(IsUtf8(text.out));
  EXPECT_THAT(text.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(text.out, HasSubstr("\xE6\x97\xA5\\x1b[31mev"));
}

// FIFOs where stat, comm and cgroup belong: `zeus top` prints frames (the
// process without its parts) and ends on SIGTERM.
TEST_F(HostileProcTest, TopWithFifosInTheProcRootAnswersAndEndsOnSigterm) {
  for (const char* name : {"stat", "comm", "cgroup"}) MakeFifo(name);
  testing::BackgroundProcess top({ZEUS_TEST_CLI_PATH, "top", "--json", "--interval", "0.1"}, tmp_.File("top.out"),
                                 tmp_.File("top.err"), Env());
  // Two frames: it has sampled past the FIFOs at least once.
  const bool answered = WaitUntil([&] {
    const std::string out = zeus::testing::ReadWholeFile(tmp_.File("top.out"));
    return std::count(out.begin(), out.end(), '\n') >= 2 || !top.Running();
  });
  const bool ended = EndsOnSigterm(top);
  EXPECT_TRUE(answered) << "no frames; stderr: " << zeus::testing::ReadWholeFile(tmp_.File("top.err"));
  EXPECT_TRUE(ended) << "zeus top ignored SIGTERM";
  EXPECT_EQ(top.Wait(), 0) << zeus::testing::ReadWholeFile(tmp_.File("top.err"));
  const std::string out = zeus::testing::ReadWholeFile(tmp_.File("top.out"));
  ASSERT_TRUE(IsUtf8(out));
  ASSERT_GE(std::count(out.begin(), out.end(), '\n'), 2) << out;
}

#if ZEUS_TEST_HAVE_EXPORTER
// Starts `zeus exporter --per-process` on a free port; its URL once ready
// (nullopt if it never became ready within the deadline).
std::optional<std::string> StartExporter(std::unique_ptr<testing::BackgroundProcess>* exporter,
                                         const testing::TempDir& tmp,
                                         const std::map<std::string, std::optional<std::string>>& env) {
  const std::string ready = tmp.File("ready");
  *exporter = std::make_unique<testing::BackgroundProcess>(
      std::vector<std::string>{ZEUS_TEST_CLI_PATH, "exporter", "--listen", "127.0.0.1:0", "--interval-ms", "50",
                               "--no-cpus", "--per-process", "--ready-file", ready},
      tmp.File("exporter.out"), tmp.File("exporter.err"), env);
  // The file exists (empty) from the start; the URL is written once serving.
  std::string url;
  if (!WaitUntil([&] {
        url = zeus::testing::ReadWholeFile(ready);
        return url.find('\n') != std::string::npos || !(*exporter)->Running();
      })) {
    return std::nullopt;
  }
  if (url.empty()) return std::nullopt;
  while (!url.empty() && url.back() == '\n') url.pop_back();
  return url;
}

// /metrics is valid UTF-8 (Prometheus rejects a whole scrape otherwise) and
// carries the process under its replaced name.
TEST_F(HostileProcTest, ExporterMetricsAreValidUtf8) {
  std::unique_ptr<testing::BackgroundProcess> exporter;
  const std::optional<std::string> url = StartExporter(&exporter, tmp_, Env());
  ASSERT_TRUE(url) << zeus::testing::ReadWholeFile(tmp_.File("exporter.err"));
  std::optional<std::string> body;
  // The process's series appears once the tracker has a driver sample of it.
  const bool listed = WaitUntil([&] {
    body = testing::HttpGet(*url);
    return body && body->find("pid=\"" + std::to_string(kFakePid) + "\"") != std::string::npos;
  });
  EXPECT_TRUE(EndsOnSigterm(*exporter));
  ASSERT_TRUE(listed) << (body ? *body : "no answer") << zeus::testing::ReadWholeFile(tmp_.File("exporter.err"));
  EXPECT_TRUE(IsUtf8(*body));
  EXPECT_THAT(*body, HasSubstr(std::string("comm=\"") + kValidComm + "\""));
}

// FIFOs in the proc root: the exporter becomes ready, answers, and ends on SIGTERM.
TEST_F(HostileProcTest, ExporterWithFifosInTheProcRootAnswersAndEndsOnSigterm) {
  for (const char* name : {"stat", "comm", "cgroup"}) MakeFifo(name);
  std::unique_ptr<testing::BackgroundProcess> exporter;
  const std::optional<std::string> url = StartExporter(&exporter, tmp_, Env());
  std::optional<std::string> body;
  if (url) body = testing::HttpGet(*url);
  const bool ended = EndsOnSigterm(*exporter);
  ASSERT_TRUE(url) << "never ready; stderr: " << zeus::testing::ReadWholeFile(tmp_.File("exporter.err"));
  ASSERT_TRUE(body) << "no answer from " << *url;
  EXPECT_THAT(*body, HasSubstr("zeus_gpu_energy_joules_total"));
  EXPECT_TRUE(IsUtf8(*body));
  EXPECT_TRUE(ended) << "zeus exporter ignored SIGTERM";
}
#endif  // ZEUS_TEST_HAVE_EXPORTER

}  // namespace
}  // namespace zeus
