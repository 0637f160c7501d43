#include "suite/expr.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <vector>

namespace accelopt::suite {

struct Expr::Node {
  enum class Kind { kNumber, kName, kUnary, kBinary, kCall } kind;
  double number = 0;
  std::string name;  // variable name, function name, or operator
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

constexpr size_t kMaxLength = 4096;  // characters in one expression
constexpr int kMaxDepth = 100;       // levels of nesting

using NodePtr = std::shared_ptr<const Expr::Node>;
using Kind = Expr::Node::Kind;

struct Function {
  size_t arity;
  std::function<double(const std::vector<double>&)> apply;
};

const std::map<std::string, Function>& Functions() {
  static const std::map<std::string, Function> functions = {
      {"min", {2, [](const auto& a) { return std::min(a[0], a[1]); }}},
      {"max", {2, [](const auto& a) { return std::max(a[0], a[1]); }}},
      {"ceil", {1, [](const auto& a) { return std::ceil(a[0]); }}},
      {"floor", {1, [](const auto& a) { return std::floor(a[0]); }}},
      {"sqrt", {1, [](const auto& a) { return std::sqrt(a[0]); }}},
      {"log2", {1, [](const auto& a) { return std::log2(a[0]); }}},
  };
  return functions;
}

// Recursive-descent parser. Grammar:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | power
//   power   := atom ('^' unary)?          (right-associative)
//   atom    := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Result<NodePtr> ParseAll() {
    auto node = Sum();
    if (!error_.empty()) return Error{error_};
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return node;
  }

 private:
  Error Fail(const std::string& what) {
    return Error{"in expression '" + text_ + "' at character " + std::to_string(pos_ + 1) + ": " + what};
  }
  NodePtr SetError(const std::string& what) {
    if (error_.empty()) error_ = Fail(what).message;
    return nullptr;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static std::shared_ptr<Expr::Node> Make(Kind kind, std::string name, std::vector<NodePtr> args) {
    auto node = std::make_shared<Expr::Node>();
    node->kind = kind;
    node->name = std::move(name);
    node->args = std::move(args);
    return node;
  }

  NodePtr Sum() {
    NodePtr left = Product();
    while (left) {
      if (Accept('+'))
        left = Binary("+", left, Product());
      else if (Accept('-'))
        left = Binary("-", left, Product());
      else
        break;
    }
    return left;
  }
  NodePtr Product() {
    NodePtr left = Unary();
    while (left) {
      if (Accept('*'))
        left = Binary("*", left, Unary());
      else if (Accept('/'))
        left = Binary("/", left, Unary());
      else if (Accept('%'))
        left = Binary("%", left, Unary());
      else
        break;
    }
    return left;
  }
  NodePtr Binary(const char* op, NodePtr left, NodePtr right) {
    if (!right) return nullptr;
    return Make(Kind::kBinary, op, {left, right});
  }
  // Every nesting (a parenthesis, a sign, an argument, an exponent) passes
  // through here: the depth is bounded, so no input overflows the stack.
  NodePtr Unary() {
    if (depth_ >= kMaxDepth) return SetError("nested more than " + std::to_string(kMaxDepth) + " levels deep");
    ++depth_;
    NodePtr node = UnaryInner();
    --depth_;
    return node;
  }
  NodePtr UnaryInner() {
    if (Accept('-')) {
      NodePtr operand = Unary();
      return operand ? Make(Kind::kUnary, "-", {operand}) : nullptr;
    }
    if (Accept('+')) return Unary();
    return Power();
  }
  NodePtr Power() {
    NodePtr base = Atom();
    if (base && Accept('^')) return Binary("^", base, Unary());
    return base;
  }
  NodePtr Atom() {
    SkipSpace();
    if (pos_ >= text_.size()) return SetError("expected a number, a name or '(' but the expression ended");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return NameOrCall();
    if (Accept('(')) {
      NodePtr inner = Sum();
      if (inner && !Accept(')')) return SetError("expected ')'");
      return inner;
    }
    return SetError("expected a number, a name or '(' but found '" + std::string(1, c) + "'");
  }
  NodePtr Number() {
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    double value = std::strtod(begin, &end);
    if (end == begin) return SetError("malformed number");
    pos_ += static_cast<size_t>(end - begin);
    auto node = Make(Kind::kNumber, "", {});
    node->number = value;
    return node;
  }
  NodePtr NameOrCall() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name = text_.substr(start, pos_ - start);
    if (!Accept('(')) return Make(Kind::kName, name, {});
    auto fn = Functions().find(name);
    if (fn == Functions().end()) return SetError("unknown function '" + name + "'");
    std::vector<NodePtr> args;
    do {
      NodePtr arg = Sum();
      if (!arg) return nullptr;
      args.push_back(arg);
    } while (Accept(','));
    if (!Accept(')')) return SetError("expected ',' or ')' in call to " + name);
    if (args.size() != fn->second.arity)
      return SetError(name + " takes " + std::to_string(fn->second.arity) + " argument(s), got " +
                      std::to_string(args.size()));
    return Make(Kind::kCall, name, std::move(args));
  }

  const std::string& text_;
  size_t pos_ = 0;
  std::string error_;
  int depth_ = 0;
};

Result<double> Eval(const Expr::Node& node, const Bindings& bindings, const std::string& text) {
  switch (node.kind) {
    case Kind::kNumber:
      return node.number;
    case Kind::kName: {
      auto it = bindings.find(node.name);
      if (it == bindings.end()) return Error{"in expression '" + text + "': unknown name '" + node.name + "'"};
      return it->second;
    }
    case Kind::kUnary: {
      auto v = Eval(*node.args[0], bindings, text);
      if (!v) return v;
      return -*v;
    }
    case Kind::kCall: {
      std::vector<double> values;
      for (const auto& arg : node.args) {
        auto v = Eval(*arg, bindings, text);
        if (!v) return v;
        values.push_back(*v);
      }
      return Functions().at(node.name).apply(values);
    }
    case Kind::kBinary: {
      auto a = Eval(*node.args[0], bindings, text);
      if (!a) return a;
      auto b = Eval(*node.args[1], bindings, text);
      if (!b) return b;
      const std::string& op = node.name;
      if ((op == "/" || op == "%") && *b == 0) return Error{"in expression '" + text + "': division by zero"};
      if (op == "+") return *a + *b;
      if (op == "-") return *a - *b;
      if (op == "*") return *a * *b;
      if (op == "/") return *a / *b;
      if (op == "%") return std::fmod(*a, *b);
      return std::pow(*a, *b);
    }
  }
  return Error{"in expression '" + text + "': corrupt expression tree"};
}

void CollectNames(const Expr::Node& node, std::set<std::string>& names) {
  if (node.kind == Kind::kName) names.insert(node.name);
  for (const auto& arg : node.args) CollectNames(*arg, names);
}

}  // namespace

Result<Expr> Expr::Parse(const std::string& text) {
  // A longer chain (1+1+...+1) would make a tree deep enough to overflow the stack when evaluated or freed.
  if (text.size() > kMaxLength)
    return Error{"expression is " + std::to_string(text.size()) + " characters long; at most " +
                 std::to_string(kMaxLength)};
  Parser parser(text);
  auto root = parser.ParseAll();
  if (!root) return root.error();
  Expr expr;
  expr.text_ = text;
  expr.root_ = *root;
  return expr;
}

Result<double> Expr::Evaluate(const Bindings& bindings) const { return Eval(*root_, bindings, text_); }

std::set<std::string> Expr::Names() const {
  std::set<std::string> names;
  CollectNames(*root_, names);
  return names;
}

}  // namespace accelopt::suite
