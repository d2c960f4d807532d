// Copyright 2026 The Zeus C++ Authors.

#include "testing/proc_tree.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace zeus::testing {
namespace {

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

}  // namespace

void ProcTree::Add(const FakeProcess& p) const {
  const std::filesystem::path dir = std::filesystem::path(root_) / std::to_string(p.pid);
  // Fields 3-21 after "pid (comm)": state ppid pgrp session tty_nr tpgid flags
  // minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
  // num_threads itrealvalue; then starttime (22) and the rest.
  WriteFile(dir / "stat", fmt::format("{} ({}) S {} {} {} 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 4 0 {} 4096000 "
                                      "2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
                                      p.pid, p.comm, p.parent_pid, p.pid, p.pid, p.start_time_ticks));
  WriteFile(dir / "status", fmt::format("Name:\t{}\nState:\tS (sleeping)\nTgid:\t{}\nPid:\t{}\nPPid:\t{}\n"
                                        "Uid:\t{}\t{}\t{}\t{}\nGid:\t0\t0\t0\t0\n",
                                        p.comm, p.pid, p.pid, p.parent_pid, p.uid, p.uid, p.uid, p.uid));
  WriteFile(dir / "comm", p.comm + "\n");
  WriteFile(dir / "cgroup", p.cgroup);
}

void ProcTree::Remove(std::uint32_t pid) const {
  std::filesystem::remove_all(std::filesystem::path(root_) / std::to_string(pid));
}

}  // namespace zeus::testing
