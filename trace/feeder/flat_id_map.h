// A hash map from 64-bit node ids to small values, built for the feeder's per-node hot path: one
// flat array, linear probing, and backward-shift deletion. Deleting by shifting later entries back
// (instead of leaving tombstones) keeps probe sequences short while ids are inserted and erased
// continuously, as they are when a window slides over a trace. It allocates only when it grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etwire::feeder {

// `kEmpty` marks an unused entry, so it must never be stored as a value.
template <typename Value, Value kEmpty>
class FlatIdMap {
 public:
  explicit FlatIdMap(size_t expected_size = 8) { rehash(capacity_for(expected_size)); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The value stored for `id`, or kEmpty.
  Value find(uint64_t id) const {
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      const Entry& entry = entries_[i];
      if (entry.value == kEmpty) return kEmpty;
      if (entry.id == id) return entry.value;
    }
  }

  // A pointer to the value stored for `id`, or null. Valid until the next insert or erase.
  Value* find_mutable(uint64_t id) {
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      Entry& entry = entries_[i];
      if (entry.value == kEmpty) return nullptr;
      if (entry.id == id) return &entry.value;
    }
  }

  // Stores `value` for `id`, replacing any earlier value. Returns a pointer to the stored value,
  // valid until the next insert or erase.
  Value* insert_or_assign(uint64_t id, Value value) {
    if ((size_ + 1) * 2 > entries_.size()) rehash(entries_.size() * 2);
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      Entry& entry = entries_[i];
      if (entry.value == kEmpty) {
        entry.id = id;
        entry.value = value;
        ++size_;
        return &entry.value;
      }
      if (entry.id == id) {
        entry.value = value;
        return &entry.value;
      }
    }
  }

  // Removes `id` and returns its value, or kEmpty if it was absent.
  Value erase(uint64_t id) {
    size_t hole = home(id);
    for (;; hole = (hole + 1) & mask_) {
      const Entry& entry = entries_[hole];
      if (entry.value == kEmpty) return kEmpty;
      if (entry.id == id) break;
    }
    Value removed = entries_[hole].value;
    // Pull back every later entry of the probe run whose home is at or before the hole, so that
    // lookups never meet a gap before reaching their entry.
    for (size_t next = (hole + 1) & mask_;; next = (next + 1) & mask_) {
      Entry& entry = entries_[next];
      if (entry.value == kEmpty) break;
      size_t distance_from_home = (next - home(entry.id)) & mask_;
      size_t distance_from_hole = (next - hole) & mask_;
      if (distance_from_home >= distance_from_hole) {
        entries_[hole] = entry;
        hole = next;
      }
    }
    entries_[hole].value = kEmpty;
    --size_;
    return removed;
  }

  // Calls fn(id, value) for every entry, in storage order (deterministic for a given history).
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Entry& entry : entries_) {
      if (!(entry.value == kEmpty)) fn(entry.id, entry.value);
    }
  }

  void clear() {
    for (Entry& entry : entries_) entry.value = kEmpty;
    size_ = 0;
  }

  size_t memory_bytes() const { return entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    uint64_t id = 0;
    Value value = kEmpty;
  };

  static size_t capacity_for(size_t expected_size) {
    size_t capacity = 16;
    while (capacity < expected_size * 2) capacity *= 2;
    return capacity;
  }

  // Fibonacci hashing: the top bits of id * 2^64/phi spread consecutive ids (the common case in
  // traces) evenly over the table.
  size_t home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void rehash(size_t capacity) {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.assign(capacity, Entry{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (const Entry& entry : old) {
      if (!(entry.value == kEmpty)) insert_or_assign(entry.id, entry.value);
    }
  }

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace etwire::feeder
