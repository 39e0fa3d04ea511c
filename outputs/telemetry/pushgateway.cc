#include "outputs/telemetry/pushgateway.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>

namespace etwire::telemetry {

namespace {

// A label value as the gateway's path takes it: as it is when it is plain, else in its base64url
// form ("<name>@base64/<value>"), which any byte may use (a '/' would end the value).
std::string grouping_label(const std::string& name, const std::string& value) {
  const bool plain = !value.empty() && value.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789._-") == std::string::npos;
  if (plain) return "/" + name + "/" + value;
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string encoded;
  uint32_t bits = 0;
  int held = 0;
  for (const unsigned char c : value) {
    bits = (bits << 8) | c;
    held += 8;
    while (held >= 6) {
      held -= 6;
      encoded += kAlphabet[(bits >> held) & 0x3F];
    }
  }
  if (held > 0) encoded += kAlphabet[(bits << (6 - held)) & 0x3F];
  while (encoded.size() % 4 != 0) encoded += '=';
  return "/" + name + "@base64/" + encoded;
}

// "host", "host:port", "http(s)://host[:port][/prefix]" as a URL with a scheme and a port (the
// gateway's 9091 when none is given), without a trailing '/'.
std::string base_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme =
      scheme_end == std::string::npos ? "http://" : url.substr(0, scheme_end + 3);
  std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t path = rest.find('/');
  std::string authority = rest.substr(0, path);
  const std::string prefix = path == std::string::npos ? "" : rest.substr(path);
  const size_t colon = authority.rfind(':');
  // An IPv6 literal ("[::1]") holds colons of its own: a port follows its ']'.
  if (colon == std::string::npos || authority.find(']', colon) != std::string::npos) {
    authority += ":9091";
  }
  return scheme + authority + prefix;
}

// Gives the transfer up once a stop is requested.
int on_progress(void* stop, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* flag = static_cast<const std::atomic<bool>*>(stop);
  return flag != nullptr && flag->load(std::memory_order_relaxed) ? 1 : 0;
}

size_t discard(char*, size_t size, size_t count, void*) {
  return size * count;
}

}  // namespace

std::string push_to_gateway(const std::string& url, const std::string& run, const std::string& host,
                            const std::shared_ptr<prometheus::Registry>& registry,
                            const std::atomic<bool>* stop, std::chrono::milliseconds timeout) {
  static std::once_flag curl_ready;
  std::call_once(curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  // The grouping key's labels sorted by name, as the gateway lists them.
  const std::string target = base_url(url) + "/metrics/job/etwire" + grouping_label("host", host) +
                             grouping_label("run", run);
  const std::string body = prometheus::TextSerializer().Serialize(registry->Collect());

  const std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return fmt::format("pushgateway {}: could not start a transfer", url);
  curl_slist* headers =
      curl_slist_append(nullptr, "Content-Type: text/plain; version=0.0.4; charset=utf-8");
  const std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_list(headers,
                                                                       curl_slist_free_all);
  char error[CURL_ERROR_SIZE] = {};
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, target.c_str());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // the run's own signal handlers stay in place
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(handle, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(stop));
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
  const CURLcode result = curl_easy_perform(handle);
  if (result == CURLE_ABORTED_BY_CALLBACK) {
    return fmt::format("pushgateway {}: not pushed, the run was asked to stop", url);
  }
  if (result == CURLE_OPERATION_TIMEDOUT) {
    return fmt::format("pushgateway {}: no answer within {} ms; not pushed", url, timeout.count());
  }
  if (result != CURLE_OK) {
    return fmt::format("pushgateway {}: could not be reached ({})", url,
                       error[0] != '\0' ? error : curl_easy_strerror(result));
  }
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return "";
  return fmt::format("pushgateway {}: HTTP status {}", url, status);
}

}  // namespace etwire::telemetry
