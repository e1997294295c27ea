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

namespace corral::api {
namespace {

void PutU32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((v >> shift) & 0xff));
}
void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v & 0xff));
}
uint32_t GetU(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

}  // namespace

std::string EncodePtyFrame(const PtyFrame& frame) {
  std::string out;
  if (frame.kind == PtyFrame::Kind::kData) {
    out.push_back('d');
    PutU32(&out, static_cast<uint32_t>(frame.data.size()));
    out += frame.data;
  } else {
    out.push_back('w');
    PutU32(&out, 4);
    PutU16(&out, frame.rows);
    PutU16(&out, frame.cols);
  }
  return out;
}

Result<size_t> DecodePtyFrames(std::string_view bytes, std::vector<PtyFrame>* out) {
  size_t pos = 0;
  while (bytes.size() - pos >= 5) {
    const char type = bytes[pos];
    const uint32_t len = GetU(bytes, pos + 1, 4);
    if (type == 'd') {
      if (len == 0 || len > kPtyMaxFrameData) {
        return InvalidArgument("pty input: a data frame of " + std::to_string(len) + " bytes (1.." +
                               std::to_string(kPtyMaxFrameData) + ")");
      }
    } else if (type == 'w') {
      if (len != 4) {
        return InvalidArgument("pty input: a window-size frame of " + std::to_string(len) +
                               " bytes (4)");
      }
    } else {
      return InvalidArgument("pty input: unknown frame type " +
                             std::to_string(static_cast<unsigned char>(type)));
    }
    if (bytes.size() - pos - 5 < len) break;  // partial
    PtyFrame f;
    if (type == 'd') {
      f.data = std::string(bytes.substr(pos + 5, len));
    } else {
      f.kind = PtyFrame::Kind::kResize;
      f.rows = static_cast<uint16_t>(GetU(bytes, pos + 5, 2));
      f.cols = static_cast<uint16_t>(GetU(bytes, pos + 7, 2));
      if (f.rows == 0 || f.cols == 0 || f.rows > kPtyMaxDimension || f.cols > kPtyMaxDimension) {
        return InvalidArgument("pty input: a window size of " + std::to_string(f.rows) + "x" +
                               std::to_string(f.cols) + " (1.." + std::to_string(kPtyMaxDimension) +
                               " each)");
      }
    }
    out->push_back(std::move(f));
    pos += 5 + len;
  }
  return pos;
}

}  // namespace corral::api
