#include "geolake/table/sort_order.h"

#include "geolake/table/json_internal.h"

namespace geolake::table {

std::shared_ptr<const SortOrder> SortOrder::Unsorted() {
  static const auto kOrder = std::make_shared<const SortOrder>(0, std::vector<SortField>{});
  return kOrder;
}

Status SortOrder::Validate(const Schema& schema) const {
  if (fields_.empty() != (order_id_ == 0)) {
    return Status::InvalidArgument("sort order " + std::to_string(order_id_) +
                                   ": order id 0 is reserved for the unsorted order");
  }
  for (const auto& f : fields_) {
    const NestedField* source = schema.FindField(f.source_id);
    if (source == nullptr) {
      return Status::InvalidArgument("sort order " + std::to_string(order_id_) +
                                     ": source field id " + std::to_string(f.source_id) +
                                     " not in schema");
    }
    GEOLAKE_RETURN_NOT_OK_CTX(f.transform.ResultType(source->type).status(),
                              "sort order " + std::to_string(order_id_));
  }
  return Status::OK();
}

std::string SortOrder::ToJson() const { return internal::SortOrderToJson(*this).dump(); }

Result<std::shared_ptr<const SortOrder>> SortOrder::FromJson(std::string_view json) {
  GEOLAKE_ASSIGN_OR_RETURN(auto parsed, internal::ParseJson(json, "sort order"));
  return internal::SortOrderFromJson(parsed);
}

namespace internal {

Result<std::shared_ptr<const SortOrder>> SortOrderFromJson(const Json& json) {
  GEOLAKE_ASSIGN_OR_RETURN(std::int32_t order_id, GetInt32(json, "order-id", "sort order"));
  const std::string what = "sort order " + std::to_string(order_id);
  GEOLAKE_ASSIGN_OR_RETURN(const Json* fields_json, Require(json, "fields", what));
  if (!fields_json->is_array()) return Status::CorruptData(what + ": 'fields' is not an array");
  std::vector<SortField> fields;
  for (const auto& fj : *fields_json) {
    SortField f;
    GEOLAKE_ASSIGN_OR_RETURN(std::string transform, GetString(fj, "transform", what));
    f.transform = Transform::Parse(transform);
    if (const Json* ids = Find(fj, "source-ids");
        ids != nullptr && ids->is_array() && !ids->empty()) {
      GEOLAKE_ASSIGN_OR_RETURN(std::int64_t id, AsInt64(ids->front(), what + " 'source-ids'"));
      f.source_id = static_cast<std::int32_t>(id);
    } else {
      GEOLAKE_ASSIGN_OR_RETURN(f.source_id, GetInt32(fj, "source-id", what));
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::string direction, GetString(fj, "direction", what));
    if (direction == "asc") {
      f.direction = SortDirection::kAscending;
    } else if (direction == "desc") {
      f.direction = SortDirection::kDescending;
    } else {
      return Status::CorruptData(what + ": unknown direction '" + direction + "'");
    }
    GEOLAKE_ASSIGN_OR_RETURN(std::string null_order, GetString(fj, "null-order", what));
    if (null_order == "nulls-first") {
      f.null_order = NullOrder::kNullsFirst;
    } else if (null_order == "nulls-last") {
      f.null_order = NullOrder::kNullsLast;
    } else {
      return Status::CorruptData(what + ": unknown null-order '" + null_order + "'");
    }
    fields.push_back(std::move(f));
  }
  return std::make_shared<const SortOrder>(order_id, std::move(fields));
}

Json SortOrderToJson(const SortOrder& order) {
  Json j = Json::object();
  j["order-id"] = order.order_id();
  Json fields = Json::array();
  for (const auto& f : order.fields()) {
    Json fj = Json::object();
    fj["transform"] = f.transform.ToString();
    fj["source-id"] = f.source_id;
    fj["direction"] = f.direction == SortDirection::kAscending ? "asc" : "desc";
    fj["null-order"] = f.null_order == NullOrder::kNullsFirst ? "nulls-first" : "nulls-last";
    fields.push_back(std::move(fj));
  }
  j["fields"] = std::move(fields);
  return j;
}

}  // namespace internal

}  // namespace geolake::table
