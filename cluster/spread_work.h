// The collective calls of a computation spread over the processes of a session (the fabric twin's
// partitions on several processes): byte blocks from each process to each, element-wise sums and
// minimums. Every process of the session calls each of them at the same place of its work; in a
// session of one they return at once. Only the thread that started the session calls them.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cluster/session.h"

namespace etwire::cluster {

// `to_each[p]`: the bytes for process p (this process's own block comes back unchanged). Returns
// the bytes each process sent to this one, by process. Throws std::runtime_error past 2 GiB.
std::vector<std::string> all_to_all(const Session& session,
                                    const std::vector<std::string>& to_each);
// Element-wise over every process's `values`, in place: the same length everywhere.
void all_sum(const Session& session, std::span<uint64_t> values);
void all_sum(const Session& session, std::span<double> values);
void all_min(const Session& session, std::span<int64_t> values);

// Plain records (trivially copyable) as bytes, for the calls above: the processes of one run are
// one program on one kind of machine.
template <typename Record>
void append_records(std::string& out, std::span<const Record> records) {
  static_assert(std::is_trivially_copyable_v<Record>);
  const size_t at = out.size();
  out.resize(at + records.size_bytes());
  if (!records.empty()) std::memcpy(out.data() + at, records.data(), records.size_bytes());
}

// Takes `count` records from the front of `in`. Throws std::runtime_error when `in` is short.
template <typename Record>
void take_records(std::string_view& in, size_t count, std::vector<Record>& out) {
  static_assert(std::is_trivially_copyable_v<Record>);
  if (count > in.size() / sizeof(Record)) {
    throw std::runtime_error("a block from another process ends early");
  }
  const size_t at = out.size();
  out.resize(at + count);
  if (count > 0)
    std::memcpy(static_cast<void*>(out.data() + at), in.data(), count * sizeof(Record));
  in.remove_prefix(count * sizeof(Record));
}

// all_sum over records made of uint64_t counters and nothing else (WireCounters and the like),
// field by field.
template <typename Counters>
void all_sum_counters(const Session& session, std::vector<Counters>& counters) {
  static_assert(std::is_trivially_copyable_v<Counters>);
  static_assert(sizeof(Counters) % sizeof(uint64_t) == 0);
  std::vector<uint64_t> words(counters.size() * sizeof(Counters) / sizeof(uint64_t));
  if (words.empty()) return;
  std::memcpy(words.data(), counters.data(), words.size() * sizeof(uint64_t));
  all_sum(session, words);
  std::memcpy(static_cast<void*>(counters.data()), words.data(), words.size() * sizeof(uint64_t));
}

template <typename Value>
void append_value(std::string& out, Value value) {
  append_records(out, std::span<const Value>(&value, 1));
}

template <typename Value>
Value take_value(std::string_view& in) {
  std::vector<Value> one;
  take_records(in, 1, one);
  return one.front();
}

}  // namespace etwire::cluster
