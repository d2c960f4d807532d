// Copyright 2026 The Zeus C++ Authors.
//
// The real Prometheus (/usr/bin/prometheus) and Pushgateway
// (/usr/bin/prometheus-pushgateway) for integration tests: each on a free
// loopback port with its storage in a temporary directory, ready (its
// /-/ready answers 200) when the constructor returns, killed and reaped by
// the destructor. Plus a small HTTP GET for tests (libcurl).

#ifndef ZEUS_TESTING_PROMETHEUS_SERVERS_H_
#define ZEUS_TESTING_PROMETHEUS_SERVERS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace zeus::testing {

// The body of a GET of `url` when it answers 200 within `timeout_ms`, else nullopt.
std::optional<std::string> HttpGet(const std::string& url, long timeout_ms = 5000);

// A TCP port on 127.0.0.1 that nothing listened on a moment ago.
int FreeLoopbackPort();

// Whether /usr/bin/prometheus, promtool and prometheus-pushgateway exist.
bool PrometheusInstalled();

class Pushgateway {
 public:
  Pushgateway();  // aborts the test binary if it is not ready within 60 s
  ~Pushgateway();
  // "http://127.0.0.1:<port>"
  const std::string& url() const { return url_; }
  // "127.0.0.1:<port>", for a scrape config.
  std::string address() const;

 private:
  TempDir dir_;
  int port_ = 0;
  std::string url_;
  std::unique_ptr<BackgroundProcess> process_;
};

class Prometheus {
 public:
  // Scrapes every target every `scrape_interval` ("200ms"). `targets`:
  // exporters ("127.0.0.1:PORT", job "zeus"); `pushgateways`: job
  // "pushgateway" with honor_labels, as Pushgateway's documentation asks.
  Prometheus(const std::vector<std::string>& targets, const std::vector<std::string>& pushgateways,
             const std::string& scrape_interval = "200ms");
  ~Prometheus();
  const std::string& url() const { return url_; }

  // The `data.result` array of an instant query, or nullopt when the query
  // fails (the error is printed).
  std::optional<nlohmann::json> Query(const std::string& promql) const;
  // The value of the first series of an instant query, nullopt when empty.
  std::optional<double> Value(const std::string& promql) const;

 private:
  TempDir dir_;
  std::string url_;
  std::unique_ptr<BackgroundProcess> process_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_PROMETHEUS_SERVERS_H_
