// make_sandbox: the product sandbox of this build (the engine's, or the Absent verdict).
#include <sprawling/runtime/sandbox.hpp>

#if SPRAWLING_WITH_ENGINE
#include <sprawling/runtime/wasm_sandbox.hpp>
#endif

namespace sprawling::runtime {

bool engine_available() noexcept {
#if SPRAWLING_WITH_ENGINE
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Sandbox> make_sandbox(const SandboxFactoryConfig& config) {
#if SPRAWLING_WITH_ENGINE
  (void)config;
  return std::make_unique<WasmSandbox>();
#else
  return std::make_unique<AbsentSandbox>(config.alternative_arm);
#endif
}

}  // namespace sprawling::runtime
