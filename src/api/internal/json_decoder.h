// The JSON decoder of the API messages: the DOM (json_dom.h) into the messages. Strict
// decoders (requests) reject unknown fields; lenient ones (responses) skip them. Both reject
// wrong types and out-of-range numbers, naming the field path.
//
// Part of the JSON codecs (api/json_codec.h). Thread-safe (a Decoder per call).
#pragma once

#include "api/internal/json_dom.h"
#include "api/internal/json_fields.h"
#include "core/strings.h"

namespace corral::api::internal {

class Decoder {
 public:
  explicit Decoder(bool strict) : strict_(strict) { path_.reserve(16); }

  template <typename F>
  Status Read(Value& v, F&& out) {
    using T = std::remove_cvref_t<F>;
    using Kind = Value::Kind;
    if constexpr (std::is_same_v<T, std::string>) {
      if (v.kind != Kind::kString) return Expected("a string", v);
      out = std::move(v.text);
      return {};
    } else if constexpr (std::is_same_v<T, bool>) {
      if (v.kind != Kind::kBool) return Expected("true or false", v);
      out = v.boolean;
      return {};
    } else if constexpr (std::is_floating_point_v<T>) {
      switch (v.kind) {
        case Kind::kInt:
          out = static_cast<T>(v.integer);
          return {};
        case Kind::kUint:
          out = static_cast<T>(v.uinteger);
          return {};
        case Kind::kDouble:
          out = static_cast<T>(v.number);
          return {};
        default:
          return Expected("a number", v);
      }
    } else if constexpr (std::is_unsigned_v<T>) {
      uint64_t u;
      if (!AsUnsigned(v, &u)) return Expected("a non-negative integer", v);
      if (u > std::numeric_limits<T>::max()) return OutOfRange(v, std::numeric_limits<T>::max());
      out = static_cast<T>(u);
      return {};
    } else if constexpr (std::is_integral_v<T>) {
      if (v.kind == Kind::kInt) {
        if (v.integer < std::numeric_limits<T>::min()) {
          return Fail(Describe(v) + " is out of range (min " +
                      IntText(std::numeric_limits<T>::min()) + ")");
        }
        out = static_cast<T>(v.integer);
        return {};
      }
      if (v.kind != Kind::kUint) return Expected("an integer", v);
      if (v.uinteger > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return OutOfRange(v, std::numeric_limits<T>::max());
      }
      out = static_cast<T>(v.uinteger);
      return {};
    } else if constexpr (std::is_same_v<T, Duration>) {
      return ReadDuration(v, &out, /*slurm=*/false);
    } else if constexpr (IsSlurmTime<T>::value) {
      using D = std::remove_cvref_t<decltype(out.value)>;
      if constexpr (IsOptional<D>::value) {
        if (v.kind == Kind::kNull) {
          out.value.reset();
          return {};
        }
        Duration d{0};
        CORRAL_RETURN_IF_ERROR(ReadDuration(v, &d, /*slurm=*/true));
        out.value = d;
        return {};
      } else {
        return ReadDuration(v, &out.value, /*slurm=*/true);
      }
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      if (v.kind == Kind::kNull) {
        out = Timestamp{};
        return {};
      }
      std::optional<Timestamp> t;
      if (v.kind == Kind::kString) t = ParseRfc3339(v.text);
      if (!t.has_value()) {
        return Expected("an RFC 3339 UTC timestamp (\"2026-11-29T16:51:03.000123Z\") or null", v);
      }
      out = *t;
      return {};
    } else if constexpr (std::is_same_v<T, GpuSet>) {
      if (v.kind != Kind::kArray) return Expected("an array of GPU indices", v);
      GpuSet set;
      for (size_t i = 0; i < v.array.size(); ++i) {
        path_.push_back(Segment{{}, i, true});
        uint32_t index = 0;
        CORRAL_RETURN_IF_ERROR(ReadGpuIndex(v.array[i], &index));
        if (set.contains(index)) return Fail("duplicate GPU index " + IntText(index));
        set.insert(index);
        path_.pop_back();
      }
      out = set;
      return {};
    } else if constexpr (IsGpuIndex<T>::value) {
      using U = std::remove_cvref_t<decltype(out.value)>;
      if constexpr (IsVector<U>::value) {
        if (v.kind != Kind::kArray) return Expected("an array of GPU indices", v);
        out.value.clear();
        out.value.reserve(v.array.size());
        for (size_t i = 0; i < v.array.size(); ++i) {
          path_.push_back(Segment{{}, i, true});
          uint32_t index = 0;
          CORRAL_RETURN_IF_ERROR(ReadGpuIndex(v.array[i], &index));
          out.value.push_back(index);
          path_.pop_back();
        }
        return {};
      } else {
        return ReadGpuIndex(v, &out.value);
      }
    } else if constexpr (std::is_same_v<T, JobState>) {
      return ReadEnum(v, &out, ParseJobState);
    } else if constexpr (std::is_same_v<T, NodeState>) {
      return ReadEnum(v, &out, ParseNodeState);
    } else if constexpr (std::is_same_v<T, DependencyType>) {
      return ReadEnum(v, &out, ParseDependencyType);
    } else if constexpr (std::is_same_v<T, JobEventType>) {
      return ReadEnum(v, &out, ParseJobEventType);
    } else if constexpr (std::is_same_v<T, PreemptMode>) {
      return ReadEnum(v, &out, ParsePreemptModeText);
    } else if constexpr (std::is_same_v<T, BudgetPeriod>) {
      return ReadEnum(v, &out, ParseBudgetPeriodText);
    } else if constexpr (IsStrongId<T>::value) {
      return Read(v, out.value);
    } else if constexpr (IsShared<T>::value) {
      std::remove_cvref_t<decltype(out.get())> x{};
      CORRAL_RETURN_IF_ERROR(Read(v, x));
      out = std::move(x);
      return {};
    } else if constexpr (IsOptional<T>::value) {
      if (v.kind == Kind::kNull) {
        out.reset();
        return {};
      }
      typename T::value_type x{};
      CORRAL_RETURN_IF_ERROR(Read(v, x));
      out = std::move(x);
      return {};
    } else if constexpr (IsVector<T>::value) {
      if (v.kind != Kind::kArray) return Expected("an array", v);
      out.clear();
      out.reserve(v.array.size());
      for (size_t i = 0; i < v.array.size(); ++i) {
        path_.push_back(Segment{{}, i, true});
        typename T::value_type x{};
        CORRAL_RETURN_IF_ERROR(Read(v.array[i], x));
        out.push_back(std::move(x));
        path_.pop_back();
      }
      return {};
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
      if (v.kind != Kind::kObject) return Expected("an object of strings", v);
      out.clear();
      for (Member& m : v.object) {
        path_.push_back(Segment{m.key, 0, false});
        if (m.value.kind != Kind::kString) return Expected("a string", m.value);
        out.insert_or_assign(out.end(), std::move(m.key), std::move(m.value.text));
        path_.pop_back();
      }
      return {};
    } else {
      static_assert(HasFields<T>, "no JSON form for this type");
      return ReadObject(v, out);
    }
  }

  // Reads an object's fields into `s`, then (strict) rejects any member `Fields` did not name.
  template <typename S>
  Status ReadObject(Value& v, S& s) {
    if (v.kind != Value::Kind::kObject) return Expected("an object", v);
    FieldReader reader(*this, v);
    Fields(reader, s);
    CORRAL_RETURN_IF_ERROR(reader.status());
    if (strict_) {
      for (const Member& m : v.object) {
        if (!m.used) {
          std::string path = Path();
          if (!path.empty()) path += '.';
          return InvalidArgument("unknown field \"" + path + Excerpt(m.key) + "\"");
        }
      }
    }
    return {};
  }

  // {"key": "value", ...}, in document order.
  Status ReadStringPairs(Value& v, std::vector<std::pair<std::string, std::string>>* out) {
    if (v.kind != Value::Kind::kObject) return Expected("an object", v);
    out->reserve(v.object.size());
    for (Member& m : v.object) {
      path_.push_back(Segment{m.key, 0, false});
      if (m.value.kind != Value::Kind::kString) return Expected("a string", m.value);
      out->emplace_back(std::move(m.key), std::move(m.value.text));
      path_.pop_back();
    }
    return {};
  }

 private:
  struct Segment {
    std::string_view key;
    size_t index;
    bool is_index;
  };

  // The `Fields` visitor that decodes: finds each named field among the object's members.
  // Encoders write fields in `Fields` order, so the search starts after the last match.
  class FieldReader {
   public:
    FieldReader(Decoder& d, Value& object) : d_(d), members_(object.object) {}

    template <typename F>
    void operator()(std::string_view name, F&& field) {
      if (!status_.has_value()) return;
      Member* m = Find(name);
      if (m == nullptr) return;  // absent: keeps the default
      m->used = true;
      d_.path_.push_back(Segment{name, 0, false});
      status_ = d_.Read(m->value, field);
      if (status_.has_value()) d_.path_.pop_back();
    }

    const Status& status() const { return status_; }

   private:
    Member* Find(std::string_view name) {
      const size_t n = members_.size();
      for (size_t k = 0; k < n; ++k) {
        size_t i = cursor_ + k;
        if (i >= n) i -= n;
        if (members_[i].key == name) {
          cursor_ = i + 1;
          return &members_[i];
        }
      }
      return nullptr;
    }

    Decoder& d_;
    std::vector<Member>& members_;
    size_t cursor_ = 0;
    Status status_;
  };

  static bool AsUnsigned(const Value& v, uint64_t* out) {
    if (v.kind == Value::Kind::kUint) {
      *out = v.uinteger;
      return true;
    }
    if (v.kind == Value::Kind::kInt && v.integer >= 0) {  // "-0"
      *out = static_cast<uint64_t>(v.integer);
      return true;
    }
    return false;
  }

  Status ReadDuration(Value& v, Duration* out, bool slurm) {
    uint64_t secs;
    if (AsUnsigned(v, &secs)) {
      if (secs > kMaxDurationSeconds) return OutOfRange(v, kMaxDurationSeconds);
      *out = Seconds(static_cast<int64_t>(secs));
      return {};
    }
    if (v.kind == Value::Kind::kString) {
      if (slurm) {
        Result<Duration> d = ParseSlurmDuration(v.text);
        if (!d.has_value()) return Fail(d.error().message);
        *out = *d;
        return {};
      }
      if (EqualsIgnoreCase(v.text, "UNLIMITED") || EqualsIgnoreCase(v.text, "INFINITE")) {
        *out = kUnlimited;
        return {};
      }
    }
    return Expected(slurm ? "a non-negative integer (seconds), \"UNLIMITED\" or a Slurm time"
                          : "a non-negative integer (seconds) or \"UNLIMITED\"",
                    v);
  }

  Status ReadGpuIndex(Value& v, uint32_t* out) {
    uint64_t u;
    if (!AsUnsigned(v, &u)) return Expected("a GPU index (a non-negative integer)", v);
    if (u >= kMaxGpusPerNode) {
      return Fail("GPU index " + Describe(v) + " is out of range (max " +
                  IntText(kMaxGpusPerNode - 1) + ")");
    }
    *out = static_cast<uint32_t>(u);
    return {};
  }

  template <typename E, typename P>
  Status ReadEnum(Value& v, E* out, P parse) {
    if (v.kind != Value::Kind::kString) return Expected("a string", v);
    Result<E> e = parse(v.text);
    if (!e.has_value()) return Fail(e.error().message);
    *out = *e;
    return {};
  }

  static std::string Describe(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kNull:
        return "null";
      case Value::Kind::kBool:
        return v.boolean ? "true" : "false";
      case Value::Kind::kInt:
        return IntText(v.integer);
      case Value::Kind::kUint:
        return IntText(v.uinteger);
      case Value::Kind::kDouble:
        return Excerpt(v.text);
      case Value::Kind::kString:
        return "\"" + Excerpt(v.text) + "\"";
      case Value::Kind::kArray:
        return "an array";
      case Value::Kind::kObject:
        return "an object";
    }
    return "?";
  }

  std::string Path() const {
    std::string out;
    for (const Segment& s : path_) {
      if (s.is_index) {
        out += '[';
        out += IntText(s.index);
        out += ']';
      } else {
        if (!out.empty()) out += '.';
        out += Excerpt(s.key);
      }
    }
    return out;
  }

  tl::unexpected<Error> Fail(std::string reason) const {
    if (path_.empty()) return InvalidArgument("top level: " + reason);
    return InvalidArgument("field \"" + Path() + "\": " + reason);
  }
  tl::unexpected<Error> Expected(std::string_view what, const Value& got) const {
    return Fail("expected " + std::string(what) + ", got " + Describe(got));
  }
  template <typename M>
  tl::unexpected<Error> OutOfRange(const Value& got, M max) const {
    return Fail(Describe(got) + " is out of range (max " + IntText(max) + ")");
  }

  bool strict_;
  std::vector<Segment> path_;
};

// Parses `json` and decodes its top-level object into `target` (a message, or a `ListRef`).
template <typename S>
Status DecodeInto(std::string_view json, bool strict, S& target) {
  Value root;
  CORRAL_RETURN_IF_ERROR(ParseJson(json, &root));
  Decoder d(strict);
  return d.ReadObject(root, target);
}

template <typename T>
Result<T> Decode(std::string_view json, bool strict) {
  T out{};
  CORRAL_RETURN_IF_ERROR(DecodeInto(json, strict, out));
  return out;
}

template <typename T>
Result<std::vector<T>> DecodeList(std::string_view name, std::string_view json) {
  std::vector<T> items;
  ListRef<std::vector<T>> list{name, items};
  CORRAL_RETURN_IF_ERROR(DecodeInto(json, /*strict=*/false, list));
  return items;
}

constexpr bool kStrict = true;    // requests: what the controller and agents accept
constexpr bool kLenient = false;  // responses: newer servers may add fields

}  // namespace corral::api::internal
