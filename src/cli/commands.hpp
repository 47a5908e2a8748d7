// The subcommands of `sprawl`; each takes the arguments after its name and returns the exit status.
#pragma once

#include <span>
#include <string_view>

namespace sprawling::cli {

int run_command(std::span<const std::string_view> args);
int python_command(std::span<const std::string_view> args);
int wast_command(std::span<const std::string_view> args);
int validate_command(std::span<const std::string_view> args);
int inspect_command(std::span<const std::string_view> args);
int compile_command(std::span<const std::string_view> args);

}  // namespace sprawling::cli
