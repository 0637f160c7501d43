#pragma once
/// Cost of a call from its token counts, from an editable price table.

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/chat_model.h"

namespace accelopt::llm {

struct Price {
  double input_per_million = 0;   ///< USD per million input tokens
  double output_per_million = 0;  ///< USD per million output tokens (reasoning included)
};

class PriceTable {
 public:
  /// Loads prices.yaml (see prices/prices.yaml). Errors name the file, the model and the field.
  static Result<PriceTable> Load(const std::string& path);
  /// An empty table: every cost is unknown.
  PriceTable() = default;

  void Set(const std::string& model_or_pattern, Price price);
  /// Exact name first, then the first matching pattern; nullopt when unlisted.
  std::optional<Price> Find(const std::string& model) const;
  /// Cost in USD, or nullopt when the model's price is unknown.
  std::optional<double> Cost(const std::string& model, const Usage& usage) const;

 private:
  std::vector<std::pair<std::string, Price>> entries_;  // in file order
};

}  // namespace accelopt::llm
