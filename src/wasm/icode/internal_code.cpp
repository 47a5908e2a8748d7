// Decoding translated code (internal_code.hpp): handler word <-> Op per interpreter variant, and
// the split of a function's code into instructions.
#include "wasm/icode/internal_code.hpp"
#include "wasm/interp/interpreter.hpp"
#include "wasm/runtime/store_impl.hpp"

#include <algorithm>
#include <utility>

namespace sprawling::wasm {
namespace {

// (handler word, op), sorted by word: handler offsets are distinct labels of one function.
struct WordMap {
  std::vector<std::pair<std::uint32_t, Op>> by_word;
  explicit WordMap(bool metered) {
    const std::int32_t* offsets = handler_offsets(metered);
    by_word.reserve(kOpCount);
    for (std::size_t i = 0; i < kOpCount; ++i)
      by_word.emplace_back(static_cast<std::uint32_t>(offsets[i]), static_cast<Op>(i));
    std::sort(by_word.begin(), by_word.end());
  }
};

const WordMap& word_map(bool metered) {
  static const WordMap unmetered(false);
  static const WordMap metered_map(true);
  return metered ? metered_map : unmetered;
}

}  // namespace

Op op_of_word(std::uint32_t word, bool metered) {
  const auto& v = word_map(metered).by_word;
  const auto it = std::lower_bound(v.begin(), v.end(), std::pair<std::uint32_t, Op>{word, Op{}});
  return it != v.end() && it->first == word ? it->second : Op::Count_;
}

std::uint32_t word_of_op(Op op, bool metered) {
  return static_cast<std::uint32_t>(handler_offsets(metered)[static_cast<std::size_t>(op)]);
}

std::expected<std::vector<Instr>, std::string> decode_instructions(std::span<const std::uint32_t> code,
                                                                  bool metered) {
  std::vector<Instr> out;
  std::uint32_t at = 0;
  const auto size = static_cast<std::uint32_t>(code.size());
  while (at < size) {
    const Op op = op_of_word(code[at], metered);
    if (op == Op::Count_)
      return std::unexpected("word " + std::to_string(at) + " (" + std::to_string(code[at]) +
                             ") is no handler of the " + (metered ? "metered" : "unmetered") + " interpreter");
    const LayoutInfo& l = layout_of(op);
    // The fixed words (COUNT included) must be there before the length can be read.
    const std::uint32_t fixed = l.end - (((l.tail & layout::kTailFall) != 0 && !metered) ? 1U : 0U) -
                                ((l.tail & layout::kTailTargets) != 0 ? 1U : 0U);
    if (size - at < fixed)
      return std::unexpected(std::string(info(op).name) + " at word " + std::to_string(at) + " runs past the end");
    std::uint64_t words = fixed;
    for (std::size_t i = 0; i < l.count; ++i)
      if (l.operands[i].kind == OperandKind::Count) words += std::uint64_t{code[at + l.operands[i].word]} + 1;
    if (size - at < words)
      return std::unexpected(std::string(info(op).name) + " at word " + std::to_string(at) + " runs past the end");
    out.push_back(Instr{at, op, static_cast<std::uint32_t>(words)});
    at += static_cast<std::uint32_t>(words);
  }
  return out;
}

}  // namespace sprawling::wasm
