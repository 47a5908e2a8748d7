// The unwinder (unwind.hpp): the innermost handler region of the interpreter's frames that catches
// an exception, by the translated code's region and clause tables.
#include "wasm/interp/unwind.hpp"

#include <algorithm>

namespace sprawling::wasm {

Caught find_handler(Store::Impl& store, std::uint64_t exn, const std::uint32_t* at, std::uint64_t* fp, FuncInst* func,
                    Frame* fr, const Frame* fr_base, int variant, bool skip_current) {
  const GcObject* obj = store.gc.exception(exn);
  if (obj == nullptr) return {};
  for (;;) {
    if (!skip_current) {
      const CompiledFunc& code = *func->code[variant];
      const auto word = static_cast<std::uint32_t>(at - code.code.data());
      std::uint32_t skip_to = HandlerRegion::kNotDelegate;
      for (const HandlerRegion& r : code.regions) {
        if (word < r.begin || word >= r.end) continue;
        if (skip_to != HandlerRegion::kNotDelegate) {
          if (r.id != skip_to) continue;
          skip_to = HandlerRegion::kNotDelegate;
        }
        if (r.delegate_to == HandlerRegion::kToCaller) break;
        if (r.delegate_to != HandlerRegion::kNotDelegate) {
          skip_to = r.delegate_to;
          continue;
        }
        for (std::uint32_t k = 0; k < r.clause_count; ++k) {
          const CatchClause& c = code.clauses[r.first_clause + k];
          if (c.tag != CatchClause::kAnyTag && func->instance->tags[c.tag] != obj->tag) continue;
          if (c.values != CatchClause::kNoSlot) std::copy(obj->values().begin(), obj->values().end(), fp + c.values);
          if (c.exn != CatchClause::kNoSlot) fp[c.exn] = exn;
          return Caught{code.code.data() + c.target, fp, func, fr};
        }
      }
    }
    skip_current = false;
    if (fr == fr_base) return {};
    --fr;
    at = fr->ip - 1;  // inside the call instruction the frame returns after
    fp = fr->fp;
    func = fr->func;
  }
}

}  // namespace sprawling::wasm
