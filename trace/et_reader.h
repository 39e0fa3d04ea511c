// The binary .et reader: length-delimited protobuf records, record 0 the GlobalMetadata and every
// later record a Node, decoded by the hand-written wire decoder. Plain or gzip, as the ByteSource
// delivers it.
#pragma once

#include <memory>

#include "trace/byte_source.h"
#include "trace/node_source.h"

namespace etwire::trace {

// Reads the GlobalMetadata record at once; throws TraceError when it is missing or malformed.
std::unique_ptr<NodeSource> make_et_reader(std::unique_ptr<ByteSource> bytes);

// Largest record accepted: protobuf itself cannot represent a message of 2 GiB or more.
inline constexpr uint64_t kMaxRecordBytes = (uint64_t{1} << 31) - 1;

}  // namespace etwire::trace
