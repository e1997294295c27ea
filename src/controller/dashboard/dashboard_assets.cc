#include "controller/dashboard/dashboard_assets.h"

namespace corral::controller {

namespace {

std::string_view ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

std::optional<DashboardAsset> FindDashboardAsset(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (size_t i = 0; i < internal::kDashboardAssetCount; ++i) {
    const internal::EmbeddedAsset& a = internal::kDashboardAssets[i];
    if (a.name == path) return DashboardAsset{a.body, ContentType(a.name)};
  }
  return std::nullopt;
}

}  // namespace corral::controller
