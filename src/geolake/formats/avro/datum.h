/// \file
/// Datum: one generic Avro value (null, boolean, int, long, float, double, bytes, string,
/// fixed, enum, array, map or record), optionally tagged with the union branch it was written
/// as. A value of a union is the branch's value plus the branch index, so Iceberg's optional
/// fields read naturally: `d.is_null()` or `d.int64()`. 48 bytes per value; arrays, maps and
/// records own their children. What the bytes mean is given by the schema, which the Datum
/// does not carry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "geolake/formats/avro/schema.h"

namespace geolake::avro {

/// \brief A generic Avro value.
///
/// Accessors are checked with GEOLAKE_DCHECK; in release builds a wrong-kind access returns
/// zero or empty. int64() also reads an int and float64() also reads a float (Iceberg's type
/// promotions). Thread-safety: a value type.
class Datum {
 public:
  using MapEntries = std::vector<std::pair<std::string, Datum>>;

  Datum() = default;

  static Datum Null() { return Datum(); }
  static Datum Boolean(bool v) {
    return Datum(Type::kBoolean, Storage(std::in_place_type<bool>, v));
  }
  static Datum Int(std::int32_t v) {
    return Datum(Type::kInt, Storage(std::in_place_type<std::int32_t>, v));
  }
  static Datum Long(std::int64_t v) {
    return Datum(Type::kLong, Storage(std::in_place_type<std::int64_t>, v));
  }
  static Datum Float(float v) { return Datum(Type::kFloat, Storage(std::in_place_type<float>, v)); }
  static Datum Double(double v) {
    return Datum(Type::kDouble, Storage(std::in_place_type<double>, v));
  }
  static Datum Bytes(std::string v) { return Datum(Type::kBytes, Storage(std::move(v))); }
  static Datum String(std::string v) { return Datum(Type::kString, Storage(std::move(v))); }
  static Datum Fixed(std::string v) { return Datum(Type::kFixed, Storage(std::move(v))); }
  /// \brief An enum value by symbol index.
  static Datum Enum(std::int32_t index) {
    return Datum(Type::kEnum, Storage(std::in_place_type<std::int32_t>, index));
  }
  static Datum Array(std::vector<Datum> items) {
    return Datum(Type::kArray, Storage(std::move(items)));
  }
  static Datum Map(MapEntries entries) { return Datum(Type::kMap, Storage(std::move(entries))); }
  /// \brief A record: one value per schema field, in schema order.
  static Datum Record(std::vector<Datum> fields) {
    return Datum(Type::kRecord, Storage(std::move(fields)));
  }
  /// \brief `value` tagged as branch `branch` of a union.
  static Datum Union(std::int32_t branch, Datum value) {
    value.branch_ = branch;
    return value;
  }

  /// \brief The kind of value held (never kUnion).
  Type type() const { return type_; }
  /// \brief The union branch index this value was read as / will be written as; -1 if none
  /// (the encoder then picks the first branch of a matching type).
  std::int32_t branch() const { return branch_; }
  void set_branch(std::int32_t branch) { branch_ = branch; }

  bool is_null() const { return type_ == Type::kNull; }
  bool boolean() const { return Get<bool>(Type::kBoolean); }
  std::int32_t int32() const { return Get<std::int32_t>(Type::kInt); }
  std::int64_t int64() const {
    if (type_ == Type::kInt) return int32();
    return Get<std::int64_t>(Type::kLong);
  }
  float float32() const { return Get<float>(Type::kFloat); }
  double float64() const {
    if (type_ == Type::kFloat) return float32();
    return Get<double>(Type::kDouble);
  }
  std::int32_t enum_index() const { return Get<std::int32_t>(Type::kEnum); }
  /// \brief The bytes of a bytes, string or fixed value.
  const std::string& bytes() const;
  std::string_view string() const { return bytes(); }
  /// \brief Items of an array, or fields of a record.
  const std::vector<Datum>& items() const;
  std::vector<Datum>& mutable_items();
  const std::vector<Datum>& fields() const { return items(); }
  std::vector<Datum>& mutable_fields() { return mutable_items(); }
  const MapEntries& map_entries() const;
  MapEntries& mutable_map_entries();

  /// \brief Field `name` of this record under `record_schema`, or nullptr.
  const Datum* FieldByName(const Node& record_schema, std::string_view name) const;
  /// \brief Field with Iceberg "field-id" `field_id` under `record_schema`, or nullptr.
  const Datum* FieldById(const Node& record_schema, std::int32_t field_id) const;

  /// \brief Deep equality of kind, branch tag and value (floats compared bitwise-by-value).
  bool operator==(const Datum& other) const = default;

 private:
  using Storage = std::variant<std::monostate, bool, std::int32_t, std::int64_t, float, double,
                               std::string, std::vector<Datum>, MapEntries>;

  Datum(Type type, Storage storage) : storage_(std::move(storage)), type_(type) {}

  template <typename T>
  T Get(Type expected) const {
    GEOLAKE_DCHECK(type_ == expected);
    (void)expected;
    const T* value = std::get_if<T>(&storage_);
    return value != nullptr ? *value : T{};
  }

  Storage storage_;
  Type type_ = Type::kNull;
  std::int32_t branch_ = -1;
};

}  // namespace geolake::avro
