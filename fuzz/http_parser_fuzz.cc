// Fuzzes the HTTP/1 wire parser (api/internal/http_wire.h) on requests and responses. The
// first byte picks the piece size the input is fed in and whether it is a request or a
// response; the rest is the wire. Checked: each step consumes no more than it was given and
// makes progress, a body never exceeds the limit or (for Content-Length) the declared length,
// and feeding in one piece or byte by byte gives the same events and body.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/internal/http_wire.h"

namespace {

using corral::api::internal::RequestParser;
using corral::api::internal::ResponseParser;
using corral::api::internal::WireEvent;
using corral::api::internal::WireLimits;
using corral::api::internal::WireStep;

struct Outcome {
  std::vector<WireEvent> events;
  std::string body;
  bool operator==(const Outcome&) const = default;
};

constexpr WireLimits kLimits{.max_head_bytes = 4096,
                             .max_header_count = 32,
                             .max_body_bytes = 1 << 16,
                             .max_chunk_line = 256};

template <typename Parser>
Outcome Feed(Parser& parser, std::string_view wire, size_t piece) {
  Outcome out;
  size_t pos = 0;
  int stalls = 0;
  while (true) {
    std::string_view chunk = wire.substr(pos, piece);
    WireStep step = parser.Parse(chunk);
    if (step.consumed > chunk.size()) std::abort();
    pos += step.consumed;
    if (step.event == WireEvent::kNeedMore) {
      if (step.consumed != chunk.size()) std::abort();  // kNeedMore takes everything
      if (pos >= wire.size()) break;
      continue;
    }
    if (step.event == WireEvent::kBody) {
      if (step.body.empty() || step.body.size() > step.consumed) std::abort();
      out.body.append(step.body);
      if (out.body.size() > kLimits.max_body_bytes) std::abort();
    } else if (step.consumed == 0 && ++stalls > 4) {
      std::abort();  // a head event without progress, repeated
    }
    // Adjacent body pieces are one body, whatever the piece size.
    if (step.event != WireEvent::kBody || out.events.empty() ||
        out.events.back() != WireEvent::kBody) {
      out.events.push_back(step.event);
    }
    if (step.event == WireEvent::kDone || step.event == WireEvent::kError) break;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool response = (data[0] & 1) != 0;
  const size_t piece = 1 + (data[0] >> 1) % 17;
  std::string_view wire(reinterpret_cast<const char*>(data + 1), size - 1);
  if (response) {
    ResponseParser whole(kLimits), pieces(kLimits);
    whole.ExpectHeadResponse((data[0] & 2) != 0);
    pieces.ExpectHeadResponse((data[0] & 2) != 0);
    Outcome a = Feed(whole, wire, wire.size() + 1);
    Outcome b = Feed(pieces, wire, piece);
    if (!(a == b)) std::abort();
    whole.FinishOnClose();
  } else {
    RequestParser whole(kLimits), pieces(kLimits);
    Outcome a = Feed(whole, wire, wire.size() + 1);
    Outcome b = Feed(pieces, wire, piece);
    if (!(a == b)) std::abort();
    if (!a.events.empty() && a.events.back() == WireEvent::kDone && !whole.head().chunked &&
        a.body.size() != whole.head().content_length) {
      std::abort();
    }
  }
  return 0;
}
