// Copyright 2026 The Zeus C++ Authors.
//
// Opening the emulator's state file (shared_state.h) without trusting what
// another user may have put in its place.
//
// The file itself is opened without following a symbolic link in its place
// (O_NOFOLLOW), and once open it must be a regular file with exactly one link
// (a second name could be a hard link to a file that is not a state file) owned
// by this process's effective user or by root (root's files are trusted, as
// everywhere: an operator may create the state as root and chmod it for an
// unprivileged reader). A new file is created 0600.
//
// Sharing the state with other users is explicit: with the scenario's
// "state_file_shared" (Scenario::state_file_shared, which needs an explicit
// "state_file") a new file is created 0666 whatever the umask, and a file owned
// by another user is accepted; the other checks still apply.
//
// A default state file (Scenario::state_file_is_default:
// DefaultStateDirectory()/zeus-nvml-emulator-<hash>.state) lives directly in
// that directory only if the directory is private to this user (owned by the
// effective user, no group or other write permission). Otherwise, as in
// /tmp, it lives in the subdirectory zeus-nvml-emulator-<euid>, created 0700,
// which must be a real directory (not a symbolic link) owned by the effective
// user without group or other write permission. The file is opened relative to
// the checked directory's descriptor, so nothing can be swapped in between the
// check and the use.
//
// Failures give one line that names the path and says what to do. `refused`
// marks a refusal for safety (a link, another user's file or directory, not a
// regular file) or for permissions (EACCES, EPERM), which nvmlInit_v2 reports
// as NVML_ERROR_NO_PERMISSION; any other failure is NVML_ERROR_UNKNOWN.
//
// Thread-safety: the functions are reentrant.

#ifndef ZEUS_EMULATOR_STATE_FILE_H_
#define ZEUS_EMULATOR_STATE_FILE_H_

#include <string>

#include "scenario.h"

namespace zeus::emulator {

struct StateFileError {
  std::string message;   // "state file <path>: <problem>; <what to do>"
  bool refused = false;  // a safety or permission refusal (see above)
};

// Opens, creating it if needed, the state file of `scenario` (read-write,
// close-on-exec). On success returns the descriptor and sets *path to the
// file used (the default may be moved into the private subdirectory). On
// failure returns -1 and fills *error.
int OpenStateFile(const Scenario& scenario, std::string* path, StateFileError* error);

// Opens `path` again, never creating it, with the same checks (`shared`:
// Scenario::state_file_shared). Returns -1 and fills *error on failure.
int ReopenStateFile(const std::string& path, bool shared, StateFileError* error);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_STATE_FILE_H_
