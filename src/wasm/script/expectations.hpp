// Checks shared by run_script and validate_script: message prefixes, compile rejections, and
// the few expectations wast2json's binary output cannot carry.
#pragma once

#include "wasm/binary/decoder.hpp"

#include <expected>
#include <string>
#include <string_view>

namespace sprawling::wasm::script {

[[nodiscard]] inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A spec assertion whose message is lost in wast2json's binary: the text says more than the
// bytes do, so any rejection of the expected kind is accepted for it.
struct LossyConversion {
  std::string_view file;  // .wast base name
  std::size_t line;
  std::string_view why;
};

// select.wast:324 is `(select (result) …)`, which wast2json writes as the untyped select
// (0x1B) — byte for byte the module of line 320 — so "invalid result arity" cannot be seen.
inline constexpr LossyConversion kLossyConversions[] = {
    {"select.wast", 324, "wast2json encodes `select (result)` as the untyped select"},
};

[[nodiscard]] inline const LossyConversion* find_lossy(std::string_view file, std::size_t line) {
  const auto slash = file.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? file : file.substr(slash + 1);
  for (const auto& l : kLossyConversions) {
    if (l.file == base && l.line == line) return &l;
  }
  return nullptr;
}

// Empty when `r` is the expected rejection (kind and message prefix), else what went wrong.
[[nodiscard]] inline std::string check_rejection(const std::expected<Module, CompileError>& r, const std::string& text,
                                                 CompileError::Kind want, const LossyConversion* lossy) {
  const char* want_name = want == CompileError::Kind::Malformed ? "malformed" : "invalid";
  if (r) return std::string("expected a ") + want_name + " module (\"" + text + "\"), it compiled";
  const CompileError& e = r.error();
  if (e.kind == want && (starts_with(e.message, text) || lossy)) return {};
  const char* got = e.kind == CompileError::Kind::Malformed ? "malformed" : "invalid";
  return std::string("expected ") + want_name + " \"" + text + "\", got " + got + " \"" + e.message + "\" at offset " +
         std::to_string(e.offset);
}

}  // namespace sprawling::wasm::script
