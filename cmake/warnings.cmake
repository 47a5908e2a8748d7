# Warning policy: every target of the project compiles with -Wall -Wextra -Wpedantic; warnings
# are errors only with SPRAWLING_WERROR=ON, which every preset (and so CI) sets. A plain
# `cmake -DCMAKE_BUILD_TYPE=Release` by a packager, with another compiler or another -O level,
# must not fail on a warning its authors never saw.
option(SPRAWLING_WERROR "Treat compiler warnings as errors (the presets turn it on)" OFF)
add_library(sprawling_warnings INTERFACE)
target_compile_options(sprawling_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${SPRAWLING_WERROR}>:-Werror>)
# The same choice for commands that are not CMake targets (the wasm32-wasi guests): expands to
# -Werror or to nothing.
set(SPRAWLING_WERROR_FLAG)
if(SPRAWLING_WERROR)
  set(SPRAWLING_WERROR_FLAG -Werror)
endif()
