#include "nic/capture/capture_reader.h"

#include <fmt/format.h>
#include <wireshark.h>
#include <wiretap/wtap.h>
#include <wsutil/buffer.h>
#include <ctime>

#include "nic/capture/wiretap_library.h"

namespace etwire::nic::capture {

// libwiretap's open file, its record and the buffer it reads a frame's bytes into, reused for
// every frame.
struct CaptureReader::Library {
  wtap* file = nullptr;
  wtap_rec record{};
  Buffer bytes{};

  Library() {
    wtap_rec_init(&record);
    ws_buffer_init(&bytes, 2048);
  }
  ~Library() {
    wtap_rec_cleanup(&record);
    ws_buffer_free(&bytes);
    if (file != nullptr) wtap_close(file);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
};

namespace {

std::optional<Direction> direction_of(const wtap_rec& record) {
  guint32 flags = 0;
  if (record.block == nullptr || wtap_block_get_uint32_option_value(
                                     record.block, OPT_PKT_FLAGS, &flags) != WTAP_OPTTYPE_SUCCESS) {
    return std::nullopt;
  }
  switch (PACK_FLAGS_DIRECTION(flags)) {
    case PACK_FLAGS_DIRECTION_INBOUND:
      return Direction::kReceive;
    case PACK_FLAGS_DIRECTION_OUTBOUND:
      return Direction::kTransmit;
    default:
      return std::nullopt;
  }
}

// The first interface's last statistics block, when it has one with both counts.
std::optional<CaptureReader::Statistics> last_statistics(wtap* file) {
  wtapng_iface_descriptions_t* described = wtap_file_get_idb_info(file);
  std::optional<CaptureReader::Statistics> out;
  if (described->interface_data != nullptr && described->interface_data->len > 0) {
    auto* interface = static_cast<wtapng_if_descr_mandatory_t*>(
        wtap_block_get_mandatory_data(g_array_index(described->interface_data, wtap_block_t, 0)));
    GArray* blocks = interface->interface_statistics;
    if (blocks != nullptr && blocks->len > 0) {
      wtap_block_t last = g_array_index(blocks, wtap_block_t, blocks->len - 1);
      CaptureReader::Statistics read;
      if (wtap_block_get_uint64_option_value(last, OPT_ISB_IFRECV, &read.received) ==
              WTAP_OPTTYPE_SUCCESS &&
          wtap_block_get_uint64_option_value(last, OPT_ISB_USRDELIV, &read.delivered) ==
              WTAP_OPTTYPE_SUCCESS) {
        out = read;
      }
    }
  }
  g_free(described);
  return out;
}

}  // namespace

CaptureReader::CaptureReader(const std::string& path)
    : path_(path), library_(std::make_unique<Library>()) {
  init_wiretap();
  int err = 0;
  gchar* info = nullptr;
  library_->file = wtap_open_offline(path.c_str(), WTAP_TYPE_AUTO, &err, &info, FALSE);
  if (library_->file == nullptr) {
    throw CaptureReadError(fmt::format("{}: cannot read it as a capture file: {}", path,
                                       describe_wiretap_error(err, info)));
  }
  const int encapsulation = wtap_file_encap(library_->file);
  if (encapsulation != WTAP_ENCAP_ETHERNET && encapsulation != WTAP_ENCAP_PER_PACKET) {
    throw CaptureReadError(fmt::format("{}: holds {} frames, not Ethernet", path,
                                       wtap_encap_description(encapsulation)));
  }
}

CaptureReader::~CaptureReader() = default;

bool CaptureReader::next(CaptureRecord& out) {
  for (;;) {
    int err = 0;
    gchar* info = nullptr;
    gint64 offset = 0;
    wtap_rec_reset(&library_->record);
    if (!wtap_read(library_->file, &library_->record, &library_->bytes, &err, &info, &offset)) {
      if (err == 0) {
        statistics_ = last_statistics(library_->file);
        return false;
      }
      throw CaptureReadError(
          fmt::format("{}: frame {}: {}", path_, frames_ + 1, describe_wiretap_error(err, info)));
    }
    const wtap_rec& record = library_->record;
    if (record.rec_type != REC_TYPE_PACKET) continue;
    const wtap_packet_header& header = record.rec_header.packet_header;
    if (header.pkt_encap != WTAP_ENCAP_ETHERNET) {
      throw CaptureReadError(fmt::format("{}: frame {}: not an Ethernet frame ({})", path_,
                                         frames_ + 1, wtap_encap_description(header.pkt_encap)));
    }
    out.number = ++frames_;
    // Stamps are kept in signed 64-bit nanoseconds: 1677 to 2262. A file's own stamp may lie
    // anywhere (a damaged or foreign file), and would not fit.
    constexpr time_t kLatestSecond = INT64_MAX / clock::kNanosPerSecond - 1;
    if (record.ts.secs < -kLatestSecond || record.ts.secs > kLatestSecond) {
      throw CaptureReadError(
          fmt::format("{}: frame {}: its time stamp ({} s from 1970) is out of "
                      "the range etwire reads (years 1678 to 2261)",
                      path_, frames_, record.ts.secs));
    }
    out.stamp = static_cast<clock::Nanos>(record.ts.secs) * clock::kNanosPerSecond +
                static_cast<clock::Nanos>(record.ts.nsecs);
    out.direction = direction_of(record);
    out.frame = {ws_buffer_start_ptr(&library_->bytes), header.caplen};
    out.wire_length = header.len;
    return true;
  }
}

}  // namespace etwire::nic::capture
