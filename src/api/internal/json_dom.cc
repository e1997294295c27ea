#include "api/internal/json_dom.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/internal/json_base.h"

namespace corral::api::internal {

namespace {

class DomBuilder {
 public:
  using json = nlohmann::json;

  Value& root() { return root_; }
  const std::string& error() const { return error_; }

  bool null() {
    Add(Value());
    return true;
  }
  bool boolean(bool b) {
    Value v;
    v.kind = Value::Kind::kBool;
    v.boolean = b;
    Add(std::move(v));
    return true;
  }
  bool number_integer(json::number_integer_t i) {
    Value v;
    v.kind = Value::Kind::kInt;
    v.integer = i;
    Add(std::move(v));
    return true;
  }
  bool number_unsigned(json::number_unsigned_t u) {
    Value v;
    v.kind = Value::Kind::kUint;
    v.uinteger = u;
    Add(std::move(v));
    return true;
  }
  bool number_float(json::number_float_t d, const json::string_t& written) {
    Value v;
    v.kind = Value::Kind::kDouble;
    v.number = d;
    v.text = written;
    Add(std::move(v));
    return true;
  }
  bool string(json::string_t& s) {
    Value v;
    v.kind = Value::Kind::kString;
    v.text = std::move(s);
    Add(std::move(v));
    return true;
  }
  bool binary(json::binary_t& /*b*/) {  // only the binary formats produce these
    error_ = "invalid JSON: binary value";
    return false;
  }
  bool start_object(std::size_t /*elements*/) { return Open(Value::Kind::kObject); }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    const std::vector<Member>& m = stack_.back()->object;
    // Sorting is faster for large objects; most are small.
    if (m.size() <= 32) {
      for (size_t i = 1; i < m.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (m[i].key == m[j].key) return Duplicate(m[i].key);
        }
      }
    } else {
      std::vector<std::string_view> keys;
      keys.reserve(m.size());
      for (const Member& e : m) keys.push_back(e.key);
      std::sort(keys.begin(), keys.end());
      for (size_t i = 1; i < keys.size(); ++i) {
        if (keys[i] == keys[i - 1]) return Duplicate(keys[i]);
      }
    }
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) { return Open(Value::Kind::kArray); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const json::exception& ex) {
    // "[json.exception.parse_error.101] parse error at line 1, column 7: syntax error ..."
    std::string_view what = ex.what();
    if (auto bracket = what.find("] "); what.starts_with("[json.") && bracket != what.npos) {
      what.remove_prefix(bracket + 2);
    }
    error_ = "invalid JSON: " + Excerpt(what, 240, /*quoted=*/false);
    return false;
  }

 private:
  Value* Add(Value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    // Only the innermost open container grows, so the pointers on `stack_` stay valid.
    Value* top = stack_.back();
    if (top->kind == Value::Kind::kArray) {
      top->array.push_back(std::move(v));
      return &top->array.back();
    }
    top->object.push_back(Member{std::move(key_), std::move(v)});
    return &top->object.back().value;
  }

  bool Open(Value::Kind kind) {
    if (stack_.size() >= kMaxDepth) {
      error_ = "invalid JSON: nested deeper than " + IntText(kMaxDepth) + " levels";
      return false;
    }
    Value v;
    v.kind = kind;
    stack_.push_back(Add(std::move(v)));
    return true;
  }

  // Names the key by its path, e.g. "resources.gpus" or "dependencies[1].type".
  bool Duplicate(std::string_view key) {
    std::string path;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Value& parent = *stack_[i];
      if (parent.kind == Value::Kind::kArray) {
        path += "[" + IntText(parent.array.size() - 1) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += parent.object.back().key;
      }
    }
    if (!path.empty()) path += '.';
    path += key;
    error_ = "invalid JSON: duplicate key \"" + Excerpt(path, 120) + "\"";
    return false;
  }

  Value root_;
  std::vector<Value*> stack_;
  std::string key_;
  std::string error_;
};

}  // namespace

Status ParseJson(std::string_view json, Value* root) {
  DomBuilder dom;
  DomBuilder* builder = &dom;
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(json.data(), json.data() + json.size(), builder,
                                   nlohmann::json::input_format_t::json, /*strict=*/true);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("invalid JSON: " + Excerpt(e.what(), 240, /*quoted=*/false));
  }
  if (!ok) {
    return InvalidArgument(builder->error().empty() ? "invalid JSON" : builder->error());
  }
  *root = std::move(dom.root());
  return {};
}

}  // namespace corral::api::internal
