# Warning policy: every target of the project compiles with -Wall -Wextra -Wpedantic -Werror.
add_library(sprawling_warnings INTERFACE)
target_compile_options(sprawling_warnings INTERFACE -Wall -Wextra -Wpedantic -Werror)
