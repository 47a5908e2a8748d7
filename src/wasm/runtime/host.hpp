// Host functions: how an embedder (the WASI host, the spec `spectest` module, tests) provides
// functions a module imports. Plain function pointer + context, no virtual dispatch.
#pragma once

#include "wasm/syntax/types.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sprawling::wasm {

// The caller's linear memory 0 for the duration of one host call ({nullptr, 0} when the
// calling instance has none). Host functions cannot grow memory, so it is stable during the call.
struct MemoryView {
  std::uint8_t* base = nullptr;
  std::uint64_t size = 0;  // bytes
};

// How a host call ended. Every reason a host stops the guest is a value here (the engine turns
// it into the matching TrapKind), never a message to compare.
enum class HostStatus : std::uint8_t {
  Ok,                // results written
  Trap,              // the guest traps with HostCall::trap_message
  Exit,              // the guest asked to end the run with HostCall::exit_code (proc_exit); unwinds like a trap
  DeadlineExceeded,  // the run's deadline passed during or before the call: TrapKind::DeadlineExceeded
  OutOfFuel,         // the call's work costs more fuel than is left: TrapKind::OutOfFuel
};

// Values are passed as 64-bit slots: i32 in the low 32 bits (upper bits zero), i64 as is,
// f32/f64 as their bit patterns, references as engine handles (0 = null).
struct HostCall {
  std::span<const std::uint64_t> args;
  std::span<std::uint64_t> results;
  MemoryView memory;
  void* context = nullptr;  // what the embedder registered with the function
  // Set by the callback when it returns Trap / Exit.
  std::string trap_message;
  std::uint32_t exit_code = 0;
};

using HostFn = HostStatus (*)(HostCall& call);

// A host function as an embedder describes it before linking.
struct HostFunctionDef {
  std::string_view module;
  std::string_view name;
  FuncType type;
  HostFn fn = nullptr;
};

}  // namespace sprawling::wasm
