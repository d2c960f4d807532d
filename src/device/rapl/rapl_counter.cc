// Copyright 2026 The Zeus C++ Authors.

#include "device/rapl/rapl_counter.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace zeus::device::rapl {

std::uint64_t WrapAccumulator::Update(std::uint64_t raw_uj) {
  if (last_raw_uj_) {
    if (raw_uj >= *last_raw_uj_) {
      total_uj_ += raw_uj - *last_raw_uj_;
    } else {
      // One wrap: the counter ran from last to the range's end, then from 0.
      total_uj_ += (range_uj_ - *last_raw_uj_) + raw_uj;
      ++wraps_;
    }
  }
  last_raw_uj_ = raw_uj;
  return total_uj_;
}

bool IsCounterReset(std::uint64_t previous_uj, std::uint64_t now_uj, std::chrono::nanoseconds elapsed,
                    std::uint64_t range_uj, std::chrono::nanoseconds max_safe_read_interval) {
  // wrap / (elapsed + slack) > range / interval, without dividing.
  const long double wrap_uj = static_cast<long double>(range_uj - previous_uj) + static_cast<long double>(now_uj);
  const long double window_ns = static_cast<long double>((elapsed + kCounterUpdateSlack).count());
  return wrap_uj * static_cast<long double>(max_safe_read_interval.count()) >
         static_cast<long double>(range_uj) * window_ns;
}

Error UnreadableCounterError(const Error& cause, const std::string& path, bool is_root) {
  if (cause.native_space() != NativeSpace::kErrno || !cause.native_code()) return cause;
  const int err = *cause.native_code();
  std::string why;
  switch (err) {
    case EACCES:
    case EPERM:
      why = is_root
                ? "permission denied although running as root: root here is not the host's root (a rootless or "
                  "user-namespace container, or CAP_DAC_OVERRIDE dropped) or a security module (SELinux, "
                  "AppArmor) denies it; read the counters on the host, or make them readable there (sudo chmod "
                  "a+r /sys/class/powercap/intel-rapl:*/energy_uj /sys/class/powercap/intel-rapl:*/intel-rapl:*/"
                  "energy_uj, or a udev or tmpfiles rule)"
                : "permission denied; since Linux 5.10 RAPL energy counters are readable by root only: run as "
                  "root (sudo), or make them readable (sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj "
                  "/sys/class/powercap/intel-rapl:*/intel-rapl:*/energy_uj, or a udev or tmpfiles rule)";
      break;
    case ENOENT:
      why = "no such file: this zone has no energy counter here (a container that masks /sys/class/powercap? "
            "bind-mount it from the host)";
      break;
    default:
      why = fmt::format("cannot be read: {}", std::strerror(err));
      break;
  }
  return Error(cause.code(), fmt::format("{}: {}", path, why), NativeSpace::kErrno, err);
}

Result<std::string> ReadSysfsFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(ErrorFromErrno(errno, path));
  char buffer[128];
  ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  int saved_errno = errno;
  ::close(fd);
  if (n < 0) return Fail(ErrorFromErrno(saved_errno, path));
  std::string text(buffer, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

Result<std::uint64_t> ReadSysfsUint(const std::string& path) {
  auto text = ReadSysfsFile(path);
  if (!text) return Fail(text.error());
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty()) {
    return Fail(ErrorCode::kIoError,
                fmt::format("{}: expected an unsigned integer, found \"{}\"; is this a powercap tree?", path, *text));
  }
  return value;
}

RaplCounter::RaplCounter(std::string energy_path, std::uint64_t range_uj,
                         std::chrono::nanoseconds max_safe_read_interval, const Clock& clock)
    : energy_path_(std::move(energy_path)), range_uj_(range_uj), max_safe_read_interval_(max_safe_read_interval),
      clock_(clock), accumulator_(range_uj) {}

Result<CounterReading> RaplCounter::Fold() {
  auto raw = ReadSysfsUint(energy_path_);
  if (!raw) return Fail(UnreadableCounterError(raw.error(), energy_path_, ::geteuid() == 0));
  if (*raw > range_uj_) {
    return Fail(ErrorCode::kIoError, fmt::format("{}: value {} exceeds max_energy_range_uj {}", energy_path_, *raw,
                                                 range_uj_));
  }
  const std::chrono::nanoseconds now = clock_.Now();
  const std::optional<std::uint64_t> previous = accumulator_.last_raw_uj();
  if (previous && last_read_ && *raw < *previous &&
      IsCounterReset(*previous, *raw, now - *last_read_, range_uj_, max_safe_read_interval_)) {
    const double elapsed_s = std::chrono::duration<double>(now - *last_read_).count();
    const double max_w = static_cast<double>(range_uj_) / 1e6 /
                         std::chrono::duration<double>(max_safe_read_interval_).count();
    const double wrap_j = static_cast<double>(range_uj_ - *previous + *raw) / 1e6;
    Error reset(ErrorCode::kIoError,
                fmt::format("{}: the counter went back from {} to {} µJ in {:.3g} s; a wraparound would mean {:.6g} J "
                            "in that time, more than the assumed maximum of {:g} W allows, so the counter was reset "
                            "(CPU hotplug, suspend and resume, or a driver reload?); the energy across the reset is "
                            "unknown, and later readings count on from the new value",
                            energy_path_, *previous, *raw, elapsed_s, wrap_j, max_w));
    accumulator_.Restart(*raw);
    last_read_ = now;
    ++resets_;
    pending_reset_ = reset;
    return Fail(std::move(reset));
  }
  CounterReading reading;
  reading.wrap_uncertain = last_read_ && (now - *last_read_) > max_safe_read_interval_;
  if (reading.wrap_uncertain) {
    pending_uncertain_ = true;
    ++late_reads_;
  }
  reading.late_reads = late_reads_;
  reading.resets = resets_;
  reading.energy_uj = accumulator_.Update(*raw);
  last_read_ = now;
  return reading;
}

Result<CounterReading> RaplCounter::Read() {
  // Read under the lock: two reads folded in the opposite order to the one
  // they were taken in would look like a wrap.
  std::lock_guard lock(mu_);
  auto reading = Fold();
  // This read covers the time since the previous Read(): report what guard
  // reads saw in it, once.
  const bool uncertain = pending_uncertain_;
  std::optional<Error> reset = std::move(pending_reset_);
  pending_uncertain_ = false;
  pending_reset_.reset();
  if (!reading) return reading;
  if (reset) return Fail(std::move(*reset));
  reading->wrap_uncertain = reading->wrap_uncertain || uncertain;
  return reading;
}

Status RaplCounter::Poll() {
  std::lock_guard lock(mu_);
  auto reading = Fold();
  if (!reading) return Fail(reading.error());
  return OkStatus();
}

}  // namespace zeus::device::rapl
