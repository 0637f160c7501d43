#include "llm/pricing.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

namespace accelopt::llm {

Result<PriceTable> PriceTable::Load(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{path + ": cannot read the price table"};
  } catch (const YAML::Exception& e) {
    return Error{path + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  PriceTable table;
  const YAML::Node models = root["models"];
  if (!models || !models.IsMap()) return Error{path + ": expected a mapping 'models:' of model names to prices"};
  auto line = [](const YAML::Node& node) {
    return node.Mark().line >= 0 ? " (line " + std::to_string(node.Mark().line + 1) + ")" : std::string();
  };
  for (const auto& item : models) {
    std::string name = item.first.as<std::string>();
    const std::string where = path + ": model '" + name + "'";
    if (!item.second.IsMap())
      return Error{where + line(item.second) + ": expected {input: USD, output: USD} per million tokens"};
    for (const auto& field : item.second)
      if (field.first.Scalar() != "input" && field.first.Scalar() != "output")
        return Error{where + line(field.first) + ": unknown key '" + field.first.Scalar() + "' (known: input, output)"};
    Price price;
    for (auto [key, slot] :
         {std::pair{"input", &price.input_per_million}, std::pair{"output", &price.output_per_million}}) {
      const YAML::Node node = item.second[key];
      if (!node) return Error{where + line(item.second) + ": missing '" + key + "'"};
      try {
        *slot = node.as<double>();
      } catch (const YAML::Exception&) {
        return Error{where + line(node) + ": '" + key + "' must be a number (USD per million tokens)"};
      }
      if (!std::isfinite(*slot) || *slot < 0)
        return Error{where + line(node) + ": '" + key + "' must be a finite number, 0 or more (USD per million " +
                     "tokens), got " + node.Scalar()};
    }
    table.Set(name, price);
  }
  return table;
}

void PriceTable::Set(const std::string& model_or_pattern, Price price) {
  for (auto& [name, p] : entries_)
    if (name == model_or_pattern) {
      p = price;
      return;
    }
  entries_.push_back({model_or_pattern, price});
}

std::optional<Price> PriceTable::Find(const std::string& model) const {
  for (const auto& [name, price] : entries_)
    if (name == model) return price;
  for (const auto& [name, price] : entries_)
    if (name.find('*') != std::string::npos && fnmatch(name.c_str(), model.c_str(), 0) == 0) return price;
  return std::nullopt;
}

std::optional<double> PriceTable::Cost(const std::string& model, const Usage& usage) const {
  auto price = Find(model);
  if (!price) return std::nullopt;
  return (usage.input_tokens * price->input_per_million + usage.output_tokens * price->output_per_million) / 1e6;
}

}  // namespace accelopt::llm
