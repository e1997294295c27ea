#include "api/token.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>
#include <sys/random.h>
// OpenSSL's SHA-256 block functions, not EVP/HMAC/RAND: those pull libcrypto's provider
// machinery (~400 KB of relocated data) into every client and add ~0.3 ms to each start.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "core/hex.h"
#include "core/strings.h"

namespace corral::api {
namespace {

constexpr size_t kMaxTokenBytes = 8 * 1024;
constexpr size_t kMaxKidBytes = 64;
// JWT NumericDate range accepted: 0 to 2^40 seconds (year ~36,800), so that seconds * 1e6
// never overflows a Timestamp.
constexpr int64_t kMaxNumericDate = int64_t{1} << 40;

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message));
}

// ---------------------------------------------------------------------------------------------
// base64url without padding (RFC 4648, section 5), as JWTs use it.

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(in[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(in[i + 1])} << 8) | static_cast<uint8_t>(in[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  size_t rest = in.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t{static_cast<uint8_t>(in[i])} << 16;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
  } else if (rest == 2) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(in[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(in[i + 1])} << 8);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
  }
  return out;
}

int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// Strict: only the url alphabet, no padding, no stray bits in the last character.
bool Base64UrlDecode(std::string_view in, std::string* out) {
  if (in.size() % 4 == 1) return false;
  out->clear();
  out->reserve(in.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = B64Value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return (acc & ((1u << bits) - 1)) == 0;
}

std::string Sha256(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(md, &ctx);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
}

// HMAC-SHA256 (RFC 2104) over OpenSSL's SHA-256.
std::string HmacSha256(std::string_view key, std::string_view data) {
  constexpr size_t kBlock = 64;
  unsigned char k[kBlock] = {};
  SHA256_CTX ctx;
  if (key.size() > kBlock) {
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, key.data(), key.size());
    SHA256_Final(k, &ctx);
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  unsigned char pad[kBlock];
  unsigned char inner[SHA256_DIGEST_LENGTH];
  unsigned char outer[SHA256_DIGEST_LENGTH];
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x36;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad, kBlock);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(inner, &ctx);
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x5c;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, pad, kBlock);
  SHA256_Update(&ctx, inner, sizeof inner);
  SHA256_Final(outer, &ctx);
  OPENSSL_cleanse(k, sizeof k);
  OPENSSL_cleanse(pad, sizeof pad);
  return std::string(reinterpret_cast<char*>(outer), sizeof outer);
}

// Fills `out` from the kernel's CSPRNG (getrandom, else /dev/urandom).
bool RandomBytes(unsigned char* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = getrandom(out + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  if (done == n) return true;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  while (done < n) {
    ssize_t got = read(fd, out + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  close(fd);
  return done == n;
}

int64_t UnixSeconds(Timestamp t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}
Timestamp FromUnixSeconds(int64_t s) { return FromMicros(s * 1'000'000); }

std::string When(Timestamp t) { return FormatTimestamp(t) + " UTC"; }

std::string SecondsText(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

std::string SignJwt(std::string_view secret, const nlohmann::json& header,
                    const nlohmann::json& claims) {
  std::string token = Base64UrlEncode(header.dump());
  token += '.';
  token += Base64UrlEncode(claims.dump());
  std::string signature = HmacSha256(secret, token);
  token += '.';
  token += Base64UrlEncode(signature);
  return token;
}

// A token split and decoded, its signature not yet checked.
struct ParsedToken {
  nlohmann::json header;
  std::string_view signed_part;  // header.payload
  std::string_view payload_b64;
  std::string signature;
};

// Steps 1 of token.h except the kid: structure, header, alg.
Result<ParsedToken> ParseToken(std::string_view token) {
  if (token.size() > kMaxTokenBytes) return Unauthenticated("jwt: malformed token: too long");
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Unauthenticated("jwt: malformed token: expected three dot-separated parts");
  }
  ParsedToken out;
  std::string header_json;
  if (!Base64UrlDecode(token.substr(0, dot1), &header_json)) {
    return Unauthenticated("jwt: malformed token: header is not base64url");
  }
  out.header = nlohmann::json::parse(header_json, nullptr, /*allow_exceptions=*/false);
  if (!out.header.is_object()) {
    return Unauthenticated("jwt: malformed token: header is not a JSON object");
  }
  auto alg = out.header.find("alg");
  if (alg == out.header.end() || !alg->is_string()) {
    return Unauthenticated("jwt: malformed token: header has no alg");
  }
  if (alg->get_ref<const std::string&>() != "HS256") {
    std::string name = alg->get<std::string>();
    // The name is the caller's: quote it only when it is short and printable.
    bool printable = name.size() <= 16;
    for (char c : name) printable = printable && c > ' ' && c < 0x7f && c != '"';
    return Unauthenticated("jwt: unsupported alg \"" + (printable ? name : std::string("?")) +
                           "\" (only HS256 is accepted)");
  }
  if (!Base64UrlDecode(token.substr(dot2 + 1), &out.signature)) {
    return Unauthenticated("jwt: malformed token: signature is not base64url");
  }
  out.signed_part = token.substr(0, dot2);
  out.payload_b64 = token.substr(dot1 + 1, dot2 - dot1 - 1);
  return out;
}

Status CheckSignature(const ParsedToken& t, std::string_view secret) {
  std::string expected = HmacSha256(secret, t.signed_part);
  if (t.signature.size() != expected.size() ||
      CRYPTO_memcmp(t.signature.data(), expected.data(), expected.size()) != 0) {
    return Unauthenticated("jwt: bad signature");
  }
  return {};
}

Result<nlohmann::json> DecodeClaims(const ParsedToken& t) {
  std::string payload_json;
  if (!Base64UrlDecode(t.payload_b64, &payload_json)) {
    return Unauthenticated("jwt: malformed token: payload is not base64url");
  }
  nlohmann::json claims = nlohmann::json::parse(payload_json, nullptr, false);
  if (!claims.is_object()) {
    return Unauthenticated("jwt: malformed token: claims are not a JSON object");
  }
  return claims;
}

tl::unexpected<Error> BadClaim(const char* name, const char* type) {
  return Unauthenticated(std::string("jwt: malformed token: claim \"") + name +
                         "\" missing or not " + type);
}

Result<std::string> StringClaim(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return BadClaim(name, "a non-empty string");
  }
  return it->get<std::string>();
}

Result<uint64_t> UintClaim(const nlohmann::json& claims, const char* name, uint64_t max) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number_unsigned() || it->get<uint64_t>() > max) {
    return BadClaim(name, max == UINT32_MAX ? "a 32-bit unsigned integer" : "an unsigned integer");
  }
  return it->get<uint64_t>();
}

Result<Timestamp> TimeClaim(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number_integer() || it->get<int64_t>() < 0 ||
      it->get<int64_t>() > kMaxNumericDate) {
    return BadClaim(name, "a whole number of seconds since 1970");
  }
  return FromUnixSeconds(it->get<int64_t>());
}

// Step 4 of token.h: what a node's key may sign.
bool ScopeAllows(const Keyring::Entry& key, const TokenClaims& c) {
  if (key.node.empty()) return true;
  return (c.role == Role::kAgent || c.role == Role::kController) && c.node == key.node;
}

}  // namespace

bool IsValidKid(std::string_view kid) {
  if (kid.empty() || kid.size() > kMaxKidBytes) return false;
  for (char c : kid) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// JwtKey

Result<JwtKey> JwtKey::FromBytes(std::string key) {
  if (key.size() < kMinKeyBytes) {
    return InvalidArgument("jwt key of " + std::to_string(key.size()) +
                           " bytes is too short (at least " + std::to_string(kMinKeyBytes) + ")");
  }
  return JwtKey(std::move(key));
}

Result<JwtKey> JwtKey::FromFile(const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(std::string content, ReadPrivateFile(path, "jwt key file"));
  // The key is the content without trailing white space (so that a key written with `echo`
  // or an editor works the same as one written by `CreateFile`).
  std::string_view key = content;
  while (!key.empty() &&
         (key.back() == '\n' || key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) {
    key.remove_suffix(1);
  }
  Result<JwtKey> out = FromBytes(std::string(key));
  OPENSSL_cleanse(content.data(), content.size());
  if (!out) return Annotate(out.error(), "jwt key file " + path);
  return out;
}

Result<JwtKey> JwtKey::CreateFile(const std::string& path) {
  Result<std::string> key = Keyring::GenerateSecret();
  if (!key) return Annotate(key.error(), "jwt key file " + path);
  // Text, so that the key can be copied into another host's file or an environment variable.
  CORRAL_RETURN_IF_ERROR(
      WriteFileAtomically(path, *key + "\n", WriteMode::kCreateNew, 0600, "jwt key file"));
  return FromBytes(std::move(*key));
}

std::string JwtKey::Sign(const Identity& identity, Timestamp now, Duration ttl) const {
  static const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  nlohmann::json claims = {
      {"sub", identity.user},    {"uid", identity.uid},
      {"gid", identity.gid},     {"role", std::string(RoleName(identity.role))},
      {"iat", UnixSeconds(now)}, {"exp", UnixSeconds(now + ttl)},
  };
  std::string token = header;
  token += '.';
  token += Base64UrlEncode(claims.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::string signature = HmacSha256(key_, token);
  token += '.';
  token += Base64UrlEncode(signature);
  return token;
}

Result<Identity> JwtKey::Verify(std::string_view token, Timestamp now) const {
  CORRAL_ASSIGN_OR_RETURN(ParsedToken parsed, ParseToken(token));
  CORRAL_RETURN_IF_ERROR(CheckSignature(parsed, key_));
  // Signed by us from here on; still checked field by field.
  CORRAL_ASSIGN_OR_RETURN(nlohmann::json claims, DecodeClaims(parsed));
  Identity id;
  CORRAL_ASSIGN_OR_RETURN(id.user, StringClaim(claims, "sub"));
  CORRAL_ASSIGN_OR_RETURN(uint64_t uid, UintClaim(claims, "uid", UINT32_MAX));
  CORRAL_ASSIGN_OR_RETURN(uint64_t gid, UintClaim(claims, "gid", UINT32_MAX));
  id.uid = static_cast<uint32_t>(uid);
  id.gid = static_cast<uint32_t>(gid);
  auto role = claims.find("role");
  if (role == claims.end() || !role->is_string()) return BadClaim("role", "a string");
  Result<Role> parsed_role = ParseRole(role->get<std::string>());
  if (!parsed_role) return Unauthenticated("jwt: malformed token: " + parsed_role.error().message);
  if (*parsed_role == Role::kOperator || *parsed_role == Role::kJob) {
    return Unauthenticated("jwt: role \"" + std::string(RoleName(*parsed_role)) +
                           "\" needs a token with a key id (a keyring token)");
  }
  id.role = *parsed_role;
  auto exp = claims.find("exp");
  if (exp == claims.end() || !exp->is_number()) return BadClaim("exp", "a number");
  double exp_seconds = exp->get<double>();
  if (!std::isfinite(exp_seconds)) return BadClaim("exp", "a finite number");
  double now_micros = static_cast<double>(ToMicros(now));
  if (now_micros >= exp_seconds * 1e6) {
    int64_t whole = exp_seconds > 0 && exp_seconds < 1e12 ? static_cast<int64_t>(exp_seconds) : 0;
    return Unauthenticated("jwt: token expired at " + When(FromUnixSeconds(whole)));
  }
  // The lifetime cap: from iat when the token has one, else from now.
  double from_micros = now_micros;
  auto iat = claims.find("iat");
  if (iat != claims.end()) {
    if (!iat->is_number() || !std::isfinite(iat->get<double>())) {
      return BadClaim("iat", "a finite number");
    }
    from_micros = iat->get<double>() * 1e6;
  }
  double cap_micros = static_cast<double>(kLegacyMaxTokenLifetime.count());
  if (exp_seconds * 1e6 - from_micros > cap_micros) {
    return Unauthenticated("jwt: token lifetime exceeds the maximum of " +
                           SecondsText(kLegacyMaxTokenLifetime));
  }
  return id;
}

// ---------------------------------------------------------------------------------------------
// Keyring

Keyring Keyring::FromKey(const JwtKey& key) {
  Keyring ring;
  ring.entries_.push_back(Entry{Fingerprint(key.key_), key.key_, "", true});
  return ring;
}

std::string Keyring::Fingerprint(std::string_view secret) {
  return "k" + HexEncode(std::string_view(Sha256(secret)).substr(0, 8));
}

Result<std::string> Keyring::GenerateSecret() {
  unsigned char random[48];
  if (!RandomBytes(random, sizeof random)) {
    return Internal("no randomness from getrandom or /dev/urandom");
  }
  std::string secret =
      Base64UrlEncode(std::string_view(reinterpret_cast<char*>(random), sizeof random));
  OPENSSL_cleanse(random, sizeof random);
  return secret;
}

const Keyring::Entry* Keyring::Find(std::string_view kid) const {
  for (const Entry& e : entries_) {
    if (e.kid == kid) return &e;
  }
  return nullptr;
}

Status Keyring::Add(std::string kid, std::string secret, std::string node) {
  if (!IsValidKid(kid)) {
    // Not echoed: it may be a misplaced secret.
    return InvalidArgument("key id is not 1-64 characters of letters, digits and . _ : -");
  }
  if (Find(kid) != nullptr) {
    return MakeError(ErrorCode::kAlreadyExists, "key id \"" + kid + "\" is listed already");
  }
  if (secret.size() < kMinKeyBytes) {
    return InvalidArgument("key \"" + kid + "\": secret of " + std::to_string(secret.size()) +
                           " bytes is too short (at least " + std::to_string(kMinKeyBytes) + ")");
  }
  for (char c : secret) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      return InvalidArgument("key \"" + kid + "\": secret contains white space");
    }
  }
  if (!node.empty()) {
    Status ok = CheckNodeName(node);
    if (!ok) return Annotate(ok.error(), "key \"" + kid + "\"");
  }
  entries_.push_back(Entry{std::move(kid), std::move(secret), std::move(node), false});
  return {};
}

Status Keyring::SetSigning(std::string_view kid) {
  const Entry* target = Find(kid);
  if (target == nullptr) return NotFound("key id \"" + std::string(kid) + "\" is not listed");
  std::string scope = target->node;
  for (Entry& e : entries_) {
    if (e.node == scope) e.signing = e.kid == kid;
  }
  return {};
}

Status Keyring::Remove(std::string_view kid) {
  const Entry* target = Find(kid);
  if (target == nullptr) return NotFound("key id \"" + std::string(kid) + "\" is not listed");
  if (target->signing) {
    return FailedPrecondition("key \"" + std::string(kid) +
                              "\" signs new tokens: make another key the signing key first");
  }
  std::erase_if(entries_, [&](const Entry& e) { return e.kid == kid; });
  return {};
}

Result<Keyring> Keyring::Parse(std::string_view text, std::string_view origin) {
  std::string where(origin);
  std::string_view trimmed = Trim(text);
  // A first-release key file: one word.
  if (!trimmed.empty() && trimmed.front() != '#' &&
      trimmed.find_first_of(" \t\r\n") == std::string_view::npos) {
    if (trimmed.size() < kMinKeyBytes) {
      return InvalidArgument(where + ": jwt key of " + std::to_string(trimmed.size()) +
                             " bytes is too short (at least " + std::to_string(kMinKeyBytes) + ")");
    }
    Keyring ring;
    ring.entries_.push_back(Entry{Fingerprint(trimmed), std::string(trimmed), "", true});
    return ring;
  }
  Keyring ring;
  std::vector<std::pair<size_t, std::string>> sign_lines;
  std::vector<std::string> lines = Split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string at = where + ": line " + std::to_string(i + 1);
    std::string_view line = Trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> words;
    for (const std::string& w : Split(line, ' ')) {
      for (const std::string& part : SplitNonEmpty(w, '\t')) words.push_back(part);
    }
    if (words[0] == "key" && (words.size() == 3 || words.size() == 4)) {
      std::string node;
      if (words.size() == 4) {
        if (words[3].rfind("node=", 0) != 0) {
          return InvalidArgument(at + ": expected node=NAME after the secret");
        }
        node = words[3].substr(5);
      }
      Status ok = ring.Add(words[1], words[2], node);
      if (!ok) return InvalidArgument(at + ": " + ok.error().message);
    } else if (words[0] == "sign" && words.size() == 2) {
      sign_lines.emplace_back(i + 1, words[1]);
    } else {
      // Never echo the line: it may hold a secret.
      return InvalidArgument(at + ": expected \"key KID SECRET [node=NAME]\" or \"sign KID\"");
    }
  }
  if (ring.entries_.empty()) return InvalidArgument(where + ": no key");
  for (const auto& [line, kid] : sign_lines) {
    std::string at = where + ": line " + std::to_string(line);
    const Entry* e = ring.Find(kid);
    if (e == nullptr) return InvalidArgument(at + ": sign names key \"" + kid + "\", not listed");
    for (const Entry& other : ring.entries_) {
      if (other.signing && other.node == e->node && other.kid != kid) {
        return InvalidArgument(at + ": a second signing key for " +
                               (e->node.empty() ? std::string("the cluster") : "node " + e->node) +
                               " (\"" + other.kid + "\" signs already)");
      }
    }
    CORRAL_RETURN_IF_ERROR(ring.SetSigning(kid));
  }
  return ring;
}

Result<Keyring> Keyring::FromFile(const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(std::string content, ReadPrivateFile(path, "keyring file"));
  Result<Keyring> ring = Parse(content, "keyring file " + path);
  OPENSSL_cleanse(content.data(), content.size());
  return ring;
}

Result<Keyring> Keyring::CreateFile(const std::string& path, std::string kid) {
  Result<std::string> secret = GenerateSecret();
  if (!secret) return Annotate(secret.error(), "keyring file " + path);
  Keyring ring;
  Status ok = ring.Add(std::move(kid), std::move(*secret));
  if (!ok) return Annotate(ok.error(), "keyring file " + path);
  ring.entries_.front().signing = true;
  CORRAL_RETURN_IF_ERROR(ring.WriteFile(path, WriteMode::kCreateNew));
  return ring;
}

std::string Keyring::Serialize() const {
  std::string out =
      "# Corral keyring (docs/security.md): keep it mode 0600.\n"
      "# \"key KID SECRET [node=NAME]\" verifies; \"sign KID\" signs new tokens of its scope.\n";
  for (const Entry& e : entries_) {
    if (e.signing) out += "sign " + e.kid + "\n";
  }
  for (const Entry& e : entries_) {
    out += "key " + e.kid + " " + e.secret;
    if (!e.node.empty()) out += " node=" + e.node;
    out += "\n";
  }
  return out;
}

Status Keyring::WriteFile(const std::string& path, WriteMode mode) const {
  std::string text = Serialize();
  Status ok = WriteFileAtomically(path, text, mode, 0600, "keyring file");
  OPENSSL_cleanse(text.data(), text.size());
  return ok;
}

const Keyring::Entry* Keyring::SigningKeyFor(const TokenClaims& c) const {
  bool node_scoped = (c.role == Role::kAgent || c.role == Role::kController) && !c.node.empty();
  const Entry* cluster = nullptr;
  for (const Entry& e : entries_) {
    if (!e.signing) continue;
    if (node_scoped && e.node == c.node) return &e;
    if (e.node.empty()) cluster = &e;
  }
  return cluster;
}

Result<std::string> Keyring::Sign(const TokenClaims& c) const {
  const Entry* key = SigningKeyFor(c);
  if (key == nullptr) {
    return FailedPrecondition(
        std::string("keyring: no signing key for ") +
        (c.node.empty() ? std::string("cluster tokens") : "node " + c.node + " or the cluster"));
  }
  for (Timestamp t : {c.issued_at, c.not_before, c.expires_at}) {
    int64_t s = UnixSeconds(t);
    if (s < 0 || s > kMaxNumericDate) return InvalidArgument("token time out of range");
  }
  nlohmann::json header = {{"alg", "HS256"}, {"kid", key->kid}, {"typ", "JWT"}};
  nlohmann::json claims = {
      {"iss", c.issuer},
      {"aud", c.audience},
      {"sub", c.subject},
      {"iat", UnixSeconds(c.issued_at)},
      {"nbf", UnixSeconds(c.not_before)},
      {"exp", UnixSeconds(c.expires_at)},
      {"role", std::string(RoleName(c.role))},
  };
  if (IsUserRole(c.role) || c.role == Role::kJob) {
    claims["uid"] = c.uid;
    claims["gid"] = c.gid;
  }
  if (!c.node.empty()) claims["node"] = c.node;
  if (c.role == Role::kJob) {
    claims["job"] = c.job.value;
    claims["gen"] = c.generation.value;
  }
  try {
    return SignJwt(key->secret, header, claims);
  } catch (const nlohmann::json::exception&) {
    return InvalidArgument("token claim is not valid UTF-8");
  }
}

Result<VerifiedToken> Keyring::Verify(std::string_view token, const TokenCheck& check,
                                      Timestamp now) const {
  CORRAL_ASSIGN_OR_RETURN(ParsedToken parsed, ParseToken(token));
  if (parsed.header.contains("crit")) {
    return Unauthenticated("jwt: header has crit (no extension is understood)");
  }
  auto kid_it = parsed.header.find("kid");
  if (kid_it == parsed.header.end()) return Unauthenticated("jwt: token has no kid");
  if (!kid_it->is_string() || !IsValidKid(kid_it->get_ref<const std::string&>())) {
    return Unauthenticated("jwt: malformed token: kid is not a key id");
  }
  const std::string& kid = kid_it->get_ref<const std::string&>();
  const Entry* key = Find(kid);
  if (key == nullptr) return Unauthenticated("jwt: unknown key id \"" + kid + "\"");
  CORRAL_RETURN_IF_ERROR(CheckSignature(parsed, key->secret));

  CORRAL_ASSIGN_OR_RETURN(nlohmann::json claims, DecodeClaims(parsed));
  VerifiedToken out;
  out.kid = kid;
  TokenClaims& c = out.claims;
  CORRAL_ASSIGN_OR_RETURN(c.issuer, StringClaim(claims, "iss"));
  CORRAL_ASSIGN_OR_RETURN(c.audience, StringClaim(claims, "aud"));
  CORRAL_ASSIGN_OR_RETURN(c.subject, StringClaim(claims, "sub"));
  CORRAL_ASSIGN_OR_RETURN(c.issued_at, TimeClaim(claims, "iat"));
  CORRAL_ASSIGN_OR_RETURN(c.not_before, TimeClaim(claims, "nbf"));
  CORRAL_ASSIGN_OR_RETURN(c.expires_at, TimeClaim(claims, "exp"));
  CORRAL_ASSIGN_OR_RETURN(std::string role, StringClaim(claims, "role"));
  Result<Role> parsed_role = ParseRole(role);
  if (!parsed_role) return Unauthenticated("jwt: malformed token: " + parsed_role.error().message);
  c.role = *parsed_role;
  if (IsUserRole(c.role) || c.role == Role::kJob) {
    CORRAL_ASSIGN_OR_RETURN(uint64_t uid, UintClaim(claims, "uid", UINT32_MAX));
    CORRAL_ASSIGN_OR_RETURN(uint64_t gid, UintClaim(claims, "gid", UINT32_MAX));
    c.uid = static_cast<uint32_t>(uid);
    c.gid = static_cast<uint32_t>(gid);
  }
  if (c.role == Role::kAgent || c.role == Role::kController) {
    if (claims.contains("node")) {
      CORRAL_ASSIGN_OR_RETURN(c.node, StringClaim(claims, "node"));
      if (!CheckNodeName(c.node).has_value()) {
        return Unauthenticated("jwt: malformed token: claim \"node\" is not a node name");
      }
    } else if (c.role == Role::kAgent) {
      return BadClaim("node", "a non-empty string");
    }
  }
  if (c.role == Role::kJob) {
    CORRAL_ASSIGN_OR_RETURN(uint64_t job, UintClaim(claims, "job", UINT64_MAX));
    CORRAL_ASSIGN_OR_RETURN(uint64_t gen, UintClaim(claims, "gen", UINT64_MAX));
    c.job = JobId(job);
    c.generation = Generation(gen);
  }

  // Step 3: issuer, audience, time.
  if (c.issuer != check.issuer) {
    return Unauthenticated("jwt: token is from another cluster (iss is not \"" + check.issuer +
                           "\")");
  }
  const TokenCheck::Audience* audience = nullptr;
  for (const TokenCheck::Audience& a : check.audiences) {
    if (a.name == c.audience) audience = &a;
  }
  if (audience == nullptr) {
    std::vector<std::string> names;
    for (const TokenCheck::Audience& a : check.audiences) names.push_back("\"" + a.name + "\"");
    return Unauthenticated("jwt: token is not meant for " + Join(names, " or ") + " (wrong aud)");
  }
  if (!ScopeAllows(*key, c)) {
    return Unauthenticated("jwt: key \"" + kid + "\" belongs to node " + key->node +
                           " and cannot sign this token");
  }
  if (c.issued_at > now + check.clock_skew) {
    return Unauthenticated("jwt: token issued in the future (iat " + When(c.issued_at) + ")");
  }
  if (c.not_before > now + check.clock_skew) {
    return Unauthenticated("jwt: token not valid before " + When(c.not_before));
  }
  if (now >= c.expires_at + check.clock_skew) {
    return Unauthenticated("jwt: token expired at " + When(c.expires_at));
  }
  if (c.expires_at <= c.issued_at || c.expires_at <= c.not_before) {
    return Unauthenticated("jwt: malformed token: exp is not after iat and nbf");
  }
  if (c.expires_at - c.issued_at > audience->max_lifetime) {
    return Unauthenticated("jwt: token lifetime of " + SecondsText(c.expires_at - c.issued_at) +
                           " exceeds the maximum of " + SecondsText(audience->max_lifetime));
  }
  return out;
}

}  // namespace corral::api
