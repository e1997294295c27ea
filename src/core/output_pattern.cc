#include "core/output_pattern.h"

#include <cctype>
#include <cstdio>

namespace corral {
namespace {

constexpr uint32_t kMaxWidth = 10;

bool IsField(char c) {
  switch (c) {
    case 'A':
    case 'a':
    case 'J':
    case 'j':
    case 'N':
    case 'n':
    case 's':
    case 't':
    case 'u':
    case 'x':
      return true;
    default:
      return false;
  }
}

void AppendNumber(std::string* out, uint64_t n, uint32_t width) {
  std::string digits = std::to_string(n);
  if (digits.size() < width) out->append(width - digits.size(), '0');
  out->append(digits);
}

void AppendField(std::string* out, char field, uint32_t width, const OutputPatternValues& v) {
  switch (field) {
    case 'A':
      AppendNumber(out, v.array_job_id != 0 ? v.array_job_id : v.job_id, width);
      break;
    case 'a':
      AppendNumber(out, v.array_task_id.value_or(kSlurmNoArrayTaskId), width);
      break;
    case 'j':
      AppendNumber(out, v.job_id, width);
      break;
    case 'J':
      AppendNumber(out, v.job_id, width);
      if (v.step_id.has_value()) {
        out->push_back('.');
        out->append(std::to_string(*v.step_id));
      }
      break;
    case 's':
      if (v.step_id.has_value()) {
        AppendNumber(out, *v.step_id, width);
      } else {
        out->append("batch");
      }
      break;
    case 'n':
      AppendNumber(out, v.node_index, width);
      break;
    case 't':
      AppendNumber(out, v.task_id, width);
      break;
    case 'N':
      out->append(v.node_name);
      break;
    case 'u':
      out->append(v.user);
      break;
    case 'x':
      out->append(v.job_name);
      break;
    default:
      break;
  }
}

}  // namespace

std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternValues& values) {
  std::string out;
  out.reserve(pattern.size() + 16);
  // A backslash anywhere turns expansion off; the backslashes themselves are dropped, except
  // that "\\" leaves one.
  if (pattern.find('\\') != std::string_view::npos) {
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '\\') {
        if (i + 1 < pattern.size() && pattern[i + 1] == '\\') {
          out.push_back('\\');
          ++i;
        }
        continue;
      }
      out.push_back(pattern[i]);
    }
    return out;
  }
  size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t p = i + 1;
    if (pattern[p] == '%') {
      out.push_back('%');
      i = p + 1;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(pattern[p]))) {
      size_t end = p;
      uint64_t width = 0;
      while (end < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[end]))) {
        if (width <= kMaxWidth) width = width * 10 + static_cast<uint64_t>(pattern[end] - '0');
        ++end;
      }
      if (end < pattern.size() && IsField(pattern[end])) {
        AppendField(&out, pattern[end],
                    static_cast<uint32_t>(width > kMaxWidth ? kMaxWidth : width), values);
        i = end + 1;
      } else {
        // Slurm drops the '%' and every digit but the last, then goes on from the character
        // after the digits ("%12_" -> "2_", "%5%j" -> "5" then "%j").
        out.push_back(pattern[end - 1]);
        i = end;
      }
      continue;
    }
    if (IsField(pattern[p])) {
      AppendField(&out, pattern[p], 0, values);
    } else {
      out.push_back('%');
      out.push_back(pattern[p]);
    }
    i = p + 1;
  }
  return out;
}

std::string_view DefaultOutputPattern(bool is_array) {
  return is_array ? "slurm-%A_%a.out" : "slurm-%j.out";
}

std::string ResolveOutputPath(std::string_view pattern, const OutputPatternValues& values,
                              std::string_view working_dir) {
  if (pattern.empty()) pattern = DefaultOutputPattern(values.array_task_id.has_value());
  std::string expanded = ExpandOutputPattern(pattern, values);
  if (expanded.empty() || expanded.front() == '/' || working_dir.empty()) return expanded;
  std::string out(working_dir);
  if (out.back() != '/') out.push_back('/');
  out.append(expanded);
  return out;
}

}  // namespace corral
