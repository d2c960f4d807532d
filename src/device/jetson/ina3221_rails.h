// Copyright 2026 The Zeus C++ Authors.
//
// NVIDIA Jetson's power rails: the channels of its INA3221 power monitors as
// the kernel exposes them in sysfs, found and read. Two drivers, two naming
// schemes (both read by Zeus):
//
//   * hwmon "ina3221" (mainline, L4T 34 and later: Orin), per the kernel's
//     Documentation/hwmon/ina3221.rst: in[123]_label names the channel,
//     in[123]_input is the bus voltage in mV, curr[123]_input the current in
//     mA; a power<i>_input file, when present, is read as mW (as Zeus does).
//     Found under <driver>/<i2c device>/hwmon/hwmon<N>/.
//   * NVIDIA's IIO "ina3221x" (L4T 32 and earlier: Nano, TX2, Xavier):
//     rail_name_<i> names the channel, in_power<i>_input is mW,
//     in_voltage<i>_input mV and in_current<i>_input mA. Found under
//     <driver>/<i2c device>/iio:device<N>/.
//
// Thread-safety: the functions are pure apart from file reads.

#ifndef ZEUS_DEVICE_JETSON_INA3221_RAILS_H_
#define ZEUS_DEVICE_JETSON_INA3221_RAILS_H_

#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/soc.h"

namespace zeus::device::jetson {

// Where a rail's power comes from: one power file, or voltage x current.
struct RailSource {
  std::string power_path;    // mW; empty when voltage and current are read
  std::string voltage_path;  // mV
  std::string current_path;  // mA
};

struct Ina3221Rail {
  SocRail rail;
  RailSource source;
};

// Zeus's kind of a rail named `name`, or nullopt for rails not measured.
std::optional<SocRailKind> RailKindOf(const std::string& name);

// Reads the rail's power now, in mW. Errors (kIoError, kInvalidArgument for
// a value that is not a finite number) name the file.
Result<double> ReadRailPowerMw(const RailSource& source);

struct RailDiscovery {
  // Every channel with a CPU, GPU or total name whose power files exist, in
  // path order (driver, device, folder, channel index).
  std::vector<Ina3221Rail> rails;
  // Channels with such a name whose power files are missing, or name files
  // that could not be read; each names the file.
  std::vector<Error> problems;
  // The driver folders looked in, for messages.
  std::vector<std::string> searched;
};

// Looks under <root>/sys/bus/i2c/drivers/{ina3221x,ina3221}.
RailDiscovery DiscoverIna3221Rails(const std::string& root);

}  // namespace zeus::device::jetson

#endif  // ZEUS_DEVICE_JETSON_INA3221_RAILS_H_
