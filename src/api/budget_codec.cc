#include "api/budget_codec.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

std::string EncodeBudgetStatusList(const std::vector<BudgetStatus>& budgets) {
  return internal::EncodeList(internal::kBudgetsList, budgets, 384);
}

Result<std::vector<BudgetStatus>> DecodeBudgetStatusList(std::string_view json) {
  return internal::DecodeList<BudgetStatus>(internal::kBudgetsList, json);
}

}  // namespace corral::api
