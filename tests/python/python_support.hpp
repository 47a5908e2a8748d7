// Shared helpers of the python arm's tests: where the CPython-for-WASI artifact is, outcome
// descriptions for failed assertions, scratch files and folders.
#pragma once

#include <sprawling/runtime/sandbox.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <expected>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

namespace sprawling::runtime::python_test {

namespace fs = std::filesystem;

namespace fs = std::filesystem;

// Far more than any script here needs: these tests are about outcomes, not budgets.
constexpr Fuel kPlentyOfFuel{std::uint64_t{1} << 40};
constexpr std::string_view kStdlibGuestPath = "/usr/local/lib";

struct PythonArtifact {
  fs::path wasm;
  fs::path lib;  // the folder mounted at /usr/local/lib: it holds python3.11/
};

// Where the artifact is, or why it cannot be used. `configured` tells an explicit setting that
// is wrong (a failure: someone asked for this artifact) from plain absence (the one allowed skip).
struct ArtifactProblem {
  bool configured;
  std::string message;
};

inline std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

inline std::expected<PythonArtifact, ArtifactProblem> locate_artifact() {
  const fs::path default_dir = SPRAWLING_PYTHON_DEFAULT_DIR;
  const auto wasm_env = env_value("SPRAWLING_PYTHON_WASM");
  const auto lib_env = env_value("SPRAWLING_PYTHON_LIB");
  PythonArtifact artifact{.wasm = wasm_env ? fs::path(*wasm_env) : default_dir / "python.wasm",
                          .lib = lib_env ? fs::path(*lib_env) : default_dir / "lib"};
  const bool configured = wasm_env.has_value() || lib_env.has_value();
  std::error_code ec;
  if (!fs::is_regular_file(artifact.wasm, ec)) {
    return std::unexpected(ArtifactProblem{
        configured, "no CPython-for-WASI module at " + artifact.wasm.string() +
                        (wasm_env ? " (from SPRAWLING_PYTHON_WASM)"
                                  : "; build it with scripts/build-python-wasi or set SPRAWLING_PYTHON_WASM and "
                                    "SPRAWLING_PYTHON_LIB")});
  }
  if (!fs::is_regular_file(artifact.lib / "python3.11" / "os.py", ec)) {
    return std::unexpected(ArtifactProblem{
        configured, "no standard library at " + (artifact.lib / "python3.11").string() +
                        (lib_env ? " (SPRAWLING_PYTHON_LIB must name the folder that holds python3.11/)"
                                 : "; build it with scripts/build-python-wasi or set SPRAWLING_PYTHON_LIB")});
  }
  return artifact;
}

inline std::string text(const std::vector<std::uint8_t>& bytes) {
  return {bytes.begin(), bytes.end()};
}

inline std::string describe(const SandboxExit& exit) {
  struct Describer {
    std::string operator()(const Success&) const { return "Success"; }
    std::string operator()(const Failure& f) const { return "Failure{" + std::to_string(f.code) + "}"; }
    std::string operator()(const FuelExhausted&) const { return "FuelExhausted"; }
    std::string operator()(const Trap& t) const { return "Trap{" + t.message + "}"; }
  };
  return std::visit(Describer{}, exit);
}

// What a failed assertion shows: how the guest ended and what it said.
inline std::string report(const SandboxOutcome& outcome) {
  return "exit " + describe(outcome.exit) + "\n--- stdout:\n" + text(outcome.stdout_bytes) + "\n--- stderr:\n" +
         text(outcome.stderr_bytes);
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// A fresh host directory for one test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sprawling-python-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A fixture that finds the artifact first: a test skips when it is absent, and fails when
// SPRAWLING_PYTHON_WASM / SPRAWLING_PYTHON_LIB name one that is not there.
template <class Base>
class WithPythonArtifact : public Base {
 protected:
  void SetUp() override {
    auto found = locate_artifact();
    if (!found) {
      if (found.error().configured) FAIL() << found.error().message;
      GTEST_SKIP() << found.error().message;
    }
    artifact_ = *found;
  }

  PythonArtifact artifact_;
};

}  // namespace sprawling::runtime::python_test
