# Writes OUT, the source of what `etwire --version` prints: the version, the commit of the
# checkout (with "+changes" when files differ from it) and the build. Run at every build, in
# script mode (cli/CMakeLists.txt), since the commit moves without a reconfigure; the file is
# rewritten only when its text changes, so that an unchanged checkout recompiles and relinks
# nothing. Inputs: SOURCE_DIR, OUT, VERSION, BUILD.
set(commit "unknown: not built from a git checkout")
find_program(GIT git)
if(GIT)
  # safe.directory: a checkout owned by another user than the one building is still read.
  execute_process(COMMAND ${GIT} -c safe.directory=${SOURCE_DIR} -C ${SOURCE_DIR}
                          rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE head_status ERROR_QUIET)
  if(head_status EQUAL 0)
    set(commit ${head})
    execute_process(COMMAND ${GIT} -c safe.directory=${SOURCE_DIR} -C ${SOURCE_DIR}
                            diff --quiet HEAD --
                    RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND commit "+changes")
    endif()
  endif()
endif()
set(text "// Written by cmake/build_info.cmake at build time.
#include \"cli/build_info.h\"

namespace etwire::cli {

const char* const kVersion = \"${VERSION}\";
const char* const kCommit = \"${commit}\";
const char* const kBuild = \"${BUILD}\";

}  // namespace etwire::cli
")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
