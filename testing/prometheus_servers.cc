// Copyright 2026 The Zeus C++ Authors.

#include "testing/prometheus_servers.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "testing/wait.h"

namespace zeus::testing {
namespace {

std::size_t Append(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

std::string Escape(const std::string& text) {
  CURL* curl = curl_easy_init();
  char* escaped = curl_easy_escape(curl, text.c_str(), static_cast<int>(text.size()));
  std::string result(escaped);
  curl_free(escaped);
  curl_easy_cleanup(curl);
  return result;
}

void WaitReady(const std::string& url, const char* what) {
  if (!WaitUntil([&] { return HttpGet(url + "/-/ready", 1000).has_value(); })) {
    std::fprintf(stderr, "%s at %s did not become ready within 60 s\n", what, url.c_str());
    std::abort();
  }
}

}  // namespace

std::optional<std::string> HttpGet(const std::string& url, long timeout_ms) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return std::nullopt;
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK || status != 200) return std::nullopt;
  return body;
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("FreeLoopbackPort");
    std::abort();
  }
  close(fd);
  return ntohs(addr.sin_port);
}

bool PrometheusInstalled() {
  return std::filesystem::exists("/usr/bin/prometheus") && std::filesystem::exists("/usr/bin/promtool") &&
         std::filesystem::exists("/usr/bin/prometheus-pushgateway");
}

Pushgateway::Pushgateway() : port_(FreeLoopbackPort()), url_(fmt::format("http://127.0.0.1:{}", port_)) {
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{"/usr/bin/prometheus-pushgateway", fmt::format("--web.listen-address={}", address()),
                               "--persistence.file=" + dir_.File("pushgateway.data"), "--log.level=warn"},
      dir_.File("stdout"), dir_.File("stderr"));
  WaitReady(url_, "prometheus-pushgateway");
}

Pushgateway::~Pushgateway() {
  process_->Signal(SIGTERM);
  process_->Wait();
}

std::string Pushgateway::address() const { return fmt::format("127.0.0.1:{}", port_); }

Prometheus::Prometheus(const std::vector<std::string>& targets, const std::vector<std::string>& pushgateways,
                       const std::string& scrape_interval) {
  std::string config = fmt::format("global:\n  scrape_interval: {0}\n  scrape_timeout: {0}\n"
                                   "  evaluation_interval: {0}\nscrape_configs:\n", scrape_interval);
  const auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += fmt::format("\"{}\", ", item);
    return out;
  };
  if (!targets.empty()) {
    config += fmt::format("  - job_name: zeus\n    static_configs:\n      - targets: [{}]\n", list(targets));
  }
  if (!pushgateways.empty()) {
    config += fmt::format("  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n"
                          "      - targets: [{}]\n", list(pushgateways));
  }
  const std::string config_path = dir_.Write("prometheus.yml", config);
  const int port = FreeLoopbackPort();
  url_ = fmt::format("http://127.0.0.1:{}", port);
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{"/usr/bin/prometheus", "--config.file=" + config_path,
                               "--storage.tsdb.path=" + dir_.File("data"),
                               fmt::format("--web.listen-address=127.0.0.1:{}", port), "--log.level=warn"},
      dir_.File("stdout"), dir_.File("stderr"));
  WaitReady(url_, "prometheus");
}

Prometheus::~Prometheus() {
  process_->Signal(SIGTERM);
  process_->Wait();
}

std::optional<nlohmann::json> Prometheus::Query(const std::string& promql) const {
  const auto body = HttpGet(url_ + "/api/v1/query?query=" + Escape(promql));
  if (!body) {
    std::fprintf(stderr, "query failed: %s\n", promql.c_str());
    return std::nullopt;
  }
  auto json = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || json.value("status", "") != "success") return std::nullopt;
  return json["data"]["result"];
}

std::optional<double> Prometheus::Value(const std::string& promql) const {
  const auto result = Query(promql);
  if (!result || !result->is_array() || result->empty()) return std::nullopt;
  const auto& value = (*result)[0]["value"];
  return std::stod(value[1].get<std::string>());
}

}  // namespace zeus::testing
