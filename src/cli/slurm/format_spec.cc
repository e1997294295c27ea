#include "cli/slurm/format_spec.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/strings.h"

namespace corral::slurm {
namespace {

constexpr int kMaxWidth = 100000;

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads "[.][digits]" of `text` from `*i` into `item`.
void ReadWidth(std::string_view text, size_t* i, FormatItem* item) {
  if (*i < text.size() && text[*i] == '.') {
    item->right = true;
    ++*i;
  }
  while (*i < text.size() && IsDigit(text[*i])) {
    item->width = std::min(item->width * 10 + (text[*i] - '0'), kMaxWidth);
    ++*i;
  }
}

// "%[.][width]letter[suffix]" items.
std::vector<FormatItem> ParsePercent(std::string_view format) {
  std::vector<FormatItem> items;
  size_t pct = format.find('%');
  if (pct != 0) {
    items.push_back(FormatItem{.is_literal = true, .literal = std::string(format.substr(0, pct))});
  }
  if (pct == std::string_view::npos) return items;
  for (const std::string& token : Split(format.substr(pct + 1), '%')) {
    if (token.empty()) continue;  // strtok: "%%" is no item
    FormatItem item;
    item.text = token;
    size_t i = 0;
    ReadWidth(token, &i, &item);
    if (i < token.size()) {
      item.letter = token[i];
      item.suffix = token.substr(i + 1);
    }
    items.push_back(std::move(item));
  }
  return items;
}

// "name[:[.][width][suffix]]" items.
std::vector<FormatItem> ParseColon(std::string_view format) {
  std::vector<FormatItem> items;
  for (const std::string& token : SplitNonEmpty(format, ',')) {
    FormatItem item;
    size_t colon = token.find(':');
    item.name = token.substr(0, colon);
    item.width = 20;
    if (colon != std::string::npos) {
      size_t i = colon + 1;
      item.width = 0;
      ReadWidth(token, &i, &item);
      item.suffix = token.substr(i);
    }
    items.push_back(std::move(item));
  }
  return items;
}

// "name[%width]" items.
std::vector<FormatItem> ParseSacct(std::string_view format) {
  std::vector<FormatItem> items;
  for (const std::string& part : Split(format, ',')) {
    size_t b = 0;
    while (b < part.size() && std::isspace(static_cast<unsigned char>(part[b]))) ++b;
    std::string token = part.substr(b);
    if (token.empty()) continue;
    FormatItem item;
    size_t pct = token.find('%');
    item.name = token.substr(0, pct);
    if (pct != std::string::npos) item.width = std::atoi(token.c_str() + pct + 1);
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

std::vector<FormatItem> ParseFormat(std::string_view format, FormatSyntax syntax) {
  switch (syntax) {
    case FormatSyntax::kPercent:
      return ParsePercent(format);
    case FormatSyntax::kColon:
      return ParseColon(format);
    case FormatSyntax::kSacct:
      return ParseSacct(format);
  }
  return {};
}

}  // namespace corral::slurm
