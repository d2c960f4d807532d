// Copyright 2026 The Zeus C++ Authors.
//
// PowerStreamingClient: one thread per streamed kind per endpoint, each
// looping over HttpStreamReader::Get() on /gpu/stream_power or
// /cpu/stream_power; one mutex over every timeline and status, and a
// sequence counter with a condition variable for WaitForUpdate().

#include "zeus/zeusd_client/power_streaming.h"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "http/http_stream.h"
#include "zeusd_client/stream_parts.h"

namespace zeus::zeusd {

const char* DeviceKindName(DeviceKind kind) { return kind == DeviceKind::kGpu ? "gpu" : "cpu"; }

namespace {

using std::chrono::nanoseconds;
using internal::TimelineEntry;

struct Device {
  std::deque<TimelineEntry> timeline;
  std::uint64_t dropped = 0;  // samples pushed out of the bounded timeline
  std::optional<PowerSample> latest;
};

struct Endpoint {
  std::string name;
  ZeusdConfig config;
  nanoseconds offset{0};
  nanoseconds latest_time{0};
  std::map<std::pair<DeviceKind, int>, Device> devices;
};

struct Stream {
  std::size_t endpoint = 0;
  StreamStatus status;
  std::unique_ptr<http::HttpStreamReader> reader;
  std::thread thread;
};

// The message of a daemon's {"message": ...} or {"error": ...} body, else the body itself.
std::string DaemonMessage(const std::string& body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  for (const char* key : {"message", "error"}) {
    if (parsed.is_object() && parsed.contains(key) && parsed[key].is_string()) return parsed[key].get<std::string>();
  }
  return body;
}

class StreamingClientImpl final : public PowerStreamingClient {
 public:
  StreamingClientImpl(std::vector<Endpoint> endpoints, PowerStreamingOptions options)
      : options_(std::move(options)), clock_(options_.clock ? *options_.clock : SteadyClock()),
        endpoints_(std::move(endpoints)) {}

  ~StreamingClientImpl() override { Stop(); }

  // Before the threads start: one stream per (endpoint, kind) with ids.
  Status AddStream(std::size_t endpoint, DeviceKind kind, std::vector<int> ids) {
    const ZeusdConfig& config = endpoints_[endpoint].config;
    http::HttpStreamOptions reader_options;
    reader_options.connect_timeout = config.timeout;
    reader_options.head_timeout = config.timeout;
    reader_options.idle_timeout = options_.stall_timeout;
    reader_options.unix_socket_path = config.socket_path;
    if (!config.token.empty()) reader_options.headers.emplace_back("Authorization", "Bearer " + config.token);
    std::string base_url = "http://localhost";
    if (config.socket_path.empty()) {
      base_url = "http://" + config.host_port;
      if (config.host_port.find(':') == std::string::npos) base_url += ":4938";
    }
    auto reader = http::HttpStreamReader::Create(base_url, reader_options);
    if (!reader) return Fail(reader.error().WithContext(fmt::format("zeusd address {}", config.endpoint())));
    auto stream = std::make_unique<Stream>();
    stream->endpoint = endpoint;
    stream->status.endpoint = endpoints_[endpoint].name;
    stream->status.kind = kind;
    stream->status.ids = std::move(ids);
    stream->reader = std::move(*reader);
    for (int id : stream->status.ids) endpoints_[endpoint].devices[{kind, id}];
    streams_.push_back(std::move(stream));
    return OkStatus();
  }

  // Fails (kUnavailable) when a thread cannot be started; the
  // destructor stops and joins those that did start.
  Status StartThreads() {
    try {
      for (auto& stream : streams_) stream->thread = std::thread([this, s = stream.get()] { Run(s); });
    } catch (const std::system_error& error) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("cannot start a power-stream thread: {}; lower the number of daemons or raise the "
                              "process's thread limit",
                              error.what()));
    }
    return OkStatus();
  }

  std::vector<std::string> Endpoints() const override {
    std::vector<std::string> out;
    for (const Endpoint& e : endpoints_) out.push_back(e.name);
    return out;
  }

  Result<nanoseconds> ClockOffset(const std::string& endpoint) const override {
    const Endpoint* e = FindEndpoint(endpoint);
    if (e == nullptr) return Fail(UnknownEndpoint(endpoint));
    return e->offset;
  }

  std::map<std::string, PowerReadings> Latest() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, PowerReadings> out;
    for (const Endpoint& e : endpoints_) {
      PowerReadings& readings = out[e.name];
      readings.time = e.latest_time;
      for (const auto& [key, device] : e.devices) {
        if (!device.latest) continue;
        const PowerSample& s = *device.latest;
        if (key.first == DeviceKind::kGpu) {
          readings.gpu_power_w[key.second] = static_cast<double>(s.power_mw) / 1000.0;
        } else {
          CpuPowerReading& cpu = readings.cpu_power_w[key.second];
          cpu.cpu_w = static_cast<double>(s.power_mw) / 1000.0;
          if (s.dram_mw) cpu.dram_w = static_cast<double>(*s.dram_mw) / 1000.0;
        }
      }
    }
    return out;
  }

  Result<std::vector<PowerSample>> Timeline(const std::string& endpoint, DeviceKind kind, int id, nanoseconds t0,
                                            nanoseconds t1) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto device = FindDevice(endpoint, kind, id);
    if (!device) return Fail(device.error());
    std::vector<PowerSample> out;
    for (const TimelineEntry& entry : (*device)->timeline) {
      if (entry.known && entry.time >= t0 && entry.time <= t1) out.push_back(entry.sample);
    }
    return out;
  }

  Result<EnergyEstimate> EnergyMj(const std::string& endpoint, DeviceKind kind, int id, nanoseconds t0,
                                  nanoseconds t1) const override {
    if (t1 < t0) return Fail(ErrorCode::kInvalidArgument, "energy interval ends before it starts (t1 < t0)");
    // Within +-146 years, so that t1 - t0 cannot overflow (Timeline's
    // defaults are nanoseconds::min() and max()).
    constexpr nanoseconds kFar{std::int64_t{1} << 62};
    t0 = std::clamp(t0, -kFar, kFar);
    t1 = std::clamp(t1, -kFar, kFar);
    std::lock_guard<std::mutex> lock(mutex_);
    auto device = FindDevice(endpoint, kind, id);
    if (!device) return Fail(device.error());
    const Device& d = **device;
    if (d.dropped > 0 && (d.timeline.empty() || t0 < d.timeline.front().time)) {
      return Fail(ErrorCode::kFailedPrecondition,
                  fmt::format("{} {} of zeusd at {}: the interval starts before the oldest sample kept "
                              "(the timeline keeps {} samples; raise timeline_capacity)",
                              kind == DeviceKind::kGpu ? "GPU" : "CPU", id, endpoint,
                              options_.timeline_capacity));
    }
    std::optional<nanoseconds> open_until;
    if (ConnectedLocked(endpoint, kind)) open_until = clock_.Now();
    return internal::IntegrateEnergy(d.timeline, t0, t1, options_.max_sample_hold, open_until);
  }

  std::uint64_t sequence() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return sequence_;
  }

  std::uint64_t WaitForUpdate(std::uint64_t last_seen_seq, nanoseconds timeout) const override {
    // At most a year: wait_for(nanoseconds::max()) overflows and returns at once.
    timeout = std::clamp(timeout, nanoseconds(0), nanoseconds(std::chrono::hours(24 * 365)));
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return sequence_ > last_seen_seq || stopping_; });
    return sequence_;
  }

  std::vector<StreamStatus> Streams() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<StreamStatus> out;
    for (const auto& stream : streams_) out.push_back(stream->status);
    std::stable_sort(out.begin(), out.end(), [this](const StreamStatus& a, const StreamStatus& b) {
      const auto ia = EndpointIndex(a.endpoint);
      const auto ib = EndpointIndex(b.endpoint);
      if (ia != ib) return ia < ib;
      return a.kind == DeviceKind::kGpu && b.kind == DeviceKind::kCpu;
    });
    return out;
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!stopping_) ++sequence_;
      stopping_ = true;
    }
    changed_.notify_all();
    for (auto& stream : streams_) stream->reader->Cancel();
    std::lock_guard<std::mutex> join_lock(join_mutex_);
    for (auto& stream : streams_) {
      if (stream->thread.joinable() && stream->thread.get_id() != std::this_thread::get_id()) stream->thread.join();
    }
  }

  bool stopped() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopping_;
  }

 private:
  std::size_t EndpointIndex(const std::string& name) const {
    for (std::size_t i = 0; i < endpoints_.size(); ++i) {
      if (endpoints_[i].name == name) return i;
    }
    return endpoints_.size();
  }

  const Endpoint* FindEndpoint(const std::string& name) const {
    const std::size_t i = EndpointIndex(name);
    return i < endpoints_.size() ? &endpoints_[i] : nullptr;
  }

  Error UnknownEndpoint(const std::string& name) const {
    return Error(ErrorCode::kNotFound,
                 fmt::format("zeusd endpoint '{}' is not followed (followed: {})", name, fmt::join(Endpoints(), ", ")));
  }

  Result<const Device*> FindDevice(const std::string& endpoint, DeviceKind kind, int id) const {
    const Endpoint* e = FindEndpoint(endpoint);
    if (e == nullptr) return Fail(UnknownEndpoint(endpoint));
    const auto it = e->devices.find({kind, id});
    if (it == e->devices.end()) {
      return Fail(ErrorCode::kNotFound, fmt::format("{} {} of zeusd at {} is not streamed",
                                                    kind == DeviceKind::kGpu ? "GPU" : "CPU", id, endpoint));
    }
    return &it->second;
  }

  bool ConnectedLocked(const std::string& endpoint, DeviceKind kind) const {
    for (const auto& stream : streams_) {
      if (stream->status.endpoint == endpoint && stream->status.kind == kind) return stream->status.connected;
    }
    return false;
  }

  // Stores one event's data (called on the stream's thread).
  void OnEvent(Stream* stream, const std::string& data) {
    const DeviceKind kind = stream->status.kind;
    auto event = internal::ParseStreamEvent(kind, data);
    std::string log;  // written after the lock is released
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (StoreEvent(stream, event)) return;
      // Malformed: counted; logged the first time and at every power of ten.
      const std::uint64_t count = ++stream->status.malformed;
      if (IsPowerOfTen(count)) {
        log = fmt::format("zeus: skipping malformed {} power events from zeusd at {} ({} so far): {}\n",
                          DeviceKindName(kind), stream->status.endpoint, count,
                          event ? fmt::format("device {} was not asked for", event->id) : event.error().message());
      }
    }
    std::fputs(log.c_str(), stderr);
  }

  static bool IsPowerOfTen(std::uint64_t n) {
    while (n >= 10 && n % 10 == 0) n /= 10;
    return n == 1;
  }

  // Stores a well-formed event of a device the stream asked for (true), or
  // does nothing (false). REQUIRES: mutex_ held.
  bool StoreEvent(Stream* stream, const Result<internal::StreamEvent>& event) {
    const DeviceKind kind = stream->status.kind;
    Endpoint& endpoint = endpoints_[stream->endpoint];
    if (!event || std::find(stream->status.ids.begin(), stream->status.ids.end(), event->id) ==
                      stream->status.ids.end()) {
      return false;
    }
    Device& device = endpoint.devices[{kind, event->id}];
    PowerSample sample;
    sample.daemon_timestamp_ms = event->timestamp_ms;
    sample.time = std::chrono::milliseconds(event->timestamp_ms) + endpoint.offset;
    if (!device.timeline.empty()) sample.time = std::max(sample.time, device.timeline.back().time);
    sample.power_mw = event->power_mw;
    sample.dram_mw = event->dram_mw;
    Append(device, TimelineEntry{sample.time, true, sample});
    device.latest = sample;
    endpoint.latest_time = std::max(endpoint.latest_time, sample.time);
    ++stream->status.events;
    ++sequence_;
    changed_.notify_all();
    return true;
  }

  void Append(Device& device, TimelineEntry entry) {
    device.timeline.push_back(std::move(entry));
    while (device.timeline.size() > options_.timeline_capacity) {
      device.timeline.pop_front();
      ++device.dropped;
    }
  }

  // Marks the stream connected or lost (a loss marker on each of its devices).
  void SetConnected(Stream* stream, bool connected) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream->status.connected == connected) return;
    stream->status.connected = connected;
    if (connected) {
      if (stream->status.connects++ > 0) ++stream->status.reconnects;
    } else {
      const nanoseconds now = clock_.Now();
      for (int id : stream->status.ids) {
        Device& device = endpoints_[stream->endpoint].devices[{stream->status.kind, id}];
        const nanoseconds at = device.timeline.empty() ? now : std::max(now, device.timeline.back().time);
        Append(device, TimelineEntry{at, false, PowerSample{}});
      }
    }
    ++sequence_;
    changed_.notify_all();
  }

  void Failed(Stream* stream, Error error, bool give_up) {
    std::string log;  // written after the lock is released
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      // Logged when it differs from the previous failure (a daemon that stays
      // down is reported once, not every reconnect_delay).
      const bool repeated = stream->status.last_error && stream->status.last_error->message() == error.message();
      if (!repeated || give_up) {
        log = fmt::format("zeus: {} power stream from zeusd at {}: {}{}\n", DeviceKindName(stream->status.kind),
                          stream->status.endpoint, error.message(), give_up ? " (giving up on this stream)" : "");
      }
      ++stream->status.failures;
      stream->status.last_error = std::move(error);
      stream->status.given_up = give_up;
      ++sequence_;
      changed_.notify_all();
    }
    std::fputs(log.c_str(), stderr);
  }

  void Run(Stream* stream) {
    pthread_setname_np(pthread_self(), fmt::format("zeusd-{}", DeviceKindName(stream->status.kind)).c_str());
    const std::string target =
        fmt::format("/{}/stream_power?{}_ids={}", DeviceKindName(stream->status.kind),
                    DeviceKindName(stream->status.kind), fmt::join(stream->status.ids, ","));
    for (;;) {
      internal::SseSplitter splitter;
      auto end = stream->reader->Get(
          target, [&](int) { SetConnected(stream, true); },
          [&](std::string_view piece) {
            splitter.Feed(piece, [&](const std::string& data) { OnEvent(stream, data); });
          });
      SetConnected(stream, false);
      if (!end) {
        if (end.error().code() == ErrorCode::kAborted) return;  // Stop()
        Failed(stream, end.error(), false);
      } else if (end->status == 401 || end->status == 403) {
        Failed(stream,
               Error(ErrorCode::kPermissionDenied,
                     fmt::format("zeusd at {} refused GET {} with {}: {}", stream->status.endpoint, target,
                                 end->status, DaemonMessage(end->body)),
                     NativeSpace::kHttp, end->status),
               true);
        return;
      } else if (end->status >= 200 && end->status < 300) {
        Failed(stream, Error(ErrorCode::kIoError, fmt::format("zeusd at {} ended the stream", stream->status.endpoint)),
               false);
      } else {
        Failed(stream,
               Error(ErrorCode::kUnavailable,
                     fmt::format("zeusd at {} answered GET {} with {}: {}", stream->status.endpoint, target,
                                 end->status, DaemonMessage(end->body)),
                     NativeSpace::kHttp, end->status),
               false);
      }
      std::unique_lock<std::mutex> lock(mutex_);
      if (changed_.wait_for(lock, options_.reconnect_delay, [&] { return stopping_; })) return;
    }
  }

  const PowerStreamingOptions options_;
  const Clock& clock_;
  std::vector<Endpoint> endpoints_;  // the vector itself never changes after Start
  std::vector<std::unique_ptr<Stream>> streams_;

  mutable std::mutex mutex_;  // over endpoints_' devices and latest_time, streams' status, below
  mutable std::condition_variable changed_;
  std::uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::mutex join_mutex_;  // one Stop() joins at a time
};

// Zeus's `_resolve_streaming` for one kind: the ids to stream (empty: none).
Result<std::vector<int>> Resolve(const ZeusdClient& client, DeviceKind kind,
                                 const std::optional<std::vector<int>>& asked) {
  const ZeusdCapabilities& caps = client.capabilities();
  const bool gpu = kind == DeviceKind::kGpu;
  std::vector<int> available;
  if (gpu) {
    for (const ZeusdGpuInfo& g : caps.gpus) available.push_back(g.id);
  } else {
    for (const ZeusdCpuInfo& c : caps.cpus) available.push_back(c.id);
  }
  if (!asked) {
    if (available.empty() || !(gpu ? caps.can_read_gpu() : caps.can_read_cpu()) || caps.auth_error) {
      return std::vector<int>{};
    }
    return available;
  }
  if (asked->empty()) return std::vector<int>{};
  std::set<int> seen;
  for (int id : *asked) {
    if (!seen.insert(id).second) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {} is listed twice for zeusd at {}",
                                                           gpu ? "GPU" : "CPU", id, client.config().endpoint()));
    }
    if (std::find(available.begin(), available.end(), id) == available.end()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} {} is not on zeusd at {} (it has {} {}s: [{}])", gpu ? "GPU" : "CPU", id,
                              client.config().endpoint(), available.size(), gpu ? "GPU" : "CPU",
                              fmt::join(available, ", ")));
    }
  }
  Status granted = client.Require(false, gpu, !gpu);
  if (!granted) {
    return Fail(granted.error().WithContext(fmt::format("streaming {} power", gpu ? "GPU" : "CPU")));
  }
  return *asked;
}

}  // namespace

Result<std::unique_ptr<PowerStreamingClient>> PowerStreamingClient::Start(std::vector<PowerStreamingTarget> targets,
                                                                          PowerStreamingOptions options) {
  if (targets.empty()) return Fail(ErrorCode::kInvalidArgument, "no zeusd to stream power from");
  if (options.clock_offset_round_trips < 1 || options.timeline_capacity < 2 || options.reconnect_delay.count() < 0 ||
      options.max_sample_hold.count() <= 0 || options.stall_timeout.count() < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "bad power streaming options: clock_offset_round_trips >= 1, timeline_capacity >= 2, "
                "max_sample_hold > 0, reconnect_delay and stall_timeout >= 0");
  }
  const Clock& clock = options.clock ? *options.clock : SteadyClock();
  std::set<std::string> names;
  for (const PowerStreamingTarget& target : targets) {
    if (!names.insert(target.config.endpoint()).second) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("zeusd at {} is listed twice; give each daemon once", target.config.endpoint()));
    }
  }
  std::vector<Endpoint> endpoints;
  std::vector<std::pair<std::vector<int>, std::vector<int>>> ids;
  for (PowerStreamingTarget& target : targets) {
    auto client = ZeusdClient::Connect(target.config);
    if (!client) return Fail(client.error());
    auto gpus = Resolve(**client, DeviceKind::kGpu, target.gpu_ids);
    if (!gpus) return Fail(gpus.error());
    auto cpus = Resolve(**client, DeviceKind::kCpu, target.cpu_ids);
    if (!cpus) return Fail(cpus.error());
    auto offset = internal::MeasureClockOffset(clock, options.clock_offset_round_trips,
                                               [&]() { return (*client)->TimeMs(); });
    if (!offset) {
      return Fail(offset.error().WithContext(fmt::format("measuring the clock offset of zeusd at {}",
                                                         target.config.endpoint())));
    }
    Endpoint endpoint;
    endpoint.name = target.config.endpoint();
    endpoint.config = target.config;
    endpoint.offset = *offset;
    endpoints.push_back(std::move(endpoint));
    ids.emplace_back(std::move(*gpus), std::move(*cpus));
  }
  auto impl = std::make_unique<StreamingClientImpl>(std::move(endpoints), std::move(options));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].first.empty()) {
      if (Status added = impl->AddStream(i, DeviceKind::kGpu, ids[i].first); !added) return Fail(added.error());
    }
    if (!ids[i].second.empty()) {
      if (Status added = impl->AddStream(i, DeviceKind::kCpu, ids[i].second); !added) return Fail(added.error());
    }
  }
  if (Status started = impl->StartThreads(); !started) return Fail(started.error());
  return std::unique_ptr<PowerStreamingClient>(std::move(impl));
}

}  // namespace zeus::zeusd
