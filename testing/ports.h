// Copyright 2026 The Zeus C++ Authors.
//
// A loopback address that refuses connections, for tests of "nothing listens
// there". A fixed port (1, 9, ...) may be in use on some machine; a socket
// this process has bound and never listens on cannot be.

#ifndef ZEUS_TESTING_PORTS_H_
#define ZEUS_TESTING_PORTS_H_

#include <string>

namespace zeus::testing {

// Binds a TCP socket to 127.0.0.1 on a free port and never listens on it, so
// that a connection to that port is refused for as long as this object lives.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;

  // The bound port, or 0 if no socket could be bound (a test should
  // ASSERT_NE(port(), 0)).
  int port() const { return port_; }
  // "127.0.0.1:<port>".
  std::string address() const;

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_PORTS_H_
