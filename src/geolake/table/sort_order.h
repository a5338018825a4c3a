/// \file
/// Sort orders: how data files of a table are sorted (order id, and per field a transform of a
/// source column, a direction and a null order). Order id 0 is reserved for "unsorted".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "geolake/core/result.h"
#include "geolake/table/partition_spec.h"
#include "geolake/table/schema.h"

namespace geolake::table {

enum class SortDirection : std::uint8_t { kAscending, kDescending };
enum class NullOrder : std::uint8_t { kNullsFirst, kNullsLast };

/// \brief One sort key.
struct SortField {
  Transform transform;
  std::int32_t source_id = 0;
  SortDirection direction = SortDirection::kAscending;
  NullOrder null_order = NullOrder::kNullsFirst;

  bool operator==(const SortField&) const = default;
};

/// \brief A sort order: id plus fields; no fields = unsorted (only valid with id 0).
///
/// Thread-safety: immutable; share as std::shared_ptr<const SortOrder>.
class SortOrder {
 public:
  SortOrder(std::int32_t order_id, std::vector<SortField> fields)
      : order_id_(order_id), fields_(std::move(fields)) {}

  /// \brief The unsorted order, id 0.
  static std::shared_ptr<const SortOrder> Unsorted();

  std::int32_t order_id() const { return order_id_; }
  const std::vector<SortField>& fields() const { return fields_; }
  bool is_unsorted() const { return fields_.empty(); }

  /// \brief Check against a schema: sources exist and are transformable; order id 0 iff
  /// unsorted. kInvalidArgument otherwise.
  Status Validate(const Schema& schema) const;

  /// \brief {"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"asc",
  /// "null-order":"nulls-first"}]}
  std::string ToJson() const;
  static Result<std::shared_ptr<const SortOrder>> FromJson(std::string_view json);

 private:
  std::int32_t order_id_;
  std::vector<SortField> fields_;
};

using SortOrderPtr = std::shared_ptr<const SortOrder>;

}  // namespace geolake::table
