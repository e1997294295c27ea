#include "api/auth.h"

#include <fcntl.h>
#include <munge.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>
#include <sys/random.h>
// OpenSSL's SHA-256 block functions, not EVP/HMAC/RAND: those pull libcrypto's provider
// machinery (~400 KB of relocated data) into every client and add ~0.3 ms to each start.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>

namespace corral::api {
namespace {

constexpr size_t kMinKeyBytes = 32;
constexpr size_t kMaxTokenBytes = 8 * 1024;
constexpr size_t kMaxKeyFileBytes = 64 * 1024;

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

const std::string& JwtHeader() {
  static const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  return header;
}

int64_t UnixSeconds(Timestamp t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string UserName(uid_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buf(size > 0 ? static_cast<size_t>(size) : 16384, '\0');
  passwd pw{};
  passwd* result = nullptr;
  while (true) {
    int rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    break;
  }
  if (result == nullptr || pw.pw_name == nullptr || pw.pw_name[0] == '\0') {
    return std::to_string(uid);
  }
  return pw.pw_name;
}

tl::unexpected<Error> FileError(int err, const std::string& path, std::string_view what) {
  std::string message =
      "jwt key file " + path + ": " + std::string(what) + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return MakeError(ErrorCode::kNotFound, std::move(message));
    case EACCES:
    case EPERM:
      return MakeError(ErrorCode::kPermissionDenied, std::move(message));
    case EEXIST:
      return MakeError(ErrorCode::kAlreadyExists, std::move(message));
    case EISDIR:
      return InvalidArgument(std::move(message));
    default:
      return Unavailable(std::move(message));
  }
}

// The key is the file's content without trailing white space (so that a key written with
// `echo` or an editor works the same as one written by `CreateFile`).
std::string_view TrimKey(std::string_view s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kUser:
      return "user";
    case Role::kAdmin:
      return "admin";
    case Role::kAgent:
      return "agent";
    case Role::kController:
      return "controller";
  }
  return "user";
}

Result<Role> ParseRole(std::string_view s) {
  for (Role r : {Role::kUser, Role::kAdmin, Role::kAgent, Role::kController}) {
    if (RoleName(r) == s) return r;
  }
  return InvalidArgument("unknown role \"" + std::string(s) +
                         "\" (expected user, admin, agent or controller)");
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
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError(errno, path, "cannot open");
  std::string content;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return FileError(err, path, "cannot read");
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > kMaxKeyFileBytes) {
      close(fd);
      return InvalidArgument("jwt key file " + path + ": larger than " +
                             std::to_string(kMaxKeyFileBytes) + " bytes");
    }
  }
  close(fd);
  Result<JwtKey> key = FromBytes(std::string(TrimKey(content)));
  if (!key) return Annotate(key.error(), "jwt key file " + path);
  return key;
}

Result<JwtKey> JwtKey::CreateFile(const std::string& path) {
  unsigned char random[48];
  if (!RandomBytes(random, sizeof random)) {
    return Internal("jwt key file " + path + ": no randomness from getrandom or /dev/urandom");
  }
  // Text, so that the key can be copied into another host's file or an environment variable.
  std::string key =
      Base64UrlEncode(std::string_view(reinterpret_cast<char*>(random), sizeof random));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(errno, path, "cannot create");
  std::string content = key + "\n";
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(path.c_str());
      return FileError(err, path, "cannot write");
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(path.c_str());
    return FileError(err, path, "cannot write");
  }
  return FromBytes(std::move(key));
}

std::string JwtKey::Sign(const Identity& identity, Timestamp now, Duration ttl) const {
  int64_t iat = UnixSeconds(now);
  int64_t exp = UnixSeconds(now + ttl);
  nlohmann::json claims = {
      {"sub", identity.user}, {"uid", identity.uid},
      {"gid", identity.gid},  {"role", std::string(RoleName(identity.role))},
      {"iat", iat},           {"exp", exp},
  };
  std::string token = JwtHeader();
  token += '.';
  token += Base64UrlEncode(claims.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::string signature = HmacSha256(key_, token);
  token += '.';
  token += Base64UrlEncode(signature);
  return token;
}

Result<Identity> JwtKey::Verify(std::string_view token, Timestamp now) const {
  if (token.size() > kMaxTokenBytes) return Unauthenticated("jwt: malformed token: too long");
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Unauthenticated("jwt: malformed token: expected three dot-separated parts");
  }
  std::string_view header_b64 = token.substr(0, dot1);
  std::string_view payload_b64 = token.substr(dot1 + 1, dot2 - dot1 - 1);
  std::string_view signature_b64 = token.substr(dot2 + 1);

  std::string header_json;
  if (!Base64UrlDecode(header_b64, &header_json)) {
    return Unauthenticated("jwt: malformed token: header is not base64url");
  }
  nlohmann::json header = nlohmann::json::parse(header_json, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object())
    return Unauthenticated("jwt: malformed token: header is not a JSON object");
  auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string()) {
    return Unauthenticated("jwt: malformed token: header has no alg");
  }
  if (alg->get<std::string>() != "HS256") {
    return Unauthenticated("jwt: unsupported alg \"" + alg->get<std::string>() +
                           "\" (only HS256 is accepted)");
  }

  std::string signature;
  if (!Base64UrlDecode(signature_b64, &signature)) {
    return Unauthenticated("jwt: malformed token: signature is not base64url");
  }
  std::string expected = HmacSha256(key_, token.substr(0, dot2));
  if (signature.size() != expected.size() ||
      CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) != 0) {
    return Unauthenticated("jwt: bad signature");
  }

  // Signed by us from here on; still checked field by field.
  std::string payload_json;
  if (!Base64UrlDecode(payload_b64, &payload_json)) {
    return Unauthenticated("jwt: malformed token: payload is not base64url");
  }
  nlohmann::json claims = nlohmann::json::parse(payload_json, nullptr, false);
  if (!claims.is_object())
    return Unauthenticated("jwt: malformed token: claims are not a JSON object");
  auto missing = [](const char* name, const char* type) {
    return Unauthenticated(std::string("jwt: malformed token: claim \"") + name +
                           "\" missing or not " + type);
  };
  auto sub = claims.find("sub");
  if (sub == claims.end() || !sub->is_string() || sub->get<std::string>().empty()) {
    return missing("sub", "a non-empty string");
  }
  Identity id;
  id.user = sub->get<std::string>();
  for (auto [name, field] : {std::pair{"uid", &id.uid}, std::pair{"gid", &id.gid}}) {
    auto it = claims.find(name);
    if (it == claims.end() || !it->is_number_unsigned() || it->get<uint64_t>() > UINT32_MAX) {
      return missing(name, "a 32-bit unsigned integer");
    }
    *field = static_cast<uint32_t>(it->get<uint64_t>());
  }
  auto role = claims.find("role");
  if (role == claims.end() || !role->is_string()) return missing("role", "a string");
  Result<Role> parsed_role = ParseRole(role->get<std::string>());
  if (!parsed_role) return Unauthenticated("jwt: malformed token: " + parsed_role.error().message);
  id.role = *parsed_role;
  auto exp = claims.find("exp");
  if (exp == claims.end() || !exp->is_number()) return missing("exp", "a number");
  double exp_seconds = exp->get<double>();
  if (!std::isfinite(exp_seconds)) return missing("exp", "a finite number");
  if (static_cast<double>(ToMicros(now)) >= exp_seconds * 1e6) {
    int64_t whole = exp_seconds > 0 && exp_seconds < 1e12 ? static_cast<int64_t>(exp_seconds) : 0;
    return Unauthenticated("jwt: token expired at " +
                           FormatTimestamp(FromMicros(whole * 1'000'000)) + " UTC");
  }
  return id;
}

// ---------------------------------------------------------------------------------------------
// Authenticator

namespace {

class StandardAuthenticator final : public Authenticator {
 public:
  StandardAuthenticator(JwtKey key, std::string munge_socket, std::vector<std::string> admins)
      : key_(std::move(key)), munge_socket_(std::move(munge_socket)), admins_(std::move(admins)) {}

  Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const override {
    std::string value = request.header("authorization");
    if (value.empty()) return Unauthenticated("missing Authorization header");
    size_t space = value.find(' ');
    std::string scheme = value.substr(0, space);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view credential =
        space == std::string::npos ? std::string_view() : std::string_view(value).substr(space + 1);
    while (!credential.empty() && credential.front() == ' ') credential.remove_prefix(1);
    if (credential.empty()) return Unauthenticated("empty " + scheme + " credential");
    if (scheme == "bearer") {
      CORRAL_ASSIGN_OR_RETURN(Identity id, key_.Verify(credential, now));
      // The role is trusted as signed; an administrator's user token is raised to admin.
      if (id.role == Role::kUser && IsAdmin(id.user, id.uid)) id.role = Role::kAdmin;
      return id;
    }
    if (scheme == "munge") return DecodeMunge(std::string(credential));
    return Unauthenticated("unsupported Authorization scheme \"" + value.substr(0, space) +
                           "\" (expected Bearer or Munge)");
  }

 private:
  bool IsAdmin(const std::string& user, uint32_t uid) const {
    return uid == 0 || std::find(admins_.begin(), admins_.end(), user) != admins_.end();
  }

  Result<Identity> DecodeMunge(const std::string& credential) const {
    if (munge_socket_.empty()) return Unauthenticated("munge authentication is not enabled");
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx == nullptr) return Internal("munge: cannot create a context");
    munge_err_t err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket_.c_str());
    uid_t uid = 0;
    gid_t gid = 0;
    if (err == EMUNGE_SUCCESS)
      err = munge_decode(credential.c_str(), ctx, nullptr, nullptr, &uid, &gid);
    std::string detail = err == EMUNGE_SUCCESS ? ""
                                               : (munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx)
                                                                          : munge_strerror(err));
    munge_ctx_destroy(ctx);
    if (err == EMUNGE_SOCKET) {
      return Unavailable("munge: cannot reach munged at " + munge_socket_ + ": " + detail);
    }
    if (err != EMUNGE_SUCCESS) return Unauthenticated("munge: credential rejected: " + detail);
    Identity id;
    id.uid = uid;
    id.gid = gid;
    id.user = UserName(uid);
    id.role = IsAdmin(id.user, id.uid) ? Role::kAdmin : Role::kUser;
    return id;
  }

  JwtKey key_;
  std::string munge_socket_;
  std::vector<std::string> admins_;
};

}  // namespace

std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins) {
  return std::make_unique<StandardAuthenticator>(std::move(key), std::move(munge_socket),
                                                 std::move(admins));
}

std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now, Duration ttl) {
  return "Bearer " + key.Sign(identity, now, ttl);
}

Result<std::string> MungeHeader(const std::string& socket) {
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx == nullptr) return Internal("munge: cannot create a context");
  munge_err_t err = EMUNGE_SUCCESS;
  if (!socket.empty()) err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
  char* cred = nullptr;
  if (err == EMUNGE_SUCCESS) err = munge_encode(&cred, ctx, nullptr, 0);
  if (err != EMUNGE_SUCCESS) {
    const char* detail = munge_ctx_strerror(ctx);
    std::string message = "munge: cannot encode a credential with munged at " +
                          (socket.empty() ? std::string("the default socket") : socket) + ": " +
                          (detail ? detail : munge_strerror(err));
    munge_ctx_destroy(ctx);
    if (cred != nullptr) std::free(cred);
    return Unavailable(std::move(message));
  }
  munge_ctx_destroy(ctx);
  std::string header = std::string("Munge ") + cred;
  std::free(cred);
  return header;
}

Identity CurrentProcessIdentity() {
  Identity id;
  id.uid = getuid();
  id.gid = getgid();
  id.user = UserName(id.uid);
  id.role = Role::kUser;
  return id;
}

}  // namespace corral::api
