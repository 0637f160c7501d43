#include "targets/target.h"

namespace accelopt::targets {

std::string Target::Signature(const suite::Task& task) const {
  std::string signature;
  for (const auto& t : task.inputs) signature += (signature.empty() ? "" : ", ") + ("const float* " + t.name);
  for (const auto& t : task.outputs) signature += ", float* " + t.name;
  return signature;
}

std::string Target::ShapeDeclarations(const suite::BoundTask& bound) const {
  const std::string header = bound.ShapeHeader();
  std::string decls;
  for (size_t at = header.find("constexpr"); at != std::string::npos; at = header.find("constexpr", at + 1))
    decls += (decls.empty() ? "" : " ") + header.substr(at, header.find('\n', at) - at);
  return decls;
}

}  // namespace accelopt::targets
