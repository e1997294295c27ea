// Slurm host lists: "gpu-[01-04,07]", "rack[1-2]-n[1-3]", "a1,b[2-3]".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral {

// Expands a host-list expression into names, in the order written (duplicates kept).
// Several bracketed ranges in one name give their product. Zero padding follows the
// range's first bound ("[01-10]" gives 01..10). Returns kInvalidArgument naming the text for
// an unbalanced bracket, a bad range, or more than `max_hosts` names.
Result<std::vector<std::string>> ExpandHostList(std::string_view text, size_t max_hosts = 1'000'000);

// Compresses names into Slurm's ranged form, keeping their order: consecutive names with
// the same prefix, the same digit width and consecutive numbers become one range
// ("n1,n2,n3,m7" -> "n[1-3],m7").
std::string CompressHostList(const std::vector<std::string>& names);

}  // namespace corral
