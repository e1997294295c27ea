// The JSON encoder of the API messages: compact JSON, fields in `Fields` order.
//
// Part of the JSON codecs (api/json_codec.h). Thread-safe (an Encoder per call).
#pragma once

#include "api/internal/json_fields.h"

namespace corral::api::internal {

// ---------------------------------------------------------------------------------------------
// Encoding: compact JSON, fields in `Fields` order, written straight into one string.

class Encoder {
 public:
  explicit Encoder(size_t reserve) { out_.reserve(reserve); }

  std::string Take() { return std::move(out_); }

  // One field of an object (called by `Fields`); `name` is a plain ASCII identifier.
  template <typename F>
  void operator()(std::string_view name, const F& field) {
    if (comma_) out_ += ',';
    out_ += '"';
    out_ += name;
    out_ += "\":";
    comma_ = false;
    Write(field);
  }

  template <typename T>
  void Write(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      String(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      Raw(x ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<T>) {
      // JSON has no NaN or infinity; usage figures are "zero when unknown".
      if (!std::isfinite(x)) {
        Raw("0");
      } else {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
        Raw(std::string_view(buf, static_cast<size_t>(end - buf)));
      }
    } else if constexpr (std::is_integral_v<T>) {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
      Raw(std::string_view(buf, static_cast<size_t>(end - buf)));
    } else if constexpr (std::is_same_v<T, Duration>) {
      if (x == kUnlimited) {
        Raw("\"UNLIMITED\"");
      } else {
        Write(static_cast<int64_t>(x.count() / 1'000'000));
      }
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      WriteTimestamp(x);
    } else if constexpr (std::is_same_v<T, GpuSet>) {
      BeginArray();
      for (uint64_t b = x.bits(); b != 0; b &= b - 1) {
        Element(static_cast<uint32_t>(std::countr_zero(b)));
      }
      EndArray();
    } else if constexpr (std::is_same_v<T, JobState>) {
      Quoted(JobStateName(x));
    } else if constexpr (std::is_same_v<T, NodeState>) {
      Quoted(NodeStateName(x));
    } else if constexpr (std::is_same_v<T, DependencyType>) {
      Quoted(DependencyTypeName(x));
    } else if constexpr (std::is_same_v<T, JobEventType>) {
      Quoted(JobEventTypeName(x));
    } else if constexpr (std::is_same_v<T, PreemptMode>) {
      Quoted(PreemptModeName(x));
    } else if constexpr (std::is_same_v<T, BudgetPeriod>) {
      Quoted(BudgetPeriodName(x));
    } else if constexpr (IsStrongId<T>::value) {
      Write(x.value);
    } else if constexpr (IsSlurmTime<T>::value || IsGpuIndex<T>::value) {
      Write(x.value);
    } else if constexpr (IsShared<T>::value) {
      Write(x.get());
    } else if constexpr (IsOptional<T>::value) {
      if (x.has_value()) {
        Write(*x);
      } else {
        Raw("null");
      }
    } else if constexpr (IsVector<T>::value) {
      BeginArray();
      for (const auto& e : x) Element(e);
      EndArray();
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
      Object([&] {
        for (const auto& [k, val] : x) {
          Key(k);
          String(val);
        }
      });
    } else {
      static_assert(HasFields<T>, "no JSON form for this type");
      Object([&] { Fields(*this, x); });
    }
  }

  // An object whose members `write_members` writes (with `Key` and a value, or `operator()`).
  template <typename Fn>
  void Object(Fn write_members) {
    out_ += '{';
    comma_ = false;
    write_members();
    out_ += '}';
    comma_ = true;
  }

  // A member's key, any text (escaped).
  void Key(std::string_view k) {
    if (comma_) out_ += ',';
    String(k);
    out_ += ':';
    comma_ = false;
  }

  // A JSON string: escapes what JSON requires; bytes that are not valid UTF-8 become U+FFFD,
  // so that the output is always valid JSON.
  void String(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    size_t run = 0;
    size_t i = 0;
    while (i < s.size()) {
      auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
        ++i;
        continue;
      }
      if (c >= 0x80) {
        if (size_t len = Utf8SequenceLength(s, i); len > 0) {
          i += len;
          continue;
        }
      }
      out_.append(s.data() + run, i - run);
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          if (c < 0x20) {
            out_ += "\\u00";
            out_ += kHex[c >> 4];
            out_ += kHex[c & 15];
          } else {
            out_ += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
          }
      }
      ++i;
      run = i;
    }
    out_.append(s.data() + run, s.size() - run);
    out_ += '"';
    comma_ = true;
  }

 private:
  void Raw(std::string_view text) {
    out_ += text;
    comma_ = true;
  }
  void Quoted(std::string_view plain) {  // an enum name: plain ASCII
    out_ += '"';
    out_ += plain;
    out_ += '"';
    comma_ = true;
  }
  void BeginArray() {
    out_ += '[';
    comma_ = false;
  }
  template <typename T>
  void Element(const T& e) {
    if (comma_) out_ += ',';
    Write(e);
  }
  void EndArray() {
    out_ += ']';
    comma_ = true;
  }

  void WriteTimestamp(Timestamp t) {
    int64_t us = ToMicros(t);
    if (us == 0) {
      Raw("null");
      return;
    }
    us = std::clamp(us, kMinTimestampMicros, kMaxTimestampMicros);
    int64_t secs = us / 1'000'000;
    int64_t frac = us % 1'000'000;
    if (frac < 0) {
      frac += 1'000'000;
      --secs;
    }
    int64_t days = secs / 86400;
    int64_t sod = secs % 86400;
    if (sod < 0) {
      sod += 86400;
      --days;
    }
    std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
    // "YYYY-MM-DDTHH:MM:SS.ffffffZ"
    char buf[29];
    auto put = [&](size_t pos, int64_t v, int width) {
      for (int k = width - 1; k >= 0; --k) {
        buf[pos + k] = static_cast<char>('0' + v % 10);
        v /= 10;
      }
    };
    buf[0] = '"';
    put(1, static_cast<int>(ymd.year()), 4);
    buf[5] = '-';
    put(6, static_cast<unsigned>(ymd.month()), 2);
    buf[8] = '-';
    put(9, static_cast<unsigned>(ymd.day()), 2);
    buf[11] = 'T';
    put(12, sod / 3600, 2);
    buf[14] = ':';
    put(15, sod / 60 % 60, 2);
    buf[17] = ':';
    put(18, sod % 60, 2);
    buf[20] = '.';
    put(21, frac, 6);
    buf[27] = 'Z';
    buf[28] = '"';
    Raw(std::string_view(buf, sizeof buf));
  }

  std::string out_;
  bool comma_ = false;  // a value was just written: the next one needs a ','
};

template <typename T>
std::string Encode(const T& value, size_t reserve = 256) {
  Encoder e(reserve);
  e.Write(value);
  return e.Take();
}

template <typename T>
std::string EncodeList(std::string_view name, const std::vector<T>& items, size_t per_item) {
  return Encode(ListRef<const std::vector<T>>{name, items}, 16 + items.size() * per_item);
}

}  // namespace corral::api::internal
