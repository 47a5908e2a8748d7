// SHA-256 (FIPS 180-4): the portable compression function, one using the x86 SHA extensions
// (chosen at run time), and the padding.
#include "wasm/support/sha256.hpp"

#include <bit>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sprawling::wasm {

namespace {

using u32 = std::uint32_t;

constexpr std::array<u32, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
constexpr std::array<u32, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

u32 load_be(const std::uint8_t* p) {
  return (u32{p[0]} << 24) | (u32{p[1]} << 16) | (u32{p[2]} << 8) | u32{p[3]};
}

void compress_portable(std::array<u32, 8>& state, const std::uint8_t* data, std::size_t blocks) {
  std::array<u32, 64> w{};
  for (; blocks > 0; --blocks, data += 64) {
    for (int t = 0; t < 16; ++t) w[t] = load_be(data + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const u32 s0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const u32 s1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    u32 a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const u32 t1 = h + (std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      const u32 t2 = (std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if defined(__x86_64__)
// The SHA extensions keep the state as two vectors, ABEF and CDGH; sha256rnds2 does two rounds,
// sha256msg1/msg2 the message schedule four words at a time.
[[gnu::target("sha,sse4.1")]] void compress_sha_ni(std::array<u32, 8>& state, const std::uint8_t* data,
                                                  std::size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data()));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data() + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef;
    const __m128i cdgh_in = cdgh;
    __m128i x[4];  // the last four groups of four schedule words
    // Unrolled, k is a constant in each copy: x[] stays in registers and `k < 4` folds away.
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      __m128i wk;
      if (k < 4) {
        wk = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * k)), byte_swap);
      } else {
        // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], for the four t of group k.
        const __m128i w7 = _mm_alignr_epi8(x[(k - 1) & 3], x[(k - 2) & 3], 4);
        wk = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(x[k & 3], x[(k - 3) & 3]), w7), x[(k - 1) & 3]);
      }
      x[k & 3] = wk;
      __m128i msg = _mm_add_epi32(wk, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound.data() + 4 * k)));
      // Two rounds make the old ABEF the new CDGH: each call's result lands in the vector
      // that held CDGH, so after the pair both names are right again.
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data() + 4), hgfe);
}

bool cpu_has_sha() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
}
#endif

using Compress = void (*)(std::array<u32, 8>&, const std::uint8_t*, std::size_t);

Sha256Digest digest(std::span<const std::uint8_t> bytes, Compress compress) noexcept {
  std::array<u32, 8> state = kInitial;
  const std::size_t whole = bytes.size() / 64;
  compress(state, bytes.data(), whole);
  // Padding: 0x80, zeros, the length in bits (big-endian) — one or two final blocks.
  std::array<std::uint8_t, 128> tail{};
  const std::size_t rest = bytes.size() - whole * 64;
  if (rest != 0) std::memcpy(tail.data(), bytes.data() + whole * 64, rest);
  tail[rest] = 0x80;
  const std::size_t tail_blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_blocks * 64 - 1 - static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(bits >> (8 * i));
  compress(state, tail.data(), tail_blocks);
  Sha256Digest out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<std::uint8_t>(state[i] >> 24);
    out[4 * i + 1] = static_cast<std::uint8_t>(state[i] >> 16);
    out[4 * i + 2] = static_cast<std::uint8_t>(state[i] >> 8);
    out[4 * i + 3] = static_cast<std::uint8_t>(state[i]);
  }
  return out;
}

Compress best_compress() noexcept {
#if defined(__x86_64__)
  static const bool sha = cpu_has_sha();
  if (sha) return compress_sha_ni;
#endif
  return compress_portable;
}

}  // namespace

Sha256Digest sha256(std::span<const std::uint8_t> bytes) noexcept { return digest(bytes, best_compress()); }
Sha256Digest sha256_portable(std::span<const std::uint8_t> bytes) noexcept { return digest(bytes, compress_portable); }
bool sha256_accelerated() noexcept { return best_compress() != compress_portable; }

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

}  // namespace sprawling::wasm
