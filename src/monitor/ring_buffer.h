// Copyright 2026 The Zeus C++ Authors.
//
// A fixed-capacity ring buffer: pushing onto a full buffer drops the oldest
// element. Storage is reserved once, at construction, and filled as elements
// arrive, so resident memory grows with use up to the capacity and never
// beyond. Not thread-safe.

#ifndef ZEUS_MONITOR_RING_BUFFER_H_
#define ZEUS_MONITOR_RING_BUFFER_H_

#include <cstddef>
#include <vector>

namespace zeus::monitor {

template <class T>
class RingBuffer {
 public:
  // REQUIRES: capacity > 0.
  explicit RingBuffer(std::size_t capacity) : capacity_(capacity) { slots_.reserve(capacity); }

  void Push(const T& value) {
    if (slots_.size() < capacity_) {
      slots_.push_back(value);
    } else {
      slots_[head_] = value;
      head_ = (head_ + 1) % capacity_;
    }
    size_ = slots_.size();
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  // i = 0 is the oldest. REQUIRES: i < size().
  const T& operator[](std::size_t i) const { return slots_[(head_ + i) % slots_.size()]; }
  const T& back() const { return (*this)[size_ - 1]; }
  // Bytes reserved for elements (the bound; resident memory may be less).
  std::size_t bytes() const { return capacity_ * sizeof(T); }

 private:
  std::size_t capacity_;
  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace zeus::monitor

#endif  // ZEUS_MONITOR_RING_BUFFER_H_
