// The spec-test script model (the commands of a .wast file) and the runner that executes
// it against the engine with the `spectest` host module. Two front ends produce a Script:
// wast2json's JSON (json_script.hpp) and the in-process WAST parser (wasm/text/).
#pragma once

#include "wasm/runtime/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sprawling::wasm::script {

struct ModuleSource {
  enum class Kind : std::uint8_t { Binary, Text };
  Kind kind = Kind::Binary;
  std::vector<std::uint8_t> bytes;  // Binary
  std::string text;                 // Text: WAT source (a `(module quote …)` or a .wat file of wast2json)
};

struct ExpectedValue {
  enum class Kind : std::uint8_t {
    Exact,          // `value` bit for bit (references: null or extern payload)
    CanonicalNan,   // nan:canonical of value.type
    ArithmeticNan,  // nan:arithmetic of value.type
    AnyFuncRef,     // any non-null funcref
    AnyNullRef,     // a null reference of any reference type (3.0 scripts' `(ref.null)` result)
    Either,         // any one of `alternatives` (3.0 scripts' `(either …)`, relaxed SIMD's results)
    // Garbage collection (3.0 scripts): `(ref.i31)`, `(ref.struct)`, `(ref.array)`, `(ref.eq)`
    // (any of those three), `(ref.any)` (any non-null anyref), `(ref.extern)` (any non-null externref)
    AnyI31Ref,
    AnyStructRef,
    AnyArrayRef,
    AnyEqRef,
    AnyAnyRef,
    AnyExternRef,
  };
  Kind kind = Kind::Exact;
  Value value;
  // v128 results: per-lane patterns (lane_type + lanes); empty for scalar values.
  std::optional<ValType> lane_type_hint;
  std::vector<ExpectedValue> lanes;
  std::vector<ExpectedValue> alternatives;  // Kind::Either only
};

struct Action {
  enum class Kind : std::uint8_t { Invoke, Get };
  Kind kind = Kind::Invoke;
  std::optional<std::string> module;  // named module, or the most recent one
  std::string field;
  std::vector<Value> args;  // externref args carry payload+1 (so `ref.extern 0` is not null)
};

struct Command {
  enum class Kind : std::uint8_t {
    Module, Register, Action, AssertReturn, AssertTrap, AssertExhaustion, AssertException,
    AssertInvalid, AssertMalformed, AssertUnlinkable, AssertUninstantiable,
    ModuleDefinition,  // `(module definition $name? …)`: compiled and kept, not instantiated
    ModuleInstance,    // `(module instance $name? $definition?)`: a new instance of a definition
  };
  Kind kind = Kind::Module;
  std::size_t line = 0;              // line in the .wast file
  std::optional<std::string> name;   // Module(Definition/Instance): its $name; Register: the module registered (empty = latest)
  std::optional<std::string> definition;  // ModuleInstance: the definition instantiated (empty = latest)
  std::string register_as;           // Register: the import-module name
  ModuleSource module;               // Module and the module-carrying asserts (assert_trap may carry one)
  bool has_module = false;           // AssertTrap on a module rather than an action
  Action action;                     // Action / AssertReturn / AssertTrap / AssertExhaustion
  std::vector<ExpectedValue> expected;
  std::string text;                  // expected message of a failing assert
};

struct Script {
  std::string file;
  std::vector<Command> commands;
};

struct Counts {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t skipped = 0;
  Counts& operator+=(const Counts& o) {
    passed += o.passed; failed += o.failed; skipped += o.skipped;
    return *this;
  }
};

// Turns WAT text into a binary module, or a message ("expected ')' at 12:7").
using TextCompiler = std::function<std::expected<std::vector<std::uint8_t>, std::string>(std::string_view)>;

struct RunOptions {
  TextCompiler text_compiler;  // empty: text modules are counted as skipped
  bool verbose = false;        // log passing commands too
  Tier tier = Tier::Interpret;  // the Store's tier (Compile: the caller checked compiled_tier_available)
  bool metered = false;         // run on the metered code, under an unbounded fuel budget
  // Tier::Compile only: each module compiled whole ahead of time (as `sprawl compile` does) into
  // an in-memory code cache before it is instantiated, so its machine code is the cached kind,
  // whose direct calls stay inside one object; else compiled lazily, a function at its first call.
  bool ahead_of_time = false;
  Features features;            // what modules may use (Features::wasm2() for the 2.0 testsuite)
};

// Runs every command of `script`, logging each failure with file:line to `log`.
Counts run_script(const Script& script, const RunOptions& options, std::ostream& log);

// Only decodes and validates: every module-carrying command's module must validate, except
// assert_invalid/assert_malformed, whose module must be rejected with the expected message.
// Commands without a module are skipped. Needs no execution engine.
Counts validate_script(const Script& script, const RunOptions& options, std::ostream& log);

}  // namespace sprawling::wasm::script
