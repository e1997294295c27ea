#include "api/tls_session_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <sstream>
#include <vector>

#include <openssl/sha.h>
#include <sys/stat.h>

#include "api/private_file.h"
#include "core/hex.h"

namespace corral::api {
namespace {

constexpr std::string_view kHeader = "corral-tls-sessions 1";
constexpr size_t kMaxFileBytes = 64 * 1024;
constexpr size_t kMaxEntries = 16;
constexpr std::string_view kWhat = "TLS session cache";

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The rule of the header for the cache's file or directory.
Status CheckOwnPrivate(const struct stat& st, const std::string& path, bool dir,
                       std::string_view what = kWhat) {
  const std::string name = std::string(what) + (dir ? " directory " : " ") + path;
  // A file is replaced by the next session written; a directory must be fixed by its user.
  const std::string fix = dir ? "; not used (chmod 700 " + path + ", or remove it)"
                              : "; not used (a private one replaces it)";
  if (st.st_uid != geteuid()) {
    return FailedPrecondition(name + ": owned by uid " + std::to_string(st.st_uid) +
                              ", not by the user (uid " + std::to_string(geteuid()) + ")" +
                              (dir ? "; not used (remove it)" : fix));
  }
  if ((st.st_mode & (dir ? 022 : 077)) != 0) {
    return FailedPrecondition(name + ": mode " + Octal(st.st_mode) +
                              (dir ? " lets its group or others write in it"
                                   : " lets its group or others read or write it") +
                              fix);
  }
  return {};
}

Status CheckDir(const std::string& dir) { return CheckPrivateUserDir(dir, kWhat); }

struct Entry {
  std::string key;
  TlsSessionTicket ticket;
};

// The entries of `text` unexpired at `now`; nothing when the text is not a cache file.
std::vector<Entry> Parse(const std::string& text, int64_t now) {
  std::vector<Entry> entries;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return entries;
  while (std::getline(in, line) && entries.size() < kMaxEntries) {
    std::istringstream fields(line);
    Entry e;
    std::string der_hex;
    if (!(fields >> e.key >> e.ticket.expires_unix_s >> der_hex)) return {};
    auto der = HexDecode(der_hex);
    if (!der || e.key.size() != 2 * SHA256_DIGEST_LENGTH) return {};
    if (e.ticket.expires_unix_s <= now) continue;
    e.ticket.der = std::move(*der);
    entries.push_back(std::move(e));
  }
  return entries;
}

// The file's text; "" when it does not exist.
Result<std::string> ReadOwnFile(const std::string& dir, const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    if (errno == ELOOP)
      return InvalidArgument(std::string(kWhat) + " " + path + ": is a symbolic link");
    return FileError(errno, kWhat, path, "cannot open");
  }
  struct stat st {};
  Status ok =
      fstat(fd, &st) != 0 ? Status(FileError(errno, kWhat, path, "cannot stat"))
      : !S_ISREG(st.st_mode)
          ? Status(InvalidArgument(std::string(kWhat) + " " + path + ": not a regular file"))
      : st.st_size > static_cast<off_t>(kMaxFileBytes)
          ? Status(InvalidArgument(std::string(kWhat) + " " + path + ": over 64 KiB"))
          : CheckOwnPrivate(st, path, false);
  if (ok) ok = CheckDir(dir);
  if (!ok) {
    close(fd);
    return tl::unexpected<Error>(ok.error());
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  return text;
}

}  // namespace

Status CheckPrivateUserDir(const std::string& dir, std::string_view what) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return FileError(errno, what, dir, "cannot stat");
  if (!S_ISDIR(st.st_mode))
    return InvalidArgument(std::string(what) + " " + dir + ": not a directory");
  return CheckOwnPrivate(st, dir, true, what);
}

TlsSessionCache::TlsSessionCache(std::string dir)
    : dir_(std::move(dir)), path_(dir_ + "/tls-sessions") {}

std::string TlsSessionCache::Key(std::string_view url, std::string_view ca_pem) {
  std::string input;
  input.reserve(url.size() + ca_pem.size() + 1);
  input.append(url).append("\n").append(ca_pem);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

Result<std::optional<TlsSessionTicket>> TlsSessionCache::Load(const std::string& key,
                                                              int64_t now_unix_s) const {
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadOwnFile(dir_, path_));
  for (Entry& e : Parse(text, now_unix_s)) {
    if (e.key == key) return std::optional<TlsSessionTicket>(std::move(e.ticket));
  }
  return std::optional<TlsSessionTicket>();
}

Status TlsSessionCache::Store(const std::string& key, const TlsSessionTicket& ticket,
                              int64_t now_unix_s) const {
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    return FileError(errno, kWhat, dir_, "cannot create");
  }
  CORRAL_RETURN_IF_ERROR(CheckDir(dir_));
  std::vector<Entry> entries;
  if (auto text = ReadOwnFile(dir_, path_); text) entries = Parse(*text, now_unix_s);
  std::erase_if(entries, [&key](const Entry& e) { return e.key == key; });
  if (ticket.expires_unix_s > now_unix_s && !ticket.der.empty()) {
    entries.push_back({key, ticket});
  }
  // The latest to expire are kept.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.ticket.expires_unix_s > b.ticket.expires_unix_s;
  });
  if (entries.size() > kMaxEntries) entries.resize(kMaxEntries);
  std::string text(kHeader);
  text += "\n";
  for (const Entry& e : entries) {
    text +=
        e.key + " " + std::to_string(e.ticket.expires_unix_s) + " " + HexEncode(e.ticket.der) + "\n";
  }
  if (text.size() > kMaxFileBytes) return InvalidArgument(std::string(kWhat) + ": too large");
  return WriteFileAtomically(path_, text, WriteMode::kReplace, 0600, kWhat);
}

}  // namespace corral::api
