// run_script: executes a spec-test Script against the engine — modules, registration,
// actions and every assertion kind — with the `spectest` host module linked in.
#include "wasm/script/script.hpp"
#include "wasm/runtime/linker.hpp"

#include "wasm/binary/decoder.hpp"
#include "wasm/runtime/store_impl.hpp"  // a function's defining module (invoke arguments)
#include "wasm/script/expectations.hpp"

#include <algorithm>
#include <bit>
#include <iomanip>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>

namespace sprawling::wasm::script {

namespace {

// https://github.com/WebAssembly/spec/tree/main/interpreter#spectest-host-module: the print
// functions do nothing here (their output is not part of any assertion).
HostStatus spectest_print(HostCall&) {
  return HostStatus::Ok;
}

std::string describe(const Value& v) {
  std::ostringstream out;
  out << name(v.type) << ':';
  if (is_reference(v.type)) {
    if (v.bits == 0) {
      out << "null";
    } else if (heap_top(v.type.heap()) == ValType::kExtern) {
      out << (v.bits - 1);
    } else {
      out << "func#" << v.bits;
    }
  } else if (v.type == ValType::V128) {
    // The 16 bytes as two 64-bit halves, high first (one 128-bit hex number).
    out << "0x" << std::hex << std::setfill('0') << std::setw(16) << v.bits_hi << std::setw(16) << v.bits;
  } else {
    out << "0x" << std::hex << v.bits;
  }
  return out.str();
}

std::string describe(const ExpectedValue& e) {
  switch (e.kind) {
    case ExpectedValue::Kind::CanonicalNan: return std::string(name(e.value.type)) + ":nan:canonical";
    case ExpectedValue::Kind::ArithmeticNan: return std::string(name(e.value.type)) + ":nan:arithmetic";
    case ExpectedValue::Kind::AnyFuncRef: return "funcref:non-null";
    case ExpectedValue::Kind::AnyNullRef: return "ref:null";
    case ExpectedValue::Kind::AnyI31Ref: return "ref.i31";
    case ExpectedValue::Kind::AnyStructRef: return "ref.struct";
    case ExpectedValue::Kind::AnyArrayRef: return "ref.array";
    case ExpectedValue::Kind::AnyEqRef: return "ref.eq";
    case ExpectedValue::Kind::AnyAnyRef: return "ref.any";
    case ExpectedValue::Kind::AnyExternRef: return "externref:non-null";
    case ExpectedValue::Kind::Either: {
      std::string out = "either(";
      for (std::size_t i = 0; i < e.alternatives.size(); ++i) {
        if (i > 0) out += ' ';
        out += describe(e.alternatives[i]);
      }
      return out + ")";
    }
    case ExpectedValue::Kind::Exact: break;
  }
  if (!e.lanes.empty()) {
    std::string out = "v128:(";
    for (std::size_t i = 0; i < e.lanes.size(); ++i) {
      if (i > 0) out += ' ';
      out += describe(e.lanes[i]);
    }
    return out + ")";
  }
  return describe(e.value);
}

std::string describe(std::span<const Value> values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ' ';  // two appends: `" " + describe(…)` trips GCC 12's false -Wrestrict at -O3
    out += describe(values[i]);
  }
  return out + "]";
}

std::string describe(std::span<const ExpectedValue> values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ' ';  // two appends: `" " + describe(…)` trips GCC 12's false -Wrestrict at -O3
    out += describe(values[i]);
  }
  return out + "]";
}

std::uint64_t width_mask(ValType t) {
  return t == ValType::I32 || t == ValType::F32 ? 0xFFFF'FFFFull : ~0ull;
}

bool matches(const ExpectedValue& e, const Value& v, Store& store) {
  if (e.kind == ExpectedValue::Kind::Either) {
    return std::ranges::any_of(e.alternatives, [&](const ExpectedValue& alt) { return matches(alt, v, store); });
  }
  if (e.kind == ExpectedValue::Kind::AnyNullRef) return is_reference(v.type) && v.bits == 0;
  // Garbage collection: a reference of a kind, whatever its static type says.
  using K = ExpectedValue::Kind;
  if (e.kind == K::AnyI31Ref || e.kind == K::AnyStructRef || e.kind == K::AnyArrayRef || e.kind == K::AnyEqRef ||
      e.kind == K::AnyAnyRef) {
    if (!is_reference(v.type)) return false;
    const Store::AnyRef kind = store.any_ref_kind(v.bits);
    switch (e.kind) {
      case K::AnyI31Ref: return kind == Store::AnyRef::I31;
      case K::AnyStructRef: return kind == Store::AnyRef::Struct;
      case K::AnyArrayRef: return kind == Store::AnyRef::Array;
      case K::AnyEqRef: return kind == Store::AnyRef::I31 || kind == Store::AnyRef::Struct || kind == Store::AnyRef::Array;
      default: return kind != Store::AnyRef::Null && kind != Store::AnyRef::Dangling;
    }
  }
  if (e.kind == K::AnyExternRef) return is_reference(v.type) && v.bits != 0;
  // References match within their hierarchy: a (ref $t) result is an expected funcref.
  const bool refs = is_reference(e.value.type) && is_reference(v.type);
  if (refs ? heap_top(e.value.type.heap()) != heap_top(v.type.heap()) : e.value.type != v.type) return false;
  if (v.type == ValType::V128) {
    // Float shapes compare lane by lane (a lane may expect a NaN pattern); others bit for bit.
    if (e.lanes.empty()) return v.bits == e.value.bits && v.bits_hi == e.value.bits_hi;
    const unsigned width = e.lanes[0].value.type == ValType::F64 ? 64 : 32;
    for (std::size_t i = 0; i < e.lanes.size(); ++i) {
      const unsigned bit = static_cast<unsigned>(i) * width;
      const std::uint64_t half = bit < 64 ? v.bits : v.bits_hi;
      const std::uint64_t lane = width == 64 ? half : (half >> (bit % 64)) & 0xFFFF'FFFFull;
      if (!matches(e.lanes[i], Value{e.lanes[i].value.type, lane, 0}, store)) return false;
    }
    return true;
  }
  const std::uint64_t bits = v.bits & width_mask(v.type);
  switch (e.kind) {
    case ExpectedValue::Kind::Exact: return bits == (e.value.bits & width_mask(v.type));
    case ExpectedValue::Kind::AnyFuncRef: return v.bits != 0;
    case ExpectedValue::Kind::AnyNullRef:  // handled above (any reference type)
    case ExpectedValue::Kind::AnyI31Ref:
    case ExpectedValue::Kind::AnyStructRef:
    case ExpectedValue::Kind::AnyArrayRef:
    case ExpectedValue::Kind::AnyEqRef:
    case ExpectedValue::Kind::AnyAnyRef:
    case ExpectedValue::Kind::AnyExternRef:
    case ExpectedValue::Kind::Either: return false;  // handled above
    case ExpectedValue::Kind::CanonicalNan:
      return v.type == ValType::F32 ? (bits & 0x7FFF'FFFFu) == 0x7FC0'0000u
                                    : (bits & 0x7FFF'FFFF'FFFF'FFFFull) == 0x7FF8'0000'0000'0000ull;
    case ExpectedValue::Kind::ArithmeticNan:
      return v.type == ValType::F32 ? (bits & 0x7FC0'0000u) == 0x7FC0'0000u
                                    : (bits & 0x7FF8'0000'0000'0000ull) == 0x7FF8'0000'0000'0000ull;
  }
  return false;
}

std::string_view command_name(Command::Kind k) {
  switch (k) {
    case Command::Kind::Module: return "module";
    case Command::Kind::Register: return "register";
    case Command::Kind::Action: return "action";
    case Command::Kind::AssertReturn: return "assert_return";
    case Command::Kind::AssertTrap: return "assert_trap";
    case Command::Kind::AssertExhaustion: return "assert_exhaustion";
    case Command::Kind::AssertException: return "assert_exception";
    case Command::Kind::AssertInvalid: return "assert_invalid";
    case Command::Kind::AssertMalformed: return "assert_malformed";
    case Command::Kind::AssertUnlinkable: return "assert_unlinkable";
    case Command::Kind::AssertUninstantiable: return "assert_uninstantiable";
    case Command::Kind::ModuleDefinition: return "module definition";
    case Command::Kind::ModuleInstance: return "module instance";
  }
  return "?";
}

// One outcome: pass, fail with a reason, or skip with a reason.
struct Outcome {
  enum class Kind : std::uint8_t { Pass, Fail, Skip };
  Kind kind = Kind::Pass;
  std::string detail;
  static Outcome pass() { return {}; }
  static Outcome fail(std::string d) { return {Kind::Fail, std::move(d)}; }
  static Outcome skip(std::string d) { return {Kind::Skip, std::move(d)}; }
};

class Runner {
 public:
  Runner(const Script& script, const RunOptions& options, std::ostream& log)
      : script_(script), options_(options), log_(log) {
    (void)store_.set_tier(options.tier);
    if (options.ahead_of_time) {
      aot_cache_ = std::make_shared<MemoryCodeCache>();
      store_.set_code_cache(aot_cache_);
    }
    if (options.metered) store_.set_budget({std::numeric_limits<std::uint64_t>::max(), std::nullopt});
    define_spectest();
  }

  Counts run() {
    Counts counts;
    for (const Command& cmd : script_.commands) {
      const Outcome o = execute(cmd);
      const auto where = script_.file + ":" + std::to_string(cmd.line) + ": " + std::string(command_name(cmd.kind));
      switch (o.kind) {
        case Outcome::Kind::Pass:
          ++counts.passed;
          if (options_.verbose) log_ << where << ": passed\n";
          break;
        case Outcome::Kind::Fail:
          ++counts.failed;
          log_ << where << ": FAILED: " << o.detail << '\n';
          break;
        case Outcome::Kind::Skip:
          ++counts.skipped;
          if (options_.verbose) log_ << where << ": skipped: " << o.detail << '\n';
          break;
      }
    }
    return counts;
  }

 private:
  void define_spectest() {
    const auto fn = [&](const char* n, std::vector<ValType> params) {
      FuncInst* f = store_.add_host_function(FuncType{std::move(params), {}}, spectest_print, nullptr,
                                             std::string("spectest.") + n);
      linker_.define("spectest", n, f);
    };
    fn("print", {});
    fn("print_i32", {ValType::I32});
    fn("print_i64", {ValType::I64});
    fn("print_f32", {ValType::F32});
    fn("print_f64", {ValType::F64});
    fn("print_i32_f32", {ValType::I32, ValType::F32});
    fn("print_f64_f64", {ValType::F64, ValType::F64});
    linker_.define("spectest", "global_i32", store_.add_global({ValType::I32, false}, Value::i32(666)));
    linker_.define("spectest", "global_i64", store_.add_global({ValType::I64, false}, Value::i64(666)));
    // 666.6, as the reference interpreter's spectest has them (3.0's imports.wast reads them;
    // the 2.0 suite never reads the float globals' values).
    linker_.define("spectest", "global_f32",
                   store_.add_global({ValType::F32, false}, Value::f32_bits(std::bit_cast<std::uint32_t>(666.6f))));
    linker_.define("spectest", "global_f64",
                   store_.add_global({ValType::F64, false}, Value::f64_bits(std::bit_cast<std::uint64_t>(666.6))));
    linker_.define("spectest", "table",
                   store_.add_table(TableType{ValType::FuncRef, Limits{10, 20}}, Value::null(ValType::FuncRef)));
    // table64 (the reference interpreter's spectest has it: i64 10 20 funcref).
    linker_.define("spectest", "table64",
                   store_.add_table(TableType{ValType::FuncRef, Limits{10, 20, true}}, Value::null(ValType::FuncRef)));
    linker_.define("spectest", "memory", store_.add_memory(MemoryType{Limits{1, 2}}));
  }

  // The module's binary: as given, or from the text front end (absent: nullopt = skip).
  std::optional<std::expected<std::vector<std::uint8_t>, std::string>> binary_of(const ModuleSource& src) {
    if (src.kind == ModuleSource::Kind::Binary) return src.bytes;
    if (!options_.text_compiler) return std::nullopt;
    return options_.text_compiler(src.text);
  }

  // compile(); with RunOptions::ahead_of_time also the whole module's machine code, into the
  // run's code cache, where instantiation finds it. A function that stays interpreted (or a
  // compile that fails) is a CompileError, so that no assertion passes on the interpreter.
  std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_module(std::span<const std::uint8_t> binary) {
    auto compiled = compile(binary, options_.features);
    if (!compiled || !aot_cache_) return compiled;
    auto report = precompile(**compiled, options_.metered, *aot_cache_);
    if (!report) return std::unexpected(CompileError{CompileError::Kind::Unsupported, "ahead-of-time compile: " + report.error(), 0});
    if (report->compiled != report->functions)
      return std::unexpected(CompileError{CompileError::Kind::Unsupported,
                                          "ahead-of-time compile left " + std::to_string(report->functions - report->compiled) +
                                              " of " + std::to_string(report->functions) + " functions interpreted",
                                          0});
    return compiled;
  }

  // Compiles, links and instantiates; on success the instance becomes the current one.
  // `(module definition …)`: compiled (so an invalid one fails here) and kept for instances.
  Outcome define_definition(const Command& cmd) {
    auto binary = binary_of(cmd.module);
    if (!binary) return Outcome::skip("text module and no text front end");
    if (!*binary) return Outcome::fail("text module does not parse: " + binary->error());
    latest_definition_ = nullptr;
    if (cmd.name) definitions_.erase(*cmd.name);
    auto compiled = compile_module(**binary);
    if (!compiled) {
      if (compiled.error().kind == CompileError::Kind::Unsupported)
        return Outcome::fail("not executed: " + compiled.error().message);
      return Outcome::fail("module does not compile: " + compiled.error().message);
    }
    latest_definition_ = *compiled;
    if (cmd.name) definitions_[*cmd.name] = *compiled;
    return Outcome::pass();
  }

  // `(module instance $I? $M?)`: a new instance of definition $M (the latest one without a name),
  // which becomes the current module.
  Outcome define_instance(const Command& cmd) {
    current_ = nullptr;
    if (cmd.name) named_.erase(*cmd.name);
    std::shared_ptr<const CompiledModule> definition = latest_definition_;
    if (cmd.definition) {
      const auto it = definitions_.find(*cmd.definition);
      definition = it == definitions_.end() ? nullptr : it->second;
    }
    if (!definition) return Outcome::fail("no module definition " + cmd.definition.value_or("(latest)"));
    auto imports = linker_.resolve(definition->module());
    if (!imports) return Outcome::fail("module does not link: " + imports.error().message);
    auto instance = store_.instantiate(definition, *imports);
    if (!instance) return Outcome::fail("module does not instantiate: " + instance.error().message);
    current_ = *instance;
    if (cmd.name) named_[*cmd.name] = *instance;
    return Outcome::pass();
  }

  Outcome define_module(const Command& cmd) {
    auto binary = binary_of(cmd.module);
    if (!binary) return Outcome::skip("text module and no text front end");
    if (!*binary) return Outcome::fail("text module does not parse: " + binary->error());
    // A module that fails here is no module at all: later commands must not run against the
    // previous one (they fail with "no module", never pass).
    current_ = nullptr;
    if (cmd.name) named_.erase(*cmd.name);
    auto compiled = compile_module(**binary);
    if (!compiled) {
      if (compiled.error().kind == CompileError::Kind::Unsupported) {
        refused_ = compiled.error().message;
        if (cmd.name) refused_named_[*cmd.name] = refused_;
        return Outcome::fail("not executed: " + refused_);
      }
      return Outcome::fail("module does not compile: " + compiled.error().message);
    }
    refused_.clear();
    if (cmd.name) refused_named_.erase(*cmd.name);
    auto imports = linker_.resolve((*compiled)->module());
    if (!imports) return Outcome::fail("module does not link: " + imports.error().message);
    auto instance = store_.instantiate(*compiled, *imports);
    if (!instance) return Outcome::fail("module does not instantiate: " + instance.error().message);
    current_ = *instance;
    if (cmd.name) named_[*cmd.name] = *instance;
    return Outcome::pass();
  }

  Instance* find_instance(const std::optional<std::string>& name) {
    if (!name) return current_;
    const auto it = named_.find(*name);
    return it == named_.end() ? nullptr : it->second;
  }

  // Runs an action: its results, or a Trap; a broken reference is reported in `problem`.
  std::optional<std::expected<std::vector<Value>, Trap>> perform(const Action& a, std::string& problem) {
    Instance* inst = find_instance(a.module);
    if (!inst) {
      problem = "no module " + a.module.value_or("(current)");
      if (!a.module && !refused_.empty()) problem = "not executed: the module was refused: " + refused_;
      if (a.module) {
        if (const auto it = refused_named_.find(*a.module); it != refused_named_.end())
          problem = "not executed: module " + *a.module + " was refused: " + it->second;
      }
      return std::nullopt;
    }
    const auto ext = inst->find_export(a.field);
    if (!ext) {
      problem = "no export \"" + a.field + "\"";
      return std::nullopt;
    }
    if (a.kind == Action::Kind::Get) {
      auto* const* g = std::get_if<GlobalInst*>(&*ext);
      if (!g) {
        problem = "export \"" + a.field + "\" is not a global";
        return std::nullopt;
      }
      return std::vector<Value>{global_get(*g)};
    }
    auto* const* f = std::get_if<FuncInst*>(&*ext);
    if (!f) {
      problem = "export \"" + a.field + "\" is not a function";
      return std::nullopt;
    }
    const FuncType& ft = func_type(*f);
    if (ft.params.size() != a.args.size()) {
      problem = "wrong argument count for \"" + a.field + "\"";
      return std::nullopt;
    }
    // The types its parameter types' indices name: those of the module that defines it (an
    // export may be another instance's function re-exported; a host function names none).
    const std::span<const FuncType> types =
        (*f)->instance && (*f)->instance->module ? std::span<const FuncType>((*f)->instance->module->types)
                                                 : std::span<const FuncType>{};
    for (std::size_t i = 0; i < a.args.size(); ++i) {
      // An argument fits when its type matches the parameter's (subtyping included, concrete
      // parameter types looked up in the defining module). A null's type is the bottom of its
      // hierarchy (as the reference interpreter types it), so (ref.null none) or (ref.null any)
      // fits any nullable parameter of any's hierarchy, a (ref null $struct) included; any other
      // reference argument is not null, so it also fits a non-nullable parameter.
      const ValType p = ft.params[i];
      const ValType v = a.args[i].type;
      bool fits = p == v;
      if (p.is_ref() && v.is_ref()) {
        const bool is_null = a.args[i].bits == 0;
        fits = is_null ? p.nullable() && heap_top(p.heap(), types) == heap_top(v.heap())
                       : matches(v.as_nullable(false), std::span<const FuncType>{}, p, types);
      }
      if (!fits) {
        problem = "argument " + std::to_string(i) + " of \"" + a.field + "\" has the wrong type";
        return std::nullopt;
      }
    }
    return store_.invoke(*f, a.args);
  }

  Outcome expect_trap(const Command& cmd, bool exhaustion) {
    std::string problem;
    auto r = perform(cmd.action, problem);
    if (!r) return Outcome::fail(problem);
    if (*r) return Outcome::fail("expected trap \"" + cmd.text + "\", got " + describe(**r));
    const Trap& t = r->error();
    if (exhaustion && t.kind != TrapKind::CallStackExhausted) {
      return Outcome::fail("expected call stack exhaustion, got trap \"" + t.message + "\"");
    }
    if (!starts_with(t.message, cmd.text)) {
      return Outcome::fail("expected trap \"" + cmd.text + "\", got trap \"" + t.message + "\"");
    }
    return Outcome::pass();
  }

  // assert_invalid / assert_malformed.
  Outcome expect_rejected(const Command& cmd, CompileError::Kind want) {
    if (cmd.module.kind == ModuleSource::Kind::Text) {
      if (!options_.text_compiler) return Outcome::skip("text module and no text front end");
      auto binary = options_.text_compiler(cmd.module.text);
      if (!binary) {
        if (want != CompileError::Kind::Malformed) {
          return Outcome::fail("expected an invalid module, the text does not parse: " + binary.error());
        }
        if (!starts_with(binary.error(), cmd.text)) {
          return Outcome::fail("expected \"" + cmd.text + "\", got \"" + binary.error() + "\"");
        }
        return Outcome::pass();
      }
      return check_rejection(decode_and_validate(*binary, options_.features), cmd, want);
    }
    return check_rejection(decode_and_validate(cmd.module.bytes, options_.features), cmd, want);
  }

  Outcome check_rejection(const std::expected<Module, CompileError>& r, const Command& cmd, CompileError::Kind want) {
    const std::string problem = check_rejection_message(r, cmd, want);
    return problem.empty() ? Outcome::pass() : Outcome::fail(problem);
  }
  std::string check_rejection_message(const std::expected<Module, CompileError>& r, const Command& cmd,
                                      CompileError::Kind want) {
    return script::check_rejection(r, cmd.text, want, find_lossy(script_.file, cmd.line));
  }

  // assert_unlinkable / assert_uninstantiable.
  Outcome expect_instantiation_failure(const Command& cmd, InstantiationError::Kind want) {
    auto binary = binary_of(cmd.module);
    if (!binary) return Outcome::skip("text module and no text front end");
    if (!*binary) return Outcome::fail("text module does not parse: " + binary->error());
    auto compiled = compile_module(**binary);
    if (!compiled) {
      if (compiled.error().kind == CompileError::Kind::Unsupported)
        return Outcome::fail("not executed: " + compiled.error().message);
      return Outcome::fail("module does not compile: " + compiled.error().message);
    }
    auto imports = linker_.resolve((*compiled)->module());
    if (!imports) {
      if (want != InstantiationError::Kind::Link)
        return Outcome::fail("module does not link: " + imports.error().message);
      if (!starts_with(imports.error().message, cmd.text)) {
        return Outcome::fail("expected \"" + cmd.text + "\", got \"" + imports.error().message + "\"");
      }
      return Outcome::pass();
    }
    auto instance = store_.instantiate(*compiled, *imports);
    if (instance) return Outcome::fail("expected instantiation to fail with \"" + cmd.text + "\", it succeeded");
    const InstantiationError& e = instance.error();
    if (e.kind != want) {
      return Outcome::fail(std::string("expected a ") + (want == InstantiationError::Kind::Link ? "link" : "trap") +
                           " error \"" + cmd.text + "\", got \"" + e.message + "\"");
    }
    const std::string& message = e.trap && want == InstantiationError::Kind::Trap ? e.trap->message : e.message;
    if (!starts_with(message, cmd.text)) return Outcome::fail("expected \"" + cmd.text + "\", got \"" + message + "\"");
    return Outcome::pass();
  }

  Outcome execute(const Command& cmd) {
    switch (cmd.kind) {
      case Command::Kind::Module: return define_module(cmd);
      case Command::Kind::ModuleDefinition: return define_definition(cmd);
      case Command::Kind::ModuleInstance: return define_instance(cmd);
      case Command::Kind::Register: {
        Instance* inst = find_instance(cmd.name);
        if (!inst && !cmd.name && !refused_.empty())
          return Outcome::fail("not executed: the module was refused: " + refused_);
        if (!inst) return Outcome::fail("no module " + cmd.name.value_or("(current)") + " to register");
        linker_.define_instance(cmd.register_as, *inst);
        return Outcome::pass();
      }
      case Command::Kind::Action:
      case Command::Kind::AssertReturn: {
        std::string problem;
        auto r = perform(cmd.action, problem);
        if (!r) return Outcome::fail(problem);
        if (!*r) return Outcome::fail("trap \"" + r->error().message + "\"");
        if (cmd.kind == Command::Kind::Action) return Outcome::pass();
        const std::vector<Value>& got = **r;
        bool ok = got.size() == cmd.expected.size();
        for (std::size_t i = 0; ok && i < got.size(); ++i) {
          ok = matches(cmd.expected[i], got[i], store_);
        }
        if (!ok) return Outcome::fail("expected " + describe(cmd.expected) + ", got " + describe(got));
        return Outcome::pass();
      }
      case Command::Kind::AssertTrap:
        if (cmd.has_module) return expect_instantiation_failure(cmd, InstantiationError::Kind::Trap);
        return expect_trap(cmd, false);
      case Command::Kind::AssertExhaustion: return expect_trap(cmd, true);
      case Command::Kind::AssertException: {
        std::string problem;
        auto r = perform(cmd.action, problem);
        if (!r) return Outcome::fail(problem);
        if (*r) return Outcome::fail("expected an uncaught exception, got " + describe(**r));
        if (r->error().kind != TrapKind::UncaughtException)
          return Outcome::fail("expected an uncaught exception, got trap \"" + r->error().message + "\"");
        return Outcome::pass();
      }
      case Command::Kind::AssertInvalid: return expect_rejected(cmd, CompileError::Kind::Invalid);
      case Command::Kind::AssertMalformed: return expect_rejected(cmd, CompileError::Kind::Malformed);
      case Command::Kind::AssertUnlinkable: return expect_instantiation_failure(cmd, InstantiationError::Kind::Link);
      case Command::Kind::AssertUninstantiable:
        return expect_instantiation_failure(cmd, InstantiationError::Kind::Trap);
    }
    return Outcome::fail("unknown command");
  }

  const Script& script_;
  const RunOptions& options_;
  std::ostream& log_;
  Store store_;
  // RunOptions::ahead_of_time: the code cache every module is compiled into before it is
  // instantiated, held in memory for the run.
  std::shared_ptr<MemoryCodeCache> aot_cache_;
  Linker linker_;
  Instance* current_ = nullptr;
  std::string refused_;  // why the latest module was refused as unsupported (empty: it was not)
  std::map<std::string, std::string, std::less<>> refused_named_;  // the same for named modules
  std::map<std::string, Instance*, std::less<>> named_;
  std::shared_ptr<const CompiledModule> latest_definition_;
  std::map<std::string, std::shared_ptr<const CompiledModule>, std::less<>> definitions_;
};

}  // namespace

Counts run_script(const Script& script, const RunOptions& options, std::ostream& log) {
  Runner runner(script, options, log);
  return runner.run();
}

}  // namespace sprawling::wasm::script
