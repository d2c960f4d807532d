// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_zeusd.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "http/http_url.h"
#include "zeus/base/clock.h"

namespace zeus::cli {
namespace {

using json = nlohmann::json;
using std::chrono::nanoseconds;
using zeusd::DeviceKind;

constexpr std::string_view kAcceptedForms = "unix:///path/to/zeusd.sock or http://HOST:PORT";
constexpr std::uint16_t kZeusdDefaultPort = 4938;

// Calls f(item) for each comma-separated item of `list` (empty items included).
template <class F>
void ForEachItem(std::string_view list, F&& f) {
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = list.find(',', begin);
    f(list.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return;
    begin = end + 1;
  }
}

// Why a daemon streams nothing to us: asked again through /discover (and
// /auth/whoami), per device kind.
Error NothingToStream(const std::string& url, const zeusd::ZeusdConfig& config) {
  auto client = zeusd::ZeusdClient::Connect(config);
  if (!client) return client.error().WithContext(fmt::format("--zeusd {}", url));
  const zeusd::ZeusdCapabilities& caps = (*client)->capabilities();
  if (caps.auth_error) {
    return Error(ErrorCode::kPermissionDenied,
                 fmt::format("--zeusd {}: nothing to measure: {} (the token comes from --zeusd-token-file or "
                             "ZEUSD_TOKEN)",
                             url, caps.auth_error->message()));
  }
  std::vector<std::string> reasons;
  const std::pair<const char*, bool> kinds[] = {{"gpu-read", !caps.gpus.empty()}, {"cpu-read", !caps.cpus.empty()}};
  for (const auto& [group, has_devices] : kinds) {
    if (!caps.GroupEnabled(group)) {
      reasons.push_back(fmt::format("'{}' is not enabled (zeusd serve --enable)", group));
    } else if (!caps.Can(group)) {
      reasons.push_back(fmt::format("the token lacks the '{}' scope", group));
    } else if (!has_devices) {
      reasons.push_back(fmt::format("it has no {}", group[0] == 'g' ? "GPUs" : "CPU packages"));
    }
  }
  std::string joined;
  for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  return Error(ErrorCode::kFailedPrecondition, fmt::format("--zeusd {}: nothing to measure: {}", url, joined));
}

}  // namespace

Result<zeusd::ZeusdConfig> ParseZeusdUrl(std::string_view url) {
  http::UrlRules rules;
  rules.what = "zeusd address";
  rules.expected = kAcceptedForms;
  rules.allow_unix = true;
  rules.allow_prefix = false;
  rules.http_default_port = kZeusdDefaultPort;
  Result<http::HttpUrl> parsed = http::ParseUrl(url, rules);
  if (!parsed) return Fail(parsed.error());
  zeusd::ZeusdConfig config;
  if (parsed->scheme == http::UrlScheme::kUnix) {
    config.socket_path = parsed->socket_path;
  } else {
    config.host_port = parsed->host_port();
  }
  return config;
}

CLI::Validator ZeusdUrlListFlag() {
  auto check = [](std::string& input) -> std::string {
    std::string message;
    ForEachItem(input, [&](std::string_view item) {
      if (!message.empty()) return;
      if (item.empty()) {
        message = fmt::format("must be zeusd addresses ({}) separated by commas (got '{}')", kAcceptedForms, input);
        return;
      }
      if (auto parsed = ParseZeusdUrl(item); !parsed) message = parsed.error().message();
    });
    return message;
  };
  return CLI::Validator(check, "URL[,URL...]", "");
}

Result<std::string> ZeusdToken(const std::string& token_file) {
  if (token_file.empty()) {
    const char* env = std::getenv("ZEUSD_TOKEN");
    return std::string(env == nullptr ? "" : env);
  }
  std::ifstream in(token_file);
  if (!in) {
    const int err = errno != 0 ? errno : EIO;
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--zeusd-token-file {}: cannot read: {}", token_file, std::strerror(err)));
  }
  std::string token;
  std::getline(in, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())) != 0) token.pop_back();
  if (token.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--zeusd-token-file {}: the file is empty; put the token (zeusd token issue) on its "
                            "first line",
                            token_file));
  }
  return token;
}

Result<std::unique_ptr<RemoteMeasurement>> RemoteMeasurement::Start(const std::vector<std::string>& urls,
                                                                    const std::string& token,
                                                                    nanoseconds ready_timeout) {
  std::vector<zeusd::PowerStreamingTarget> targets;
  std::vector<Endpoint> endpoints;
  for (const std::string& word : urls) {
    Status status = OkStatus();
    ForEachItem(word, [&](std::string_view item) {
      if (!status) return;
      auto config = ParseZeusdUrl(item);
      if (!config) {
        status = Fail(config.error());
        return;
      }
      config->token = token;
      endpoints.push_back({std::string(item), config->endpoint()});
      targets.push_back({std::move(*config), std::nullopt, std::nullopt});
    });
    if (!status) return Fail(status.error().WithContext("--zeusd"));
  }
  std::vector<zeusd::ZeusdConfig> configs;
  for (const auto& t : targets) configs.push_back(t.config);
  // zeusd repeats an unchanged reading every second; a reading counts for 5 s
  // at most, so a busy machine's late repeat is not taken for a gap.
  zeusd::PowerStreamingOptions options;
  options.max_sample_hold = std::chrono::seconds(5);
  auto client = zeusd::PowerStreamingClient::Start(std::move(targets), options);
  if (!client) return Fail(client.error().WithContext("--zeusd"));
  // A daemon that streams nothing to us is an error, never a silent loss of its devices (W13b).
  const std::vector<zeusd::StreamStatus> streams = (*client)->Streams();
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const bool any = std::any_of(streams.begin(), streams.end(),
                                 [&](const zeusd::StreamStatus& s) { return s.endpoint == endpoints[i].endpoint; });
    if (!any) return Fail(NothingToStream(endpoints[i].url, configs[i]));
  }
  std::unique_ptr<RemoteMeasurement> m(new RemoteMeasurement(std::move(*client), std::move(endpoints)));

  // Ready: a first reading of every streamed device, or the deadline.
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  std::uint64_t seen = m->client_->sequence();
  while (true) {
    const auto latest = m->client_->Latest();
    bool all = true;
    for (const zeusd::StreamStatus& s : m->client_->Streams()) {
      if (s.given_up) continue;
      const auto it = latest.find(s.endpoint);
      for (int id : s.ids) {
        const bool has = it != latest.end() && (s.kind == DeviceKind::kGpu ? it->second.gpu_power_w.contains(id)
                                                                          : it->second.cpu_power_w.contains(id));
        all = all && has;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (all) {
      // A sample's time is the daemon's millisecond stamp plus the estimated
      // offset, so the newest may lie a little ahead of our clock; the window
      // begins after it, or [begin, first sample) would count as a gap.
      nanoseconds newest{0};
      for (const auto& [endpoint, readings] : latest) newest = std::max(newest, readings.time);
      const nanoseconds lead = newest - SteadyClock().Now();
      if (lead > nanoseconds(0)) std::this_thread::sleep_for(std::min<nanoseconds>(lead, std::chrono::seconds(1)));
      break;
    }
    if (now >= deadline) break;
    seen = m->client_->WaitForUpdate(seen, deadline - now);
  }
  return m;
}

void RemoteMeasurement::Begin() { begin_ = SteadyClock().Now(); }

void RemoteMeasurement::End(nanoseconds settle_timeout) {
  end_ = SteadyClock().Now();
  // A reading at or after the end from every connected stream shows what
  // held until the end (zeusd repeats an unchanged value every second).
  const auto deadline = std::chrono::steady_clock::now() + settle_timeout;
  std::uint64_t seen = client_->sequence();
  while (true) {
    bool all = true;
    for (const zeusd::StreamStatus& s : client_->Streams()) {
      if (!s.connected) continue;
      for (int id : s.ids) {
        auto after = client_->Timeline(s.endpoint, s.kind, id, end_);
        all = all && after && !after->empty();
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (all || now >= deadline) break;
    seen = client_->WaitForUpdate(seen, deadline - now);
  }
  client_->Stop();
  Compute();
}

void RemoteMeasurement::Compute() {
  const double duration_s = ToSeconds(end_ - begin_);
  // Our steady clock against our wall clock, to state each daemon's offset
  // as wall clock against wall clock.
  const nanoseconds steady_minus_unix =
      SteadyClock().Now() -
      std::chrono::duration_cast<nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  const std::vector<zeusd::StreamStatus> statuses = client_->Streams();
  report_ = json::array();
  total_energy_j_ = 0;
  for (const Endpoint& e : endpoints_) {
    json node;
    node["url"] = e.url;
    node["endpoint"] = e.endpoint;
    auto offset = client_->ClockOffset(e.endpoint);
    node["clock_offset_s"] = offset ? json(ToSeconds(*offset - steady_minus_unix)) : json(nullptr);
    node["gpus"] = json::array();
    node["cpus"] = json::array();
    node["stream_errors"] = json::array();
    double node_energy_j = 0;
    for (const zeusd::StreamStatus& s : statuses) {
      if (s.endpoint != e.endpoint) continue;
      const char* kind = zeusd::DeviceKindName(s.kind);
      if (s.last_error) {
        node["stream_errors"].push_back(fmt::format("{} stream: {}", kind, s.last_error->message()));
        notes_.push_back(fmt::format("{}: {} stream: {}", e.url, kind, s.last_error->message()));
      }
      for (int id : s.ids) {
        json d;
        d["id"] = id;
        auto energy = client_->EnergyMj(s.endpoint, s.kind, id, begin_, end_);
        if (!energy) {
          d["energy_j"] = nullptr;
          d["avg_power_w"] = nullptr;
          d["uncertain"] = true;
          d["error"] = energy.error().message();
          notes_.push_back(fmt::format("{}: {} {}: {}", e.url, kind, id, energy.error().message()));
        } else {
          const double energy_j = energy->energy_mj / 1000.0;
          d["energy_j"] = energy_j;
          d["avg_power_w"] = duration_s > 0 ? json(energy_j / duration_s) : json(nullptr);
          if (s.kind == DeviceKind::kCpu) {
            const std::optional<double> dram_j =
                energy->dram_energy_mj ? std::optional<double>(*energy->dram_energy_mj / 1000.0) : std::nullopt;
            d["dram_energy_j"] = dram_j ? json(*dram_j) : json(nullptr);
            d["dram_avg_power_w"] = dram_j && duration_s > 0 ? json(*dram_j / duration_s) : json(nullptr);
          }
          d["uncovered_s"] = ToSeconds(energy->uncovered);
          d["gaps"] = energy->gaps;
          d["uncertain"] = !energy->complete();
          d["error"] = nullptr;
          node_energy_j += energy_j + (energy->dram_energy_mj ? *energy->dram_energy_mj / 1000.0 : 0.0);
          if (!energy->complete()) {
            notes_.push_back(fmt::format("{}: {} {}: {:.3f} s of the run had no power reading ({} gap{}); its "
                                         "energy is a lower bound",
                                         e.url, kind, id, ToSeconds(energy->uncovered), energy->gaps,
                                         energy->gaps == 1 ? "" : "s"));
          }
        }
        node[s.kind == DeviceKind::kGpu ? "gpus" : "cpus"].push_back(d);
      }
    }
    node["energy_j"] = node_energy_j;
    total_energy_j_ += node_energy_j;
    report_.push_back(node);
  }
}

json RemoteMeasurement::Report() const { return report_; }

double RemoteMeasurement::total_energy_j() const { return total_energy_j_; }

std::string RemoteMeasurement::Text() const {
  std::string text;
  auto number = [](const json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.2f}", v.get<double>()); };
  for (const json& node : report_) {
    const json& offset = node["clock_offset_s"];
    text += fmt::format("  zeusd {}{}\n", node["url"].get<std::string>(),
                        offset.is_null() ? "" : fmt::format(" (clock offset {:+.3f} s)", offset.get<double>()));
    for (const char* kind : {"gpus", "cpus"}) {
      for (const json& d : node[kind]) {
        const std::string label = fmt::format("  {} {}", kind[0] == 'g' ? "GPU" : "CPU", d["id"].get<int>());
        std::string how = "stream";
        if (!d["error"].is_null()) {
          how = "error: " + d["error"].get<std::string>();
        } else if (d["uncertain"].get<bool>()) {
          how += fmt::format(" (uncertain: {:.2f} s without readings)", d["uncovered_s"].get<double>());
        }
        text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  {}\n", label, number(d["energy_j"]),
                            number(d["avg_power_w"]), "-", how);
        if (d.contains("dram_energy_j") && !d["dram_energy_j"].is_null()) {
          text += fmt::format("  {:<10} {:>12} {:>12} {:>12}  stream\n", "    dram", number(d["dram_energy_j"]),
                              number(d["dram_avg_power_w"]), "-");
        }
      }
    }
    text += fmt::format("  {:<10} {:>12.2f}\n", "  subtotal", node["energy_j"].get<double>());
  }
  return text;
}

}  // namespace zeus::cli
