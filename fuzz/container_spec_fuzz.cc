// Fuzzes the container grammar (core/container_spec.h): image references, mounts, paths and
// names. What parses must hold the properties the agent relies on: an image reference never
// reads as a runtime option (no leading '-'), and reparses to itself; a mount's source and
// target are absolute paths with no "." or ".." component.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/container_spec.h"

namespace {

bool HasDotComponent(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part == "." || part == "..") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto image = corral::ParseImageReference(text);
      if (!image.has_value()) return 0;
      std::string ref = image->Reference();
      if (ref.empty() || ref[0] == '-') std::abort();
      if (text.empty() || text[0] == '-') std::abort();
      break;
    }
    case 1: {
      auto mount = corral::ParseContainerMount(text);
      if (!mount.has_value()) return 0;
      if (mount->source.empty() || mount->source[0] != '/') std::abort();
      if (mount->target.empty() || mount->target[0] != '/') std::abort();
      if (HasDotComponent(mount->source) || HasDotComponent(mount->target)) std::abort();
      break;
    }
    case 2: {
      if (corral::ValidateContainerPath(text, /*strict=*/true).has_value()) {
        if (text.empty() || text[0] != '/') std::abort();
        if (HasDotComponent(std::string(text))) std::abort();
      }
      break;
    }
    case 3: {
      if (corral::ValidateContainerName(text).has_value()) {
        if (text.empty() || text[0] == '-') std::abort();
      }
      corral::ContainerSpec spec;
      spec.image = std::string(text);
      spec.mounts = {std::string(text)};
      spec.name = std::string(text);
      (void)corral::ValidateContainerSpec(spec);
      break;
    }
  }
  return 0;
}
