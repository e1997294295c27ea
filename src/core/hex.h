// Lower-case hexadecimal for bytes (digests, random tokens, serialized sessions).
//
// Thread-safe: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace corral {

// Two lower-case hex digits per byte: "\x01\xab" -> "01ab".
inline std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

// The bytes of `hex` (lower- or upper-case digits); nullopt for an odd length or a non-digit.
inline std::optional<std::string> HexDecode(std::string_view hex) {
  auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi << 4 | lo);
  }
  return out;
}

}  // namespace corral
