// A first-in first-out queue over a power-of-two ring that doubles when full and never shrinks, so
// a queue that has reached its peak length pushes and pops without allocating.
#pragma once

#include <cstddef>
#include <vector>

namespace etwire {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return items_.size(); }

  void push_back(T value) {
    if (size_ == items_.size()) grow();
    items_[(head_ + size_) & (items_.size() - 1)] = value;
    ++size_;
  }

  // Precondition: not empty.
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }

  // The i-th item from the front. Precondition: i < size().
  T& operator[](size_t i) { return items_[(head_ + i) & (items_.size() - 1)]; }

  // Precondition: not empty.
  T pop_front() {
    T value = items_[head_];
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
    return value;
  }

  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  void grow() {
    std::vector<T> bigger(items_.empty() ? 16 : items_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = items_[(head_ + i) & (items_.size() - 1)];
    items_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> items_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace etwire
