#include "nic/capture/wiretap_library.h"

#include <fmt/format.h>
#include <wireshark.h>
#include <wiretap/wtap.h>
#include <wsutil/wslog.h>

#include <mutex>

namespace etwire::nic::capture {

// The tables are never freed: capture files may be opened until the process ends.
void init_wiretap() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Its log, never initialised by a program that is not Wireshark's, would print every record
    // written at debug level; the level must be set before the library's first call.
    ws_log_set_level(LOG_LEVEL_WARNING);
    wtap_init(FALSE);
  });
}

std::string describe_wiretap_error(int err, char* info) {
  std::string text = wtap_strerror(err);
  if (info != nullptr) {
    text += fmt::format(" ({})", info);
    g_free(info);
  }
  return text;
}

}  // namespace etwire::nic::capture
