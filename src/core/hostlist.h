// Slurm host lists: "gpu-[01-04,07]", "rack[1-2]-n[1-3]", "a1,b[2-3]", parsed and produced
// exactly as Slurm 22.05 does (`scontrol show hostnames` / `scontrol show hostlist`,
// SLURM_JOB_NODELIST), checked against a real 22.05.8.
//
// Parsing (Slurm's `hostlist_create`):
//   - Items are separated by ',', ' ' or '\t' outside brackets; empty items are skipped.
//   - "prefix[ranges]" expands each range "lo" or "lo-hi" (or "lo-", meaning lo), padding every
//     number to the width of `lo` as written ("[01-10]" -> 01..10, "[8-010]" -> 8,9,10).
//     A range may hold at most 65536 names, as in Slurm.
//   - A bracket must end its item ("n[1-3]x" is invalid), but brackets may come earlier too:
//     "r[1-2]-n[1-3]" expands to the product. Slurm's order for three or more brackets is
//     kept: the next-to-last bracket varies slowest, then the earlier ones, then the last.
//   - Names are kept in the order written, duplicates included.
// Deliberate differences: Slurm silently mangles some malformed lists ("n[1-3" -> "n]",
// "n[ 1-2]" -> "n01,n02", a stray "x]" becomes a host); Corral rejects them instead.
//
// Compression (Slurm's `hostlist_ranged_string` over the names in the given order):
//   - A name is a prefix plus a numeric suffix ("gpu-07" = "gpu-" 7, width 2), or has none.
//   - A name extends the previous range when it has the same prefix, the next number and a
//     compatible width ("n9,n10" -> "n[9-10]"; "n9,n010" -> "n[9,010]").
//   - Adjacent ranges with the same prefix share one bracket ("n1,n3,m1,n5" ->
//     "n[1,3],m1,n5"); a single name gets no bracket; order and duplicates are kept.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral {

// Expands a host-list expression into names, in Slurm's order (duplicates kept).
// Returns kInvalidArgument naming the text for an unbalanced or nested bracket, text after the
// last bracket, a bad or reversed range, a range of more than 65536 names, or more than
// `max_hosts` names in all.
Result<std::vector<std::string>> ExpandHostList(std::string_view text,
                                                size_t max_hosts = 1'000'000);

// Compresses names into Slurm's ranged form, keeping their order (see the header comment):
// {"n1","n2","n3","m7"} -> "n[1-3],m7". "" for no names.
std::string CompressHostList(const std::vector<std::string>& names);

// Sorts names as `scontrol show hostlistsorted` does before compressing: by prefix in natural
// order ("rack2-" before "rack10-"), a name without a number before numbered names of the same
// prefix, then by number (by width first when the widths change the padding: "n3" before
// "n09"). Duplicates are kept.
std::vector<std::string> SortHostNames(std::vector<std::string> names);

}  // namespace corral
