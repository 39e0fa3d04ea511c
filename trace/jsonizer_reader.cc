#include "trace/jsonizer_reader.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "chakra_et.pb.h"
#include "trace/json_object_stream.h"
#include "trace/proto_convert.h"
#include "trace/trace_error.h"

namespace etwire::trace {

namespace {

class JsonizerReader final : public NodeSource {
 public:
  explicit JsonizerReader(std::unique_ptr<ByteSource> bytes) : objects_(std::move(bytes)) {
    if (!objects_.next(text_)) fail(0, "empty file: no GlobalMetadata record");
    ChakraProtoMsg::GlobalMetadata message;
    parse(message, 0, "GlobalMetadata");
    metadata_from_proto(message, metadata_);
  }

  bool next(TraceNode& out) override {
    if (!objects_.next(text_)) {
      // A dump is recognised by its shape alone, which any JSON object has: with no Node after
      // its GlobalMetadata (a file holding just `{}`) it is not a trace but some other object.
      // Binary traces and feeder JSON say what they are, so an empty graph stays legal there.
      if (objects_.next_index() <= 1) {
        throw TraceError({path(), {}, {}},
                         "no nodes: a JSON object with no Node object after it is not a trace "
                         "(a jsonizer dump is its GlobalMetadata followed by one object per node)");
      }
      return false;
    }
    uint64_t index = objects_.next_index() - 1;
    node_.Clear();
    parse(node_, index, "Node");
    node_from_proto(node_, index, path(), out);
    return true;
  }

  const TraceMetadata& metadata() const override { return metadata_; }
  const std::string& path() const override { return objects_.path(); }

 private:
  void parse(google::protobuf::Message& message, uint64_t index, const char* what) {
    // Strict about field names: a JSON object of some other shape must not pass as an empty node.
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(text_, &message, options);
    if (!status.ok()) {
      fail(index, fmt::format("object {} is not a {} in protobuf JSON: {}", index, what,
                              std::string(status.message())));
    }
  }

  [[noreturn]] void fail(uint64_t index, const std::string& problem) const {
    throw TraceError({path(), index, {}}, problem);
  }

  JsonObjectStream objects_;
  std::string text_;
  ChakraProtoMsg::Node node_;
  TraceMetadata metadata_;
};

}  // namespace

std::unique_ptr<NodeSource> make_jsonizer_reader(std::unique_ptr<ByteSource> bytes) {
  return std::make_unique<JsonizerReader>(std::move(bytes));
}

}  // namespace etwire::trace
