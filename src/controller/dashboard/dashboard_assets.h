// The web dashboard's files (HTML, JS, CSS under src/controller/dashboard/), compiled into the
// binary by embed_assets.cmake: the controller serves them at /ui/ without reading any file.
//
// Thread-safe: immutable data.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace corral::controller {

struct DashboardAsset {
  std::string_view body;
  std::string_view content_type;
};

// The asset at `path` below /ui/ ("" is index.html), or nullopt for an unknown name.
std::optional<DashboardAsset> FindDashboardAsset(std::string_view path);

namespace internal {
struct EmbeddedAsset {
  std::string_view name;
  std::string_view body;
};
extern const EmbeddedAsset kDashboardAssets[];
extern const size_t kDashboardAssetCount;
}  // namespace internal

}  // namespace corral::controller
