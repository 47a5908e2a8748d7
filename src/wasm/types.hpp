// Value, function, limit and extern types in the WebAssembly spec's vocabulary
// (https://webassembly.github.io/spec/core/syntax/types.html).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm {

// The binary encoding is the enumerator value.
enum class ValType : std::uint8_t {
  I32 = 0x7F,
  I64 = 0x7E,
  F32 = 0x7D,
  F64 = 0x7C,
  V128 = 0x7B,
  FuncRef = 0x70,
  ExternRef = 0x6F,
  // Exception handling (WebAssembly 3.0): a reference to a caught exception (a store handle).
  ExnRef = 0x69,
};

[[nodiscard]] constexpr bool is_reference(ValType t) noexcept {
  return t == ValType::FuncRef || t == ValType::ExternRef || t == ValType::ExnRef;
}
[[nodiscard]] constexpr bool is_valtype_byte(std::uint8_t b) noexcept {
  return b == 0x7F || b == 0x7E || b == 0x7D || b == 0x7C || b == 0x7B || b == 0x70 || b == 0x6F || b == 0x69;
}
// "i32", "funcref", …
[[nodiscard]] constexpr std::string_view name(ValType t) noexcept {
  switch (t) {
    case ValType::I32: return "i32";
    case ValType::I64: return "i64";
    case ValType::F32: return "f32";
    case ValType::F64: return "f64";
    case ValType::V128: return "v128";
    case ValType::FuncRef: return "funcref";
    case ValType::ExternRef: return "externref";
    case ValType::ExnRef: return "exnref";
  }
  return "?";
}

// Frame slots (64-bit) a value of type t takes in the interpreter and at the host boundary's
// slot spans: a v128 two (low half first), every other value one (docs/interpreter.md).
[[nodiscard]] constexpr std::uint32_t value_slots(ValType t) noexcept {
  return t == ValType::V128 ? 2 : 1;
}
[[nodiscard]] constexpr std::uint32_t value_slots(std::span<const ValType> types) noexcept {
  std::uint32_t n = 0;
  for (const ValType t : types) n += value_slots(t);
  return n;
}

// https://webassembly.github.io/spec/core/syntax/types.html#function-types
struct FuncType {
  std::vector<ValType> params;
  std::vector<ValType> results;
  friend bool operator==(const FuncType&, const FuncType&) = default;
};

// https://webassembly.github.io/spec/core/syntax/types.html#limits
// `is64`: the limits of a memory64 memory or a 64-bit table (i64 addresses/indexes; WebAssembly
// 3.0's address type), whose page or element counts may exceed 32 bits.
struct Limits {
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
  bool is64 = false;
  friend bool operator==(const Limits&, const Limits&) = default;
};

struct TableType {
  ValType element = ValType::FuncRef;
  Limits limits;
  friend bool operator==(const TableType&, const TableType&) = default;
};

struct MemoryType {
  Limits limits;  // in 64 KiB pages
  friend bool operator==(const MemoryType&, const MemoryType&) = default;
};

struct GlobalType {
  ValType type = ValType::I32;
  bool is_mutable = false;
  friend bool operator==(const GlobalType&, const GlobalType&) = default;
};

// The binary encoding is the enumerator value.
enum class ExternKind : std::uint8_t { Func = 0, Table = 1, Memory = 2, Global = 3, Tag = 4 };

inline constexpr std::uint64_t kPageSize = 65536;
inline constexpr std::uint32_t kMaxPages = 65536;  // wasm32: 4 GiB
inline constexpr std::uint64_t kMaxPages64 = std::uint64_t{1} << 48;  // memory64: 2^64 bytes

}  // namespace sprawling::wasm
