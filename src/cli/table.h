// Aligned text tables for people: columns padded to their widest cell, two spaces apart.
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // The table with a trailing newline per row; the last column is not padded.
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace corral::cli
