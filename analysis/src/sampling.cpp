#include "sampling.h"

#include "expression_lowering.h"

#include <isl/point.h>
#include <isl/set.h>

#include <fmt/format.h>

namespace cusync::analysis::detail {

std::optional<isl::point> firstPoint(const isl::set& set) {
  if (set.is_empty()) return std::nullopt;
  isl::point point;
  try {
    point = set.lexmin().sample_point();
  } catch (const isl::exception&) {
    point = set.sample_point();  // unbounded below: any point will do
  }
  if (point.is_null() || isl_point_is_void(point.get())) return std::nullopt;
  return point;
}

ParameterValues sampleParameters(const isl::set& parameterSet, const std::vector<std::string>& names) {
  ParameterValues values;
  if (names.empty()) return values;
  isl_set* asSet = isl_set_from_params(parameterSet.copy());
  asSet = isl_set_move_dims(asSet, isl_dim_set, 0, isl_dim_param, 0, static_cast<unsigned>(names.size()));
  auto point = firstPoint(isl::manage(asSet));
  if (!point) return values;
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto value = toInt64(isl::manage(isl_point_get_coordinate_val(point->get(), isl_dim_set, static_cast<int>(i))));
    values[names[i]] = value.value_or(0);
  }
  return values;
}

std::string describeParameters(const ParameterValues& values) {
  std::string out;
  for (const auto& [name, value] : values) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, value);
  return out;
}

}  // namespace cusync::analysis::detail
