// The field lists of `squeue -o/-O`, `sinfo -o/-O` and `sacct -o/--format`, parsed as Slurm
// 22.05 parses them: one parser for the three syntaxes; each command keeps its own table of
// fields and binds the items to it (`BindFormat`, or its own lookup).
//
// - `FormatSyntax::kPercent` (squeue/sinfo -o, "%.18i %9P|%j"): text before the first '%' is
//   a literal item; every '%' starts an item "[.][width]letter[suffix]" ('.' right-aligns; the
//   suffix runs to the next '%' and is printed after the field). Empty items ("%%") vanish,
//   as with Slurm's strtok.
// - `FormatSyntax::kColon` (squeue/sinfo -O, "JobID:10,Name:.20|"): comma-separated
//   "name[:[.][width][suffix]]"; 20 wide when there is no ':'; empty items are skipped.
// - `FormatSyntax::kSacct` (sacct -o, "JobID%20,jobname"): comma-separated "name[%width]";
//   blanks before the name are dropped, empty items skipped, and the width is read as atoi(3)
//   reads it (a negative one left-aligns in sacct; 0 means the field's default).
//
// Widths of kPercent and kColon items are capped at 100000. Pure functions; thread-safe.
#pragma once

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"

namespace corral::slurm {

enum class FormatSyntax { kPercent, kColon, kSacct };

// One item of a format: a field with its width and alignment, or literal text.
struct FormatItem {
  bool is_literal = false;
  std::string literal;  // a literal item's text (kPercent's leading text)
  char letter = 0;      // kPercent: the field's letter (0 when the item has none: "%5")
  std::string text;     // kPercent: the item as written after its '%' ("5" for "%5")
  std::string name;     // kColon, kSacct: the field's name as written
  int width = 0;        // kSacct: 0 when not given
  bool right = false;   // '.' given (kPercent, kColon)
  std::string suffix;   // printed after the field (kPercent, kColon)
  bool operator==(const FormatItem&) const = default;
};

// Parses `format` written in `syntax` (see the header comment). Never fails: what is not a
// known field is for the caller to report.
std::vector<FormatItem> ParseFormat(std::string_view format, FormatSyntax syntax);

// A format item bound to a command's field: `field` null means `literal` is printed as is.
template <typename Field>
struct FormatColumn {
  const Field* field = nullptr;
  std::string literal;
  int width = 0;
  bool right = false;
  std::string suffix;
};

// Binds the items of a kPercent or kColon `format` to fields: `by_letter(char)` and
// `by_name(std::string_view)` return the field or null. An unknown field is reported in
// `warnings` as `unknown` followed by its letter or name; a kPercent one is then printed
// literally ("%" and its text, as Slurm does), a kColon one is dropped.
// The field of `fields` (a table of structs with `letter` and `long_name`) with `letter` `c`,
// or the one whose long name is `name` in any case; nullptr when none.
template <typename Fields>
auto FieldByLetter(const Fields& fields, char c) -> decltype(&*std::begin(fields)) {
  for (const auto& f : fields) {
    if (f.letter == c) return &f;
  }
  return nullptr;
}
template <typename Fields>
auto FieldByName(const Fields& fields, std::string_view name) -> decltype(&*std::begin(fields)) {
  for (const auto& f : fields) {
    if (EqualsIgnoreCase(f.long_name, name)) return &f;
  }
  return nullptr;
}

template <typename Field, typename ByLetter, typename ByName>
std::vector<FormatColumn<Field>> BindFormat(std::string_view format, FormatSyntax syntax,
                                            ByLetter by_letter, ByName by_name,
                                            std::string_view unknown,
                                            std::vector<std::string>* warnings) {
  std::vector<FormatColumn<Field>> columns;
  for (FormatItem& item : ParseFormat(format, syntax)) {
    if (item.is_literal) {
      columns.push_back(FormatColumn<Field>{.literal = std::move(item.literal)});
      continue;
    }
    bool percent = syntax == FormatSyntax::kPercent;
    const Field* field = percent ? (item.letter == 0 ? nullptr : by_letter(item.letter))
                                 : by_name(std::string_view(item.name));
    if (field == nullptr) {
      std::string what =
          !percent ? item.name : (item.letter == 0 ? std::string() : std::string(1, item.letter));
      warnings->push_back(std::string(unknown) + what);
      if (percent) columns.push_back(FormatColumn<Field>{.literal = "%" + item.text});
      continue;
    }
    columns.push_back(FormatColumn<Field>{.field = field,
                                          .width = item.width,
                                          .right = item.right,
                                          .suffix = std::move(item.suffix)});
  }
  return columns;
}

}  // namespace corral::slurm
