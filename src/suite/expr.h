#pragma once
/// suite: task folders, parameter expressions and roofline models.
///
/// Expressions over a task's parameters: `2*M*N*K`, `4*(M*K + K*N)`,
/// `max(M, 8) ^ 2`. Parsed once, evaluated per shape.

#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/result.h"

namespace accelopt::suite {

using Bindings = std::map<std::string, double>;

/// A parsed arithmetic expression. Immutable and cheap to copy (shared tree).
class Expr {
 public:
  struct Node;

  /// Parses `text`. The error says what was expected and at which character.
  static Result<Expr> Parse(const std::string& text);

  /// Evaluates with the given names bound. An unbound name or a division by
  /// zero is an error naming it.
  Result<double> Evaluate(const Bindings& bindings) const;

  /// Every name the expression refers to (function names excluded).
  std::set<std::string> Names() const;

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace accelopt::suite
