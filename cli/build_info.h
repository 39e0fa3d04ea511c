// What this binary is: its version, the commit it was built from and how it was built, for
// `etwire --version` and the results a run writes. Defined in a file every build writes
// (cmake/build_info.cmake).
#pragma once

namespace etwire::cli {

extern const char* const kVersion;  // the project's version, "0.1.0"
// The checkout's commit (12 hex digits, "+changes" when files differed from it), or why unknown.
extern const char* const kCommit;
extern const char* const kBuild;  // the build type, "Release", "RelWithDebInfo, ASan+UBSan"

}  // namespace etwire::cli
