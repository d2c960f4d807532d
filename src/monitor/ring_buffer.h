// Copyright 2026 The Zeus C++ Authors.
//
// A fixed-capacity ring buffer: pushing onto a full buffer drops the oldest
// element. Storage is allocated once, at construction. Not thread-safe.

#ifndef ZEUS_MONITOR_RING_BUFFER_H_
#define ZEUS_MONITOR_RING_BUFFER_H_

#include <cstddef>
#include <vector>

namespace zeus::monitor {

template <class T>
class RingBuffer {
 public:
  // REQUIRES: capacity > 0.
  explicit RingBuffer(std::size_t capacity) : slots_(capacity) {}

  void Push(const T& value) {
    slots_[(head_ + size_) % slots_.size()] = value;
    if (size_ < slots_.size()) {
      ++size_;
    } else {
      head_ = (head_ + 1) % slots_.size();
    }
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }
  bool empty() const { return size_ == 0; }
  // i = 0 is the oldest. REQUIRES: i < size().
  const T& operator[](std::size_t i) const { return slots_[(head_ + i) % slots_.size()]; }
  const T& back() const { return (*this)[size_ - 1]; }
  std::size_t bytes() const { return slots_.capacity() * sizeof(T); }

 private:
  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_RING_BUFFER_H_
