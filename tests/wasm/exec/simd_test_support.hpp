// Shared pieces of the SIMD lane-semantics tests: values, the instruction shapes, running one instruction
// from a name table (simd_test_table.inc) and replaying the data file of scripts/simd-cases.
#pragma once

#include "wasm/exec/simd.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace simd_test {

using namespace sprawling::wasm::simd;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

// A scalar or vector value as the data file and the instructions carry it: kind is one of
// v (v128), i (i32), l (i64), f (f32 bits), d (f64 bits).
struct Val {
  char kind = 'v';
  V128 v{};
  u64 bits = 0;
  friend bool operator==(const Val&, const Val&) = default;
};
inline Val vec(V128 v) { return {'v', v, 0}; }
inline Val scalar(char kind, u64 bits) { return {kind, {}, bits}; }

using Memory = std::vector<std::uint8_t>;

// One entry per instruction shape; a case's immediates are its lane index / shuffle lanes / memarg.
using V_V = V128 (*)(V128) noexcept;
using VV_V = V128 (*)(V128, V128) noexcept;
using VVV_V = V128 (*)(V128, V128, V128) noexcept;
using V_I = u32 (*)(V128) noexcept;
using VI_V = V128 (*)(V128, u32) noexcept;
using I_V = V128 (*)(u32) noexcept;
using L_V = V128 (*)(u64) noexcept;
using Lane_I = u32 (*)(V128, unsigned) noexcept;
using Lane_L = u64 (*)(V128, unsigned) noexcept;
using LaneI_V = V128 (*)(V128, unsigned, u32) noexcept;
using LaneL_V = V128 (*)(V128, unsigned, u64) noexcept;
using Shuffle = V128 (*)(V128, V128, const std::uint8_t*) noexcept;
using Load = V128 (*)(const std::uint8_t*) noexcept;
using LoadLane = V128 (*)(const std::uint8_t*, V128, unsigned) noexcept;
using Store = void (*)(std::uint8_t*, V128) noexcept;
using StoreLane = void (*)(std::uint8_t*, V128, unsigned) noexcept;
using Const = V128 (*)(const std::uint8_t*) noexcept;
// Scalar kinds of splat operands and extract results ('i'/'f' for 32-bit, 'l'/'d' for 64-bit).
struct Splat32 { I_V fn; char kind; };
struct Splat64 { L_V fn; char kind; };
struct Extract32 { Lane_I fn; char kind; };
struct Extract64 { Lane_L fn; char kind; };
struct Replace32 { LaneI_V fn; char kind; };
struct Replace64 { LaneL_V fn; char kind; };
struct LoadOf { Load fn; unsigned width; };
struct LoadLaneOf { LoadLane fn; unsigned width; };
struct StoreOf { Store fn; };
struct StoreLaneOf { StoreLane fn; unsigned width; };
struct ConstOf { Const fn; };
using Impl = std::variant<V_V, VV_V, VVV_V, V_I, VI_V, Splat32, Splat64, Extract32, Extract64, Replace32, Replace64,
                          Shuffle, LoadOf, LoadLaneOf, StoreOf, StoreLaneOf, ConstOf>;

// Immediates of a case: lane index (or the 16 shuffle lanes) and the memarg offset.
struct Imms {
  std::vector<unsigned> lanes;
  u64 offset = 0;
};

inline Imms parse_imms(const std::string& text) {
  Imms imms;
  if (text == "-") return imms;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.rfind("offset=", 0) == 0) {
      imms.offset = std::stoull(item.substr(7), nullptr, 0);
    } else if (item.rfind("align=", 0) != 0) {
      imms.lanes.push_back(static_cast<unsigned>(std::stoul(item, nullptr, 0)));
    }
  }
  return imms;
}

// Runs one instruction; a string error when the case cannot be run (bad address, shape mismatch).
struct Outcome {
  std::vector<Val> results;
  std::string error;
};

inline Outcome run(const Impl& impl, const Imms& imms, const std::vector<Val>& args, Memory& memory) {
  Outcome out;
  auto lane = [&imms]() -> unsigned { return imms.lanes.empty() ? 0U : imms.lanes[0]; };
  auto address = [&](unsigned width) -> std::uint8_t* {
    const u64 ea = (args[0].bits & 0xFFFFFFFFU) + imms.offset;
    if (ea + width > memory.size()) {
      out.error = "address " + std::to_string(ea) + " + " + std::to_string(width) + " out of bounds";
      return nullptr;
    }
    return memory.data() + ea;
  };
  std::visit(
      [&](auto&& f) {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, V_V>) out.results = {vec(f(args.at(0).v))};
        else if constexpr (std::is_same_v<T, VV_V>) out.results = {vec(f(args.at(0).v, args.at(1).v))};
        else if constexpr (std::is_same_v<T, VVV_V>) out.results = {vec(f(args.at(0).v, args.at(1).v, args.at(2).v))};
        else if constexpr (std::is_same_v<T, V_I>) out.results = {scalar('i', f(args.at(0).v))};
        else if constexpr (std::is_same_v<T, VI_V>) out.results = {vec(f(args.at(0).v, static_cast<u32>(args.at(1).bits)))};
        else if constexpr (std::is_same_v<T, Splat32>) out.results = {vec(f.fn(static_cast<u32>(args.at(0).bits)))};
        else if constexpr (std::is_same_v<T, Splat64>) out.results = {vec(f.fn(args.at(0).bits))};
        else if constexpr (std::is_same_v<T, Extract32>) out.results = {scalar(f.kind, f.fn(args.at(0).v, lane()))};
        else if constexpr (std::is_same_v<T, Extract64>) out.results = {scalar(f.kind, f.fn(args.at(0).v, lane()))};
        else if constexpr (std::is_same_v<T, Replace32>)
          out.results = {vec(f.fn(args.at(0).v, lane(), static_cast<u32>(args.at(1).bits)))};
        else if constexpr (std::is_same_v<T, Replace64>) out.results = {vec(f.fn(args.at(0).v, lane(), args.at(1).bits))};
        else if constexpr (std::is_same_v<T, Shuffle>) {
          std::array<std::uint8_t, 16> idx{};
          if (imms.lanes.size() != 16) {
            out.error = "shuffle needs 16 lane immediates";
            return;
          }
          for (std::size_t i = 0; i < 16; ++i) idx[i] = static_cast<std::uint8_t>(imms.lanes[i]);
          out.results = {vec(f(args.at(0).v, args.at(1).v, idx.data()))};
        } else if constexpr (std::is_same_v<T, LoadOf>) {
          if (auto* p = address(f.width)) out.results = {vec(f.fn(p))};
        } else if constexpr (std::is_same_v<T, LoadLaneOf>) {
          if (auto* p = address(f.width)) out.results = {vec(f.fn(p, args.at(1).v, lane()))};
        } else if constexpr (std::is_same_v<T, StoreOf>) {
          if (auto* p = address(16)) f.fn(p, args.at(1).v);
        } else if constexpr (std::is_same_v<T, StoreLaneOf>) {
          if (auto* p = address(f.width)) f.fn(p, args.at(1).v, lane());
        } else if constexpr (std::is_same_v<T, ConstOf>) {
          out.error = "v128.const has no operands to replay";
        }
      },
      impl);
  return out;
}

// ---- the data file of scripts/simd-cases -----------------------------------------------------------
inline V128 v128_of_hex(std::string_view hex) {
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < 16; ++i) bytes[i] = static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(2 * i, 2)), nullptr, 16));
  V128 v{};
  std::memcpy(&v, bytes.data(), 16);
  return v;
}

inline Val parse_val(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string rest = text.substr(colon + 1);
  if (kind == "v") return vec(v128_of_hex(rest));
  return scalar(kind == "i32" ? 'i' : kind == "i64" ? 'l' : kind == "f32" ? 'f' : 'd', std::stoull(rest, nullptr, 16));
}

// Whether `bits` (of a float with `width` bits) meets the pattern: hex bits, nan:canonical or nan:arithmetic.
inline bool lane_matches(const std::string& pattern, u64 bits, unsigned width) {
  const u64 sign = u64{1} << (width - 1);
  const u64 quiet = width == 32 ? u64{0x7FC00000} : u64{0x7FF8000000000000};
  if (pattern == "nan:canonical") return (bits & ~sign) == quiet;
  if (pattern == "nan:arithmetic") return (bits & quiet) == quiet;
  return bits == std::stoull(pattern, nullptr, 16);
}

inline bool result_matches(const std::string& expected, const Val& got) {
  const auto colon = expected.find(':');
  const std::string kind = expected.substr(0, colon);
  const std::string rest = expected.substr(colon + 1);
  if (kind == "v") return got.kind == 'v' && got.v == v128_of_hex(rest);
  if (kind == "f32x4" || kind == "f64x2") {
    if (got.kind != 'v') return false;
    const unsigned width = kind == "f32x4" ? 32 : 64;
    std::stringstream in(rest);
    std::string lane_text;
    std::array<std::uint8_t, 16> bytes{};
    std::memcpy(bytes.data(), &got.v, 16);
    for (unsigned i = 0; std::getline(in, lane_text, ','); ++i) {
      u64 bits = 0;
      std::memcpy(&bits, bytes.data() + i * (width / 8), width / 8);
      if (!lane_matches(lane_text, bits, width)) return false;
    }
    return true;
  }
  const char want = kind == "i32" ? 'i' : kind == "i64" ? 'l' : kind == "f32" ? 'f' : 'd';
  if (got.kind != want) return false;
  return lane_matches(rest, got.bits, want == 'i' || want == 'f' ? 32 : 64);
}

inline std::string show(const Val& v) {
  std::ostringstream out;
  if (v.kind == 'v') {
    std::array<std::uint8_t, 16> bytes{};
    std::memcpy(bytes.data(), &v.v, 16);
    out << "v:";
    for (auto b : bytes) out << "0123456789abcdef"[b >> 4] << "0123456789abcdef"[b & 15];
  } else {
    out << v.kind << ':' << std::hex << v.bits;
  }
  return out.str();
}

// Replays every case of the data file; returns the number checked per instruction.
inline std::map<std::string, int> replay_cases(const std::map<std::string, Impl>& table, const std::string& path) {
  std::map<std::string, int> checked;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  Memory memory(65536);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "module") {
      memory.assign(65536, 0);
    } else if (tag == "data") {
      u64 offset = 0;
      std::string hex;
      words >> offset >> hex;
      if (hex == "-") continue;
      if (offset + hex.size() / 2 > memory.size()) {
        ADD_FAILURE() << "data segment out of bounds: " << line;
        continue;
      }
      for (std::size_t i = 0; i < hex.size() / 2; ++i)
        memory[offset + i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    } else if (tag == "case") {
      std::string where, op, imm_text, word;
      words >> where >> op >> imm_text;
      std::vector<Val> args;
      std::vector<std::string> expected;
      bool after_arrow = false;
      while (words >> word) {
        if (word == "=>") after_arrow = true;
        else if (after_arrow) expected.push_back(word);
        else args.push_back(parse_val(word));
      }
      const auto it = table.find(op);
      if (it == table.end()) {
        ADD_FAILURE() << where << ": unknown instruction " << op;
        continue;
      }
      const Outcome out = run(it->second, parse_imms(imm_text), args, memory);
      if (!out.error.empty()) {
        ADD_FAILURE() << where << " " << op << ": " << out.error;
        continue;
      }
      EXPECT_EQ(out.results.size(), expected.size()) << where << " " << op;
      for (std::size_t i = 0; i < std::min(out.results.size(), expected.size()); ++i) {
        EXPECT_TRUE(result_matches(expected[i], out.results[i]))
            << where << " " << op << " " << imm_text << ": got " << show(out.results[i]) << ", expected " << expected[i];
      }
      ++checked[op];
    }
  }
  return checked;
}

// The portable path's table (simd_portable_test.cpp), for the differential tests of the x86 paths.
const std::map<std::string, Impl>& portable_instructions();

}  // namespace simd_test
