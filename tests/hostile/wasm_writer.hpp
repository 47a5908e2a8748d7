// A minimal WebAssembly binary writer for tests and fuzzers that need modules too big or too
// random to commit: sections in spec order, LEB128 encoders and a few instruction helpers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sprawling::test::wasm_writer {

using Bytes = std::vector<std::uint8_t>;

namespace type {
inline constexpr std::uint8_t i32 = 0x7f, i64 = 0x7e, f32 = 0x7d, f64 = 0x7c, funcref = 0x70, externref = 0x6f;
inline constexpr std::uint8_t v128 = 0x7b;
}  // namespace type

inline void uleb(Bytes& out, std::uint64_t v) {
  do {
    std::uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out.push_back(byte);
  } while (v != 0);
}

inline void sleb(Bytes& out, std::int64_t v) {
  for (;;) {
    const std::uint8_t byte = v & 0x7f;
    v >>= 7;  // arithmetic shift (C++20)
    const bool done = (v == 0 && (byte & 0x40) == 0) || (v == -1 && (byte & 0x40) != 0);
    out.push_back(done ? byte : static_cast<std::uint8_t>(byte | 0x80));
    if (done) return;
  }
}

inline void name(Bytes& out, std::string_view s) {
  uleb(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

inline void append(Bytes& out, const Bytes& more) { out.insert(out.end(), more.begin(), more.end()); }

// Instruction helpers for code bodies.
inline void i32_const(Bytes& code, std::int32_t v) {
  code.push_back(0x41);
  sleb(code, v);
}
inline void i64_const(Bytes& code, std::int64_t v) {
  code.push_back(0x42);
  sleb(code, v);
}
inline void op_index(Bytes& code, std::uint8_t op, std::uint64_t index) {
  code.push_back(op);
  uleb(code, index);
}
inline void memarg(Bytes& code, std::uint8_t op, std::uint32_t align, std::uint32_t offset) {
  code.push_back(op);
  uleb(code, align);
  uleb(code, offset);
}
inline void prefixed(Bytes& code, std::uint32_t sub) {  // 0xFC-prefixed (bulk memory, sat trunc, tables)
  code.push_back(0xfc);
  uleb(code, sub);
}
inline void simd(Bytes& code, std::uint32_t sub) {  // 0xFD-prefixed (SIMD)
  code.push_back(0xfd);
  uleb(code, sub);
}

inline void gc(Bytes& code, std::uint32_t sub) {  // 0xFB-prefixed (GC), no immediates
  code.push_back(0xfb);
  uleb(code, sub);
}
inline void gc(Bytes& code, std::uint32_t sub, std::uint32_t type_index) {  // 0xFB-prefixed with a type index
  gc(code, sub);
  uleb(code, type_index);
}

struct FuncType {
  Bytes params;
  Bytes results;
  // A struct or array type instead (GC): its composite type's bytes as written in the type
  // section (0x5F fields…, or 0x5E field); params and results are then unused.
  Bytes composite = {};
};

struct Import {
  std::string module;
  std::string field;
  std::uint32_t type_index;  // function imports only
};

struct Function {
  std::uint32_t type_index = 0;
  std::vector<std::pair<std::uint32_t, std::uint8_t>> locals;  // (count, type)
  Bytes code;  // the instructions, without the final `end` (build() adds it)
};

struct Global {
  std::uint8_t type = type::i32;
  bool mutable_ = true;
  Bytes init;  // a constant expression without its `end`
};

struct Export {
  std::string field;
  std::uint8_t kind = 0;  // 0 func, 1 table, 2 memory, 3 global
  std::uint32_t index = 0;
};

struct Limits {
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
  bool is64 = false;  // a memory64 memory or a 64-bit table (limits flags bit 2)
};

struct ElemSegment {  // active, table 0, funcref by index
  std::int32_t offset = 0;
  std::vector<std::uint32_t> funcs;
  bool offset64 = false;  // an i64.const offset (table 0 is a 64-bit table)
};

struct DataSegment {  // active on memory 0 at an i32.const offset, or passive
  bool passive = false;
  std::int32_t offset = 0;
  Bytes bytes;
};

struct Module {
  std::vector<FuncType> types;  // function types, and GC struct and array types (FuncType::composite)
  std::vector<Import> imports;
  std::vector<Function> functions;
  std::optional<Limits> table;  // funcref
  std::optional<Limits> memory;
  std::vector<Limits> more_memories;  // memories 1, 2, … after `memory` (multi-memory)
  std::vector<Global> globals;
  std::vector<std::uint32_t> tags;  // exception handling: each tag's type index (no results)
  std::vector<Export> exports;
  std::optional<std::uint32_t> start;
  std::vector<ElemSegment> elems;
  std::vector<DataSegment> datas;
  bool data_count = false;  // write the data count section (needed by memory.init / data.drop)

  std::uint32_t add_type(FuncType t) {
    for (std::uint32_t i = 0; i < types.size(); ++i) {
      if (types[i].composite == t.composite && types[i].params == t.params && types[i].results == t.results) return i;
    }
    types.push_back(std::move(t));
    return static_cast<std::uint32_t>(types.size() - 1);
  }

  [[nodiscard]] Bytes build() const {
    Bytes out{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
    auto section = [&out](std::uint8_t id, const Bytes& body) {
      out.push_back(id);
      uleb(out, body.size());
      append(out, body);
    };
    auto limits = [](Bytes& b, const Limits& l) {
      b.push_back(static_cast<std::uint8_t>((l.max ? 0x01 : 0x00) | (l.is64 ? 0x04 : 0x00)));
      uleb(b, l.min);
      if (l.max) uleb(b, *l.max);
    };
    if (!types.empty()) {
      Bytes b;
      uleb(b, types.size());
      for (const auto& t : types) {
        if (!t.composite.empty()) {
          append(b, t.composite);
          continue;
        }
        b.push_back(0x60);
        uleb(b, t.params.size());
        append(b, t.params);
        uleb(b, t.results.size());
        append(b, t.results);
      }
      section(1, b);
    }
    if (!imports.empty()) {
      Bytes b;
      uleb(b, imports.size());
      for (const auto& i : imports) {
        name(b, i.module);
        name(b, i.field);
        b.push_back(0x00);
        uleb(b, i.type_index);
      }
      section(2, b);
    }
    if (!functions.empty()) {
      Bytes b;
      uleb(b, functions.size());
      for (const auto& f : functions) uleb(b, f.type_index);
      section(3, b);
    }
    if (table) {
      Bytes b{0x01, type::funcref};
      limits(b, *table);
      section(4, b);
    }
    if (memory) {
      Bytes b;
      uleb(b, 1 + more_memories.size());
      limits(b, *memory);
      for (const Limits& m : more_memories) limits(b, m);
      section(5, b);
    }
    if (!tags.empty()) {  // the tag section (id 13) lies between the memory and global sections
      Bytes b;
      uleb(b, tags.size());
      for (std::uint32_t t : tags) {
        b.push_back(0x00);  // attribute: exception
        uleb(b, t);
      }
      section(13, b);
    }
    if (!globals.empty()) {
      Bytes b;
      uleb(b, globals.size());
      for (const auto& g : globals) {
        b.push_back(g.type);
        b.push_back(g.mutable_ ? 0x01 : 0x00);
        append(b, g.init);
        b.push_back(0x0b);
      }
      section(6, b);
    }
    if (!exports.empty()) {
      Bytes b;
      uleb(b, exports.size());
      for (const auto& e : exports) {
        name(b, e.field);
        b.push_back(e.kind);
        uleb(b, e.index);
      }
      section(7, b);
    }
    if (start) {
      Bytes b;
      uleb(b, *start);
      section(8, b);
    }
    if (!elems.empty()) {
      Bytes b;
      uleb(b, elems.size());
      for (const auto& e : elems) {
        b.push_back(0x00);  // active, table 0, funcref indices
        if (e.offset64) {
          i64_const(b, e.offset);
        } else {
          i32_const(b, e.offset);
        }
        b.push_back(0x0b);
        uleb(b, e.funcs.size());
        for (auto f : e.funcs) uleb(b, f);
      }
      section(9, b);
    }
    if (data_count) {
      Bytes b;
      uleb(b, datas.size());
      section(12, b);
    }
    if (!functions.empty()) {
      Bytes b;
      uleb(b, functions.size());
      for (const auto& f : functions) {
        Bytes body;
        uleb(body, f.locals.size());
        for (const auto& [count, t] : f.locals) {
          uleb(body, count);
          body.push_back(t);
        }
        append(body, f.code);
        body.push_back(0x0b);
        uleb(b, body.size());
        append(b, body);
      }
      section(10, b);
    }
    if (!datas.empty()) {
      Bytes b;
      uleb(b, datas.size());
      for (const auto& d : datas) {
        if (d.passive) {
          b.push_back(0x01);
        } else {
          b.push_back(0x00);
          i32_const(b, d.offset);
          b.push_back(0x0b);
        }
        uleb(b, d.bytes.size());
        append(b, d.bytes);
      }
      section(11, b);
    }
    return out;
  }
};

}  // namespace sprawling::test::wasm_writer
