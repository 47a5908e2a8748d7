# Writes the man page sprawl(1) from the built binary's own help, so the page and `--help` are
# one text: NAME and SYNOPSIS from `sprawl --help`, then one section per command listed there
# (`sprawl help COMMAND`, verbatim), the version from `sprawl --version`.
#   cmake -DSPRAWL=path/to/sprawl -DOUT=sprawl.1 -P manpage.cmake      (src/CMakeLists.txt runs it)
cmake_minimum_required(VERSION 3.25)

# run(OUT ARGS...): the binary's stdout for ARGS; any failure stops the build.
function(run out)
  execute_process(COMMAND ${SPRAWL} ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "manpage: `sprawl ${ARGN}` exited with ${status}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# roff(OUT TEXT): TEXT as literal roff lines: backslashes escaped, a leading . or ' made
# literal, - written as the ASCII hyphen-minus so options stay copyable.
function(roff out text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

run(help_text --help)
run(version --version)
string(STRIP "${version}" version)

# The first line is "sprawl — summary"; the usage block lists "  sprawl COMMAND ...".
string(REGEX MATCH "^[^\n]*" first "${help_text}")
string(REGEX REPLACE "^sprawl[^a-zA-Z]+" "" summary "${first}")
string(REGEX MATCHALL "\n  sprawl [a-z]+" command_lines "${help_text}")
set(commands)
foreach(line IN LISTS command_lines)
  string(REGEX REPLACE "\n  sprawl " "" command "${line}")
  if(NOT command STREQUAL "help")
    list(APPEND commands ${command})
  endif()
endforeach()
if(NOT commands)
  message(FATAL_ERROR "manpage: no commands found in `sprawl --help`:\n${help_text}")
endif()

string(FIND "${help_text}" "\n" first_end)
math(EXPR body_start "${first_end} + 1")
string(SUBSTRING "${help_text}" ${body_start} -1 body)
string(STRIP "${body}" body)
string(APPEND body "\n")
roff(summary "${summary}")
roff(body "${body}")
set(page ".\\\" Generated from `sprawl --help` by cmake/install/manpage.cmake; edit the help text, not this.\n")
string(APPEND page ".TH SPRAWL 1 \"\" \"${version}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\nsprawl \\- ${summary}\n")
string(APPEND page ".SH SYNOPSIS\n.nf\n${body}.fi\n")
foreach(command IN LISTS commands)
  run(text help ${command})
  roff(text "${text}")
  string(TOUPPER "${command}" title)
  string(APPEND page ".SH SPRAWL ${title}\n.nf\n${text}.fi\n")
endforeach()
string(APPEND page ".SH SEE ALSO\nThe README of sprawling-runtime.\n")
file(WRITE ${OUT} "${page}")
