#include "nic/capture/pcapng_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wireshark.h>
#include <wiretap/wtap.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/output_path.h"
#include "nic/capture/wiretap_library.h"

namespace etwire::nic::capture {

namespace {

constexpr uint8_t kNanosecondResolution = 9;  // if_tsresol: 10^-9 s

// pcapng's block types and options (the format's specification, sections 4.3 and 4.6).
constexpr uint32_t kPacketBlockType = 6;
constexpr uint32_t kStatisticsBlockType = 5;
constexpr uint16_t kEpbFlags = 2;
constexpr uint32_t kInbound = 1;  // epb_flags' direction bits
constexpr uint32_t kOutbound = 2;
constexpr uint16_t kIsbStartTime = 2;
constexpr uint16_t kIsbEndTime = 3;
constexpr uint16_t kIsbIfRecv = 4;
constexpr uint16_t kIsbIfDrop = 5;
constexpr uint16_t kIsbUsrDeliv = 8;

// Records go out in writes of this many bytes at least.
constexpr size_t kBufferBytes = size_t{1} << 20;

// The section header and the interface description, written and closed through libwiretap, the
// reference writer of the format.
struct Header {
  GArray* sections = nullptr;
  wtapng_iface_descriptions_t interfaces{};
  wtap_dumper* dumper = nullptr;
  uint64_t bytes = 0;

  // Writes to a descriptor of its own, a duplicate of `fd`, which closing the dumper closes.
  Header(int fd, const std::string& path, const std::string& interface_name, uint32_t snap_length) {
    sections = g_array_new(FALSE, FALSE, sizeof(wtap_block_t));
    wtap_block_t section = wtap_block_create(WTAP_BLOCK_SECTION);
    wtap_block_add_string_option(section, OPT_SHB_USERAPPL, "etwire", 6);
    g_array_append_val(sections, section);

    interfaces.interface_data = g_array_new(FALSE, FALSE, sizeof(wtap_block_t));
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
    g_array_append_val(interfaces.interface_data, interface);

    wtap_dump_params params = WTAP_DUMP_PARAMS_INIT;
    params.encap = WTAP_ENCAP_ETHERNET;
    params.snaplen = static_cast<int>(snap_length);
    params.tsprec = WTAP_TSPREC_NSEC;
    params.shb_hdrs = sections;
    params.idb_inf = &interfaces;
    int err = 0;
    gchar* info = nullptr;
    // libwiretap closes the duplicate when it fails on some paths and not on others, so after a
    // failure it is left open: the run ends on that error anyway.
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
      throw std::runtime_error(
          fmt::format("{}: cannot create the capture file: {}", path, std::strerror(errno)));
    }
    dumper = wtap_dump_fdopen(own, wtap_pcapng_file_type_subtype(), WTAP_UNCOMPRESSED, &params,
                              &err, &info);
    if (dumper == nullptr) {
      throw std::runtime_error(fmt::format("{}: cannot create the capture file: {}", path,
                                           describe_wiretap_error(err, info)));
    }
    bytes = static_cast<uint64_t>(wtap_get_bytes_dumped(dumper));
  }
  // Empty when the header reached the file; otherwise why not.
  std::string close() {
    int err = 0;
    gchar* info = nullptr;
    const bool closed = wtap_dump_close(dumper, nullptr, &err, &info);
    dumper = nullptr;  // freed even when closing failed
    if (closed) {
      g_free(info);
      return {};
    }
    return describe_wiretap_error(err, info);
  }
  ~Header() {
    if (dumper != nullptr) close();
    if (interfaces.interface_data != nullptr) wtap_block_array_free(interfaces.interface_data);
    if (sections != nullptr) wtap_block_array_free(sections);
  }
  Header(const Header&) = delete;
  Header& operator=(const Header&) = delete;
};

}  // namespace

PcapngFile::PcapngFile(const std::string& path, const std::string& interface_name,
                       uint32_t snap_length)
    : path_(path), buffer_bytes_(std::max<size_t>(kBufferBytes, 2 * record_bytes(snap_length))) {
  init_wiretap();
  // Opened once, here: libwiretap writes the header through a duplicate, the frames follow
  // through this one, and no second open by name can be sent elsewhere by a link.
  fd_ = open_output_path(path, S_IRUSR | S_IWUSR);
  if (fd_ < 0) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the capture file: {}", path, std::strerror(errno)));
  }
  try {
    Header header(fd_, path, interface_name, snap_length);
    header_bytes_ = header.bytes;
    // A full disk shows here already; the file then takes no frame, and says why.
    if (const std::string why = header.close(); !why.empty()) {
      error_ = fmt::format("{}: cannot write: {}", path, why);
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
  buffer_ = std::make_unique<uint8_t[]>(buffer_bytes_);
}

PcapngFile::~PcapngFile() {
  if (fd_ < 0) return;
  flush();
  ::close(fd_);
}

void PcapngFile::put(const void* bytes, size_t n) {
  std::memcpy(&buffer_[used_], bytes, n);
  used_ += n;
}

void PcapngFile::put32(uint32_t v) {
  put(&v, 4);
}

void PcapngFile::put_stamp(clock::Nanos t) {
  const auto u = static_cast<uint64_t>(t);
  put32(static_cast<uint32_t>(u >> 32));
  put32(static_cast<uint32_t>(u));
}

bool PcapngFile::flush() {
  size_t at = 0;
  while (at < used_) {
    const ssize_t n = ::write(fd_, &buffer_[at], used_ - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = fmt::format("{}: cannot write: {}", path_, std::strerror(n < 0 ? errno : EIO));
      used_ = 0;
      return false;
    }
    at += static_cast<size_t>(n);
  }
  used_ = 0;
  return true;
}

bool PcapngFile::write(clock::Nanos stamp, const CapturedFrame& frame) {
  if (fd_ < 0 || !error_.empty()) return false;
  const auto bytes = static_cast<uint32_t>(record_bytes(frame.captured));
  if (used_ + bytes > buffer_bytes_ && !flush()) return false;
  // An enhanced packet block: its header, the frame padded to 4 bytes, the direction in its
  // flags, the end of options and the block's length again, in the machine's byte order like
  // the section libwiretap wrote.
  put32(kPacketBlockType);
  put32(bytes);
  put32(0);  // interface id: the file's only interface
  put_stamp(stamp);
  put32(frame.captured);
  put32(frame.length);
  put(frame.bytes, frame.captured);
  static constexpr uint8_t kZeros[4] = {};
  put(kZeros, ((frame.captured + 3) & ~3u) - frame.captured);
  put32(kEpbFlags | (uint32_t{4} << 16));
  put32(frame.direction == Direction::kTransmit ? kOutbound : kInbound);
  put32(0);  // opt_endofopt
  put32(bytes);
  return true;
}

bool PcapngFile::close(const InterfaceStatistics& s) {
  if (fd_ < 0) return true;
  bool ok = error_.empty();
  if (ok) {
    if (used_ + kStatisticsBytes > buffer_bytes_) ok = flush();
    const auto option = [&](uint16_t code) { put32(code | (uint32_t{8} << 16)); };
    const auto count = [&](uint64_t v) { put(&v, 8); };
    if (ok) {
      put32(kStatisticsBlockType);
      put32(static_cast<uint32_t>(kStatisticsBytes));
      put32(0);  // interface id
      put_stamp(s.end);
      option(kIsbStartTime);
      put_stamp(s.start);
      option(kIsbEndTime);
      put_stamp(s.end);
      option(kIsbIfRecv);
      count(s.received);
      option(kIsbIfDrop);
      count(s.dropped);
      option(kIsbUsrDeliv);
      count(s.delivered);
      put32(0);  // opt_endofopt
      put32(static_cast<uint32_t>(kStatisticsBytes));
      ok = flush();
    }
  }
  if (::close(fd_) != 0 && ok) {
    error_ = fmt::format("{}: cannot write: {}", path_, std::strerror(errno));
    ok = false;
  }
  fd_ = -1;
  return ok;
}

}  // namespace etwire::nic::capture
