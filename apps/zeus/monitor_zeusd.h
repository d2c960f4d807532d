// Copyright 2026 The Zeus C++ Authors.
//
// `zeus monitor --zeusd URL,...`: the energy of a command on other nodes, from
// their zeusd daemons' power streams (zeus::zeusd::PowerStreamingClient).
//
// Addresses (http::ParseUrl): unix:///path/to/zeusd.sock (a Unix socket; the
// path must be absolute) or http://HOST[:PORT] (TCP; PORT 1-65535, zeusd's
// 4938 when absent; HOST a name, an IPv4 address or [an IPv6 address]).
// Nothing may follow the port but '/'. The token, for daemons that require one: the
// first line of --zeusd-token-file, else ZEUSD_TOKEN; one token for all.
//
// What is measured: every GPU and CPU package the daemon streams to us
// (gpu-read / cpu-read enabled and, with auth, in the token's scopes), over
// the command's run on this machine's clock (each daemon's clock offset is
// measured at start-up). A device's energy integrates its power readings as
// steps; a stretch with no reading (the stream lost, or silent longer than
// zeusd's once-a-second repeat allows) is not counted, and the device is
// reported uncertain with the uncovered seconds.

#ifndef ZEUS_APPS_ZEUS_MONITOR_ZEUSD_H_
#define ZEUS_APPS_ZEUS_MONITOR_ZEUSD_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "zeus/base/error.h"
#include "zeus/zeusd_client/client.h"
#include "zeus/zeusd_client/power_streaming.h"

namespace zeus::cli {

// The check of one --zeusd word: zeusd addresses separated by commas. The
// message names the bad address and the accepted forms (ParseZeusdUrl's).
CLI::Validator ZeusdUrlListFlag();

// One address (see the file comment) as a ZeusdConfig without a token.
// kInvalidArgument otherwise: "zeusd address '<url>' <what is wrong>;
// expected unix:///path/to/zeusd.sock or http://HOST:PORT".
Result<zeusd::ZeusdConfig> ParseZeusdUrl(std::string_view url);

// The token for the daemons: the first line of `token_file` (when not
// empty; kInvalidArgument naming --zeusd-token-file when it cannot be read
// or is empty), else $ZEUSD_TOKEN, else "".
Result<std::string> ZeusdToken(const std::string& token_file);

// The daemons' side of one `zeus monitor` run.
class RemoteMeasurement {
 public:
  // Starts streaming from every daemon in `urls` (already checked words, each
  // possibly a comma list) and waits, up to `ready_timeout`, for a first
  // reading of every streamed device (the ones still silent then are
  // reported uncertain). Errors: PowerStreamingClient::Start's.
  static Result<std::unique_ptr<RemoteMeasurement>> Start(const std::vector<std::string>& urls,
                                                          const std::string& token,
                                                          std::chrono::nanoseconds ready_timeout);

  // The command starts now / ended now (steady clock).
  void Begin();
  // Records the end, waits (up to `settle_timeout`) for a reading at or after
  // it from every connected stream, and stops the streams.
  void End(std::chrono::nanoseconds settle_timeout);

  // The "zeusd" array of the JSON report: per endpoint its URL, clock offset,
  // devices (energy_j, avg_power_w, uncovered_s, gaps, uncertain) and energy.
  nlohmann::json Report() const;
  // The sum of every device's energy (J; CPU packages with their DRAM).
  double total_energy_j() const;
  // The measured interval, Begin() to End() (s).
  double time_s() const { return std::chrono::duration<double>(end_ - begin_).count(); }
  // Lines for the human report, in monitor's column layout.
  std::string Text() const;
  // Things to say on stderr (a device never read, a stream error).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Endpoint {
    std::string url;
    std::string endpoint;
  };
  RemoteMeasurement(std::unique_ptr<zeusd::PowerStreamingClient> client, std::vector<Endpoint> endpoints)
      : client_(std::move(client)), endpoints_(std::move(endpoints)) {}
  void Compute();

  std::unique_ptr<zeusd::PowerStreamingClient> client_;
  std::vector<Endpoint> endpoints_;
  std::chrono::nanoseconds begin_{0};
  std::chrono::nanoseconds end_{0};
  nlohmann::json report_ = nlohmann::json::array();
  double total_energy_j_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_ZEUSD_H_
