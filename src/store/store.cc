#include "store/store.h"

#include <cctype>

#include "store/memory_store.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace corral::store {

Result<std::unique_ptr<Store>> OpenStore(const std::string& url) {
  auto upcast = [](auto r) -> Result<std::unique_ptr<Store>> {
    if (!r.has_value()) return tl::unexpected(r.error());
    return std::unique_ptr<Store>(std::move(*r));
  };
  if (url.empty()) return InvalidArgument("store url is empty");
  if (url == "memory:") return std::unique_ptr<Store>(std::make_unique<MemoryStore>());
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return upcast(PostgresStore::Open(url));
  }
  if (url.starts_with("sqlite:")) {
    std::string path = url.substr(7);
    if (path.empty()) return InvalidArgument("store url \"sqlite:\" names no file");
    return upcast(SqliteStore::Open(path));
  }
  // "scheme:..." with a scheme-like prefix (letters, digits, + - .) is a URL we do not know;
  // anything else is a file path ("state.db", "./a:b.db", "/var/lib/corral/state.db").
  size_t colon = url.find(':');
  if (colon != std::string::npos && colon > 0) {
    bool scheme = std::isalpha(static_cast<unsigned char>(url[0]));
    for (size_t i = 0; i < colon && scheme; ++i) {
      char ch = url[i];
      scheme = std::isalnum(static_cast<unsigned char>(ch)) || ch == '+' || ch == '-' || ch == '.';
    }
    if (scheme) {
      // The rest of the URL is not repeated: it may hold a password.
      return InvalidArgument("unknown store scheme \"" + url.substr(0, colon) +
                             "\" (expected sqlite:PATH, a file path, postgresql://... or memory:)");
    }
  }
  return upcast(SqliteStore::Open(url));
}

}  // namespace corral::store
