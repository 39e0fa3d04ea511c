#include "nic/capture/pcapng_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <wireshark.h>
#include <wiretap/wtap.h>
#include <wsutil/wslog.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "common/output_path.h"

namespace etwire::nic::capture {

namespace {

constexpr uint8_t kNanosecondResolution = 9;  // if_tsresol: 10^-9 s

// libwiretap keeps tables of file types filled once per process; they are never freed, since
// capture files may be opened until the process ends.
void init_wiretap() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Its log, never initialised by a program that is not Wireshark's, would print every record
    // written at debug level; the level must be set before the library's first call.
    ws_log_set_level(LOG_LEVEL_WARNING);
    wtap_init(FALSE);
  });
}

// Creates the capture file for this run, readable and writable by its owner only: frames carry
// the payloads and addresses of the lab's traffic, and emulator processes that an MPI launcher
// starts on another host take that host's login umask, not the user's. A link or an earlier
// file where the capture goes is replaced (common/output_path.h); a device is written through.
int create_capture_file(const std::string& path) {
  const int fd = open_output_path(path, S_IRUSR | S_IWUSR);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the capture file: {}", path, std::strerror(errno)));
  }
  return fd;
}

// libwiretap's description of an error; takes `info`, which it allocated.
std::string describe(int err, gchar* info) {
  std::string text = wtap_strerror(err);
  if (info != nullptr) {
    text += fmt::format(" ({})", info);
    g_free(info);
  }
  return text;
}

wtap_block_t packet_flags(uint32_t direction) {
  wtap_block_t block = wtap_block_create(WTAP_BLOCK_PACKET);
  wtap_block_add_uint32_option(block, OPT_PKT_FLAGS, direction);
  return block;
}

}  // namespace

// What libwiretap holds for one open file; the blocks must outlive the dumper.
struct PcapngFile::Wiretap {
  GArray* sections = nullptr;
  wtapng_iface_descriptions_t interfaces{};
  wtap_block_t inbound = nullptr;
  wtap_block_t outbound = nullptr;
  wtap_dumper* dumper = nullptr;
  wtap_rec record;

  Wiretap() { wtap_rec_init(&record); }
  ~Wiretap() {
    if (dumper != nullptr) {
      int err = 0;
      gchar* info = nullptr;
      wtap_dump_close(dumper, nullptr, &err, &info);
      g_free(info);
    }
    // The record points at one of the flag blocks, which are unreferenced here, not by it.
    record.block = nullptr;
    wtap_rec_cleanup(&record);
    if (inbound != nullptr) wtap_block_unref(inbound);
    if (outbound != nullptr) wtap_block_unref(outbound);
    if (interfaces.interface_data != nullptr) wtap_block_array_free(interfaces.interface_data);
    if (sections != nullptr) wtap_block_array_free(sections);
  }
};

PcapngFile::PcapngFile(const std::string& path, const std::string& interface_name,
                       uint32_t snap_length)
    : path_(path), wiretap_(std::make_unique<Wiretap>()) {
  init_wiretap();
  Wiretap& w = *wiretap_;

  w.sections = g_array_new(FALSE, FALSE, sizeof(wtap_block_t));
  wtap_block_t section = wtap_block_create(WTAP_BLOCK_SECTION);
  wtap_block_add_string_option(section, OPT_SHB_USERAPPL, "etwire", 6);
  g_array_append_val(w.sections, section);

  w.interfaces.interface_data = g_array_new(FALSE, FALSE, sizeof(wtap_block_t));
  wtap_block_t interface = wtap_block_create(WTAP_BLOCK_IF_ID_AND_INFO);
  auto* described =
      static_cast<wtapng_if_descr_mandatory_t*>(wtap_block_get_mandatory_data(interface));
  described->wtap_encap = WTAP_ENCAP_ETHERNET;
  described->time_units_per_second = clock::kNanosPerSecond;
  described->tsprecision = WTAP_TSPREC_NSEC;
  described->snap_len = snap_length;
  wtap_block_add_string_option(interface, OPT_IDB_NAME, interface_name.data(),
                               interface_name.size());
  wtap_block_add_uint8_option(interface, OPT_IDB_TSRESOL, kNanosecondResolution);
  g_array_append_val(w.interfaces.interface_data, interface);

  w.inbound = packet_flags(PACK_FLAGS_DIRECTION_INBOUND);
  w.outbound = packet_flags(PACK_FLAGS_DIRECTION_OUTBOUND);

  wtap_dump_params params = WTAP_DUMP_PARAMS_INIT;
  params.encap = WTAP_ENCAP_ETHERNET;
  params.snaplen = static_cast<int>(snap_length);
  params.tsprec = WTAP_TSPREC_NSEC;
  params.shb_hdrs = w.sections;
  params.idb_inf = &w.interfaces;
  int err = 0;
  gchar* info = nullptr;
  // The dumper owns the descriptor from here. On a failure libwiretap closes it on some paths
  // and not on others, so it is left alone then: the run ends on that error anyway.
  w.dumper = wtap_dump_fdopen(create_capture_file(path), wtap_pcapng_file_type_subtype(),
                              WTAP_UNCOMPRESSED, &params, &err, &info);
  if (w.dumper == nullptr) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the capture file: {}", path, describe(err, info)));
  }
  // The section header and the interface description are written on opening.
  header_bytes_ = static_cast<uint64_t>(wtap_get_bytes_dumped(w.dumper));

  w.record.rec_type = REC_TYPE_PACKET;
  w.record.presence_flags = WTAP_HAS_TS | WTAP_HAS_CAP_LEN | WTAP_HAS_INTERFACE_ID;
  w.record.tsprec = WTAP_TSPREC_NSEC;
  w.record.rec_header.packet_header.pkt_encap = WTAP_ENCAP_ETHERNET;
  w.record.rec_header.packet_header.interface_id = 0;
}

PcapngFile::~PcapngFile() = default;

bool PcapngFile::write(clock::Nanos stamp, const CapturedFrame& frame) {
  Wiretap& w = *wiretap_;
  if (w.dumper == nullptr) return false;
  w.record.ts.secs = static_cast<time_t>(stamp / clock::kNanosPerSecond);
  w.record.ts.nsecs = static_cast<int>(stamp % clock::kNanosPerSecond);
  w.record.rec_header.packet_header.caplen = frame.captured;
  w.record.rec_header.packet_header.len = frame.length;
  w.record.block = frame.direction == Direction::kTransmit ? w.outbound : w.inbound;
  int err = 0;
  gchar* info = nullptr;
  if (!wtap_dump(w.dumper, &w.record, frame.bytes, &err, &info)) {
    error_ = fmt::format("{}: cannot write: {}", path_, describe(err, info));
    return false;
  }
  return true;
}

bool PcapngFile::close() {
  Wiretap& w = *wiretap_;
  if (w.dumper == nullptr) return true;
  int err = 0;
  gchar* info = nullptr;
  const bool closed = wtap_dump_close(w.dumper, nullptr, &err, &info);
  w.dumper = nullptr;  // freed even when closing failed
  if (closed) {
    g_free(info);
  } else {
    error_ = fmt::format("{}: cannot write: {}", path_, describe(err, info));
  }
  return closed;
}

}  // namespace etwire::nic::capture
