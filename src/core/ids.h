// Strong identifier types used at every API boundary instead of bare integers.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>

namespace corral {

template <typename Tag, typename Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
  std::string ToString() const { return std::to_string(value); }
};

// A job's id: numeric, assigned by the controller in submit order, never reused.
using JobId = StrongId<struct JobIdTag, uint64_t>;
// A node's id: assigned by the controller when the node first registers, stable afterwards.
using NodeId = StrongId<struct NodeIdTag, uint32_t>;
// An allocation's generation: fences stale launches and stale reports. Strictly increasing
// over the controller's life (persisted), so a requeued job's new allocation never matches
// an old one.
using Generation = StrongId<struct GenerationTag, uint64_t>;

}  // namespace corral

template <typename Tag, typename Rep>
struct std::hash<corral::StrongId<Tag, Rep>> {
  size_t operator()(const corral::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>()(id.value);
  }
};
