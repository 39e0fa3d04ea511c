// String holders for TraceNode fields that keep their buffers across reset(): decoding into a
// reused node must not allocate once warmed up, and std::optional<std::string> or clearing a
// std::vector<std::string> would free them.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace etwire::trace {

// An optional string whose storage survives reset().
class OptionalText {
 public:
  OptionalText() = default;
  OptionalText(std::nullopt_t) {}                          // NOLINT: mirrors std::optional
  OptionalText(std::string_view text) { assign(text); }    // NOLINT: implicit, like optional
  OptionalText(const char* text) { assign(text); }         // NOLINT
  OptionalText(const std::string& text) { assign(text); }  // NOLINT
  OptionalText(const std::optional<std::string>& text) {   // NOLINT
    if (text) assign(*text);
  }

  void assign(std::string_view text) {
    text_.assign(text.data(), text.size());
    present_ = true;
  }
  void reset() {
    text_.clear();
    present_ = false;
  }

  bool has_value() const { return present_; }
  explicit operator bool() const { return present_; }
  // Only meaningful when has_value(); an absent value reads as "".
  const std::string& operator*() const { return text_; }
  const std::string* operator->() const { return &text_; }
  std::string value_or(std::string_view fallback) const {
    return present_ ? text_ : std::string(fallback);
  }
  std::optional<std::string_view> view() const {
    return present_ ? std::optional<std::string_view>(text_) : std::nullopt;
  }

  friend bool operator==(const OptionalText& a, const OptionalText& b) {
    return a.present_ == b.present_ && a.text_ == b.text_;
  }
  friend bool operator==(const OptionalText& a, std::string_view b) {
    return a.present_ && a.text_ == b;
  }
  friend bool operator==(const OptionalText& a, const std::optional<std::string>& b) {
    return b ? a == std::string_view(*b) : !a.present_;
  }
  friend bool operator==(const OptionalText& a, const char* b) { return a == std::string_view(b); }
  friend std::ostream& operator<<(std::ostream& out, const OptionalText& t) {
    return t.present_ ? out << '"' << t.text_ << '"' : out << "(absent)";
  }

 private:
  std::string text_;
  bool present_ = false;
};

// A list of strings whose element buffers survive clear().
class TextList {
 public:
  void clear() { count_ = 0; }
  void push_back(std::string_view text) {
    if (count_ == items_.size()) items_.emplace_back();
    items_[count_++].assign(text.data(), text.size());
  }
  template <typename Iterator>
  void assign(Iterator first, Iterator last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const std::string& operator[](size_t i) const { return items_[i]; }
  const std::string* begin() const { return items_.data(); }
  const std::string* end() const { return items_.data() + count_; }

  friend bool operator==(const TextList& a, const TextList& b) {
    if (a.count_ != b.count_) return false;
    for (size_t i = 0; i < a.count_; ++i) {
      if (a.items_[i] != b.items_[i]) return false;
    }
    return true;
  }
  friend std::ostream& operator<<(std::ostream& out, const TextList& list) {
    out << '[';
    for (size_t i = 0; i < list.count_; ++i) out << (i ? ", \"" : "\"") << list.items_[i] << '"';
    return out << ']';
  }

 private:
  std::vector<std::string> items_;
  size_t count_ = 0;
};

}  // namespace etwire::trace
