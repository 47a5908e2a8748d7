// assert_sandbox_conformance: two back-to-back runs, legal outcome shapes, same ending.
#include <sprawling/runtime/conformance.hpp>

#include <string>

namespace sprawling::runtime {
namespace {

std::string describe(const SandboxExit& exit) {
  struct Visitor {
    std::string operator()(const Success&) const { return "Success"; }
    std::string operator()(const Failure& f) const { return "Failure{" + std::to_string(f.code) + "}"; }
    std::string operator()(const FuelExhausted&) const { return "FuelExhausted"; }
    std::string operator()(const Trap& t) const { return "Trap{\"" + t.message + "\"}"; }
  };
  return std::visit(Visitor{}, exit);
}

void check_shape(const SandboxOutcome& outcome, const char* which) {
  if (const auto* failure = std::get_if<Failure>(&outcome.exit)) {
    if (failure->code < 1 || failure->code > 125) {
      throw ConformanceError(std::string("conformance: ") + which + " outcome is Failure{" +
                             std::to_string(failure->code) + "}; a failure code must be in 1..125");
    }
  }
  if (const auto* trap = std::get_if<Trap>(&outcome.exit)) {
    if (trap->message.empty()) {
      throw ConformanceError(std::string("conformance: ") + which + " outcome is a Trap with an empty message");
    }
  }
}

SandboxOutcome must_run(Sandbox& sandbox, const SandboxJob& job, const char* which) {
  auto outcome = sandbox.run(job);
  if (!outcome) {
    throw ConformanceError(std::string("conformance: ") + which + " call returned an error instead of an outcome (" +
                           outcome.error().to_string() + ")" +
                           (std::string(which) == "second" ? "; the first call poisoned the sandbox" : ""));
  }
  check_shape(*outcome, which);
  return std::move(*outcome);
}

}  // namespace

void assert_sandbox_conformance(Sandbox& sandbox, const SandboxJob& job) {
  const SandboxOutcome first = must_run(sandbox, job, "first");
  const SandboxOutcome second = must_run(sandbox, job, "second");
  if (!(first.exit == second.exit)) {
    throw ConformanceError("conformance: the same job ended differently on the second call (" + describe(first.exit) +
                           " then " + describe(second.exit) + ")");
  }
}

}  // namespace sprawling::runtime
