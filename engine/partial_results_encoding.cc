// The byte encoding of partial results: every record as its list in engine/result_fields.h names
// its members, in that order.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

#include "engine/partial_results.h"
#include "engine/result_fields.h"
#include "trace/node.h"

namespace etwire::engine {

namespace {

// "ETWPARTS" read as a little-endian integer, then the version. A version bump is the only way
// the layout changes: every process of a run is the same build, so no older layout is read.
constexpr uint64_t kMagic = 0x5354524150575445;
// 2: the records' members in the order of their lists, QpStats::rate_bps among them.
constexpr uint32_t kVersion = 2;

class Writer {
 public:
  size_t size() const { return out_.size(); }
  std::string take() { return std::move(out_); }

  void put(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void put(bool value) { put(static_cast<uint8_t>(value ? 1 : 0)); }
  void put(uint32_t value) { little_endian(value, 4); }
  void put(int32_t value) { put(static_cast<uint32_t>(value)); }
  void put(uint64_t value) { little_endian(value, 8); }
  void put(int64_t value) { put(static_cast<uint64_t>(value)); }
  void put(double value) { put(std::bit_cast<uint64_t>(value)); }
  void put(const std::string& text) {
    put(uint64_t{text.size()});
    out_.append(text);
  }
  void put(RunStatus status) { put(static_cast<uint8_t>(status)); }
  void put(collectives::Algorithm algorithm) { put(static_cast<uint8_t>(algorithm)); }
  void put(config::Protocol protocol) { put(static_cast<uint8_t>(protocol)); }
  void put(transport::QpRole role) { put(static_cast<uint8_t>(role)); }
  void put(collectives::CollectiveKind kind) {
    put(kind.has_value());
    if (kind) put(static_cast<uint8_t>(*kind));
  }
  template <typename T>
  void put(const std::vector<T>& items) {
    put(uint64_t{items.size()});
    for (const T& item : items) put(item);
  }
  template <size_t N>
  void put(const std::array<uint64_t, N>& items) {
    put(uint64_t{N});
    for (uint64_t item : items) put(item);
  }
  template <CountersWithTable Counters>
  void put(const Counters& counters) {
    put(uint32_t{CounterTable<Counters>::fields.size()});
    for (const auto& field : CounterTable<Counters>::fields) put(counters.*field.member);
  }
  template <ResultRecord Record>
  void put(const Record& record) {
    for_each_entry(ResultFields<Record>::list, [&](const auto& entry) { put(record, entry); });
  }

 private:
  template <typename Record, typename Member, InSummary Form>
  void put(const Record& record, const ResultField<Record, Member, Form>& field) {
    put(record.*field.member);
  }
  template <typename Record>
  void put(const Record&, const SummaryValue&) {}
  template <typename Record, typename Entries>
  void put(const Record& record, const SummaryObject<Entries>& object) {
    for_each_entry(object.entries, [&](const auto& entry) { put(record, entry); });
  }
  template <typename Record, typename Base>
  void put(const Record& record, const BaseRecord<Base>&) {
    put(static_cast<const Base&>(record));
  }

  void little_endian(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }

  std::string out_;
};

// The fewest bytes an item of type T takes: the encoding of an empty one (no characters, no
// elements, no kind). A count is checked against it, so no count makes the reader allocate more
// than the bytes left could fill.
template <typename T>
size_t min_encoded_size() {
  static const size_t size = [] {
    Writer writer;
    writer.put(T{});
    return writer.size();
  }();
  return size;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw std::runtime_error(fmt::format("partial results: {} (in {}, at byte {} of {})", what,
                                         section_, pos_, bytes_.size()));
  }
  size_t remaining() const { return bytes_.size() - pos_; }

  // Names what is being read, for the messages of fail().
  class Section {
   public:
    Section(Reader& reader, std::string_view name) : reader_(reader), outer_(reader.section_) {
      reader.section_ = name;
    }
    ~Section() { reader_.section_ = outer_; }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

   private:
    Reader& reader_;
    std::string_view outer_;
  };

  void get(uint8_t& value) { value = static_cast<uint8_t>(little_endian(1)); }
  void get(bool& value) {
    uint8_t byte = 0;
    get(byte);
    if (byte > 1) fail(fmt::format("a boolean of {}", byte));
    value = byte == 1;
  }
  void get(uint32_t& value) { value = static_cast<uint32_t>(little_endian(4)); }
  void get(int32_t& value) {
    value = static_cast<int32_t>(static_cast<uint32_t>(little_endian(4)));
  }
  void get(uint64_t& value) { value = little_endian(8); }
  void get(int64_t& value) { value = static_cast<int64_t>(little_endian(8)); }
  void get(double& value) { value = std::bit_cast<double>(little_endian(8)); }
  void get(std::string& text) {
    const uint64_t size = count(1);
    text.assign(bytes_.substr(pos_, size));
    pos_ += size;
  }
  void get(RunStatus& status) { status = enumerator<RunStatus>(RunStatus::kFailed, "a status"); }
  void get(config::Protocol& protocol) {
    protocol = enumerator<config::Protocol>(
        static_cast<config::Protocol>(config::kProtocolCount - 1), "a protocol");
  }
  void get(collectives::Algorithm& algorithm) {
    algorithm = enumerator<collectives::Algorithm>(
        static_cast<collectives::Algorithm>(collectives::kAlgorithmCount - 1), "an algorithm");
  }
  void get(transport::QpRole& role) {
    role = enumerator<transport::QpRole>(transport::QpRole::kResponder, "a QP role");
  }
  void get(collectives::CollectiveKind& kind) {
    bool has = false;
    get(has);
    kind.reset();
    if (!has) return;
    uint8_t value = 0;
    get(value);
    if (value >= trace::kCollectiveTypeCount) fail(fmt::format("a collective type of {}", value));
    kind = static_cast<trace::CollectiveType>(value);
  }
  template <typename T>
  void get(std::vector<T>& items) {
    const uint64_t size = count(min_encoded_size<T>());
    items.clear();
    items.reserve(size);
    for (uint64_t i = 0; i < size; ++i) {
      T item{};
      get(item);
      items.push_back(std::move(item));
    }
  }
  template <size_t N>
  void get(std::array<uint64_t, N>& items) {
    uint64_t size = 0;
    get(size);
    if (size != N) fail(fmt::format("{} entries where there are {}", size, N));
    for (uint64_t& item : items) get(item);
  }
  template <CountersWithTable Counters>
  void get(Counters& counters) {
    constexpr auto& fields = CounterTable<Counters>::fields;
    uint32_t size = 0;
    get(size);
    if (size != fields.size())
      fail(fmt::format("{} counters where there are {}", size, fields.size()));
    for (const auto& field : fields) get(counters.*field.member);
  }
  template <ResultRecord Record>
  void get(Record& record) {
    for_each_entry(ResultFields<Record>::list, [&](const auto& entry) { get(record, entry); });
  }

 private:
  template <typename Record, typename Member, InSummary Form>
  void get(Record& record, const ResultField<Record, Member, Form>& field) {
    Section section(*this, field.name);
    get(record.*field.member);
  }
  template <typename Record>
  void get(Record&, const SummaryValue&) {}
  template <typename Record, typename Entries>
  void get(Record& record, const SummaryObject<Entries>& object) {
    for_each_entry(object.entries, [&](const auto& entry) { get(record, entry); });
  }
  template <typename Record, typename Base>
  void get(Record& record, const BaseRecord<Base>& base) {
    Section section(*this, base.name);
    get(static_cast<Base&>(record));
  }

  // An enumerator stored as its byte, no greater than `last`.
  template <typename Enum>
  Enum enumerator(Enum last, std::string_view what) {
    uint8_t value = 0;
    get(value);
    if (value > static_cast<uint8_t>(last)) fail(fmt::format("{} of {}", what, value));
    return static_cast<Enum>(value);
  }
  uint64_t little_endian(size_t bytes) {
    if (bytes > remaining()) fail("truncated");
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i)
      value |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    pos_ += bytes;
    return value;
  }
  // A count of items of at least `min_bytes` each, no more than the bytes left can hold.
  uint64_t count(size_t min_bytes) {
    uint64_t size = 0;
    get(size);
    if (size > remaining() / std::max<size_t>(min_bytes, 1))
      fail(fmt::format("a count of {} where {} bytes are left", size, remaining()));
    return size;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  std::string_view section_ = "the header";
};

}  // namespace

std::string serialize_partial(const PartialResults& part) {
  Writer writer;
  writer.put(kMagic);
  writer.put(kVersion);
  writer.put(part);
  return writer.take();
}

PartialResults deserialize_partial(std::string_view bytes) {
  Reader reader(bytes);
  uint64_t magic = 0;
  reader.get(magic);
  if (magic != kMagic) reader.fail("not partial results (no magic)");
  uint32_t version = 0;
  reader.get(version);
  if (version != kVersion)
    reader.fail(fmt::format("version {} where {} is read", version, kVersion));
  PartialResults part;
  reader.get(part);
  if (reader.remaining() != 0)
    reader.fail(fmt::format("{} bytes after the end", reader.remaining()));
  if (part.members_here.size() != part.results.collectives.size()) {
    const Reader::Section section(reader, "members_here");
    reader.fail(fmt::format("{} member counts for {} collective instances",
                            part.members_here.size(), part.results.collectives.size()));
  }
  return part;
}

}  // namespace etwire::engine
