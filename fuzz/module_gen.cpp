// The fuzz module generator (module_gen.hpp): every choice reads one input byte, and when the
// input runs out every choice falls to its smallest valid form, so any input gives a valid module.
#include "module_gen.hpp"

#include "hostile/wasm_writer.hpp"
#include "wasm/syntax/opcodes.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace sprawling::fuzz {

namespace {

namespace ww = test::wasm_writer;
using ww::Bytes;

class Source {
 public:
  explicit Source(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  [[nodiscard]] bool empty() const { return pos_ >= bytes_.size(); }
  std::uint8_t byte() { return empty() ? 0 : bytes_[pos_++]; }
  std::uint32_t below(std::uint32_t n) { return n == 0 ? 0 : byte() % n; }
  std::uint64_t raw(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{byte()} << (8 * i);
    return v;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

constexpr std::array<std::uint8_t, 4> kValTypes{ww::type::i32, ww::type::i64, ww::type::f32, ww::type::f64};
constexpr int kMaxExprDepth = 6;
constexpr int kMaxLoopDepth = 3;
constexpr std::uint32_t kLocalsPerType = 2;

// Edge values that make arithmetic and addressing interesting.
constexpr std::array<std::int64_t, 12> kInteresting{0, 1, -1, 2, 7, 8, 31, 32, 63, 64, 65535, 65536};

// The fixed-width SIMD instructions the generator picks from, grouped by what they take and give,
// read from the engine's opcode table (simd_opcodes.def): the table's signatures are checked
// against the spec by the validator's tests and the simd_* spec scripts.
struct SimdOps {
  struct Row {
    std::uint32_t sub = 0;
    wasm::ImmKind imm = wasm::ImmKind::None;
  };
  // Per group: every row, and the rows allowed under deterministic_only.
  struct Group {
    std::vector<Row> all, deterministic;
  };
  Group unary, binary, ternary, shift, test, splat_i32, splat_i64, splat_f32, splat_f64, extract_i32, extract_i64,
      extract_f32, extract_f64, replace_i32, replace_i64, replace_f32, replace_f64, load, store, load_lane,
      store_lane;
};

// Whether a SIMD instruction's v128 result holds float lanes computed by float arithmetic (so NaN
// payloads an engine may choose): f32x4./f64x2. operators other than the comparisons.
bool makes_float_lanes(std::string_view text, wasm::OpSig sig) {
  if (!text.starts_with("f32x4.") && !text.starts_with("f64x2.")) return false;
  if (wasm::sig_types(sig).result_count == 0 || wasm::sig_types(sig).result != wasm::ValType::V128) return false;
  const std::string_view op = text.substr(6);
  for (const std::string_view cmp : {"eq", "ne", "lt", "gt", "le", "ge"}) {
    if (op == cmp) return false;
  }
  return true;
}

const SimdOps& simd_ops() {
  static const SimdOps ops = [] {
    using wasm::ImmKind;
    using wasm::OpSig;
    SimdOps o;
    for (std::uint32_t sub = 0; sub < wasm::kRelaxedSimdFirst; ++sub) {
      const wasm::OpcodeInfo& info = wasm::kOpcodeTable[wasm::kSimdBase + sub];
      if (info.text.empty()) continue;
      const bool mem = wasm::natural_alignment_log2(info.imm).has_value();
      const bool lane = wasm::lane_count(info.imm) != 0 && info.imm != ImmKind::Shuffle;
      SimdOps::Group* g = nullptr;
      if (mem) {
        const bool lane_access = lane;
        g = info.sig == OpSig::i_V      ? &o.load
            : info.sig == OpSig::iV_V   ? (lane_access ? &o.load_lane : nullptr)
            : lane_access               ? &o.store_lane
                                        : &o.store;
      } else if (lane) {
        switch (info.sig) {
          case OpSig::V_i: g = &o.extract_i32; break;
          case OpSig::V_l: g = &o.extract_i64; break;
          case OpSig::V_f: g = &o.extract_f32; break;
          case OpSig::V_d: g = &o.extract_f64; break;
          case OpSig::Vi_V: g = &o.replace_i32; break;
          case OpSig::Vl_V: g = &o.replace_i64; break;
          case OpSig::Vf_V: g = &o.replace_f32; break;
          case OpSig::Vd_V: g = &o.replace_f64; break;
          default: break;
        }
      } else if (info.imm == ImmKind::None) {
        switch (info.sig) {
          case OpSig::V_V: g = &o.unary; break;
          case OpSig::VV_V: g = &o.binary; break;
          case OpSig::VVV_V: g = &o.ternary; break;
          case OpSig::Vi_V: g = &o.shift; break;
          case OpSig::V_i: g = &o.test; break;
          case OpSig::i_V: g = &o.splat_i32; break;
          case OpSig::l_V: g = &o.splat_i64; break;
          case OpSig::f_V: g = &o.splat_f32; break;
          case OpSig::d_V: g = &o.splat_f64; break;
          default: break;
        }
      }
      if (g == nullptr) continue;  // v128.const and i8x16.shuffle: written by hand
      const SimdOps::Row row{sub, info.imm};
      g->all.push_back(row);
      const bool float_scalar_in = g == &o.splat_f32 || g == &o.splat_f64 || g == &o.replace_f32 || g == &o.replace_f64;
      if (!makes_float_lanes(info.text, info.sig) && !float_scalar_in) g->deterministic.push_back(row);
    }
    return o;
  }();
  return ops;
}

class Generator {
 public:
  Generator(std::span<const std::uint8_t> input, const GenOptions& options) : in_(input), options_(options) {}

  GeneratedModule run() {
    const std::uint32_t nfuncs = 1 + in_.below(5);
    for (std::uint32_t i = 0; i < nfuncs; ++i) {
      ww::FuncType t;
      const std::uint32_t nparams = in_.below(4);
      for (std::uint32_t p = 0; p < nparams; ++p) t.params.push_back(kValTypes[in_.below(4)]);
      const std::uint32_t nresults = in_.below(3);
      for (std::uint32_t r = 0; r < nresults; ++r) t.results.push_back(kValTypes[in_.below(4)]);
      func_types_.push_back(module_.add_type(t));
    }
    module_.memory = ww::Limits{1, 4};
    if (options_.multi_memory && in_.below(2) == 0) {
      mem1_is64_ = options_.memory64 && in_.below(2) == 0;
      module_.more_memories.push_back(ww::Limits{1, 3, mem1_is64_});
      memories_ = 2;
    }
    // table64 (with memory64, as in Wasmtime): sometimes a 64-bit table, indexed by i64.
    table_is64_ = options_.memory64 && in_.below(4) == 0;
    module_.table = ww::Limits{nfuncs + 2, nfuncs + 2, table_is64_};
    ww::ElemSegment elem;
    elem.offset64 = table_is64_;
    for (std::uint32_t i = 0; i < nfuncs; ++i) elem.funcs.push_back(i);
    module_.elems.push_back(elem);
    if (options_.exceptions) {
      // Tag 0 carries nothing, tag 1 an i32; a catch_ref of tag 1 lands in a (result i32 exnref)
      // block. Types added after the functions': their indexes stay as they were.
      module_.tags = {module_.add_type(ww::FuncType{}), module_.add_type(ww::FuncType{{ww::type::i32}, {}})};
      caught_ref_type_ = module_.add_type(ww::FuncType{{}, {ww::type::i32, kExnRef}});
    }
    if (options_.gc) {
      // After the other types, like the tags': (struct (mut i32) (mut i64)), (array (mut i32)),
      // (array (mut i8)).
      struct_type_ = module_.add_type(ww::FuncType{.params = {}, .results = {}, .composite = {0x5f, 0x02, ww::type::i32, 0x01, ww::type::i64, 0x01}});
      array_i32_type_ = module_.add_type(ww::FuncType{.params = {}, .results = {}, .composite = {0x5e, ww::type::i32, 0x01}});
      array_i8_type_ = module_.add_type(ww::FuncType{.params = {}, .results = {}, .composite = {0x5e, 0x78, 0x01}});
    }
    module_.globals = {constant_global(ww::type::i32), constant_global(ww::type::i32), constant_global(ww::type::i64),
                       constant_global(ww::type::f64)};
    Bytes data;
    for (int i = 0, n = static_cast<int>(in_.below(16)); i < n; ++i) data.push_back(in_.byte());
    module_.datas.push_back(ww::DataSegment{.passive = false, .offset = static_cast<std::int32_t>(in_.below(64)), .bytes = data});

    for (std::uint32_t i = 0; i < nfuncs; ++i) module_.functions.push_back(function(func_types_[i]));
    for (std::uint32_t i = 0; i < nfuncs; ++i) {
      std::string name = "f";  // appended, not "f" + to_string(i): GCC 12's false -Wrestrict at -O3
      name += std::to_string(i);
      module_.exports.push_back(ww::Export{std::move(name), 0, i});
    }
    return GeneratedModule{module_.build(), nfuncs};
  }

 private:
  ww::Global constant_global(std::uint8_t t) {
    ww::Global g{.type = t, .mutable_ = true, .init = {}};
    constant(g.init, t);
    return g;
  }

  void constant(Bytes& code, std::uint8_t t) {
    const bool pick = in_.below(2) == 0;
    const std::int64_t v = pick ? kInteresting[in_.below(kInteresting.size())] * (in_.below(2) ? -1 : 1) : 0;
    switch (t) {
      case ww::type::i32: ww::i32_const(code, pick ? static_cast<std::int32_t>(v) : static_cast<std::int32_t>(in_.raw(4))); break;
      case ww::type::i64: ww::i64_const(code, pick ? v : static_cast<std::int64_t>(in_.raw(8))); break;
      case ww::type::f32: {
        code.push_back(0x43);
        std::uint32_t bits = static_cast<std::uint32_t>(in_.raw(4));
        if (pick) {
          const float f = static_cast<float>(v);
          std::memcpy(&bits, &f, 4);
        }
        for (int i = 0; i < 4; ++i) code.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
        break;
      }
      default: {
        code.push_back(0x44);
        std::uint64_t bits = in_.raw(8);
        if (pick) {
          const double d = static_cast<double>(v);
          std::memcpy(&bits, &d, 8);
        }
        for (int i = 0; i < 8; ++i) code.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
        break;
      }
    }
  }

  ww::Function function(std::uint32_t type_index) {
    const ww::FuncType& type = module_.types[type_index];
    locals_.assign(type.params.begin(), type.params.end());
    ww::Function f{.type_index = type_index, .locals = {}, .code = {}};
    for (auto t : kValTypes) {
      f.locals.emplace_back(kLocalsPerType, t);
      for (std::uint32_t i = 0; i < kLocalsPerType; ++i) locals_.push_back(t);
    }
    if (options_.simd) {
      f.locals.emplace_back(kLocalsPerType, ww::type::v128);
      for (std::uint32_t i = 0; i < kLocalsPerType; ++i) locals_.push_back(ww::type::v128);
    }
    if (options_.gc) {
      for (const std::uint8_t t : kRefLocalTypes) {
        f.locals.emplace_back(kLocalsPerType, t);
        for (std::uint32_t i = 0; i < kLocalsPerType; ++i) locals_.push_back(t);
      }
    }
    counter_base_ = static_cast<std::uint32_t>(locals_.size());
    f.locals.emplace_back(kMaxLoopDepth, ww::type::i32);  // loop counters, never touched by local.set
    if (options_.canonical_nan_pairs) {  // the operands of a float operation (float_binary, v128_binary)
      nan_scratch_ = counter_base_ + kMaxLoopDepth;
      f.locals.emplace_back(2, ww::type::f32);
      f.locals.emplace_back(2, ww::type::f64);
      if (options_.simd) f.locals.emplace_back(2, ww::type::v128);
    }
    results_ = type.results;
    loop_depth_ = 0;
    Bytes& code = f.code;
    statements(code, 0);
    for (auto t : type.results) expr(code, t, 0);
    if (options_.strided_loops && !in_.empty()) strided_loop(code);
    return f;
  }

  // GenOptions::strided_loops: with counter = n, while counter != 0: counter -= 1, then 1-3
  // accesses at base + counter * stride (+ the memarg's offset). The results are already on the
  // stack; the block leaves them there.
  void strided_loop(Bytes& code) {
    static constexpr std::array<std::int32_t, 8> kStrides{1, 2, 4, 8, 12, -1, -4, -8};
    const std::uint32_t counter = counter_base_;
    const std::uint32_t n = in_.below(4) == 0 ? in_.below(20) : 16 + in_.below(400);
    const std::int32_t stride = kStrides[in_.below(kStrides.size())];
    const std::int64_t span = std::int64_t{n} * std::abs(stride);
    std::int64_t base = 0;
    switch (in_.below(4)) {
      case 0: base = stride < 0 ? span - in_.below(16) : 0; break;  // from the bottom (below 0 when short)
      case 1: base = 65536 - (stride < 0 ? 0 : span) - in_.below(16); break;  // up to the end of the first page
      case 2: base = static_cast<std::int64_t>(in_.raw(2) % 70000); break;
      default: base = 65536 - 8 + in_.below(16); break;  // across the end
    }
    ww::i32_const(code, static_cast<std::int32_t>(n));
    ww::op_index(code, 0x21, counter);
    code.push_back(0x02);  // block
    code.push_back(0x40);
    code.push_back(0x03);  // loop
    code.push_back(0x40);
    ww::op_index(code, 0x20, counter);
    code.push_back(0x45);  // i32.eqz
    ww::op_index(code, 0x0d, 1);  // br_if 1: out when the counter is 0
    ww::op_index(code, 0x20, counter);
    ww::i32_const(code, 1);
    code.push_back(0x6b);  // i32.sub
    ww::op_index(code, 0x21, counter);
    const std::uint32_t accesses = 1 + in_.below(3);
    for (std::uint32_t a = 0; a < accesses; ++a) {
      ww::i32_const(code, static_cast<std::int32_t>(base));
      ww::op_index(code, 0x20, counter);
      ww::i32_const(code, stride);
      code.push_back(0x6c);  // i32.mul
      code.push_back(0x6a);  // i32.add
      // i32.store8/16, i32.store, i64.store; i32.load8_u/16_u, i32.load, i64.load.
      static constexpr std::array<std::uint8_t, 8> kOps{0x3a, 0x3b, 0x36, 0x37, 0x2d, 0x2f, 0x28, 0x29};
      static constexpr std::array<std::uint32_t, 8> kAligns{0, 1, 2, 3, 0, 1, 2, 3};
      const std::uint32_t which = in_.below(kOps.size());
      if (which < 4) {
        ww::op_index(code, 0x20, counter);
        if (kOps[which] == 0x37) code.push_back(0xad);  // i64.extend_i32_u
        memarg(code, kOps[which], kAligns[which]);
      } else {
        memarg(code, kOps[which], kAligns[which]);
        if (kOps[which] == 0x29) code.push_back(0xa7);  // i32.wrap_i64
        if (has_global(ww::type::i32)) {
          const std::uint32_t g = global_of(ww::type::i32);
          ww::op_index(code, 0x23, g);
          code.push_back(0x6a);  // i32.add
          ww::op_index(code, 0x24, g);
        } else {
          code.push_back(0x1a);  // drop
        }
      }
    }
    ww::op_index(code, 0x0c, 0);  // br 0
    code.push_back(0x0b);
    code.push_back(0x0b);
  }

  void statements(Bytes& code, int depth) {
    const std::uint32_t n = depth > 3 ? in_.below(2) : in_.below(5);
    for (std::uint32_t i = 0; i < n && !in_.empty(); ++i) statement(code, depth);
  }

  void local_of(std::uint8_t t, std::uint32_t& index, bool& found) {
    found = false;
    std::uint32_t matches = 0;
    for (std::uint32_t i = 0; i < counter_base_; ++i) matches += locals_[i] == t;
    if (matches == 0) return;
    std::uint32_t pick = in_.below(matches);
    for (std::uint32_t i = 0; i < counter_base_; ++i) {
      if (locals_[i] == t && pick-- == 0) {
        index = i;
        found = true;
        return;
      }
    }
  }

  std::uint32_t global_of(std::uint8_t t) {
    for (std::uint32_t i = 0; i < module_.globals.size(); ++i) {
      if (module_.globals[i].type == t && (t != ww::type::i32 || in_.below(2) == 0)) return i;
    }
    for (std::uint32_t i = 0; i < module_.globals.size(); ++i) {
      if (module_.globals[i].type == t) return i;
    }
    return 0;
  }

  bool has_global(std::uint8_t t) const {
    for (const auto& g : module_.globals) {
      if (g.type == t) return true;
    }
    return false;
  }

  // The memory an access goes to: 0, or (multi-memory) sometimes memory 1.
  std::uint32_t pick_memory() { return memories_ > 1 && in_.below(3) == 0 ? 1 : 0; }
  bool is64(std::uint32_t mem) const { return mem == 1 && mem1_is64_; }
  // An address of memory `mem`'s address type: i64 for a memory64 memory, sometimes near 2^64.
  void address(Bytes& code, int depth, std::uint32_t mem) {
    if (!is64(mem)) return address(code, depth);
    switch (in_.below(6)) {
      case 0: expr(code, ww::type::i64, depth + 1); return;
      case 1: ww::i64_const(code, -static_cast<std::int64_t>(in_.below(64))); return;  // wraps if added naively
      default: ww::i64_const(code, static_cast<std::int64_t>(in_.raw(2) % 70000)); return;
    }
  }
  // A length or fill value: i64 when every memory involved is 64-bit, else i32.
  void length(Bytes& code, int depth, bool i64) {
    if (in_.below(4) == 0) {
      expr(code, i64 ? ww::type::i64 : ww::type::i32, depth + 1);
    } else if (i64) {
      ww::i64_const(code, static_cast<std::int64_t>(in_.raw(2)));
    } else {
      ww::i32_const(code, static_cast<std::int32_t>(in_.raw(2)));
    }
  }
  // A memarg naming memory `mem` (bit 6 of the alignment announces a memidx); a 64-bit memory's
  // offset sometimes past 2^32 or near 2^64.
  void memarg(Bytes& code, std::uint8_t op, std::uint32_t natural_align, std::uint32_t mem) {
    if (mem == 0) return memarg(code, op, natural_align);
    code.push_back(op);
    ww::uleb(code, in_.below(natural_align + 1) | 0x40);
    ww::uleb(code, mem);
    std::uint64_t offset = in_.below(8) == 0 ? in_.raw(3) : in_.below(32);
    if (is64(mem) && in_.below(8) == 0) offset = in_.below(2) ? (std::uint64_t{1} << 32) + in_.below(16) : ~std::uint64_t{0} - in_.below(16);
    ww::uleb(code, offset);
  }

  void address(Bytes& code, int depth) {
    // Mostly in range, sometimes anything (out-of-bounds traps are the point too), sometimes an
    // expression masked to 2^8..2^17 bytes: a static table's index, whose bounds check the
    // compiled tier leaves out when the mask keeps the access within memory 0's minimum (one
    // page) and keeps when it does not.
    if (in_.below(4) != 0) {
      ww::i32_const(code, static_cast<std::int32_t>(in_.raw(2) % 70000));
    } else if (in_.below(3) == 0) {
      expr(code, ww::type::i32, depth + 1);
      ww::i32_const(code, static_cast<std::int32_t>((1u << (8 + in_.below(10))) - 1 - in_.below(4)));
      code.push_back(0x71);  // i32.and
    } else {
      expr(code, ww::type::i32, depth + 1);
    }
  }

  void memarg(Bytes& code, std::uint8_t op, std::uint32_t natural_align) {
    const std::uint32_t offset = in_.below(8) == 0 ? static_cast<std::uint32_t>(in_.raw(3)) : in_.below(32);
    ww::memarg(code, op, in_.below(natural_align + 1), offset);
  }

  void call_args(Bytes& code, std::uint32_t type_index, int depth) {
    for (auto p : module_.types[type_index].params) expr(code, p, depth + 1);
  }

  void statement(Bytes& code, int depth) {
    if (options_.simd && in_.below(8) == 0) {
      simd_statement(code, depth);
      return;
    }
    if (options_.exceptions && in_.below(6) == 0) {
      exception_statement(code, depth);
      return;
    }
    if (options_.gc && in_.below(5) == 0) {
      gc_statement(code, depth);
      return;
    }
    switch (in_.below(14)) {
      case 0:
      case 1: {  // local.set
        const std::uint8_t t = kValTypes[in_.below(4)];
        std::uint32_t l = 0;
        bool found = false;
        local_of(t, l, found);
        if (!found) return;
        expr(code, t, depth + 1);
        ww::op_index(code, 0x21, l);
        return;
      }
      case 2: {  // global.set
        const std::uint8_t t = kValTypes[in_.below(4)];
        if (!has_global(t)) return;
        expr(code, t, depth + 1);
        ww::op_index(code, 0x24, global_of(t));
        return;
      }
      case 3: {  // store
        const std::uint32_t mem = pick_memory();
        address(code, depth, mem);
        const std::uint32_t which = in_.below(options_.deterministic_only ? 7 : 9);
        static constexpr std::array<std::uint8_t, 9> ops{0x36, 0x37, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x38, 0x39};
        static constexpr std::array<std::uint8_t, 9> types{ww::type::i32, ww::type::i64, ww::type::i32,
                                                           ww::type::i32, ww::type::i64, ww::type::i64,
                                                           ww::type::i64, ww::type::f32, ww::type::f64};
        static constexpr std::array<std::uint32_t, 9> aligns{2, 3, 0, 1, 0, 1, 2, 2, 3};
        expr(code, types[which], depth + 1);
        memarg(code, ops[which], aligns[which], mem);
        return;
      }
      case 4: {  // drop
        expr(code, kValTypes[in_.below(4)], depth + 1);
        code.push_back(0x1a);
        return;
      }
      case 5: {  // if / else
        expr(code, ww::type::i32, depth + 1);
        code.push_back(0x04);
        code.push_back(0x40);
        statements(code, depth + 1);
        if (in_.below(2)) {
          code.push_back(0x05);
          statements(code, depth + 1);
        }
        code.push_back(0x0b);
        return;
      }
      case 6: {  // bounded loop
        if (loop_depth_ >= kMaxLoopDepth) return;
        const std::uint32_t counter = counter_base_ + loop_depth_;
        ww::i32_const(code, static_cast<std::int32_t>(1 + in_.below(8)));
        ww::op_index(code, 0x21, counter);
        code.push_back(0x03);
        code.push_back(0x40);
        ++loop_depth_;
        statements(code, depth + 1);
        --loop_depth_;
        ww::op_index(code, 0x20, counter);
        ww::i32_const(code, 1);
        code.push_back(0x6b);  // i32.sub
        ww::op_index(code, 0x22, counter);
        ww::op_index(code, 0x0d, 0);  // br_if 0: round again while the counter is non-zero
        code.push_back(0x0b);
        return;
      }
      case 7: {  // block left early by br_if
        code.push_back(0x02);
        code.push_back(0x40);
        statements(code, depth + 1);
        expr(code, ww::type::i32, depth + 1);
        ww::op_index(code, 0x0d, 0);
        statements(code, depth + 1);
        code.push_back(0x0b);
        return;
      }
      case 8: {  // memory.fill / memory.copy (a copy may go between memories of both address types)
        const bool fill = in_.below(2) == 0;
        const std::uint32_t dst = pick_memory();
        const std::uint32_t src = fill ? dst : pick_memory();
        address(code, depth, dst);
        if (fill) {
          expr(code, ww::type::i32, depth + 1);
        } else {
          address(code, depth, src);
        }
        length(code, depth, is64(dst) && is64(src));
        ww::prefixed(code, fill ? 11 : 10);
        if (memories_ > 1) {  // memidx LEBs (index 0 is the 2.0 zero byte)
          ww::uleb(code, dst);
          if (!fill) ww::uleb(code, src);
        } else {
          code.push_back(0x00);
          if (!fill) code.push_back(0x00);
        }
        return;
      }
      case 9: {  // call, results dropped
        const std::uint32_t f = in_.below(static_cast<std::uint32_t>(func_types_.size()));
        call_args(code, func_types_[f], depth);
        ww::op_index(code, 0x10, f);
        for (std::size_t i = 0; i < module_.types[func_types_[f]].results.size(); ++i) code.push_back(0x1a);
        return;
      }
      case 10: {  // call_indirect, results dropped
        const std::uint32_t t = func_types_[in_.below(static_cast<std::uint32_t>(func_types_.size()))];
        call_args(code, t, depth);
        table_index(code, depth);
        ww::op_index(code, 0x11, t);
        code.push_back(0x00);
        for (std::size_t i = 0; i < module_.types[t].results.size(); ++i) code.push_back(0x1a);
        return;
      }
      case 11: {  // return (rare), or a tail call (WebAssembly 3.0) to a function of the same results
        if (in_.below(4) != 0) return;
        if (options_.tail_calls && in_.below(2) == 0 && tail_call(code, depth)) return;
        for (auto t : results_) expr(code, t, depth + 1);
        code.push_back(0x0f);
        return;
      }
      case 12: {  // unreachable (rare)
        if (in_.below(8) == 0) code.push_back(0x00);
        return;
      }
      default: {  // memory.grow, result dropped
        const std::uint32_t mem = pick_memory();
        expr(code, is64(mem) ? ww::type::i64 : ww::type::i32, depth + 1);
        code.push_back(0x40);
        ww::uleb(code, mem);
        code.push_back(0x1a);
        return;
      }
    }
  }

  // Exception handling (GenOptions::exceptions): throws, try_table with each clause kind,
  // throw_ref of a caught exnref, legacy try/catch/catch_all/rethrow/delegate. A caught i32 goes
  // to global 0, so what was caught shows in the state the run leaves.
  static constexpr std::uint8_t kExnRef = 0x69;
  void try_table_clause(Bytes& code, std::uint8_t kind, std::uint32_t tag, std::uint32_t label) {
    code.push_back(kind);  // 0 catch, 1 catch_ref, 2 catch_all, 3 catch_all_ref
    if (kind < 2) ww::uleb(code, tag);
    ww::uleb(code, label);
  }
  void exception_statement(Bytes& code, int depth) {
    switch (in_.below(6)) {
      case 0: {  // throw (one in three: it leaves the function unless something catches it)
        if (in_.below(3) != 0) return;
        if (in_.below(2) == 0) {
          ww::op_index(code, 0x08, 0);
        } else {
          expr(code, ww::type::i32, depth + 1);
          ww::op_index(code, 0x08, 1);
        }
        return;
      }
      case 1: {  // try_table catching tag 1 (catch or catch_ref) into a block whose i32 goes to global 0
        const bool ref = in_.below(2) == 0;
        code.push_back(0x02);
        if (ref) {
          ww::sleb(code, caught_ref_type_);
        } else {
          code.push_back(ww::type::i32);
        }
        code.push_back(0x1f);
        code.push_back(0x40);
        ww::uleb(code, 1);
        try_table_clause(code, ref ? 1 : 0, 1, 0);
        statements(code, depth + 1);
        code.push_back(0x0b);
        ww::i32_const(code, static_cast<std::int32_t>(in_.below(100)));  // not thrown: this value
        if (ref) {
          code.push_back(0xd0);  // ref.null exn
          code.push_back(kExnRef);
        }
        code.push_back(0x0b);
        if (ref) {
          code.push_back(0xd1);  // ref.is_null: 0 when caught
          code.push_back(0x6a);  // i32.add
        }
        ww::op_index(code, 0x24, 0);
        return;
      }
      case 2: {  // try_table with catch (tag 0) and/or catch_all to the end of a block
        code.push_back(0x02);
        code.push_back(0x40);
        code.push_back(0x1f);
        code.push_back(0x40);
        const std::uint32_t which = 1 + in_.below(3);  // bit 0: catch tag 0; bit 1: catch_all
        ww::uleb(code, (which & 1) + (which >> 1));
        if ((which & 1) != 0) try_table_clause(code, 0, 0, 0);
        if ((which & 2) != 0) try_table_clause(code, 2, 0, 0);
        statements(code, depth + 1);
        code.push_back(0x0b);
        code.push_back(0x0b);
        return;
      }
      case 3: {  // catch_all_ref, then throw_ref of what was caught (br_on_null skips it otherwise)
        code.push_back(0x02);
        code.push_back(0x40);
        code.push_back(0x02);
        code.push_back(kExnRef);
        code.push_back(0x1f);
        code.push_back(0x40);
        ww::uleb(code, 1);
        try_table_clause(code, 3, 0, 0);
        statements(code, depth + 1);
        code.push_back(0x0b);
        code.push_back(0xd0);  // ref.null exn
        code.push_back(kExnRef);
        code.push_back(0x0b);
        ww::op_index(code, 0xd5, 0);  // br_on_null 0
        code.push_back(0x0a);         // throw_ref
        code.push_back(0x0b);
        return;
      }
      case 4: {  // legacy try: catch tag 1 (its i32 to global 0), catch tag 0, catch_all, rethrow
        code.push_back(0x06);
        code.push_back(0x40);
        statements(code, depth + 1);
        if (in_.below(2) == 0) {
          ww::op_index(code, 0x07, 1);
          ww::op_index(code, 0x24, 0);
          statements(code, depth + 1);
          if (in_.below(4) == 0) ww::op_index(code, 0x09, 0);  // rethrow 0
        }
        if (in_.below(2) == 0) {
          ww::op_index(code, 0x07, 0);
          statements(code, depth + 1);
        }
        if (in_.below(2) == 0) {
          code.push_back(0x19);  // catch_all
          statements(code, depth + 1);
          if (in_.below(4) == 0) ww::op_index(code, 0x09, 0);
        }
        code.push_back(0x0b);
        return;
      }
      default: {  // legacy try … delegate 0 (to the handlers around the enclosing block)
        code.push_back(0x06);
        code.push_back(0x40);
        statements(code, depth + 1);
        ww::op_index(code, 0x18, 0);
        return;
      }
    }
  }

  // ---- typed function references and GC (GenOptions::gc)
  // The reference locals every function has (nullable, so they start null): structref, arrayref,
  // eqref, funcref. Concrete operations reach them through casts, which fail (and trap) when a
  // local holds another type, or pass a null through (`ref.cast null`) to trap at the access.
  static constexpr std::uint8_t kStructRef = 0x6b, kArrayRef = 0x6a, kEqRef = 0x6d, kFuncRef = 0x70, kI31 = 0x6c;
  static constexpr std::array<std::uint8_t, 4> kRefLocalTypes{kStructRef, kArrayRef, kEqRef, kFuncRef};
  // local.get (0x20) or local.set (0x21) of a reference local of type t (every function has some).
  void ref_local(Bytes& code, std::uint8_t op, std::uint8_t t) {
    std::uint32_t l = 0;
    bool found = false;
    local_of(t, l, found);
    ww::op_index(code, op, l);
  }
  void ref_local_get(Bytes& code, std::uint8_t t) { ref_local(code, 0x20, t); }
  void ref_local_set(Bytes& code, std::uint8_t t) { ref_local(code, 0x21, t); }
  // A reference local of type t cast to concrete type `type` (ref.cast null: a null passes, to
  // trap at the access; another type traps at the cast).
  void cast_local(Bytes& code, std::uint8_t t, std::uint32_t type) {
    ref_local_get(code, t);
    ww::gc(code, 0x17);
    ww::sleb(code, type);
  }
  // An array length: mostly small, sometimes any i32 (a huge one reaches the store's limit).
  void array_length(Bytes& code, int depth) {
    if (in_.below(6) == 0) {
      expr(code, ww::type::i32, depth + 1);
    } else {
      ww::i32_const(code, static_cast<std::int32_t>(in_.below(12)));
    }
  }
  // An index into an array: mostly small (in or just past its length), sometimes any i32.
  void array_index(Bytes& code, int depth) {
    if (in_.below(5) == 0) {
      expr(code, ww::type::i32, depth + 1);
    } else {
      ww::i32_const(code, static_cast<std::int32_t>(in_.below(14)));
    }
  }
  // A (ref null $struct): a new one, the structref local cast to it, or null.
  void struct_ref(Bytes& code, int depth) {
    switch (in_.below(6)) {
      case 0:
        expr(code, ww::type::i32, depth + 1);
        expr(code, ww::type::i64, depth + 1);
        ww::gc(code, 0x00, struct_type_);  // struct.new
        return;
      case 1:
        ww::gc(code, 0x01, struct_type_);  // struct.new_default
        return;
      case 2:
        code.push_back(0xd0);  // ref.null $struct
        ww::sleb(code, struct_type_);
        return;
      default:
        cast_local(code, in_.below(3) == 0 ? kEqRef : kStructRef, struct_type_);
        return;
    }
  }
  // A (ref null $array) of either array type (`i8`: the packed one): new (array.new,
  // array.new_default, array.new_fixed), or the arrayref local cast to it.
  void array_ref(Bytes& code, int depth, bool i8) {
    const std::uint32_t type = i8 ? array_i8_type_ : array_i32_type_;
    switch (in_.below(6)) {
      case 0:
        expr(code, ww::type::i32, depth + 1);
        array_length(code, depth);
        ww::gc(code, 0x06, type);  // array.new
        return;
      case 1:
        array_length(code, depth);
        ww::gc(code, 0x07, type);  // array.new_default
        return;
      case 2: {
        const std::uint32_t n = in_.below(5);
        for (std::uint32_t i = 0; i < n; ++i) expr(code, ww::type::i32, depth + 1);
        ww::gc(code, 0x08, type);  // array.new_fixed
        ww::uleb(code, n);
        return;
      }
      default:
        cast_local(code, in_.below(3) == 0 ? kEqRef : kArrayRef, type);
        return;
    }
  }
  // An eqref: a reference local (structref and arrayref are eqrefs), a new object, or an i31.
  void eq_ref(Bytes& code, int depth) {
    switch (in_.below(5)) {
      case 0: ref_local_get(code, kStructRef); return;
      case 1: ref_local_get(code, kArrayRef); return;
      case 2: expr(code, ww::type::i32, depth + 1); ww::gc(code, 0x1c); return;  // ref.i31
      case 3: struct_ref(code, depth); return;
      default: ref_local_get(code, kEqRef); return;
    }
  }
  // A function of type index `type` by reference: ref.func of one, or the funcref local cast to
  // the type (null or another function's type traps at the cast or the call).
  void func_ref(Bytes& code, std::uint32_t f) {
    if (in_.below(3) == 0) {
      cast_local(code, kFuncRef, func_types_[f]);
    } else {
      ww::op_index(code, 0xd2, f);  // ref.func
    }
  }

  void gc_statement(Bytes& code, int depth) {
    switch (in_.below(9)) {
      case 0: struct_ref(code, depth); ref_local_set(code, kStructRef); return;
      case 1: array_ref(code, depth, in_.below(2) == 0); ref_local_set(code, kArrayRef); return;
      case 2: eq_ref(code, depth); ref_local_set(code, kEqRef); return;
      case 3: {  // funcref local: a function, or null
        if (in_.below(4) == 0) {
          code.push_back(0xd0);
          code.push_back(kFuncRef);
        } else {
          ww::op_index(code, 0xd2, in_.below(static_cast<std::uint32_t>(func_types_.size())));
        }
        ref_local_set(code, kFuncRef);
        return;
      }
      case 4: {  // struct.set of either field
        struct_ref(code, depth);
        const bool wide = in_.below(2) == 0;
        expr(code, wide ? ww::type::i64 : ww::type::i32, depth + 1);
        ww::gc(code, 0x05, struct_type_);
        ww::uleb(code, wide ? 1 : 0);
        return;
      }
      case 5: {  // array.set
        const bool i8 = in_.below(2) == 0;
        array_ref(code, depth, i8);
        array_index(code, depth);
        expr(code, ww::type::i32, depth + 1);
        ww::gc(code, 0x0e, i8 ? array_i8_type_ : array_i32_type_);
        return;
      }
      case 6: {  // array.fill
        const bool i8 = in_.below(2) == 0;
        array_ref(code, depth, i8);
        array_index(code, depth);
        expr(code, ww::type::i32, depth + 1);
        array_length(code, depth);
        ww::gc(code, 0x10, i8 ? array_i8_type_ : array_i32_type_);
        return;
      }
      case 7: {  // array.copy between arrays of one type (sometimes the same array: overlap)
        const bool i8 = in_.below(2) == 0;
        const std::uint32_t type = i8 ? array_i8_type_ : array_i32_type_;
        array_ref(code, depth, i8);
        array_index(code, depth);
        array_ref(code, depth, i8);
        array_index(code, depth);
        array_length(code, depth);
        ww::gc(code, 0x11, type);
        ww::uleb(code, type);
        return;
      }
      default: {  // br_on_non_null: a non-null eqref leaves the block (dropped after it)
        code.push_back(0x02);
        code.push_back(kEqRef);
        eq_ref(code, depth);
        ww::op_index(code, 0xd6, 0);  // br_on_non_null 0
        statements(code, depth + 1);
        code.push_back(0xd0);
        code.push_back(kEqRef);
        code.push_back(0x0b);
        code.push_back(0x1a);  // drop
        return;
      }
    }
  }

  // An i32 (or, from the struct's second field, an i64) read through GC and typed references.
  void gc_expr(Bytes& code, std::uint8_t t, int depth) {
    if (t == ww::type::i64) {
      struct_ref(code, depth);
      ww::gc(code, 0x02, struct_type_);  // struct.get $struct 1
      ww::uleb(code, 1);
      return;
    }
    switch (in_.below(10)) {
      case 0:
        struct_ref(code, depth);
        ww::gc(code, 0x02, struct_type_);  // struct.get $struct 0
        ww::uleb(code, 0);
        return;
      case 1: {  // array.get (i32), array.get_s or array.get_u (packed i8)
        const bool i8 = in_.below(2) == 0;
        array_ref(code, depth, i8);
        array_index(code, depth);
        ww::gc(code, i8 ? 0x0c + in_.below(2) : 0x0b, i8 ? array_i8_type_ : array_i32_type_);
        return;
      }
      case 2:
        if (in_.below(2) == 0) {
          ref_local_get(code, kArrayRef);
        } else {
          array_ref(code, depth, in_.below(2) == 0);
        }
        ww::gc(code, 0x0f);  // array.len
        return;
      case 3: {  // i31.get_s or _u of a new i31, or of the eqref local cast to i31
        if (in_.below(2) == 0) {
          expr(code, ww::type::i32, depth + 1);
          ww::gc(code, 0x1c);  // ref.i31
        } else {
          ref_local_get(code, kEqRef);
          ww::gc(code, 0x17);  // ref.cast null i31
          code.push_back(kI31);
        }
        ww::gc(code, 0x1d + in_.below(2));
        return;
      }
      case 4: {  // ref.test or ref.cast (then ref.is_null) of an eqref against a concrete or abstract type
        eq_ref(code, depth);
        static constexpr std::array<std::uint8_t, 4> kAbstract{kStructRef, kArrayRef, kI31, kEqRef};
        const bool cast = in_.below(3) == 0;
        ww::gc(code, (cast ? 0x16 : 0x14) + in_.below(2));  // non-null or null
        switch (in_.below(5)) {
          case 0: ww::sleb(code, struct_type_); break;
          case 1: ww::sleb(code, array_i32_type_); break;
          case 2: ww::sleb(code, array_i8_type_); break;
          default: code.push_back(kAbstract[in_.below(4)]); break;
        }
        if (cast) code.push_back(0xd1);  // ref.is_null
        return;
      }
      case 5:  // ref.eq
        eq_ref(code, depth);
        eq_ref(code, depth);
        code.push_back(0xd3);
        return;
      case 6:  // ref.is_null of a reference local, or ref.as_non_null (traps on null) of one
        ref_local_get(code, kRefLocalTypes[in_.below(4)]);
        if (in_.below(3) == 0) code.push_back(0xd4);
        code.push_back(0xd1);
        return;
      case 7: {  // br_on_null: a null struct leaves the block with the value below it
        code.push_back(0x02);
        code.push_back(ww::type::i32);
        expr(code, ww::type::i32, depth + 1);
        struct_ref(code, depth);
        ww::op_index(code, 0xd5, 0);  // br_on_null 0: (ref $struct) left when not null
        ww::gc(code, 0x02, struct_type_);
        ww::uleb(code, 0);
        code.push_back(0x6a);  // i32.add
        code.push_back(0x0b);
        return;
      }
      default: {  // call_ref of a function returning one i32
        for (std::uint32_t f = 0; f < func_types_.size(); ++f) {
          const auto& ft = module_.types[func_types_[f]];
          if (ft.results.size() == 1 && ft.results[0] == ww::type::i32 && in_.below(2) == 0) {
            call_args(code, func_types_[f], depth);
            func_ref(code, f);
            ww::op_index(code, 0x14, func_types_[f]);  // call_ref
            return;
          }
        }
        i32_expr(code, depth);
        return;
      }
    }
  }

  // return_call f, or return_call_indirect through the table (whatever the slot holds: a
  // mismatch traps), to a function whose results are this one's; false when there is none.
  // Recursion through tail calls runs in constant frame space, so fuel is what stops it.
  bool tail_call(Bytes& code, int depth) {
    const auto n = static_cast<std::uint32_t>(func_types_.size());
    const std::uint32_t start = in_.below(n);
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t f = (start + k) % n;
      if (module_.types[func_types_[f]].results != results_) continue;
      call_args(code, func_types_[f], depth);
      if (in_.below(2) == 0) {
        ww::op_index(code, 0x12, f);
      } else {
        table_index(code, depth);
        ww::op_index(code, 0x13, func_types_[f]);
        code.push_back(0x00);
      }
      return true;
    }
    return false;
  }

  void table_index(Bytes& code, int depth) {
    if (table_is64_) {  // an i64 index; sometimes 2^32 + k, which must trap, never reach slot k
      switch (in_.below(6)) {
        case 0: expr(code, ww::type::i64, depth + 1); return;
        case 1: ww::i64_const(code, static_cast<std::int64_t>((std::uint64_t{1} << 32) + in_.below(4))); return;
        default:
          ww::i64_const(code, static_cast<std::int64_t>(in_.below(static_cast<std::uint32_t>(func_types_.size()) + 3)));
          return;
      }
    }
    if (in_.below(4) != 0) {
      ww::i32_const(code, static_cast<std::int32_t>(in_.below(static_cast<std::uint32_t>(func_types_.size()) + 3)));
    } else {
      expr(code, ww::type::i32, depth + 1);
    }
  }

  void leaf(Bytes& code, std::uint8_t t) {
    switch (in_.below(3)) {
      case 0: {
        std::uint32_t l = 0;
        bool found = false;
        local_of(t, l, found);
        if (found) {
          ww::op_index(code, 0x20, l);
          return;
        }
        break;
      }
      case 1:
        if (has_global(t)) {
          ww::op_index(code, 0x23, global_of(t));
          return;
        }
        break;
      default: break;
    }
    constant(code, t);
  }

  // Pushes exactly one value of type t.
  void expr(Bytes& code, std::uint8_t t, int depth) {
    if (depth >= kMaxExprDepth || in_.empty()) {
      leaf(code, t);
      return;
    }
    const std::uint32_t choice = in_.below(16);
    switch (choice) {
      case 0:
      case 1: leaf(code, t); return;
      case 2: {  // select
        expr(code, t, depth + 1);
        expr(code, t, depth + 1);
        expr(code, ww::type::i32, depth + 1);
        code.push_back(0x1b);
        return;
      }
      case 3: {  // block with a result
        code.push_back(0x02);
        code.push_back(t);
        statements(code, depth + 1);
        expr(code, t, depth + 1);
        code.push_back(0x0b);
        return;
      }
      case 4: {  // if with a result
        expr(code, ww::type::i32, depth + 1);
        code.push_back(0x04);
        code.push_back(t);
        expr(code, t, depth + 1);
        code.push_back(0x05);
        expr(code, t, depth + 1);
        code.push_back(0x0b);
        return;
      }
      case 5: {  // call of a function returning exactly t
        for (std::uint32_t f = 0; f < func_types_.size(); ++f) {
          const auto& ft = module_.types[func_types_[f]];
          if (ft.results.size() == 1 && ft.results[0] == t && in_.below(2) == 0) {
            call_args(code, func_types_[f], depth);
            if (in_.below(2) == 0) {
              ww::op_index(code, 0x10, f);
            } else {  // the same type through the table, whatever the slot holds
              table_index(code, depth);
              ww::op_index(code, 0x11, func_types_[f]);
              code.push_back(0x00);
            }
            return;
          }
        }
        leaf(code, t);
        return;
      }
      case 6: {  // load
        const std::uint32_t mem = pick_memory();
        address(code, depth, mem);
        load(code, t, mem);
        return;
      }
      default: break;
    }
    if (options_.simd && in_.below(6) == 0) {
      v128_to_scalar(code, t, depth);
      return;
    }
    if (options_.gc && (t == ww::type::i32 || t == ww::type::i64) && in_.below(4) == 0) {
      gc_expr(code, t, depth);
      return;
    }
    switch (t) {
      case ww::type::i32: i32_expr(code, depth); return;
      case ww::type::i64: i64_expr(code, depth); return;
      case ww::type::f32: float_expr(code, depth, ww::type::f32); return;
      default: float_expr(code, depth, ww::type::f64); return;
    }
  }

  void load(Bytes& code, std::uint8_t t, std::uint32_t mem) {
    switch (t) {
      case ww::type::i32: {
        static constexpr std::array<std::uint8_t, 5> ops{0x28, 0x2c, 0x2d, 0x2e, 0x2f};
        static constexpr std::array<std::uint32_t, 5> aligns{2, 0, 0, 1, 1};
        const auto i = in_.below(5);
        memarg(code, ops[i], aligns[i], mem);
        return;
      }
      case ww::type::i64: {
        static constexpr std::array<std::uint8_t, 7> ops{0x29, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35};
        static constexpr std::array<std::uint32_t, 7> aligns{3, 0, 0, 1, 1, 2, 2};
        const auto i = in_.below(7);
        memarg(code, ops[i], aligns[i], mem);
        return;
      }
      case ww::type::f32: memarg(code, 0x2a, 2, mem); return;
      default: memarg(code, 0x2b, 3, mem); return;
    }
  }

  void i32_expr(Bytes& code, int depth) {
    switch (in_.below(9)) {
      case 0:
      case 1:
      case 2: {  // binary
        expr(code, ww::type::i32, depth + 1);
        expr(code, ww::type::i32, depth + 1);
        code.push_back(static_cast<std::uint8_t>(0x6a + in_.below(15)));
        return;
      }
      case 3: {  // comparison of any type
        const std::uint8_t t = kValTypes[in_.below(4)];
        expr(code, t, depth + 1);
        expr(code, t, depth + 1);
        switch (t) {
          case ww::type::i32: code.push_back(static_cast<std::uint8_t>(0x46 + in_.below(10))); return;
          case ww::type::i64: code.push_back(static_cast<std::uint8_t>(0x51 + in_.below(10))); return;
          case ww::type::f32: code.push_back(static_cast<std::uint8_t>(0x5b + in_.below(6))); return;
          default: code.push_back(static_cast<std::uint8_t>(0x61 + in_.below(6))); return;
        }
      }
      case 4: {  // unary
        static constexpr std::array<std::uint8_t, 5> ops{0x67, 0x68, 0x69, 0x45, 0xc0};
        expr(code, ww::type::i32, depth + 1);
        const auto op = ops[in_.below(5)];
        code.push_back(op == 0xc0 && in_.below(2) ? 0xc1 : op);
        return;
      }
      case 5: {  // from i64
        expr(code, ww::type::i64, depth + 1);
        code.push_back(in_.below(2) ? 0xa7 : 0x50);  // wrap / eqz
        return;
      }
      case 6: {  // float → int (trapping or saturating)
        const bool f64 = in_.below(2);
        expr(code, f64 ? ww::type::f64 : ww::type::f32, depth + 1);
        if (in_.below(2)) {
          code.push_back(static_cast<std::uint8_t>((f64 ? 0xaa : 0xa8) + in_.below(2)));
        } else {
          ww::prefixed(code, (f64 ? 2 : 0) + in_.below(2));
        }
        return;
      }
      case 7: {
        if (!options_.deterministic_only) {  // reinterpret exposes NaN payloads
          expr(code, ww::type::f32, depth + 1);
          code.push_back(0xbc);
          return;
        }
        code.push_back(0x3f);  // memory.size
        code.push_back(0x00);
        return;
      }
      default: {  // memory.grow
        expr(code, ww::type::i32, depth + 1);
        code.push_back(0x40);
        code.push_back(0x00);
        return;
      }
    }
  }

  void i64_expr(Bytes& code, int depth) {
    switch (in_.below(6)) {
      case 0:
      case 1:
      case 2: {
        expr(code, ww::type::i64, depth + 1);
        expr(code, ww::type::i64, depth + 1);
        code.push_back(static_cast<std::uint8_t>(0x7c + in_.below(15)));
        return;
      }
      case 3: {
        static constexpr std::array<std::uint8_t, 6> ops{0x79, 0x7a, 0x7b, 0xc2, 0xc3, 0xc4};
        expr(code, ww::type::i64, depth + 1);
        code.push_back(ops[in_.below(6)]);
        return;
      }
      case 4: {
        expr(code, ww::type::i32, depth + 1);
        code.push_back(in_.below(2) ? 0xac : 0xad);
        return;
      }
      default: {
        const bool f64 = in_.below(2);
        expr(code, f64 ? ww::type::f64 : ww::type::f32, depth + 1);
        if (f64 && !options_.deterministic_only && in_.below(4) == 0) {
          code.push_back(0xbd);  // i64.reinterpret_f64
        } else if (in_.below(2)) {
          code.push_back(static_cast<std::uint8_t>((f64 ? 0xb0 : 0xae) + in_.below(2)));
        } else {
          ww::prefixed(code, (f64 ? 6 : 4) + in_.below(2));
        }
        return;
      }
    }
  }

  // The canonical quiet NaN's little-endian bytes, f32 0x7FC00000 or f64 0x7FF8000000000000.
  static void canonical_nan_bytes(Bytes& code, bool is64) {
    if (is64) {
      for (const std::uint8_t byte : {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f}) code.push_back(byte);
    } else {
      for (const std::uint8_t byte : {0x00, 0x00, 0xc0, 0x7f}) code.push_back(byte);
    }
  }

  // The operator of a float binary expression whose operands are on the stack. Under
  // canonical_nan_pairs an arithmetic one (add sub mul div) becomes
  //   canonical NaN, (a op b), (a != a) & (b != b), select
  // with a and b kept in the scratch locals, so two NaN operands give the canonical NaN. The
  // operands are whole expressions evaluated before, so nested uses of the scratch locals are over.
  void float_binary(Bytes& code, std::uint8_t op, bool is64, bool arithmetic) {
    if (!options_.canonical_nan_pairs || !arithmetic) {
      code.push_back(op);
      return;
    }
    const std::uint32_t a = nan_scratch_ + (is64 ? 2 : 0), b = a + 1;
    ww::op_index(code, 0x21, b);  // local.set b
    ww::op_index(code, 0x21, a);  // local.set a
    code.push_back(is64 ? 0x44 : 0x43);  // f64.const / f32.const
    canonical_nan_bytes(code, is64);
    ww::op_index(code, 0x20, a);
    ww::op_index(code, 0x20, b);
    code.push_back(op);
    const std::uint8_t ne = is64 ? 0x62 : 0x5c;
    for (const std::uint32_t l : {a, b}) {
      ww::op_index(code, 0x20, l);
      ww::op_index(code, 0x20, l);
      code.push_back(ne);
    }
    code.push_back(0x71);  // i32.and
    code.push_back(0x1b);  // select
  }

  void float_expr(Bytes& code, int depth, std::uint8_t t) {
    const bool is64 = t == ww::type::f64;
    switch (in_.below(5)) {
      case 0:
      case 1: {
        expr(code, t, depth + 1);
        expr(code, t, depth + 1);
        // add sub mul div min max copysign. copysign copies the sign of a NaN, which the spec
        // leaves to the engine for arithmetic NaNs (x86 makes 0/0 negative, wabt positive): in
        // differential mode it becomes an add (same input bytes consumed, so corpora keep their
        // modules otherwise).
        std::uint32_t op = in_.below(7);
        if (op == 6 && options_.deterministic_only) op = 0;
        float_binary(code, static_cast<std::uint8_t>((is64 ? 0xa0 : 0x92) + op), is64, op <= 3);
        return;
      }
      case 2: {
        expr(code, t, depth + 1);
        code.push_back(static_cast<std::uint8_t>((is64 ? 0x99 : 0x8b) + in_.below(7)));
        return;
      }
      case 3: {  // from integers
        const bool from64 = in_.below(2);
        expr(code, from64 ? ww::type::i64 : ww::type::i32, depth + 1);
        code.push_back(static_cast<std::uint8_t>((is64 ? 0xb7 : 0xb2) + (from64 ? 2 : 0) + in_.below(2)));
        return;
      }
      default: {  // from the other float type, or reinterpreted bits
        if (in_.below(3) == 0) {
          expr(code, is64 ? ww::type::i64 : ww::type::i32, depth + 1);
          code.push_back(is64 ? 0xbf : 0xbe);
          return;
        }
        expr(code, is64 ? ww::type::f32 : ww::type::f64, depth + 1);
        code.push_back(is64 ? 0xbb : 0xb6);
        return;
      }
    }
  }

  // ---- fixed-width SIMD (GenOptions::simd)

  const SimdOps::Row* pick(const SimdOps::Group& g) {
    const auto& rows = options_.deterministic_only ? g.deterministic : g.all;
    if (rows.empty()) return nullptr;
    return &rows[in_.below(static_cast<std::uint32_t>(rows.size()))];
  }

  void simd_memarg(Bytes& code, const SimdOps::Row& row) {
    ww::simd(code, row.sub);
    const std::uint32_t offset = in_.below(8) == 0 ? static_cast<std::uint32_t>(in_.raw(3)) : in_.below(32);
    ww::uleb(code, in_.below(*wasm::natural_alignment_log2(row.imm) + 1));
    ww::uleb(code, offset);
  }
  void lane_immediate(Bytes& code, const SimdOps::Row& row) {
    code.push_back(static_cast<std::uint8_t>(in_.below(wasm::lane_count(row.imm))));
  }

  // v128.store or a lane store, or a v128 local.set.
  void simd_statement(Bytes& code, int depth) {
    switch (in_.below(3)) {
      case 0: {
        std::uint32_t l = 0;
        bool found = false;
        local_of(ww::type::v128, l, found);
        if (!found) return;
        v128_expr(code, depth + 1);
        ww::op_index(code, 0x21, l);
        return;
      }
      case 1: {
        const SimdOps::Row* row = pick(simd_ops().store);
        address(code, depth);
        v128_expr(code, depth + 1);
        simd_memarg(code, *row);
        return;
      }
      default: {
        const SimdOps::Row* row = pick(simd_ops().store_lane);
        address(code, depth);
        v128_expr(code, depth + 1);
        simd_memarg(code, *row);
        lane_immediate(code, *row);
        return;
      }
    }
  }

  // A scalar of type t out of a v128 expression: a lane, or (i32) any_true / all_true / bitmask.
  void v128_to_scalar(Bytes& code, std::uint8_t t, int depth) {
    const SimdOps& ops = simd_ops();
    const bool test = t == ww::type::i32 && in_.below(3) == 0;
    const SimdOps::Row* row = test                    ? pick(ops.test)
                              : t == ww::type::i32    ? pick(ops.extract_i32)
                              : t == ww::type::i64    ? pick(ops.extract_i64)
                              : t == ww::type::f32    ? pick(ops.extract_f32)
                                                      : pick(ops.extract_f64);
    v128_expr(code, depth + 1);
    ww::simd(code, row->sub);
    if (!test) lane_immediate(code, *row);
  }

  void v128_const(Bytes& code) {
    ww::simd(code, 0x0c);
    const bool repeat = in_.below(2) == 0;  // one interesting byte everywhere, or 16 input bytes
    const auto fill = static_cast<std::uint8_t>(kInteresting[in_.below(kInteresting.size())]);
    for (int i = 0; i < 16; ++i) code.push_back(repeat ? fill : in_.byte());
  }

  void v128_leaf(Bytes& code) {
    if (in_.below(2) == 0) {
      std::uint32_t l = 0;
      bool found = false;
      local_of(ww::type::v128, l, found);
      if (found) {
        ww::op_index(code, 0x20, l);
        return;
      }
    }
    v128_const(code);
  }

  // The operator of a v128 binary expression whose operands are on the stack. Under
  // canonical_nan_pairs f32x4/f64x2 add, sub, mul and div become
  //   canonical NaN splat, (a op b), (a != a) & (b != b), v128.bitselect
  // with a and b kept in the v128 scratch locals: a lane whose operands are both NaNs gives the
  // canonical NaN (as float_binary does for the scalar operators); every other lane is as computed.
  void v128_binary(Bytes& code, std::uint32_t sub) {
    // f32x4.add sub mul div: 0xe4..0xe7; f64x2: 0xf0..0xf3.
    const bool f32 = sub >= 0xe4 && sub <= 0xe7, f64 = sub >= 0xf0 && sub <= 0xf3;
    if (!options_.canonical_nan_pairs || !(f32 || f64)) {
      ww::simd(code, sub);
      return;
    }
    const std::uint32_t a = nan_scratch_ + 4, b = a + 1;
    ww::op_index(code, 0x21, b);  // local.set b
    ww::op_index(code, 0x21, a);  // local.set a
    ww::simd(code, 0x0c);         // v128.const: the canonical NaN in every lane
    for (int lane = 0; lane < (f32 ? 4 : 2); ++lane) canonical_nan_bytes(code, f64);
    ww::op_index(code, 0x20, a);
    ww::op_index(code, 0x20, b);
    ww::simd(code, sub);
    const std::uint32_t ne = f32 ? 0x42 : 0x48;  // f32x4.ne / f64x2.ne: all ones in a NaN lane
    for (const std::uint32_t l : {a, b}) {
      ww::op_index(code, 0x20, l);
      ww::op_index(code, 0x20, l);
      ww::simd(code, ne);
    }
    ww::simd(code, 0x4e);  // v128.and
    ww::simd(code, 0x52);  // v128.bitselect: the NaN where the mask is set
  }

  // Pushes exactly one v128.
  void v128_expr(Bytes& code, int depth) {
    if (depth >= kMaxExprDepth || in_.empty()) {
      v128_leaf(code);
      return;
    }
    const SimdOps& ops = simd_ops();
    switch (in_.below(12)) {
      case 0: v128_leaf(code); return;
      case 1: {  // splat of a scalar
        static constexpr std::array<std::uint8_t, 4> types{ww::type::i32, ww::type::i64, ww::type::f32, ww::type::f64};
        const std::uint32_t k = in_.below(options_.deterministic_only ? 2 : 4);
        const SimdOps::Group* groups[] = {&ops.splat_i32, &ops.splat_i64, &ops.splat_f32, &ops.splat_f64};
        const SimdOps::Row* row = pick(*groups[k]);
        expr(code, types[k], depth + 1);
        ww::simd(code, row->sub);
        return;
      }
      case 2: {
        const SimdOps::Row* row = pick(ops.unary);
        v128_expr(code, depth + 1);
        ww::simd(code, row->sub);
        return;
      }
      case 3:
      case 4: {
        const SimdOps::Row* row = pick(ops.binary);
        v128_expr(code, depth + 1);
        v128_expr(code, depth + 1);
        v128_binary(code, row->sub);
        return;
      }
      case 5: {
        const SimdOps::Row* row = pick(ops.ternary);
        for (int i = 0; i < 3; ++i) v128_expr(code, depth + 1);
        ww::simd(code, row->sub);
        return;
      }
      case 6: {  // shift by an i32 (taken modulo the lane width)
        const SimdOps::Row* row = pick(ops.shift);
        v128_expr(code, depth + 1);
        expr(code, ww::type::i32, depth + 1);
        ww::simd(code, row->sub);
        return;
      }
      case 7: {  // replace_lane
        static constexpr std::array<std::uint8_t, 4> types{ww::type::i32, ww::type::i64, ww::type::f32, ww::type::f64};
        const std::uint32_t k = in_.below(options_.deterministic_only ? 2 : 4);
        const SimdOps::Group* groups[] = {&ops.replace_i32, &ops.replace_i64, &ops.replace_f32, &ops.replace_f64};
        const SimdOps::Row* row = pick(*groups[k]);
        v128_expr(code, depth + 1);
        expr(code, types[k], depth + 1);
        ww::simd(code, row->sub);
        lane_immediate(code, *row);
        return;
      }
      case 8: {  // i8x16.shuffle
        v128_expr(code, depth + 1);
        v128_expr(code, depth + 1);
        ww::simd(code, 0x0d);
        for (int i = 0; i < 16; ++i) code.push_back(static_cast<std::uint8_t>(in_.below(32)));
        return;
      }
      case 9: {  // load: plain, splat, extend, zero
        const SimdOps::Row* row = pick(ops.load);
        address(code, depth);
        simd_memarg(code, *row);
        return;
      }
      case 10: {  // load into a lane
        const SimdOps::Row* row = pick(ops.load_lane);
        address(code, depth);
        v128_expr(code, depth + 1);
        simd_memarg(code, *row);
        lane_immediate(code, *row);
        return;
      }
      default: {  // select between two vectors
        v128_expr(code, depth + 1);
        v128_expr(code, depth + 1);
        expr(code, ww::type::i32, depth + 1);
        code.push_back(0x1b);
        return;
      }
    }
  }

  Source in_;
  GenOptions options_;
  std::uint32_t memories_ = 1;  // 2 with a second memory (GenOptions::multi_memory)
  bool mem1_is64_ = false;     // memory 1 is a memory64 memory
  bool table_is64_ = false;    // table 0 is a 64-bit table (table64, GenOptions::memory64)
  ww::Module module_;
  std::vector<std::uint32_t> func_types_;
  std::vector<std::uint8_t> locals_;
  std::uint32_t counter_base_ = 0;
  std::uint32_t loop_depth_ = 0;
  std::uint32_t nan_scratch_ = 0;  // canonical_nan_pairs: f32 a, f32 b, f64 a, f64 b (, v128 a, v128 b) from here
  std::uint32_t struct_type_ = 0, array_i32_type_ = 0, array_i8_type_ = 0;  // GenOptions::gc's types
  std::uint32_t caught_ref_type_ = 0;  // [] -> [i32 exnref]: the block a catch_ref of tag 1 lands in
  ww::Bytes results_;
};

}  // namespace

GeneratedModule generate_module(std::span<const std::uint8_t> input, const GenOptions& options) {
  return Generator(input, options).run();
}

}  // namespace sprawling::fuzz
