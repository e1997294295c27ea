// Fuzzes what a network peer sends to authenticate (api/token.h): JWTs verified by a keyring
// and by the first release's single key, and the keyring file parser. Whatever verifies must
// sign back to a token that verifies to the same claims; whatever parses as a keyring must
// serialize and parse back to the same keys.
//
// The first byte picks the target; the rest is the input.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/token.h"

namespace {

using corral::api::JwtKey;
using corral::api::Keyring;
using corral::api::TokenCheck;

const corral::Timestamp kNow = corral::FromMicros(int64_t{1'780'000'000} * 1'000'000);

const Keyring& Ring() {
  static const Keyring ring = *Keyring::Parse(
      "sign c\nkey c cccccccccccccccccccccccccccccccccccccccc\n"
      "sign n1\nkey n1 1111111111111111111111111111111111111111 node=node01\n");
  return ring;
}

const TokenCheck& Check() {
  static const TokenCheck check{
      .issuer = "c1",
      .audiences = {{"corral-controller", corral::Minutes(60)},
                    {"corral-job", corral::Minutes(7 * 24 * 60)},
                    {"node01", corral::Minutes(60)}},
  };
  return check;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      auto verified = Ring().Verify(input, Check(), kNow);
      if (!verified.has_value()) {
        if (verified.error().code != corral::ErrorCode::kUnauthenticated) std::abort();
        return 0;
      }
      auto again = Ring().Sign(verified->claims);
      if (!again.has_value()) return 0;  // e.g. a cluster-signed agent token, re-signed by n1
      auto back = Ring().Verify(*again, Check(), kNow);
      if (!back.has_value() || back->claims != verified->claims) std::abort();
      return 0;
    }
    case 1: {
      static const JwtKey key = *JwtKey::FromBytes(std::string(40, 'c'));
      auto id = key.Verify(input, kNow);
      if (!id.has_value() && id.error().code != corral::ErrorCode::kUnauthenticated) std::abort();
      return 0;
    }
    default: {
      auto ring = Keyring::Parse(input, "fuzz");
      if (!ring.has_value()) return 0;
      auto back = Keyring::Parse(ring->Serialize(), "fuzz");
      if (!back.has_value() || back->entries() != ring->entries()) std::abort();
      return 0;
    }
  }
}
