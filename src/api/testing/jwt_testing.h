// Test helpers for JWTs, written independently of the code under test (api/token.cc): a
// base64url encoder and an HMAC-SHA256 signer over OpenSSL's one-shot HMAC, so that tests can
// craft tokens the code would never sign (bad claims, other algorithms, forged kids).
//
// Test-only; link ${CRYPTO_STATIC}.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace corral::api::testing {

// The base64url of `s`, without padding.
inline std::string B64Url(std::string_view s) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : s) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += k[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += k[(acc << (6 - bits)) & 63];
  return out;
}

// A token over `header` and `claims` (JSON texts) signed with HMAC-SHA256 under `key`.
inline std::string SignRaw(std::string_view key, std::string_view header, std::string_view claims) {
  std::string input = B64Url(header) + "." + B64Url(claims);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), md, &len);
  return input + "." + B64Url(std::string_view(reinterpret_cast<char*>(md), len));
}

// The dot-separated parts of a token.
inline std::vector<std::string> SplitToken(const std::string& token) {
  std::vector<std::string> parts;
  std::stringstream ss(token);
  std::string part;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  return parts;
}

}  // namespace corral::api::testing
