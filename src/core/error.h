#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include "core/exit_code.h"

namespace rtpulse {

/// A failure that names the bad value and the fix, plus the exit code it maps to.
struct Error {
  ExitCode code = ExitCode::kFailure;
  std::string message;
};

inline Error UsageError(std::string message) {
  return {ExitCode::kUsage, std::move(message)};
}
inline Error ResourceError(std::string message) {
  return {ExitCode::kResource, std::move(message)};
}
inline Error Failure(std::string message) {
  return {ExitCode::kFailure, std::move(message)};
}

/// Minimal `std::expected` stand-in (C++23 is not available on Debian 12's GCC 12).
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    if (!has_value()) std::abort();
    return std::get<0>(state_);
  }
  const T& value() const& {
    if (!has_value()) std::abort();
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!has_value()) std::abort();
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    if (has_value()) std::abort();
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

/// Success-or-error for operations without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  static Status Ok() { return {}; }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    if (ok_) std::abort();
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace rtpulse
