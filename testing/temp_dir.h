// Copyright 2026 The Zeus C++ Authors.
//
// Scoped test fixtures: a fresh temporary directory and environment-variable
// guards.

#ifndef ZEUS_TESTING_TEMP_DIR_H_
#define ZEUS_TESTING_TEMP_DIR_H_

#include <optional>
#include <string>

namespace zeus::testing {

// Creates a fresh directory under $TMPDIR (or /tmp); removes it recursively
// on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `contents` to File(name), creating parent directories; returns
  // the full path. Aborts the test binary on failure.
  std::string Write(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

// The whole file at `path`; "" when it is missing or unreadable (a test then
// fails on what it expected to find in it).
std::string ReadWholeFile(const std::string& path);

// Sets (or, with nullopt, unsets) an environment variable for the guard's
// lifetime and restores the previous value afterwards.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_TEMP_DIR_H_
