#include "api/scrape_token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "api/private_file.h"
#include "core/hex.h"

namespace corral::api {

Result<ScrapeToken> ScrapeToken::FromFile(const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadPrivateFile(path, "scrape token file", 4096));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() < kMinScrapeTokenBytes) {
    return InvalidArgument("scrape token file " + path + ": the token must have at least " +
                           std::to_string(kMinScrapeTokenBytes) + " characters");
  }
  for (char c : text) {
    if (c <= ' ' || c > '~') {
      return InvalidArgument("scrape token file " + path +
                             ": the token must be one line of printable characters");
    }
  }
  ScrapeToken t;
  t.token_ = std::move(text);
  return t;
}

Result<ScrapeToken> ScrapeToken::CreateFile(const std::string& path) {
  unsigned char bytes[24];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return MakeError(ErrorCode::kInternal, "scrape token: no random bytes from OpenSSL");
  }
  std::string token = HexEncode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  OPENSSL_cleanse(bytes, sizeof bytes);
  CORRAL_RETURN_IF_ERROR(
      WriteFileAtomically(path, token + "\n", WriteMode::kCreateNew, 0600, "scrape token file"));
  ScrapeToken t;
  t.token_ = std::move(token);
  return t;
}

bool ScrapeToken::Matches(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (token_.empty() || authorization.substr(0, kBearer.size()) != kBearer) return false;
  std::string_view presented = authorization.substr(kBearer.size());
  if (presented.size() != token_.size()) return false;
  return CRYPTO_memcmp(presented.data(), token_.data(), token_.size()) == 0;
}

}  // namespace corral::api
