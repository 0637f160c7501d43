#pragma once
/// core: vocabulary types shared by every layer (errors, results, files, paths).

#include <string>
#include <utility>
#include <variant>

namespace accelopt {

/// An infrastructure failure: a message that names what failed and where.
struct Error {
  std::string message;
};

/// Either a value or an Error (an `expected`-style result; C++20 has no std::expected).
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : data_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }
  /// Requires ok().
  T& value() { return std::get<T>(data_); }
  const T& value() const { return std::get<T>(data_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// Requires !ok().
  const Error& error() const { return std::get<Error>(data_); }

 private:
  std::variant<T, Error> data_;
};

/// Result of an operation that yields nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace accelopt
