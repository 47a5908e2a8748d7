// Store::instantiate (runtime.hpp): import matching, constant expressions, tables, globals,
// memories (or a snapshot's state), element and data segments and the start function, with the
// spec's order and failure rules.
#include "wasm/runtime/runtime.hpp"

#include "wasm/runtime/heap/gc_ops.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/snapshot/snapshot_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <algorithm>
#include <cstring>

namespace sprawling::wasm {

namespace {

bool limits_match(std::uint64_t actual_min, std::optional<std::uint64_t> actual_max, const Limits& want,
                  bool actual_is64 = false) {
  if (actual_is64 != want.is64) return false;  // memory64/table64: the address types must be equal
  if (actual_min < want.min) return false;
  if (want.max) {
    if (!actual_max || *actual_max > *want.max) return false;
  }
  return true;
}

// What evaluating constant expressions at instantiation needs for GC's allocations: the store,
// and the references instantiation holds so far that are no root yet (element segments being
// built); `refused` is set when the store's account refuses an object.
struct ConstEval {
  Store::Impl& store;
  std::vector<std::span<const std::uint64_t>> roots;
  bool refused = false;
};

// An extended constant expression (validated: one result). The stack holds frame-slot words
// (a v128 two, low first); i32 values stay zero-extended, as everywhere.
std::uint64_t eval_extended(const ConstExpr& e, const InstanceImpl& inst, ConstEval* gc) {
  using K = ConstExpr::Step::Kind;
  std::vector<std::uint64_t> stack;
  stack.reserve(e.steps.size() + 1);
  // A new object with the stack (its operands included) as a root: 0 when refused.
  const auto made = [&](std::uint64_t h) {
    if (h == 0) gc->refused = true;
    return h;
  };
  const auto extra = [&] {
    std::vector<std::span<const std::uint64_t>> r = gc->roots;
    r.emplace_back(stack);
    return r;
  };
  for (const ConstExpr::Step& s : e.steps) {
    if (gc != nullptr && gc->refused) return 0;
    switch (s.kind) {
      case K::Const: stack.push_back(s.value); continue;
      case K::ConstV128: stack.insert(stack.end(), {s.value, s.value2}); continue;
      case K::GlobalGet: {
        const GlobalInst& g = *inst.globals[s.value];
        stack.push_back(g.bits);
        if (g.type.type == ValType::V128) stack.push_back(g.bits_hi);
        continue;
      }
      case K::RefFunc: stack.push_back(reinterpret_cast<std::uint64_t>(inst.funcs[s.value])); continue;
      case K::RefI31: stack.back() = gcref::from_i31(static_cast<std::uint32_t>(stack.back())); continue;
      case K::AnyConvertExtern: stack.back() = gcref::to_any(stack.back()); continue;
      case K::ExternConvertAny: stack.back() = gcref::to_extern(stack.back()); continue;
      case K::StructNew:
      case K::StructNewDefault: {
        const FuncType* t = inst.types[s.value];
        std::size_t words = 0;
        if (s.kind == K::StructNew)
          for (const FieldType& f : t->fields) words += f.packed == FieldType::Packed::None ? value_slots(f.type) : 1;
        const auto r = extra();
        const std::uint64_t h = made(gc_struct_new(gc->store, t, s.kind == K::StructNew ? stack.data() + stack.size() - words : nullptr,
                                                   gc->store.entry_fp != nullptr ? gc->store.entry_fp : gc->store.stack, r));
        stack.resize(stack.size() - words);
        stack.push_back(h);
        continue;
      }
      case K::ArrayNew:
      case K::ArrayNewDefault:
      case K::ArrayNewFixed: {
        const FuncType* t = inst.types[s.value];
        const std::size_t width = element_bytes(t->fields[0]) == 16 ? 2 : 1;
        auto n = static_cast<std::uint32_t>(s.value2);
        if (s.kind != K::ArrayNewFixed) {
          n = static_cast<std::uint32_t>(stack.back());
          stack.pop_back();
        }
        const std::size_t words = s.kind == K::ArrayNewDefault ? 0 : s.kind == K::ArrayNew ? width : width * n;
        const auto r = extra();
        const std::uint64_t* top = gc->store.entry_fp != nullptr ? gc->store.entry_fp : gc->store.stack;
        const std::uint64_t* v = stack.data() + stack.size() - words;
        // The instructions' own operations (gc_ops.hpp), without fuel: refused is the only failure.
        std::uint64_t h = 0;
        if (s.kind == K::ArrayNewFixed) {
          h = gc_array_new_fixed(gc->store, t, n, v, top, r);
        } else {
          GcFuel unmetered{0, false};
          const std::uint64_t* init = s.kind == K::ArrayNew ? v : nullptr;
          if (gc_array_new(gc->store, unmetered, t, n, init, top, &h, r) != TrapKind::None) h = 0;
        }
        h = made(h);
        stack.resize(stack.size() - words);
        stack.push_back(h);
        continue;
      }
      default: break;
    }
    const std::uint64_t b = stack.back();
    stack.pop_back();
    const std::uint64_t a = stack.back();
    std::uint64_t r = 0;
    switch (s.kind) {
      case K::I32Add: case K::I64Add: r = a + b; break;
      case K::I32Sub: case K::I64Sub: r = a - b; break;
      default: r = a * b; break;
    }
    const bool i32 = s.kind == K::I32Add || s.kind == K::I32Sub || s.kind == K::I32Mul;
    stack.back() = i32 ? static_cast<std::uint32_t>(r) : r;
  }
  return stack.back();
}

std::uint64_t eval_const(const ConstExpr& e, const InstanceImpl& inst, ConstEval* gc = nullptr) {
  switch (e.op) {
    case ConstExpr::Op::Extended: return eval_extended(e, inst, gc);
    case ConstExpr::Op::GlobalGet: return inst.globals[e.index]->bits;
    case ConstExpr::Op::RefNull: return 0;
    case ConstExpr::Op::RefFunc: return reinterpret_cast<std::uint64_t>(inst.funcs[e.index]);
    default: return e.bits;
  }
}

}  // namespace

namespace {
// Whether an exported global's or table's value type `actual` (naming *actual_heap when concrete)
// matches the import's `expected` (naming a type of module m); `both_ways`: equivalence (tables,
// mutable globals), else subtyping (immutable globals).
bool extern_type_matches(ValType actual, const FuncType* actual_heap, ValType expected, const Module& m, bool both_ways) {
  std::span<const FuncType> ta;
  if (actual.concrete()) {
    if (actual_heap == nullptr) return false;
    actual = ValType::ref(actual.nullable(), 0);  // index 0 of the one-type span below
    ta = std::span<const FuncType>(actual_heap, 1);
  }
  return matches(actual, ta, expected, m.types) && (!both_ways || matches(expected, m.types, actual, ta));
}
// The type `t` (of module m) names, for a global or table it defines.
const FuncType* heap_type_of(ValType t, const Module& m) { return t.concrete() ? &m.types[t.type_index()] : nullptr; }
}  // namespace

std::expected<Instance*, InstantiationError> Store::instantiate(std::shared_ptr<const CompiledModule> compiled,
                                                                std::span<const Extern> imports,
                                                                const InstanceSnapshot* from) {
  Impl& s = *impl_;
  const Module& m = compiled->module();
  auto link_error = [](std::string msg) {
    return std::unexpected(InstantiationError{InstantiationError::Kind::Link, std::move(msg), std::nullopt});
  };
  if (imports.size() != m.imports.size()) return link_error("wrong number of imports");
  if (from != nullptr && from->module() != compiled) return link_error("the snapshot was taken from another module");  // [snapshots]

  auto owned = std::make_unique<InstanceImpl>();
  InstanceImpl& inst = *owned;
  inst.compiled_module = std::move(compiled);
  inst.module = &m;
  const auto& ci = inst.compiled_module->impl();
  inst.types.resize(m.types.size());
  for (std::size_t i = 0; i < m.types.size(); ++i) inst.types[i] = &m.types[ci.canonical_type[i]];
  // A GC object a constant expression makes did not fit the store's account.
  auto gc_refused = [] {
    Trap t;
    t.kind = TrapKind::GcHeapLimit;
    t.message = std::string(trap_message(t.kind));
    std::string msg = t.message;
    return std::unexpected(InstantiationError{InstantiationError::Kind::Trap, std::move(msg), std::move(t)});
  };

  for (std::size_t i = 0; i < imports.size(); ++i) {
    const Import& imp = m.imports[i];
    const Extern& ext = imports[i];
    if (kind_of(ext) != imp.kind) return link_error("incompatible import type");
    switch (imp.kind) {
      case ExternKind::Func: {
        FuncInst* f = std::get<FuncInst*>(ext);
        if (!declared_subtype(*f->type, m.types[imp.type_index])) return link_error("incompatible import type");
        inst.funcs.push_back(f);
        break;
      }
      case ExternKind::Table: {
        TableInst* t = std::get<TableInst*>(ext);
        if (!extern_type_matches(t->type.element, t->heap_type, imp.table.element, m, true) ||
            !limits_match(t->elements.size(), t->type.limits.max, imp.table.limits, t->type.limits.is64))
          return link_error("incompatible import type");
        inst.tables.push_back(t);
        break;
      }
      case ExternKind::Memory: {
        MemoryInst* mem = std::get<MemoryInst*>(ext);
        if (!limits_match(mem->size / kPageSize, mem->type.limits.max, imp.memory.limits, mem->type.limits.is64))
          return link_error("incompatible import type");
        inst.memories.push_back(mem);
        break;
      }
      case ExternKind::Global: {
        GlobalInst* g = std::get<GlobalInst*>(ext);
        if (g->type.is_mutable != imp.global.is_mutable ||
            !extern_type_matches(g->type.type, g->heap_type, imp.global.type, m, imp.global.is_mutable))
          return link_error("incompatible import type");
        inst.globals.push_back(g);
        break;
      }
      case ExternKind::Tag: {
        TagInst* t = std::get<TagInst*>(ext);
        if (!(t->type == m.types[imp.type_index])) return link_error("incompatible import type");
        inst.tags.push_back(t);
        break;
      }
    }
  }

  // The store's counts and its account (StoreLimits), checked before anything is allocated.
  if (s.instances.size() >= s.limits.max_instances)
    return link_error("instance limit of " + std::to_string(s.limits.max_instances) + " reached (max-instances)");
  const std::size_t new_tables = m.tables.size() - m.imported_tables;
  const std::size_t new_memories = m.memories.size() - m.imported_memories;
  if (s.tables.size() + new_tables > s.limits.max_tables)
    return link_error("the module defines " + std::to_string(new_tables) + " tables; the store allows " +
                      std::to_string(s.limits.max_tables) + " in all (max-tables)");
  if (s.memories.size() + new_memories > s.limits.max_memories)
    return link_error("the module defines " + std::to_string(new_memories) + " memories; the store allows " +
                      std::to_string(s.limits.max_memories) + " in all (max-memories)");
  {
    std::uint64_t fixed = ci.code_bytes * (s.metered ? 2 : 1) + m.code.size() * sizeof(FuncInst) +
                          (m.globals.size() - m.imported_globals) * sizeof(GlobalInst) +
                          (m.tags.size() - m.imported_tags) * sizeof(TagInst) +
                          m.datas.size() * sizeof(std::span<const std::uint8_t>) + sizeof(InstanceImpl);
    for (const ElementSegment& seg : m.elements) fixed += seg.items.size() * sizeof(std::uint64_t);
    // The initial tables and memories are charged as they are created; summed here first, so
    // that a module whose objects cannot all fit allocates none of them.
    std::uint64_t initial = 0;
    for (std::size_t i = m.imported_tables; i < m.tables.size(); ++i)
      initial += std::min<std::uint64_t>(m.tables[i].limits.min, s.limits.max_table_elements) * sizeof(std::uint64_t);
    // A memory64 minimum may be up to 2^48 pages: clamp so the sum cannot wrap (it is over any limit).
    for (std::size_t i = m.imported_memories; i < m.memories.size(); ++i)
      initial += std::min<std::uint64_t>(m.memories[i].limits.min, kMaxPages64 / 16) * kPageSize;
    const std::uint64_t left = s.account.limit - s.account.used;
    if (fixed > left || initial > left - fixed || !s.account.take(fixed))
      return link_error("the module's code, functions, globals, segments, tables and memories need " +
                        std::to_string(fixed + initial) + " bytes, over what is left of the store's resource limit " +
                        "(max-store-size: " + std::to_string(s.limits.max_store_bytes) + " bytes)");
  }

  // Allocation: functions, tables, memories, globals (imports first in every index space).
  for (std::uint32_t i = 0; i < m.code.size(); ++i) {
    FuncInst& f = s.funcs.emplace_back();
    const std::uint32_t index = m.imported_funcs + i;
    f.type = inst.types[m.func_types[index]];
    f.instance = &inst;
    f.func_index = index;
    // In slots (a v128 takes two), as the translator lays out the frame.
    f.num_params = value_slots(f.type->params);
    f.num_locals = f.num_params + value_slots(m.code[i].locals);
    f.num_results = value_slots(f.type->results);
    // Functions some thread already translated start resolved; the others on their first call.
    for (const int variant : {kUnmetered, kMetered}) {
      if (!s.track_first_calls && ci.translated_code(i, variant == kMetered) != nullptr) resolve_code(f, variant);
    }
    inst.funcs.push_back(&f);
  }
  for (std::size_t i = m.imported_tables; i < m.tables.size(); ++i) {
    const TableType& tt = m.tables[i];
    if (tt.limits.min > s.limits.max_table_elements)
      return link_error("table minimum size of " + std::to_string(tt.limits.min) + " elements exceeds table limits");
    // Typed function references: a table may start with its initialiser's value (imports,
    // functions are in place; table initialisers may read only imported globals).
    const std::size_t defined = i - m.imported_tables;
    const bool has_init = defined < m.table_inits.size() && m.table_inits[defined].has_value();
    ConstEval ce{s, {}};
    const std::uint64_t init_bits = has_init ? eval_const(*m.table_inits[defined], inst, &ce) : 0;
    if (ce.refused) return gc_refused();
    TableInst* table = add_table(tt, has_init ? Value{tt.element, init_bits, 0} : Value::null(tt.element));
    if (table == nullptr)
      return link_error("table minimum size of " + std::to_string(tt.limits.min) +
                        " elements exceeds what is left of the store's resource limit (max-store-size: " +
                        std::to_string(s.limits.max_store_bytes) + " bytes)");
    table->heap_type = heap_type_of(tt.element, m);
    inst.tables.push_back(table);
  }
  for (std::size_t i = m.imported_memories; i < m.memories.size(); ++i) {
    MemoryInst* mem = add_memory(m.memories[i]);
    if (mem == nullptr)
      return link_error("memory minimum size of " + std::to_string(m.memories[i].limits.min) +
                        " pages exceeds memory limits (max-memory-size, or what is left of max-store-size)");
    if (from != nullptr && !restore_memory(*from, i - m.imported_memories, *mem))  // [snapshots]
      return link_error("the snapshot's memory " + std::to_string(i) + " exceeds memory limits or cannot be mapped");
    inst.memories.push_back(mem);
  }
  inst.memory0 = inst.memories.empty() ? &s.no_memory : inst.memories[0];
  for (std::size_t i = m.imported_globals; i < m.globals.size(); ++i) {
    GlobalInst& g = s.globals.emplace_back();
    g.type = m.globals[i];
    g.heap_type = heap_type_of(g.type.type, m);
    const ConstExpr& init = m.global_inits[i - m.imported_globals];
    ConstEval ce{s, {}};
    g.bits = eval_const(init, inst, &ce);
    if (ce.refused) return gc_refused();
    // A v128's high half: the constant's, or the global's it reads (global.get of a v128 global).
    g.bits_hi = init.op == ConstExpr::Op::GlobalGet ? inst.globals[init.index]->bits_hi : init.bits_hi;
    inst.globals.push_back(&g);
  }
  for (std::size_t i = m.imported_tags; i < m.tags.size(); ++i) {
    TagInst& t = s.tags.emplace_back();
    t.type = m.types[m.tags[i]];
    t.slots = value_slots(t.type.params);
    t.index = static_cast<std::uint32_t>(i);
    inst.tags.push_back(&t);
  }
  inst.elements.resize(m.elements.size());
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ElementSegment& seg = m.elements[i];
    auto& refs = inst.elements[i];
    refs.reserve(seg.items.size());
    for (const ConstExpr& e : seg.items) {
      // Objects made for the segments so far are roots until the instance is the store's.
      ConstEval ce{s, {}};
      for (std::size_t k = 0; k <= i; ++k) ce.roots.emplace_back(inst.elements[k]);
      refs.push_back(eval_const(e, inst, &ce));
      if (ce.refused) return gc_refused();
    }
  }
  inst.datas.reserve(m.datas.size());
  for (const DataSegment& d : m.datas) inst.datas.push_back(m.data_bytes(d));

  // From here the instance is live: functions of it may already sit in imported tables when a
  // later segment traps, so the store keeps it either way.
  s.instances.push_back(std::move(owned));
  s.all_jit_ready[kUnmetered] = s.all_jit_ready[kMetered] = false;
  if (from != nullptr) {  // [snapshots] the snapshot's state replaces segments and the start function
    restore_instance_state(*from, inst);
    return &inst;
  }

  auto trap_error = [](Trap t) {
    std::string msg = t.message;
    return std::unexpected(InstantiationError{InstantiationError::Kind::Trap, std::move(msg), std::move(t)});
  };
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ElementSegment& seg = m.elements[i];
    if (seg.mode == SegmentMode::Active) {
      TableInst* t = inst.tables[seg.table_index];
      // i32 offsets are zero-extended in their slot; a 64-bit table's are u64 (never wrapping below).
      const std::uint64_t offset = t->type.limits.is64 ? eval_const(seg.offset, inst)
                                                       : static_cast<std::uint32_t>(eval_const(seg.offset, inst));
      const auto& refs = inst.elements[i];
      if (offset > t->elements.size() || refs.size() > t->elements.size() - offset) {
        Trap tr;
        tr.kind = TrapKind::OutOfBoundsTableAccess;
        tr.message = std::string(trap_message(tr.kind));
        return trap_error(std::move(tr));
      }
      std::copy(refs.begin(), refs.end(), t->elements.begin() + offset);
    }
    if (seg.mode != SegmentMode::Passive) inst.elements[i].clear();
  }
  for (std::size_t i = 0; i < m.datas.size(); ++i) {
    const DataSegment& d = m.datas[i];
    if (d.mode != SegmentMode::Active) continue;
    MemoryInst* mem = inst.memories[d.memory_index];
    // i32 offsets are zero-extended in their slot; memory64 ones are u64 (never wrapping below).
    const std::uint64_t offset = mem->type.limits.is64 ? eval_const(d.offset, inst)
                                                       : static_cast<std::uint32_t>(eval_const(d.offset, inst));
    if (offset > mem->size || d.bytes_size > mem->size - offset) {
      Trap tr;
      tr.kind = TrapKind::OutOfBoundsMemoryAccess;
      tr.message = std::string(trap_message(tr.kind));
      return trap_error(std::move(tr));
    }
    if (d.bytes_size != 0) std::memcpy(mem->base + offset, m.bytes.data() + d.bytes_offset, d.bytes_size);
    inst.datas[i] = {};
  }
  if (m.start) {
    auto r = invoke(inst.funcs[*m.start], {});
    if (!r) return trap_error(std::move(r.error()));
  }
  return &inst;
}

}  // namespace sprawling::wasm
