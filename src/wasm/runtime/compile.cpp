// compile (runtime.hpp): decode + validate, the canonical type table and the code account of a
// CompiledModule, and lazy translation of its functions on first use (resolve_code).
#include "wasm/runtime/runtime.hpp"

#include "wasm/icode/translator.hpp"
#include "wasm/runtime/store_impl.hpp"
#include "wasm/snapshot/snapshot_impl.hpp"
#if SPRAWLING_WITH_JIT
#include "wasm/jit/jit.hpp"
#endif

#include <map>
#include <string>

namespace sprawling::wasm {

// ---------------------------------------------------------------- compile

CompiledModule::CompiledModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledModule::~CompiledModule() = default;
const Module& CompiledModule::module() const noexcept { return impl_->module; }
const Sha256Digest& CompiledModule::content_digest() const { return impl_->content_digest(); }
void CompiledModule::remember_content_digest(const Sha256Digest& digest) const { impl_->remember_content_digest(digest); }
const Sha256Digest& CompiledModule::Impl::content_digest() const {
  std::call_once(digest_once, [this] { digest = sha256(module.bytes); });
  return digest;
}
void CompiledModule::Impl::remember_content_digest(const Sha256Digest& d) const {
  std::call_once(digest_once, [this, &d] { digest = d; });
}

CompiledModule::Impl::~Impl() {
  for (const auto& slots : translated) {
    if (!slots) continue;
    for (std::size_t i = 0; i < module.code.size(); ++i) delete slots[i].load(std::memory_order_relaxed);
  }
}

const CompiledFunc& CompiledModule::Impl::code(std::uint32_t defined, bool metered) const {
  std::atomic<const CompiledFunc*>& slot = translated[metered ? kMetered : kUnmetered][defined];
  if (const CompiledFunc* done = slot.load(std::memory_order_acquire)) return *done;
  std::unique_ptr<const CompiledFunc> made;
  // [snapshot code] A snapshot file of this build may hold it, translated in an earlier process.
  if (const auto source = pretranslated_source()) {
    if (auto adopted = pretranslated_code(*source, defined, metered))
      made = std::make_unique<const CompiledFunc>(std::move(*adopted));
  }
  if (!made) made = std::make_unique<const CompiledFunc>(translate_function(module, canonical_type, defined, metered, nan_canonical));
  const CompiledFunc* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel, std::memory_order_acquire))
    return *made.release();
  return *expected;  // another thread published the same translation first; ours is dropped
}

std::size_t CompiledModule::Impl::translated_count(bool metered) const noexcept {
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < module.code.size(); ++i) n += translated_code(i, metered) != nullptr ? 1 : 0;
  return n;
}

void resolve_code(FuncInst& f, int variant) {
  const CompiledModule::Impl& cm = f.instance->compiled_module->impl();
  const CompiledFunc& code = cm.code(f.func_index - f.instance->module->imported_funcs, variant == kMetered);
  f.code[variant] = &code;
  // Both variants have the same frame (fuel ops use no slot); max() keeps the larger regardless.
  f.frame_slots = std::max(f.frame_slots, code.frame_slots);
  if (variant == kMetered) {
    // Word 0 is the entry FuelCheck [cost visible=1]; callers charge and check it instead.
    f.entry_fuel = code.code[layout::FuelCheck::cost];
    f.entry[kMetered] = code.code.data() + layout::FuelCheck::kWords;
  } else {
    f.entry[kUnmetered] = code.code.data();
  }
}

namespace {
// Bytes of translated code charged per byte of function body (compile()). Measured on
// python.wasm (8,124 functions, 3.35 MB of bodies): translating all of it makes 5.1 bytes per
// body byte unmetered and 5.6 metered, records included.
constexpr std::uint64_t kCodeChargePerByte = 8;

// A string of type codes, not a vector<uint8_t>: GCC 12 at -O3 inlines vector's <=> in the map
// into a memcmp whose length it cannot bound and reports a false -Wstringop-overread there.
// A type naming other types (typed function references) is keyed by its structure's identity.
std::string type_key(const FuncType& t) {
  std::string k;
  if (t.has_type_refs) {
    k.push_back('R');
    k.append(t.structure.begin(), t.structure.end());
    return k;
  }
  k.reserve(4 * (t.params.size() + t.results.size()) + 1);
  const auto put = [&](ValType v) {
    for (int i = 0; i < 4; ++i) k.push_back(static_cast<char>((v.bits() >> (8 * i)) & 0xFF));
  };
  for (ValType v : t.params) put(v);
  k.push_back(0);
  for (ValType v : t.results) put(v);
  return k;
}
}  // namespace

namespace {

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_decoded(
    std::expected<Module, CompileError> decoded, Features features) {
  if (!decoded) return std::unexpected(std::move(decoded.error()));
  auto impl = std::make_unique<CompiledModule::Impl>();
  impl->module = std::move(*decoded);
  impl->nan_canonical = features.nan_canonicalization;
  const Module& m = impl->module;
  std::map<std::string, std::uint32_t> first;
  impl->canonical_type.resize(m.types.size());
  for (std::uint32_t i = 0; i < m.types.size(); ++i)
    impl->canonical_type[i] = first.emplace(type_key(m.types[i]), i).first->second;
  // Lazy translation: no function is translated here (a job of a large module runs a few of its
  // functions); the first call of each in a variant translates it (CompiledModule::Impl::code).
  for (auto& slots : impl->translated) {
    slots = std::make_unique<std::atomic<const CompiledFunc*>[]>(m.code.size());
    for (std::size_t i = 0; i < m.code.size(); ++i) slots[i].store(nullptr, std::memory_order_relaxed);
  }
  // The store's charge for code cannot be what translation will make (that depends on which
  // functions run): it is a figure fixed by the module, kCodeChargePerByte per byte of function
  // bodies plus the per-function record, above what translation makes of ordinary code.
  impl->code_bytes = m.code.size() * (sizeof(CompiledFunc) + sizeof(std::atomic<const CompiledFunc*>));
  for (const FunctionBody& body : m.code) impl->code_bytes += body.code_size * kCodeChargePerByte;
  return std::make_shared<const CompiledModule>(std::move(impl));
}

}  // namespace

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::span<const std::uint8_t> bytes,
                                                                           Features features) {
  return compile_decoded(decode_and_validate(bytes, features), features);
}

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile(std::vector<std::uint8_t>&& bytes,
                                                                           Features features) {
  return compile_decoded(decode_and_validate(std::move(bytes), features), features);
}

std::expected<std::shared_ptr<const CompiledModule>, CompileError> compile_validated_before(
    ModuleBytes&& bytes, Features features) {
  return compile_decoded(decode_validated_before(std::move(bytes), features), features);
}

}  // namespace sprawling::wasm
