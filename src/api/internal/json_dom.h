// A small JSON document model for the decoder: object members in document order, duplicate
// keys refused, nesting bounded by `kMaxDepth`. Built by nlohmann's SAX parser (iterative,
// UTF-8 validating) in json_dom.cc, the one file of the codecs that includes nlohmann/json.
//
// Part of the JSON codecs (api/json_codec.h). Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::api::internal {

struct Member;

struct Value {
  enum class Kind : uint8_t { kNull, kBool, kInt, kUint, kDouble, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  union {
    bool boolean;
    int64_t integer;  // kInt: nlohmann reports non-negative integers as kUint
    uint64_t uinteger;
    double number;
  };
  std::string text;  // kString; the number as written for kDouble
  std::vector<Value> array;
  std::vector<Member> object;

  Value();  // after `Member` is complete (clang needs it for the vector's destructor)
};

struct Member {
  std::string key;
  Value value;
  bool used = false;  // set by the decoder; unused members are unknown fields
};

inline Value::Value() : uinteger(0) {}

// Parses `json` into `*root`. Returns kInvalidArgument saying what is wrong (malformed JSON,
// a duplicate key, nesting deeper than `kMaxDepth`).
Status ParseJson(std::string_view json, Value* root);

}  // namespace corral::api::internal
