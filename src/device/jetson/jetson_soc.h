// Copyright 2026 The Zeus C++ Authors.
//
// NVIDIA Jetson as a Soc: its CPU, GPU and total rails (ina3221_rails.h)
// integrated into energy. Zeus's algorithm (A-Jetson): at each step, every
// rail's power is read now and held over the interval since the previous
// step (E += P_now x dt, mJ = mW x s). Steps are taken by a sampler thread
// every sample period and by every TotalEnergy() call, so a reading is
// integrated up to the instant it is taken: with constant rail power, a
// window's energy is power x the time between its two readings exactly.

#ifndef ZEUS_DEVICE_JETSON_JETSON_SOC_H_
#define ZEUS_DEVICE_JETSON_JETSON_SOC_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "device/jetson/ina3221_rails.h"
#include "zeus/base/clock.h"
#include "zeus/device/discovery.h"
#include "zeus/device/soc.h"

namespace zeus::device::jetson {

class JetsonSoc final : public Soc {
 public:
  // `rails`: at most one per kind. `clock` must outlive the JetsonSoc. A
  // zero `sample_period` starts no thread. Takes the first step (dt = 0).
  JetsonSoc(std::vector<Ina3221Rail> rails, std::vector<Error> problems, std::chrono::nanoseconds sample_period,
            const Clock& clock);
  ~JetsonSoc() override;  // stops and joins the sampler

  const std::string& name() const override { return name_; }
  const std::vector<SocRail>& rails() const override { return public_rails_; }
  const std::vector<Error>& problems() const override { return problems_; }
  SocEnergy TotalEnergy() override;

  // For tests: how many steps the sampler thread has taken, and a wait (on
  // real time, at most `timeout`) until it has taken `steps`.
  std::uint64_t sampler_steps();
  bool WaitForSamplerSteps(std::uint64_t steps, std::chrono::nanoseconds timeout);

 private:
  struct RailState {
    Ina3221Rail rail;
    SocRailEnergy energy;
  };
  // Integrates every rail from the previous step to now. REQUIRES: mu_ held.
  void StepLocked();
  void SamplerLoop(std::stop_token stop);

  const std::string name_ = "NVIDIA Jetson";
  std::vector<SocRail> public_rails_;
  std::vector<Error> problems_;
  const Clock& clock_;
  std::chrono::nanoseconds sample_period_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::vector<RailState> rails_;            // guarded by mu_
  std::chrono::nanoseconds last_step_{0};   // guarded by mu_
  std::uint64_t sampler_steps_ = 0;         // guarded by mu_
  std::jthread sampler_;
};

// Whether `root` looks like a Jetson's file system (see OpenSoc), and if not
// why, in words ("neither <root>/etc/nv_tegra_release nor ... exists").
struct JetsonPresence {
  bool present = false;
  std::string evidence;  // the marker found, or why none counts
};
JetsonPresence DetectJetson(const std::string& root);

// OpenSoc's Jetson part, under `root`.
Result<std::unique_ptr<Soc>> OpenJetson(const std::string& root, std::chrono::nanoseconds sample_period,
                                        const Clock& clock);

}  // namespace zeus::device::jetson

#endif  // ZEUS_DEVICE_JETSON_JETSON_SOC_H_
