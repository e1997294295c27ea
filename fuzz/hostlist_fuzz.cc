// Fuzzes the host-list parser and compressor: whatever parses must compress and expand back
// to the same names, and compressing must be stable.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto names = corral::ExpandHostList(text, 4000);
  if (!names.has_value()) return 0;
  // Names holding separators or brackets cannot round-trip; they come from odd input only.
  for (const auto& n : *names) {
    if (n.find_first_of(",[] \t") != std::string::npos || n.empty()) return 0;
  }
  std::string compressed = corral::CompressHostList(*names);
  auto again = corral::ExpandHostList(compressed, 4000);
  if (!again.has_value() || *again != *names) std::abort();
  if (corral::CompressHostList(*again) != compressed) std::abort();
  auto sorted = corral::SortHostNames(*names);
  if (sorted.size() != names->size()) std::abort();
  return 0;
}
