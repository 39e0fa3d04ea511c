// What the capture writer and reader share of Wireshark's libwiretap: its one-time set-up and the
// text of its errors. Only this folder includes libwiretap's headers (they include glib's).
#pragma once

#include <string>

namespace etwire::nic::capture {

// Fills libwiretap's tables of file types, once per process, with its log quiet below warnings.
void init_wiretap();

// libwiretap's description of error `err` and of the detail `info` it allocated (freed here;
// `info` may be null): "<error> (<detail>)".
std::string describe_wiretap_error(int err, char* info);

}  // namespace etwire::nic::capture
