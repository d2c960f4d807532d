// Copyright 2026 The Zeus C++ Authors.

#include "device/rapl/rapl_counter.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

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

Result<CounterReading> RaplCounter::Read() {
  // Read under the lock: two reads folded in the opposite order to the one
  // they were taken in would look like a wrap.
  std::lock_guard lock(mu_);
  auto raw = ReadSysfsUint(energy_path_);
  if (!raw) {
    if (raw.error().code() == ErrorCode::kPermissionDenied) {
      return Fail(Error(ErrorCode::kPermissionDenied,
                        fmt::format("{}: permission denied; since Linux 5.10 RAPL energy counters are readable by "
                                    "root only: run as root, make them readable (sudo chmod a+r "
                                    "/sys/class/powercap/intel-rapl:*/energy_uj "
                                    "/sys/class/powercap/intel-rapl:*/intel-rapl:*/energy_uj, or a udev or "
                                    "tmpfiles rule), or read them through the zeusd daemon",
                                    energy_path_),
                        NativeSpace::kErrno, raw.error().native_code().value_or(EACCES)));
    }
    return Fail(raw.error());
  }
  if (*raw > range_uj_) {
    return Fail(ErrorCode::kIoError, fmt::format("{}: value {} exceeds max_energy_range_uj {}", energy_path_, *raw,
                                                 range_uj_));
  }
  const std::chrono::nanoseconds now = clock_.Now();
  CounterReading reading;
  reading.wrap_uncertain = last_read_ && (now - *last_read_) > max_safe_read_interval_;
  reading.energy_uj = accumulator_.Update(*raw);
  last_read_ = now;
  return reading;
}

}  // namespace zeus::device::rapl
