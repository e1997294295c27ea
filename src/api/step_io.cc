#include "api/step_io.h"

#include <string>

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace corral::api {
namespace {

constexpr std::string_view kIdentity = "corral-step-io-v1";

// The pre-shared key: HMAC-SHA256(secret, label), 32 bytes.
std::string Psk(std::string_view secret) {
  static constexpr std::string_view kLabel = "corral step io psk v1";
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.empty() ? "" : secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(kLabel.data()), kLabel.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

HttpTlsOptions StepIoServerTls(std::string_view secret) {
  HttpTlsOptions o;
  o.psk = Psk(secret);
  o.psk_identity = std::string(kIdentity);
  return o;
}

HttpClientOptions StepIoClientOptions(std::string_view secret) {
  HttpClientOptions o;
  o.psk = Psk(secret);
  o.psk_identity = std::string(kIdentity);
  return o;
}

}  // namespace corral::api
