// Copyright 2026 The Zeus C++ Authors.
//
// A random stream that is bit-compatible with numpy's
// `numpy.random.default_rng(seed)` (numpy >= 1.17): the PCG64 bit generator
// seeded through SeedSequence, and the Generator methods the Zeus policy uses.
//
// Why: the original Zeus simulator and batch-size server draw from numpy; to
// make the same decisions for the same seed we must draw the same numbers.
// The draw rules (documented in ../shared/docs/simulator-spec.md) are:
//   * 64-bit outputs: PCG64 (128-bit LCG, XSL-RR output), step then output.
//   * 32-bit outputs: the low half of a fresh 64-bit output; the high half is
//     kept and returned by the next 32-bit draw. The buffer persists across
//     calls and is untouched by 64-bit draws.
//   * Integers(low, high): Lemire's multiply-shift on 32-bit draws with
//     rejection (threshold (2^32 - n) % n) when the range fits in 32 bits;
//     a range of one value consumes nothing.
//   * StandardNormal: the 256-layer ziggurat on 64-bit draws.
//   * ChoiceWithoutReplacement: Floyd's algorithm then a Fisher-Yates
//     shuffle, as Generator.choice(n, k, replace=False) does for small n.
//
// Pure: no I/O, no clock. Thread-safety: a value type; one object must not be
// used from two threads at once, distinct objects may.

#ifndef ZEUS_OPTIMIZER_NUMPY_RANDOM_H_
#define ZEUS_OPTIMIZER_NUMPY_RANDOM_H_

#include <array>
#include <cstdint>
#include <vector>

namespace zeus::optimizer {

// numpy.random.SeedSequence(seed).generate_state(n_words, np.uint32) for an
// entropy that is a single non-negative integer. Exposed for tests.
std::vector<std::uint32_t> SeedSequenceState(std::uint64_t seed, std::size_t n_words);

// The 128-bit state of a PCG64 generator, as (high, low) 64-bit halves.
struct Pcg64State {
  std::uint64_t state_high = 0;
  std::uint64_t state_low = 0;
  std::uint64_t inc_high = 0;
  std::uint64_t inc_low = 0;
  bool operator==(const Pcg64State&) const = default;
};

// Everything a NumpyRandom carries between draws: numpy's
// bit_generator.state (PCG64 state and increment, has_uint32, uinteger).
struct NumpyRandomState {
  Pcg64State pcg;
  bool has_uint32 = false;
  std::uint32_t uinteger = 0;
  bool operator==(const NumpyRandomState&) const = default;
};

class NumpyRandom {
 public:
  // Equivalent to numpy.random.default_rng(seed).
  explicit NumpyRandom(std::uint64_t seed);
  // A generator that continues from a saved state (see full_state()).
  explicit NumpyRandom(const NumpyRandomState& state)
      : state_(state.pcg), has_uint32_(state.has_uint32), buffered_uint32_(state.uinteger) {}

  // The complete state, to store and resume the stream later.
  NumpyRandomState full_state() const { return {state_, has_uint32_, buffered_uint32_}; }

  // The PCG64 state (for tests against numpy's bit_generator.state).
  Pcg64State state() const { return state_; }

  // bit_generator.random_raw(): the next 64-bit output.
  std::uint64_t NextUint64();
  // The next 32-bit output (buffered halves, see the file comment).
  std::uint32_t NextUint32();
  // A double in [0, 1) with 53 random bits (numpy's next_double).
  double NextDouble();

  // Generator.integers(low, high): uniform in [low, high).
  // REQUIRES: low < high and high - low <= 2^32 (all the policy needs).
  std::int64_t Integers(std::int64_t low, std::int64_t high);

  // Generator.standard_normal().
  double StandardNormal();
  // Generator.normal(loc, scale) = loc + scale * StandardNormal().
  // REQUIRES: scale >= 0 (not NaN).
  double Normal(double loc, double scale);

  // Generator.choice(population, size, replace=False) for a population of
  // 0..population-1: the chosen values in order (Floyd's algorithm then a
  // shuffle; above 10000 values with size > population/50, numpy's tail
  // shuffle). REQUIRES: 0 <= size <= population.
  std::vector<std::int64_t> ChoiceWithoutReplacement(std::int64_t population, std::int64_t size);

 private:
  // A uniform integer in [0, max_inclusive] (numpy's random_bounded_uint64
  // with Lemire's method). REQUIRES: max_inclusive < 2^32.
  std::uint64_t BoundedUint64(std::uint64_t max_inclusive);

  Pcg64State state_;
  bool has_uint32_ = false;
  std::uint32_t buffered_uint32_ = 0;
};

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_NUMPY_RANDOM_H_
