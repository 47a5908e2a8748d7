// How a WASI host function ends: success, an errno for the guest, a trap, or proc_exit.
// Every host-function body returns Result<T>; one thunk turns it into a wasm::HostStatus.
#pragma once

#include "wasi/abi.hpp"

#include <cstdint>
#include <expected>
#include <string>
#include <utility>

namespace sprawling::wasi {

struct Failure {
  // Deadline / OutOfFuel: the run's limits stopped the call (typed, so nothing compares messages).
  enum class Kind : std::uint8_t { Errno, Trap, Exit, Deadline, OutOfFuel };
  Kind kind = Kind::Errno;
  abi::Errno code = abi::errno_::success;  // Kind::Errno
  std::string message;                    // Kind::Trap
  std::uint32_t exit_code = 0;            // Kind::Exit
};

template <class T>
using Result = std::expected<T, Failure>;

[[nodiscard]] inline std::unexpected<Failure> fail(abi::Errno code) {
  return std::unexpected(Failure{Failure::Kind::Errno, code, {}, 0});
}
[[nodiscard]] inline std::unexpected<Failure> trap(std::string message) {
  return std::unexpected(Failure{Failure::Kind::Trap, abi::errno_::success, std::move(message), 0});
}
[[nodiscard]] inline std::unexpected<Failure> deadline_exceeded() {
  return std::unexpected(Failure{Failure::Kind::Deadline, abi::errno_::success, {}, 0});
}
[[nodiscard]] inline std::unexpected<Failure> out_of_fuel() {
  return std::unexpected(Failure{Failure::Kind::OutOfFuel, abi::errno_::success, {}, 0});
}
[[nodiscard]] inline std::unexpected<Failure> exit_with(std::uint32_t code) {
  return std::unexpected(Failure{Failure::Kind::Exit, abi::errno_::success, {}, code});
}

// Propagates the failure of an expression yielding Result<…>; binds nothing.
#define SPRAWLING_WASI_CHECK(expr)                                           \
  do {                                                                       \
    if (auto sprawling_wasi_check_ = (expr); !sprawling_wasi_check_)         \
      return std::unexpected(std::move(sprawling_wasi_check_).error());      \
  } while (0)

}  // namespace sprawling::wasi
