# Writes OUT, etwire's man page (section 1), from the help the built binary ETWIRE prints: the
# top-level help, then every command's and every nested command's, so the page says what the
# binary accepts and cannot drift from it. Run in script mode after etwire is linked
# (cli/CMakeLists.txt). Inputs: ETWIRE, OUT, VERSION.

# Help text as roff: a backslash is \e, and a line that begins with a dot or a quote would be a
# request, so it begins with \& instead.
function(roff_text text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The help of `etwire WORDS --help`, and the commands its "Subcommands:" part lists.
function(help_of words help_out commands_out)
  execute_process(COMMAND ${ETWIRE} ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE status
                  ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "etwire ${words} --help failed (${status}): ${error}")
  endif()
  # CLI11 prints the binary's path as it was run: the page names it etwire.
  string(REPLACE "${ETWIRE}" "etwire" help "${help}")
  set(commands "")
  string(FIND "${help}" "Subcommands:" at)
  if(at GREATER -1)
    string(SUBSTRING "${help}" ${at} -1 listed)
    string(REGEX MATCHALL "\n  [a-z][a-z-]*" names "${listed}")
    foreach(name IN LISTS names)
      string(STRIP "${name}" name)
      list(APPEND commands ${name})
    endforeach()
  endif()
  set(${help_out} "${help}" PARENT_SCOPE)
  set(${commands_out} "${commands}" PARENT_SCOPE)
endfunction()

help_of("" top commands)
roff_text("${top}" top)
set(page ".TH ETWIRE 1 \"\" \"etwire ${VERSION}\" \"etwire manual\"
.SH NAME
etwire \\- replay Chakra execution traces as RoCEv2 traffic against a device under test
.SH SYNOPSIS
.B etwire
[\\fB\\-v\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]
.SH DESCRIPTION
.nf
${top}
.fi
.SH COMMANDS
")
foreach(command IN LISTS commands)
  help_of("${command}" help nested)
  roff_text("${help}" help)
  string(APPEND page ".SS ${command}\n.nf\n${help}\n.fi\n")
  foreach(sub IN LISTS nested)
    help_of("${command};${sub}" help unused)
    roff_text("${help}" help)
    string(APPEND page ".SS ${command} ${sub}\n.nf\n${help}\n.fi\n")
  endforeach()
endforeach()
string(APPEND page ".SH EXIT STATUS
0 success; 1 an internal or output error, or a run whose flows failed; 2 bad input (a trace, a
configuration, a comm-group file, the command line); 3 a run that stopped making progress; 4
\\fBcompare\\fR found a delta beyond its tolerance; 130 a run interrupted by SIGINT, SIGTERM or
SIGHUP.
.SH SEE ALSO
The README and docs/ of etwire's source: the configuration keys (docs/configuration.md), the
results files (docs/results-files.md), the lab procedures (docs/lab-verbs.md,
docs/lab-multi-host.md).
")
file(WRITE ${OUT} "${page}")
