// Fuzzes the strict JSON decoders of every request the controller and the agents accept
// (api/json_codec.h). The first byte picks the request type; the rest is the document.
// Checked: no crash or sanitizer report on any input, and whatever decodes encodes to a
// document that decodes again and encodes to the same bytes (the `Fields()` table drives
// both directions, so they must agree).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/governance_codec.h"
#include "api/json_codec.h"

namespace {

template <typename T, typename Dec, typename Enc>
void RoundTrip(std::string_view json, Dec decode, Enc encode) {
  corral::Result<T> first = decode(json);
  if (!first.has_value()) return;
  std::string once = encode(*first);
  corral::Result<T> second = decode(once);
  if (!second.has_value()) std::abort();
  if (encode(*second) != once) std::abort();
}

// The governance requests (POST/PUT of accounts, users, QOS): decoded strictly as the
// controller does; what decodes encodes to the stored form, which the lenient decoder reads
// back to the same bytes.
template <typename T, typename Strict, typename Lenient, typename Enc>
void RoundTripStored(std::string_view json, Strict strict, Lenient lenient, Enc encode) {
  corral::Result<T> first = strict(json);
  if (!first.has_value()) return;
  std::string once = encode(*first);
  corral::Result<T> second = lenient(once);
  if (!second.has_value()) std::abort();
  if (encode(*second) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace corral::api;
  if (size == 0) return 0;
  std::string_view json(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 17) {
    case 0:
      RoundTrip<corral::JobSpec>(json, DecodeJobSpec, EncodeJobSpec);
      break;
    case 1:
      RoundTrip<DrainRequest>(json, DecodeDrainRequest, EncodeDrainRequest);
      break;
    case 2:
      RoundTrip<RegisterRequest>(json, DecodeRegisterRequest, EncodeRegisterRequest);
      break;
    case 3:
      RoundTrip<HeartbeatRequest>(json, DecodeHeartbeatRequest, EncodeHeartbeatRequest);
      break;
    case 4:
      RoundTrip<JobEventsRequest>(json, DecodeJobEventsRequest, EncodeJobEventsRequest);
      break;
    case 5:
      RoundTrip<LaunchRequest>(json, DecodeLaunchRequest, EncodeLaunchRequest);
      break;
    case 6:
      RoundTrip<SignalRequest>(json, DecodeSignalRequest, EncodeSignalRequest);
      break;
    case 7:
      RoundTrip<InjectRequest>(json, DecodeInjectRequest, EncodeInjectRequest);
      break;
    case 8:
      RoundTrip<CancelRequest>(json, DecodeCancelRequest, EncodeCancelRequest);
      break;
    case 9:
      RoundTrip<TimeLimitRequest>(json, DecodeTimeLimitRequest, EncodeTimeLimitRequest);
      break;
    case 10:
      RoundTrip<corral::StepSpec>(json, DecodeStepSpec, EncodeStepSpec);
      break;
    case 11:
      RoundTrip<StepLaunchRequest>(json, DecodeStepLaunchRequest, EncodeStepLaunchRequest);
      break;
    case 12:
      RoundTrip<StepSignalRequest>(json, DecodeStepSignalRequest, EncodeStepSignalRequest);
      break;
    case 13: {
      auto kv = DecodeStringMap(json);
      if (kv.has_value()) {
        std::string once = EncodeStringMap(*kv);
        auto again = DecodeStringMap(once);
        if (!again.has_value() || EncodeStringMap(*again) != once) std::abort();
      }
      break;
    }
    case 14:
      RoundTripStored<corral::AccountConfig>(json, DecodeAccountRequest, DecodeAccount,
                                             EncodeAccount);
      break;
    case 15:
      RoundTripStored<UserInfo>(json, DecodeUserRequest, DecodeUser, EncodeUser);
      break;
    case 16:
      RoundTripStored<corral::QosConfig>(json, DecodeQosRequest, DecodeQos, EncodeQos);
      break;
  }
  return 0;
}
