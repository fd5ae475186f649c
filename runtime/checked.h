// Checked arithmetic for sizes derived from model files and run options.
//
// On 32-bit targets (armhf, Cortex-M) size_t is 32 bits: a product such as
// layers x kv_heads x context x head_dim x 4 wraps for perfectly plausible inputs (a context of
// 4,194,304), and a wrapped size sizes an arena that the kernels then overrun. Every size computed
// from input goes through these helpers instead of raw `*` and `+`.
//
//   checked_mul / checked_add: one operation, false on overflow (*out is then unspecified).
//   CheckedSize: a byte or element count that remembers whether any step overflowed or saw a
//   negative factor; Arena::allocate and allocate_array take it and refuse an invalid one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace einfer {

template <typename T>
constexpr bool checked_mul(T a, T b, T* out) {
  static_assert(std::is_integral_v<T>);
  return !__builtin_mul_overflow(a, b, out);
}

template <typename T>
constexpr bool checked_add(T a, T b, T* out) {
  static_assert(std::is_integral_v<T>);
  return !__builtin_add_overflow(a, b, out);
}

// A size_t count built by multiplication and addition; invalid once any step overflowed size_t or
// any operand was negative. Implicitly constructible from any integer, so a plain size_t passes.
class CheckedSize {
 public:
  constexpr CheckedSize() = default;
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  constexpr CheckedSize(I v) {  // NOLINT(google-explicit-constructor): plain sizes convert
    if constexpr (std::is_signed_v<I>) {
      if (v < 0) {
        valid_ = false;
        return;
      }
    }
    if constexpr (sizeof(I) > sizeof(size_t)) {
      if (static_cast<std::make_unsigned_t<I>>(v) > std::numeric_limits<size_t>::max()) {
        valid_ = false;
        return;
      }
    }
    value_ = static_cast<size_t>(v);
  }

  constexpr bool valid() const { return valid_; }
  // The count; only meaningful when valid().
  constexpr size_t value() const { return value_; }

  constexpr CheckedSize& operator*=(CheckedSize o) {
    valid_ = valid_ && o.valid_ && checked_mul(value_, o.value_, &value_);
    return *this;
  }
  constexpr CheckedSize& operator+=(CheckedSize o) {
    valid_ = valid_ && o.valid_ && checked_add(value_, o.value_, &value_);
    return *this;
  }
  friend constexpr CheckedSize operator*(CheckedSize a, CheckedSize b) { return a *= b; }
  friend constexpr CheckedSize operator+(CheckedSize a, CheckedSize b) { return a += b; }

 private:
  size_t value_ = 0;
  bool valid_ = true;
};

}  // namespace einfer
