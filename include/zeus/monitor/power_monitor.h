// Copyright 2026 The Zeus C++ Authors.
//
// PowerMonitor: background threads, one per GPU, that sample power (and
// temperature) of a set of GPUs at a fixed rate into bounded ring buffers, and
// integrate energy from those samples. A slow or hung driver call on one GPU
// delays only that GPU's timeline.
//
// Sampling. Each tick reads every monitored GPU's instant power (the NVML
// instant-power field, or the driver's power reading where the field is not
// supported). The driver's average power, memory power and temperature change
// slowly and are read at most every `slow_interval` (default 100 ms), so a
// 1 kHz sampler does not pay for them 1000 times a second.
//
// Energy. Power holds its last sampled value until the next sample
// ("hold-last-value"). The monitor keeps, per GPU, the running integral since
// it started, so CumulativeEnergyJ(now) is O(1) and independent of the
// buffer's capacity; Energy(start, end) integrates the retained timeline,
// clipped exactly at both edges, so a window of constant power P and length T
// gives P * T.
//
// Memory: O(capacity) per GPU, reserved at construction and filled as
// samples arrive; never more, however long the monitor runs.
//
// Thread-safety: all const methods and SampleOnce() may be called from any
// thread concurrently with the sampling thread.

#ifndef ZEUS_MONITOR_POWER_MONITOR_H_
#define ZEUS_MONITOR_POWER_MONITOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::monitor {

struct PowerSample {
  std::chrono::nanoseconds time{0};  // Clock time of the reading
  std::optional<std::uint32_t> instant_mw;  // absent when the read failed
  // Slow domains: present only on ticks where they were read.
  std::optional<std::uint32_t> average_mw;
  std::optional<std::uint32_t> memory_mw;
  std::optional<unsigned int> temperature_c;
};

struct PowerMonitorOptions {
  // Sampling period. 10 Hz by default; 1 ms (1 kHz) and faster are supported.
  std::chrono::nanoseconds interval = std::chrono::milliseconds(100);
  // Period of the slow domains (average power, memory power, temperature).
  std::chrono::nanoseconds slow_interval = std::chrono::milliseconds(100);
  // Samples retained per GPU (about 56 bytes each): the default holds one
  // hour at 10 Hz, or 36 s at 1 kHz. The running energy integral does not
  // depend on it; only the timeline and Energy()/Stats() look-backs do.
  std::size_t capacity = 36'000;
  bool sample_average_power = true;
  bool sample_memory_power = true;
  bool sample_temperature = true;
  // Start the sampling thread. Tests that drive time by hand set false and
  // call SampleOnce().
  bool start_thread = true;
  // Must outlive the monitor. Null: SteadyClock().
  const Clock* clock = nullptr;
  // A read of one GPU that takes longer than this (a slow or hung driver
  // call) leaves that GPU's last value held in its place: see LateReads() and
  // ReadLateAt(). Zero: 4 intervals, and at least 100 ms, so that scheduling
  // delays on a busy machine are not taken for a stalled driver.
  std::chrono::nanoseconds late_read_after{0};
};

// Energy over an interval, with how much to trust it.
struct EnergyEstimate {
  double energy_j = 0.0;
  // True when the interval begins before the first retained sample (the
  // first sample's power was held backwards) or the GPU had no sample yet.
  bool extrapolated = false;
};

// The power readings a sample may hold.
enum class PowerDomain {
  kInstant,  // the instant reading (or the driver's power reading), every tick
  kAverage,  // the driver's average power, on slow ticks
  kMemory,   // memory power, on slow ticks
};

struct PowerStats {
  double average_power_w = 0.0;  // energy / duration
  double peak_power_w = 0.0;     // highest instant sample in the interval
  std::size_t samples = 0;
};

class PowerMonitor {
 public:
  // Monitors gpus.gpu(i) for each i in `gpu_indices` (all GPUs when empty).
  // Takes one sample of every GPU at once, so energy is defined from
  // construction on. `gpus` must outlive the monitor.
  // Errors: kInvalidArgument for a bad index or option.
  static Result<std::unique_ptr<PowerMonitor>> Create(const device::GpuSet& gpus,
                                                      std::vector<std::size_t> gpu_indices = {},
                                                      PowerMonitorOptions options = {});
  ~PowerMonitor();  // stops and joins the sampling threads
  PowerMonitor(const PowerMonitor&) = delete;
  PowerMonitor& operator=(const PowerMonitor&) = delete;

  // Reads every monitored GPU once. A GPU that another thread is reading at
  // this moment (its sampling thread, perhaps in a slow or hung driver call)
  // is skipped, so the caller never waits for another thread's call.
  void SampleOnce();

  const std::vector<std::size_t>& gpu_indices() const;
  std::chrono::nanoseconds interval() const;
  std::size_t capacity() const;
  // Bytes held by the sample buffers (fixed at construction).
  std::size_t buffer_bytes() const;

  // The running integral of `gpu`'s power from the monitor's start to `at`
  // (>= the last sample's time; power is held from the last sample). For
  // measurement windows: energy = Cumulative(end) - Cumulative(begin).
  // Errors: kNotFound for an unmonitored GPU; the device's error if its
  // most recent read failed (e.g. the GPU was lost).
  Result<double> CumulativeEnergyJ(std::size_t gpu, std::chrono::nanoseconds at) const;
  // How many reads of `gpu` have failed since the monitor started. A window
  // whose begin and end see different counts had failed readings inside it.
  std::uint64_t ReadFailures(std::size_t gpu) const;
  // How many reads of `gpu` took longer than late_read_after() and have
  // returned. A window whose begin and end see different counts held a stale
  // value over part of it (a Monitor marks it uncertain).
  std::uint64_t LateReads(std::size_t gpu) const;
  // True when a read of `gpu` began more than late_read_after() before `at`
  // and has not returned (e.g. a driver call hangs): the value held at `at`
  // is stale.
  bool ReadLateAt(std::size_t gpu, std::chrono::nanoseconds at) const;
  // The effective PowerMonitorOptions::late_read_after.
  std::chrono::nanoseconds late_read_after() const;
  // Energy between two instants from the retained timeline.
  Result<EnergyEstimate> Energy(std::size_t gpu, std::chrono::nanoseconds start,
                                std::chrono::nanoseconds end) const;
  // Energy between two instants from the retained samples that read
  // `domain`: the same hold-last-value integral, each reading held until the
  // next sample that read the domain (the first held backwards, the last
  // forwards), clipped at both instants. kInstant is Energy(gpu, start, end).
  // A domain no retained sample read gives 0 J, extrapolated. O(samples
  // retained) for the slow domains. Errors as Energy's.
  Result<EnergyEstimate> Energy(std::size_t gpu, std::chrono::nanoseconds start, std::chrono::nanoseconds end,
                                PowerDomain domain) const;
  // Average and peak power between two instants.
  Result<PowerStats> Stats(std::size_t gpu, std::chrono::nanoseconds start, std::chrono::nanoseconds end) const;
  // The retained samples of `gpu`, oldest first.
  std::vector<PowerSample> Timeline(std::size_t gpu) const;
  // The driver's power update period inferred from when the instant reading
  // changed (median of the intervals between changes); nullopt until the
  // reading has changed a few times. Resolution: the sampling interval.
  std::optional<std::chrono::nanoseconds> UpdatePeriod(std::size_t gpu) const;

  // Writes every monitored GPU's timeline: CSV with columns
  // gpu,time_s,instant_power_w,average_power_w,memory_power_w,temperature_c
  // (time relative to the monitor's start; empty cells where not read), or
  // JSON {"gpus":[{"index":..,"update_period_s":..,"samples":[{...}]}]}.
  Status WriteTimelineCsv(const std::string& path) const;
  Status WriteTimelineJson(const std::string& path) const;

  // The Clock time the monitor started at.
  std::chrono::nanoseconds start_time() const;

 private:
  struct Impl;
  explicit PowerMonitor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_POWER_MONITOR_H_
