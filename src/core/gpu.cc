#include "core/gpu.h"

namespace corral {

std::vector<uint32_t> GpuSet::ToVector() const {
  std::vector<uint32_t> out;
  out.reserve(size());
  for (uint64_t b = bits_; b != 0; b &= b - 1) {
    out.push_back(static_cast<uint32_t>(std::countr_zero(b)));
  }
  return out;
}

std::string GpuSet::ToString() const {
  std::string out;
  for (uint64_t b = bits_; b != 0; b &= b - 1) {
    if (!out.empty()) out += ',';
    out += std::to_string(std::countr_zero(b));
  }
  return out;
}

}  // namespace corral
