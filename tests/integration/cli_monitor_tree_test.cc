// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor` and the command's whole process tree: forwarded signals,
// --kill-after and a killed zeus reach the command's descendants, not only
// its first process; the terminal and job control still work with the
// command in a process group of its own; a signal before the command line
// is parsed is held; two outputs may not name one file. Each descendant
// writes its own pid to a file (readiness), and is then looked for in /proc.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/cli_monitor_fixture.h"

namespace zeus::monitor_test {
namespace {

using ::testing::HasSubstr;

class CliMonitorTreeTest : public CliMonitorTest {
 protected:
  ~CliMonitorTreeTest() override {
    for (pid_t pid : descendants_) {
      if (!Gone(pid)) ::kill(pid, SIGKILL);
    }
  }

  // A shell line that starts a grandchild of the command: a shell that
  // writes its pid to `pid_file` (atomically) and becomes `sleep 303`.
  // `prefix` goes before the exec (e.g. "trap '' TERM;", inherited by sleep).
  std::string Grandchild(const std::string& pid_file, const std::string& prefix = "") {
    return "sh -c '" + prefix + " echo $$ > \"" + pid_file + ".tmp\"; mv \"" + pid_file + ".tmp\" \"" + pid_file +
           "\"; exec sleep 303'";
  }

  // Waits for the pid file, remembers the pid (killed at the end if it
  // survives) and returns it; -1 (after a fatal failure) if it never came.
  pid_t ReadPid(const std::string& pid_file) {
    WaitForFile(pid_file);
    if (HasFatalFailure()) return -1;
    const pid_t pid = std::stoi(Slurp(pid_file));
    descendants_.push_back(pid);
    return pid;
  }

  // Whether `pid` is gone within a generous deadline.
  static bool GoneSoon(pid_t pid) {
    return WaitUntil([&] { return Gone(pid); }, std::chrono::seconds(30));
  }

  std::vector<pid_t> descendants_;
};

// The case: `sh -c 'sleep 303; echo done'` and SIGTERM to zeus. The
// shell dies of the forwarded SIGTERM; its `sleep` must not survive it.
TEST_F(CliMonitorTreeTest, ForwardedSigtermReachesTheCommandsGrandchildren) {
  const std::string gpid_file = tmp_.File("grandchild");
  const std::string out = tmp_.File("report.json");
  Zeus zeus;
  Start(&zeus, {"--json", "--kill-after", "60", "-o", out, "--", "sh", "-c", Grandchild(gpid_file) + "; echo done"});
  const pid_t grandchild = ReadPid(gpid_file);
  ASSERT_GT(grandchild, 0);
  ASSERT_FALSE(Gone(grandchild));
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 128 + SIGTERM) << Slurp(tmp_.File("zeus.err"));
  EXPECT_TRUE(GoneSoon(grandchild)) << "the command's grandchild survived the forwarded SIGTERM";
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["signal"], "SIGTERM");
  EXPECT_EQ(report["signal_forwarded"], true);
  EXPECT_EQ(report["killed_after_grace"], false);
}

// Everything ignores SIGTERM: --kill-after's SIGKILL must reach the grandchild too.
TEST_F(CliMonitorTreeTest, KillAfterReachesTheCommandsGrandchildren) {
  const std::string gpid_file = tmp_.File("grandchild");
  const std::string out = tmp_.File("report.json");
  Zeus zeus;
  Start(&zeus, {"--json", "--kill-after", "0.5", "-o", out, "--", "sh", "-c",
                "trap '' TERM; " + Grandchild(gpid_file) + "; echo done"});
  const pid_t grandchild = ReadPid(gpid_file);
  ASSERT_GT(grandchild, 0);
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 128 + SIGKILL) << Slurp(tmp_.File("zeus.err"));
  EXPECT_TRUE(GoneSoon(grandchild)) << "the command's grandchild survived --kill-after's SIGKILL";
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["killed_after_grace"], true);
}

// The command's first process exits at once on SIGTERM; a grandchild that
// ignores it has the same grace period, then gets SIGKILL, before zeus exits.
TEST_F(CliMonitorTreeTest, GraceCoversTheGroupAfterTheFirstProcessExits) {
  const std::string gpid_file = tmp_.File("grandchild");
  const std::string out = tmp_.File("report.json");
  Zeus zeus;
  Start(&zeus, {"--json", "--kill-after", "0.5", "-o", out, "--", "sh", "-c",
                Grandchild(gpid_file, "trap \"\" TERM;") + " & wait"});
  const pid_t grandchild = ReadPid(gpid_file);
  ASSERT_GT(grandchild, 0);
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 128 + SIGTERM) << Slurp(tmp_.File("zeus.err"));
  // Gone when zeus has exited, not only some time later.
  EXPECT_TRUE(Gone(grandchild)) << "zeus exited while the command's grandchild still ran";
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["exit_code"], 128 + SIGTERM);
  EXPECT_EQ(report["killed_after_grace"], true);
}

// zeus SIGKILLed: PR_SET_PDEATHSIG kills the command's first process, the
// watchdog the rest of its process group.
TEST_F(CliMonitorTreeTest, CommandsGrandchildrenDoNotOutliveAKilledZeus) {
  const std::string pid_file = tmp_.File("child");
  const std::string gpid_file = tmp_.File("grandchild");
  Zeus zeus;
  Start(&zeus, {"--", "sh", "-c",
                "trap '' TERM INT HUP; echo $$ > '" + pid_file + ".tmp'; mv '" + pid_file + ".tmp' '" + pid_file +
                    "'; " + Grandchild(gpid_file, "trap \"\" TERM INT HUP;") + "; echo done"});
  const pid_t child = ReadPid(pid_file);
  ASSERT_GT(child, 0);
  const pid_t grandchild = ReadPid(gpid_file);
  ASSERT_GT(grandchild, 0);
  ::kill(zeus.pid, SIGKILL);
  EXPECT_EQ(zeus.Wait(), 128 + SIGKILL);
  EXPECT_TRUE(GoneSoon(child)) << "the command outlived zeus";
  EXPECT_TRUE(GoneSoon(grandchild)) << "the command's grandchild outlived zeus";
}

// A pseudo-terminal whose slave zeus gets as its controlling terminal and stdin.
struct Pty {
  Pty() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0) slave = ::ptsname(master);
  }
  ~Pty() {
    if (master >= 0) ::close(master);
  }
  int master = -1;
  std::string slave;
};

// In its own process group the command still reads the terminal: zeus makes
// that group the terminal's foreground (else the read would stop it, SIGTTIN).
TEST_F(CliMonitorTreeTest, CommandReadsTheTerminal) {
  Pty pty;
  ASSERT_FALSE(pty.slave.empty());
  const std::string ready = tmp_.File("ready");
  const std::string got = tmp_.File("got");
  const std::string out = tmp_.File("report.json");
  Zeus zeus;
  Start(&zeus,
        {"--json", "-o", out, "--", "sh", "-c",
         "touch '" + ready + "'; read line; echo \"$line\" > '" + got + ".tmp'; mv '" + got + ".tmp' '" + got + "'"},
        pty.slave);
  WaitForFile(ready);
  ASSERT_EQ(::write(pty.master, "hello\n", 6), 6);
  WaitForFile(got);
  if (HasFatalFailure()) return;  // zeus and the stopped command are killed by ~Zeus and the watchdog
  EXPECT_EQ(Slurp(got), "hello\n");
  EXPECT_EQ(zeus.Wait(), 0) << Slurp(tmp_.File("zeus.err"));
  EXPECT_EQ(json::parse(Slurp(out))["exit_code"], 0);
}

// Ctrl-Z stops the command's group (the terminal's foreground). zeus runs as a
// session leader here, so there is no job control to stop zeus's own group:
// the command must be continued at once, never left stopped.
TEST_F(CliMonitorTreeTest, CtrlZWithoutJobControlDoesNotLeaveTheCommandStopped) {
  Pty pty;
  ASSERT_FALSE(pty.slave.empty());
  const std::string ready = tmp_.File("ready");
  const std::string tick = tmp_.File("tick");
  const std::string out = tmp_.File("report.json");
  // Writes a growing count to `tick` as fast as it can, with builtins only: a
  // Ctrl-Z while dash waits in vfork for a child that has not exec'd yet stops
  // the child alone, and the shell, stuck in vfork, never reports a stop (to
  // zeus or to a shell alike). Exits 0 on SIGTERM.
  const std::string script = "trap 'exit 0' TERM; n=0; touch '" + ready + "'\n"
                             "while :; do n=$((n+1)); echo $n > '" + tick + "'; done\n";
  Zeus zeus;
  Start(&zeus, {"--json", "-o", out, "--", "sh", "-c", script}, pty.slave);
  WaitForFile(ready);
  WaitForFile(tick);
  if (HasFatalFailure()) return;
  const char ctrl_z = 0x1a;
  ASSERT_EQ(::write(pty.master, &ctrl_z, 1), 1);
  // Still counting after the Ctrl-Z (read twice: a stop and continue may come between).
  auto count = [&] {
    const std::string text = Slurp(tick);  // empty while the shell rewrites it
    return text.empty() || text.back() != '\n' ? 0 : std::stoi(text);
  };
  const int after_first = count();
  // (Left stopped, the command would ignore the SIGTERM below: zeus's grace
  // period, 10 s, then kills it.)
  EXPECT_TRUE(WaitUntil([&] { return count() > after_first + 100; }, std::chrono::seconds(30)))
      << "the command was left stopped";
  ::kill(zeus.pid, SIGTERM);
  EXPECT_EQ(zeus.Wait(), 0) << Slurp(tmp_.File("zeus.err"));
}

// A signal that arrives before the command line is parsed (the test driver
// held at the start of main: monitor_child.cc's constructor has run, as in
// zeus) is held too: the command is not run, and the report says so.
TEST_F(CliMonitorTreeTest, SignalBeforeMainIsHeldAndReported) {
  const std::string out = tmp_.File("report.json");
  const std::string hold = tmp_.File("hold");
  const std::string ran = tmp_.File("ran");
  HoldDriverAt(hold, /*early=*/true);
  Zeus zeus;
  Start(&zeus, {"--json", "-o", out, "--", "sh", "-c", "touch '" + ran + "'"});
  WaitForFile(hold);
  if (HasFatalFailure()) return;
  // The signals are blocked at this point already (SigBlk of /proc/PID/status).
  const std::string status = Slurp("/proc/" + std::to_string(zeus.pid) + "/status");
  const std::size_t at = status.find("SigBlk:");
  ASSERT_NE(at, std::string::npos);
  const unsigned long long blocked = std::stoull(status.substr(at + 7), nullptr, 16);
  EXPECT_NE(blocked & (1ULL << (SIGTERM - 1)), 0u) << status.substr(at, 30);
  ::kill(zeus.pid, SIGTERM);
  ::unlink(hold.c_str());
  EXPECT_EQ(zeus.Wait(), 128 + SIGTERM) << Slurp(tmp_.File("zeus.err"));
  EXPECT_FALSE(Exists(ran)) << "the command ran after the signal";
  json report = json::parse(Slurp(out));
  EXPECT_EQ(report["started"], false);
  EXPECT_EQ(report["signal"], "SIGTERM");
}

std::string Cwd() {
  char buffer[4096];
  return ::getcwd(buffer, sizeof buffer) != nullptr ? std::string(buffer) : std::string(".");
}

TEST_F(CliMonitorTreeTest, OutputsNamingTheSameFileAreRefused) {
  const std::string ran = tmp_.File("ran");
  const std::string file = tmp_.File("out.json");
  ASSERT_EQ(::mkdir(tmp_.File("sub").c_str(), 0755), 0);
  tmp_.Write("out.json", "");  // an existing file, reached through a symlink too
  ASSERT_EQ(::symlink(file.c_str(), tmp_.File("link.json").c_str()), 0);
  struct Case {
    std::vector<std::string> flags;
    std::string first, second;
  };
  const Case cases[] = {
      {{"-o", file, "--timeline", file}, "-o/--output", "--timeline"},
      {{"--timeline", file, "--plot", tmp_.File("sub/../out.json")}, "--timeline", "--plot"},
      {{"-o", tmp_.File("link.json"), "--plot", file}, "-o/--output", "--plot"},
      // Relative and absolute spellings (refused before anything is written).
      {{"-o", "zeus-monitor-same-file.json", "--timeline", Cwd() + "/zeus-monitor-same-file.json"}, "-o/--output",
       "--timeline"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.flags;
    args.insert(args.end(), {"--", "sh", "-c", "touch '" + ran + "'"});
    ProcessResult r = Monitor(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("error: " + c.first + " "));
    EXPECT_THAT(r.err, HasSubstr(" and " + c.second + " "));
    EXPECT_THAT(r.err, HasSubstr("name the same file"));
    EXPECT_FALSE(Exists(ran)) << "the command ran";
  }
  // Distinct files are fine, and so is a device both discard into.
  ProcessResult ok = Monitor({"-o", file, "--timeline", tmp_.File("t.csv"), "--", "true"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ProcessResult null = Monitor({"-o", "/dev/null", "--timeline", "/dev/null", "--", "true"});
  EXPECT_EQ(null.exit_code, 0) << null.err;
}

}  // namespace
}  // namespace zeus::monitor_test
