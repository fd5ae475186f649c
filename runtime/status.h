// Status: how every fallible einfer function reports failure.
//
// No exceptions anywhere in the libraries: a function that can fail returns a Status. The message
// is always a string literal (static storage, never owned or freed); optional figures carry the
// numbers that make it actionable ("arena too small (need 4096, have 1024)").
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

enum class StatusCode : int32_t {
  ok = 0,
  invalid_argument = 1,  // a caller-supplied value is out of its domain
  shape_mismatch = 2,    // tensor shapes or ranks disagree
  out_of_memory = 3,     // the arena (or a caller buffer) is too small
  bad_format = 4,        // a model file or input file is malformed
  unsupported = 5,       // valid, but not implemented by this build
  out_of_range = 6,      // an index or position beyond a limit (e.g. context length)
  io_error = 7,          // reading or writing a file failed (tools only)
};

struct Status {
  StatusCode code = StatusCode::ok;
  const char* message = "ok";  // static string literal
  int64_t need = -1;           // optional figure: what was required (-1: none)
  int64_t have = -1;           // optional figure: what was available (-1: none)
  int32_t index = -1;          // optional position: tensor, character or element index (-1: none)

  constexpr bool ok() const { return code == StatusCode::ok; }
  explicit constexpr operator bool() const { return ok(); }
};

constexpr Status ok_status() {
  return Status{};
}

constexpr Status make_status(StatusCode code, const char* message, int64_t need = -1,
                             int64_t have = -1, int32_t index = -1) {
  return Status{code, message, need, have, index};
}

// Short name of a status code ("ok", "shape_mismatch", ...).
const char* status_code_name(StatusCode code);

// Renders "message (need N, have M) [at index I]" into buf (always NUL-terminated when n > 0).
// Returns the number of characters written, excluding the terminator.
size_t format_status(const Status& status, char* buf, size_t n);

}  // namespace einfer

// Propagates a non-ok Status to the caller.
#define EINFER_TRY(expr)                           \
  do {                                             \
    ::einfer::Status einfer_try_s_ = (expr);       \
    if (!einfer_try_s_.ok()) return einfer_try_s_; \
  } while (0)
