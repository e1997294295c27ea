// String helpers shared by every component: case folding, splitting, joining, trimming and
// number parsing over `std::string_view`, ASCII only (locale-independent, so the same input
// gives the same output everywhere: the scheduler and the simulator depend on that).
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

// ASCII lower/upper case; other bytes (UTF-8 included) are kept as they are.
std::string Lower(std::string_view s);
std::string Upper(std::string_view s);

// True when `a` and `b` are equal ignoring ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Splits `s` at every `sep`: "a,,b" -> {"a", "", "b"}; "" -> {""}.
std::vector<std::string> Split(std::string_view s, char sep);

// Splits `s` at every `sep` and drops empty parts: "a,,b," -> {"a", "b"}; "" -> {}.
std::vector<std::string> SplitNonEmpty(std::string_view s, char sep = ',');

// Joins `parts` with `sep` between them.
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

// Joins the decimal forms of `values` with `sep` ({0, 3} -> "0,3").
std::string JoinNumbers(const std::vector<uint32_t>& values, std::string_view sep = ",");

// Drops leading and trailing blanks: spaces, tabs, CR and LF.
std::string_view Trim(std::string_view s);

// The decimal number that is all of `s` ("42"; no sign, blanks or suffix), or nullopt when
// `s` is empty, has another character or overflows.
std::optional<uint64_t> ParseUint(std::string_view s);

}  // namespace corral
