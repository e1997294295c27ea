// GPU value types: one GPU's inventory, and a set of GPU indices on one node.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace corral {

// At most this many allocatable GPU devices (whole GPUs or MIG slices) on one node.
inline constexpr uint32_t kMaxGpusPerNode = 64;

// One allocatable GPU device of a node, as its agent reports it.
struct GpuInfo {
  uint32_t index = 0;             // the index CUDA_VISIBLE_DEVICES uses on its node
  std::string uuid;               // "GPU-..." (or "MIG-..." for a slice)
  std::string model;              // lower-case short type used in requests: "h100", "a100"
  uint64_t memory_mb = 0;
  std::vector<uint32_t> nvlink_peers;  // indices of GPUs reachable over NVLink
  int32_t numa_node = -1;         // -1 when unknown
  bool operator==(const GpuInfo&) const = default;
};

// A set of GPU indices on one node (bit i = GPU index i). Value type.
class GpuSet {
 public:
  constexpr GpuSet() = default;
  constexpr explicit GpuSet(uint64_t bits) : bits_(bits) {}
  // The set {0, 1, ..., n-1}.
  static constexpr GpuSet FirstN(uint32_t n) {
    return GpuSet(n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
  }

  constexpr bool contains(uint32_t i) const { return i < 64 && (bits_ >> i) & 1; }
  constexpr void insert(uint32_t i) { bits_ |= uint64_t{1} << i; }
  constexpr void erase(uint32_t i) { bits_ &= ~(uint64_t{1} << i); }
  constexpr uint32_t size() const { return static_cast<uint32_t>(std::popcount(bits_)); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint64_t bits() const { return bits_; }

  constexpr GpuSet operator|(GpuSet o) const { return GpuSet(bits_ | o.bits_); }
  constexpr GpuSet operator&(GpuSet o) const { return GpuSet(bits_ & o.bits_); }
  constexpr GpuSet operator-(GpuSet o) const { return GpuSet(bits_ & ~o.bits_); }
  constexpr bool Intersects(GpuSet o) const { return (bits_ & o.bits_) != 0; }
  constexpr bool operator==(const GpuSet&) const = default;

  // The indices in ascending order.
  std::vector<uint32_t> ToVector() const;
  // "0,1,5" (the CUDA_VISIBLE_DEVICES form); "" for the empty set.
  std::string ToString() const;

 private:
  uint64_t bits_ = 0;
};

}  // namespace corral
