// Copyright 2026 The Zeus C++ Authors.
//
// `zeus top` as a user runs it: the real binary on two emulated GPUs (the
// NVML emulator through ZEUS_NVML_LIBRARY): the plain and JSON frames, the
// errors, and the live view in a real terminal (tmux: the test types keys
// with send-keys and reads the screen with capture-pane).

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;
using testing::WaitUntil;

std::vector<std::string> Split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t at; (at = text.find(separator, begin)) != std::string::npos; begin = at + separator.size()) {
    parts.push_back(text.substr(begin, at - begin));
  }
  parts.push_back(text.substr(begin));
  return parts;
}

// The number after `label` in `text` ("energy 12.5 J" -> 12.5); nullopt when absent.
std::optional<double> NumberAfter(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " ([0-9]+(\\.[0-9]+)?)"))) return std::nullopt;
  return std::stod(m[1]);
}

// A program on PATH, as an absolute path; nullopt when missing.
std::optional<std::string> FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : Split(path != nullptr ? path : "/usr/bin:/bin", ":")) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// The current user's name, as `zeus top --json` gives it.
std::string UserName() {
  const passwd* pw = ::getpwuid(::getuid());
  return pw != nullptr ? pw->pw_name : std::to_string(::getuid());
}
// ... and in the text's USER column (10 wide).
std::string UserColumn() { return UserName().substr(0, 10); }

// The child of `parent` whose command name is `comm` (from /proc); nullopt if none.
std::optional<pid_t> ChildNamed(pid_t parent, const std::string& comm) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces.
    const std::string stat = zeus::testing::ReadWholeFile(entry.path() / "stat");
    const std::size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 > stat.size()) continue;
    if (stat.substr(open + 1, close - open - 1) != comm) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) return std::stoi(name);
  }
  return std::nullopt;
}

// Single-quoted for sh.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class TopTest : public ::testing::Test {
 protected:
  // Two GPUs: an A40 at 200 W running a real process (a `sleep` child, so
  // that /proc names it) at 50 % SM utilization, and an idle V100 at 250 W.
  void SetUp() override {
    sleeper_ = std::make_unique<testing::BackgroundProcess>(std::vector<std::string>{"/bin/sleep", "100000"},
                                                            tmp_.File("sleep.out"), tmp_.File("sleep.err"));
    json gpu = {{"architecture", "ampere"},  {"min_power_limit_w", 100}, {"max_power_limit_w", 300},
                {"default_power_limit_w", 300}, {"energy_counter", true}};
    json a40 = gpu;
    a40["name"] = "NVIDIA A40";
    a40["power_w"] = 200.0;
    a40["process_sample_period_ms"] = 100;
    a40["processes"] = {{{"pid", sleeper_->pid()}, {"sm_util_percent", 50}}};
    json v100 = gpu;
    v100["name"] = "Tesla V100-SXM2-32GB";
    v100["architecture"] = "volta";
    v100["power_w"] = 250.0;
    json scenario = {{"driver_version", "550.54.15"}, {"gpus", {a40, v100}}};
    scenario["state_file"] = tmp_.File("emulator.state");
    scenario_ = tmp_.Write("scenario.json", scenario.dump(2));
  }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  ProcessResult Top(const std::vector<std::string>& args,
                    std::map<std::string, std::optional<std::string>> overrides = {}) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "top"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto env = Env();
    for (auto& [k, v] : overrides) env[k] = v;
    return RunProcess(argv, env);
  }

  std::string Pid() const { return std::to_string(sleeper_->pid()); }

  testing::TempDir tmp_;
  std::unique_ptr<testing::BackgroundProcess> sleeper_;
  std::string scenario_;
};

// Plain mode (stdout is a pipe here): two frames, each ended by a blank
// line, no escape codes, both GPUs with their power, energy growing.
TEST_F(TopTest, PlainPrintsOneFramePerRefresh) {
  ProcessResult r = Top({"--iterations", "2", "--plain", "--interval", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b")));
  ASSERT_THAT(r.out, ::testing::EndsWith("\n\n"));
  std::vector<std::string> frames = Split(r.out.substr(0, r.out.size() - 2), "\n\n");
  ASSERT_EQ(frames.size(), 2u) << r.out;
  std::vector<double> energy;
  for (const std::string& frame : frames) {
    std::vector<std::string> lines = Split(frame, "\n");
    ASSERT_GE(lines.size(), 3u) << frame;
    EXPECT_THAT(lines[0], StartsWith("zeus top  elapsed "));
    EXPECT_THAT(lines[0], HasSubstr("  2 GPUs  refresh 0.2 s"));
    // (The emulator's power follows the process's utilization; its figure is not checked here.)
    EXPECT_TRUE(std::regex_search(frame, std::regex("\nGPU 0  NVIDIA A40  power [0-9]+\\.[0-9] W  idle ")))
        << frame;
    EXPECT_TRUE(std::regex_search(frame, std::regex("\nGPU 1  Tesla V100-SXM2-32GB  power 250\\.0 W  idle ")))
        << frame;
    std::optional<double> e = NumberAfter(frame.substr(frame.find("GPU 0")), "energy");
    ASSERT_TRUE(e) << frame;
    energy.push_back(*e);
  }
  EXPECT_GT(energy[0], 0.0);
  EXPECT_GT(energy[1], energy[0]);
  // GPU 0's table lists the process (labels from /proc); GPU 1 has none.
  const std::string& last = frames[1];
  const std::string gpu0 = last.substr(last.find("GPU 0"), last.find("GPU 1") - last.find("GPU 0"));
  EXPECT_THAT(gpu0, HasSubstr("    PID USER"));
  const std::regex row("\\n +" + Pid() + " " + UserColumn() + " +sleep +\\S+ +[0-9.]+ +[0-9.]+\\n");
  EXPECT_TRUE(std::regex_search(gpu0, row)) << gpu0;
  // No process row on GPU 1. (It may show an `unattributed` row: the
  // emulator's counter and the tracker's clock are read microseconds apart,
  // so an idle interval can measure a few mJ over idle power x duration.)
  const std::string gpu1 = last.substr(last.find("GPU 1"));
  EXPECT_FALSE(std::regex_search(gpu1, std::regex("\\n +[0-9]+ "))) << gpu1;
  EXPECT_TRUE(gpu1.find("(no processes)") != std::string::npos || gpu1.find("unattributed") != std::string::npos)
      << gpu1;
  EXPECT_GT(*NumberAfter(frames[1], "elapsed"), *NumberAfter(frames[0], "elapsed"));
}

// --json: one object per refresh, one per line.
TEST_F(TopTest, JsonPrintsOneObjectPerLine) {
  // The A40's idle power set by the operator: the process's share of the rest is positive.
  ProcessResult r = Top({"--iterations", "3", "--json", "--interval", "0.1", "--idle-power", "NVIDIA A40=20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Split(r.out, "\n");
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[3], "");
  double last_elapsed = -1;
  double last_energy = -1;
  for (int i = 0; i < 3; ++i) {
    json frame = json::parse(lines[i]);
    EXPECT_GT(frame["elapsed_s"].get<double>(), last_elapsed);
    last_elapsed = frame["elapsed_s"].get<double>();
    ASSERT_EQ(frame["gpus"].size(), 2u) << lines[i];
    const json& g0 = frame["gpus"][0];
    EXPECT_EQ(g0["index"], 0);
    EXPECT_EQ(g0["name"], "NVIDIA A40");
    EXPECT_GT(g0["power_w"].get<double>(), 0.0);
    EXPECT_GT(g0["interval_s"].get<double>(), 0.0);
    EXPECT_EQ(g0["idle_source"], "operator");
    EXPECT_EQ(g0["idle_power_w"], 20.0);
    EXPECT_GE(g0["energy_j"].get<double>(), last_energy);
    last_energy = g0["energy_j"].get<double>();
    EXPECT_TRUE(g0["processes"].is_array());
    EXPECT_EQ(frame["gpus"][1]["name"], "Tesla V100-SXM2-32GB");
    EXPECT_TRUE(frame["gpus"][1]["processes"].empty());
  }
  EXPECT_GT(last_energy, 0.0);
  const json processes = json::parse(lines[2])["gpus"][0]["processes"];
  ASSERT_EQ(processes.size(), 1u) << lines[2];
  EXPECT_EQ(processes[0]["pid"], sleeper_->pid());
  EXPECT_EQ(processes[0]["comm"], "sleep");
  EXPECT_EQ(processes[0]["user"], UserName());
  // Two refreshes of at least 0.1 s each have passed: the driver (a sample every 100 ms) has sampled it.
  EXPECT_GT(processes[0]["energy_j"].get<double>(), 0.0) << lines[2];
}

TEST_F(TopTest, NoVisibleGpuIsAnError) {
  ProcessResult r = Top({"--iterations", "1"}, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.err, StartsWith("error: no GPUs to watch: CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(r.out, "");
}

TEST_F(TopTest, MissingEmulatorIsNamed) {
  ProcessResult r = Top({"--iterations", "1"}, {{"ZEUS_NVML_LIBRARY", tmp_.File("no-such-libnvml.so")}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("error: ZEUS_NVML_LIBRARY=" + tmp_.File("no-such-libnvml.so")));
  EXPECT_THAT(r.err, HasSubstr("cannot load the NVML library"));
}

TEST_F(TopTest, FlagsAreChecked) {
  ProcessResult r = Top({"--interval", "0.05"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--interval must be"));
  r = Top({"--iterations", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--iterations must be"));
  r = Top({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--iterations"));
  EXPECT_THAT(r.out, HasSubstr("q or Ctrl-C quits"));
}

// The live view in a real terminal: a private tmux server (its own socket,
// no user configuration) runs `zeus top` in a 120x40 pane through sh, which
// afterwards records zeus's exit status and the terminal's settings, then
// waits for a line so that the pane's state after zeus can be read.
class TopTmuxTest : public TopTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    TopTest::SetUp();
    tmux_ = FindProgram("tmux");
    if (!tmux_) GTEST_SKIP() << "tmux is not installed (scripts/install-deps installs it)";
    socket_ = tmp_.File("tmux.sock");
    config_ = tmp_.Write("tmux.conf", "set -g remain-on-exit on\n");
  }
  void TearDown() override {
    if (started_) Tmux({"kill-server"});
  }

  ProcessResult Tmux(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {*tmux_, "-S", socket_, "-f", config_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }
  std::string Screen() { return Tmux({"capture-pane", "-p", "-t", "top"}).out; }
  std::string Format(const std::string& format) {
    std::string out = Tmux({"display-message", "-p", "-t", "top", format}).out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::optional<std::string> tmux_;
  std::string socket_;
  std::string config_;
  bool started_ = false;
};

TEST_P(TopTmuxTest, RendersRefreshesAndQuitsRestoringTheTerminal) {
  const std::string rc_file = tmp_.File("rc");
  const std::string stty_file = tmp_.File("stty");
  const std::string ready_file = tmp_.File("ready");
  const std::string command = "env -u CUDA_VISIBLE_DEVICES ZEUS_NVML_LIBRARY=" + Quote(ZEUS_TEST_EMULATOR_PATH) +
                              " ZEUS_EMULATOR_CONFIG=" + Quote(scenario_) + " " + Quote(ZEUS_TEST_CLI_PATH) +
                              " top --interval 0.2; echo \"exit=$?\" > " + Quote(rc_file) + "; stty -a > " +
                              Quote(stty_file) + "; : > " + Quote(ready_file) + "; read line";
  ProcessResult started = Tmux({"new-session", "-d", "-s", "top", "-x", "120", "-y", "40", command});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  started_ = true;

  // It renders: the header and both GPUs, on the alternate screen, cursor hidden.
  std::string screen;
  ASSERT_TRUE(WaitUntil([&] {
    screen = Screen();
    return screen.find("zeus top  elapsed") != std::string::npos && screen.find("GPU 1") != std::string::npos;
  })) << screen;
  EXPECT_THAT(screen, HasSubstr("(q quits)"));
  EXPECT_THAT(screen, HasSubstr("GPU 0  NVIDIA A40  power "));
  EXPECT_EQ(Format("#{alternate_on} #{cursor_flag}"), "1 0");
  // The process on GPU 0 gets its row.
  ASSERT_TRUE(WaitUntil([&] {
    screen = Screen();
    return std::regex_search(screen, std::regex("\\n +" + Pid() + " " + UserColumn() + " +sleep "));
  })) << screen;

  // It refreshes in place: the elapsed time changes, the header stays on the first row.
  const std::optional<double> first = NumberAfter(screen, "elapsed");
  ASSERT_TRUE(first);
  ASSERT_TRUE(WaitUntil([&] {
    screen = Screen();
    std::optional<double> now = NumberAfter(screen, "elapsed");
    return now && *now > *first;
  })) << screen;
  EXPECT_THAT(screen, StartsWith("zeus top  elapsed"));
  EXPECT_EQ(Split(screen, "zeus top  elapsed").size(), 2u) << "one header, redrawn in place:\n" << screen;

  // It quits on the key (or the signal), with exit status 0, and puts the terminal back.
  if (std::string(GetParam()) == "SIGTERM") {
    const std::optional<pid_t> zeus = ChildNamed(std::stoi(Format("#{pane_pid}")), "zeus");
    ASSERT_TRUE(zeus);
    ASSERT_EQ(::kill(*zeus, SIGTERM), 0);
  } else {
    ProcessResult sent = Tmux({"send-keys", "-t", "top", GetParam()});
    ASSERT_EQ(sent.exit_code, 0) << sent.err;
  }
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(ready_file); })) << Screen();
  EXPECT_EQ(zeus::testing::ReadWholeFile(rc_file), "exit=0\n");
  // The shell waits in the pane (`read`): the screen is zeus's last word,
  // read once tmux has taken in all of it. (A dead pane's flags are tmux's.)
  std::string flags;
  EXPECT_TRUE(WaitUntil([&] { return (flags = Format("#{alternate_on} #{cursor_flag}")) == "0 1"; }))
      << "alternate screen, cursor visible: " << flags;
  EXPECT_THAT(Screen(), Not(HasSubstr("zeus top")));
  const std::string stty = zeus::testing::ReadWholeFile(stty_file);
  EXPECT_THAT(stty, HasSubstr(" icanon"));
  EXPECT_THAT(stty, Not(HasSubstr("-icanon")));
  EXPECT_THAT(stty, HasSubstr(" echo "));
  EXPECT_THAT(stty, HasSubstr("isig"));
  EXPECT_THAT(stty, Not(HasSubstr("-isig")));
  // The keyboard is cooked again: a line reaches `read`, and the shell ends.
  ASSERT_EQ(Tmux({"send-keys", "-t", "top", "done", "Enter"}).exit_code, 0);
  EXPECT_TRUE(WaitUntil([&] { return Format("#{pane_dead}") == "1"; })) << Screen();
}

INSTANTIATE_TEST_SUITE_P(Keys, TopTmuxTest, ::testing::Values("q", "C-c", "SIGTERM"),
                         [](const ::testing::TestParamInfo<const char*>& key) {
                           const std::string k = key.param;
                           return k == "q" ? std::string("Q") : k == "C-c" ? std::string("CtrlC") : k;
                         });

}  // namespace
}  // namespace zeus
