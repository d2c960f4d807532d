// Copyright 2026 The Zeus C++ Authors.
//
// numpy-compatible PCG64 + SeedSequence + Generator draws. Written from the
// published algorithms (O'Neill's PCG64 XSL-RR, numpy's SeedSequence hash
// mixing, Lemire's bounded integers, Marsaglia-Tsang's ziggurat) and checked
// against ../shared/testdata/numpy-rng-vectors.csv.

#include "zeus/optimizer/numpy_random.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

#include "optimizer/ziggurat_tables.h"

namespace zeus::optimizer {
namespace {

__extension__ typedef unsigned __int128 Uint128;

Uint128 Make128(std::uint64_t high, std::uint64_t low) { return (static_cast<Uint128>(high) << 64) | low; }
std::uint64_t High(Uint128 v) { return static_cast<std::uint64_t>(v >> 64); }
std::uint64_t Low(Uint128 v) { return static_cast<std::uint64_t>(v); }

// PCG64's 128-bit LCG multiplier.
const Uint128 kPcgMultiplier = Make128(0x2360ED051FC65DA4ULL, 0x4385DF649FCCF645ULL);

// SeedSequence's hash constants (numpy/random/bit_generator.pyx; facts).
constexpr std::uint32_t kInitA = 0x43b0d7e5U;
constexpr std::uint32_t kMultA = 0x931e8875U;
constexpr std::uint32_t kInitB = 0x8b51f9ddU;
constexpr std::uint32_t kMultB = 0x58f38dedU;
constexpr std::uint32_t kMixMultL = 0xca01f9ddU;
constexpr std::uint32_t kMixMultR = 0x4973f715U;
constexpr int kXShift = 16;
constexpr std::size_t kPoolSize = 4;

std::uint32_t HashMix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

std::uint32_t Mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

std::array<std::uint32_t, kPoolSize> MixEntropy(std::uint64_t seed) {
  // An integer entropy becomes its 32-bit words, least significant first.
  std::vector<std::uint32_t> entropy = {static_cast<std::uint32_t>(seed)};
  if ((seed >> 32) != 0) entropy.push_back(static_cast<std::uint32_t>(seed >> 32));

  std::array<std::uint32_t, kPoolSize> pool{};
  std::uint32_t hash_const = kInitA;
  for (std::size_t i = 0; i < kPoolSize; ++i) {
    pool[i] = HashMix(i < entropy.size() ? entropy[i] : 0U, hash_const);
  }
  for (std::size_t src = 0; src < kPoolSize; ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = Mix(pool[dst], HashMix(pool[src], hash_const));
    }
  }
  for (std::size_t src = kPoolSize; src < entropy.size(); ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) pool[dst] = Mix(pool[dst], HashMix(entropy[src], hash_const));
  }
  return pool;
}

std::uint64_t Rotr64(std::uint64_t value, unsigned rot) { return (value >> rot) | (value << ((64U - rot) & 63U)); }

}  // namespace

std::vector<std::uint32_t> SeedSequenceState(std::uint64_t seed, std::size_t n_words) {
  const std::array<std::uint32_t, kPoolSize> pool = MixEntropy(seed);
  std::vector<std::uint32_t> out(n_words);
  std::uint32_t hash_const = kInitB;
  for (std::size_t i = 0; i < n_words; ++i) {
    std::uint32_t value = pool[i % kPoolSize];
    value ^= hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    value ^= value >> kXShift;
    out[i] = value;
  }
  return out;
}

NumpyRandom::NumpyRandom(std::uint64_t seed) {
  // PCG64 asks for 4 uint64 words (8 uint32 words, little-endian pairs):
  // words 0-1 are the state seed (high, low), 2-3 the stream (high, low).
  const std::vector<std::uint32_t> words = SeedSequenceState(seed, 8);
  auto word64 = [&](std::size_t i) {
    return static_cast<std::uint64_t>(words[2 * i]) | (static_cast<std::uint64_t>(words[2 * i + 1]) << 32);
  };
  const Uint128 init_state = Make128(word64(0), word64(1));
  const Uint128 init_seq = Make128(word64(2), word64(3));
  // pcg_setseq_128_srandom_r: state 0, inc odd, step, add the seed, step.
  const Uint128 inc = (init_seq << 1) | 1U;
  Uint128 state = 0;
  state = state * kPcgMultiplier + inc;
  state += init_state;
  state = state * kPcgMultiplier + inc;
  state_ = {High(state), Low(state), High(inc), Low(inc)};
}

std::uint64_t NumpyRandom::NextUint64() {
  Uint128 state = Make128(state_.state_high, state_.state_low);
  state = state * kPcgMultiplier + Make128(state_.inc_high, state_.inc_low);
  state_.state_high = High(state);
  state_.state_low = Low(state);
  // XSL-RR: xor the halves, rotate right by the top 6 bits.
  return Rotr64(state_.state_high ^ state_.state_low, static_cast<unsigned>(state_.state_high >> 58));
}

std::uint32_t NumpyRandom::NextUint32() {
  if (has_uint32_) {
    has_uint32_ = false;
    return buffered_uint32_;
  }
  const std::uint64_t next = NextUint64();
  has_uint32_ = true;
  buffered_uint32_ = static_cast<std::uint32_t>(next >> 32);
  return static_cast<std::uint32_t>(next & 0xFFFFFFFFULL);
}

double NumpyRandom::NextDouble() {
  return static_cast<double>(NextUint64() >> 11) * (1.0 / 9007199254740992.0);
}

std::uint64_t NumpyRandom::BoundedUint64(std::uint64_t max_inclusive) {
  assert(max_inclusive <= 0xFFFFFFFFULL);
  if (max_inclusive == 0) return 0;
  if (max_inclusive == 0xFFFFFFFFULL) return NextUint32();
  // Lemire: the high 32 bits of a 32x32 product, rejecting the few low
  // products that would bias the result.
  const std::uint32_t range = static_cast<std::uint32_t>(max_inclusive) + 1U;
  std::uint64_t product = static_cast<std::uint64_t>(NextUint32()) * range;
  auto leftover = static_cast<std::uint32_t>(product);
  if (leftover < range) {
    const std::uint32_t threshold = static_cast<std::uint32_t>(0U - range) % range;  // (2^32 - range) % range
    while (leftover < threshold) {
      product = static_cast<std::uint64_t>(NextUint32()) * range;
      leftover = static_cast<std::uint32_t>(product);
    }
  }
  return product >> 32;
}

std::int64_t NumpyRandom::Integers(std::int64_t low, std::int64_t high) {
  assert(low < high);
  const auto span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return low + static_cast<std::int64_t>(BoundedUint64(span - 1));
}

double NumpyRandom::StandardNormal() {
  using internal::kZigguratFi;
  using internal::kZigguratInvR;
  using internal::kZigguratKi;
  using internal::kZigguratR;
  using internal::kZigguratWi;
  for (;;) {
    std::uint64_t r = NextUint64();
    const auto layer = static_cast<std::size_t>(r & 0xFF);
    r >>= 8;
    const bool negative = (r & 1U) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000FFFFFFFFFFFFFULL;
    double x = static_cast<double>(rabs) * kZigguratWi[layer];
    if (negative) x = -x;
    if (rabs < kZigguratKi[layer]) return x;  // inside the layer's rectangle
    if (layer == 0) {
      // The tail beyond R, by Marsaglia's exponential rejection.
      for (;;) {
        const double xx = -kZigguratInvR * std::log1p(-NextDouble());
        const double yy = -std::log1p(-NextDouble());
        if (yy + yy > xx * xx) {
          return ((rabs >> 8) & 1U) != 0 ? -(kZigguratR + xx) : kZigguratR + xx;
        }
      }
    }
    // The wedge between the rectangle and the density.
    if ((kZigguratFi[layer - 1] - kZigguratFi[layer]) * NextDouble() + kZigguratFi[layer] < std::exp(-0.5 * x * x)) {
      return x;
    }
  }
}

double NumpyRandom::Normal(double loc, double scale) { return loc + scale * StandardNormal(); }

std::vector<std::int64_t> NumpyRandom::ChoiceWithoutReplacement(std::int64_t population, std::int64_t size) {
  assert(0 <= size && size <= population);
  if (population > 10000 && size > population / 50) {
    // numpy's "tail shuffle": shuffle the last `size` slots of 0..n-1.
    std::vector<std::int64_t> all(static_cast<std::size_t>(population));
    for (std::int64_t i = 0; i < population; ++i) all[static_cast<std::size_t>(i)] = i;
    const std::int64_t first = std::max<std::int64_t>(population - size, 1);
    for (std::int64_t i = population - 1; i >= first; --i) {
      const auto k = static_cast<std::size_t>(BoundedUint64(static_cast<std::uint64_t>(i)));
      std::swap(all[static_cast<std::size_t>(i)], all[k]);
    }
    return {all.end() - size, all.end()};
  }
  // Floyd: for j in [population - size, population), draw v in [0, j]; keep
  // v unless already chosen, else keep j. Then shuffle positions 1..size-1.
  std::vector<std::int64_t> chosen;
  chosen.reserve(static_cast<std::size_t>(size));
  std::vector<bool> taken(static_cast<std::size_t>(population), false);
  for (std::int64_t j = population - size; j < population; ++j) {
    auto value = static_cast<std::int64_t>(BoundedUint64(static_cast<std::uint64_t>(j)));
    if (taken[static_cast<std::size_t>(value)]) value = j;
    taken[static_cast<std::size_t>(value)] = true;
    chosen.push_back(value);
  }
  for (std::int64_t i = size - 1; i >= 1; --i) {
    const auto k = static_cast<std::size_t>(BoundedUint64(static_cast<std::uint64_t>(i)));
    std::swap(chosen[static_cast<std::size_t>(i)], chosen[k]);
  }
  return chosen;
}

}  // namespace zeus::optimizer
