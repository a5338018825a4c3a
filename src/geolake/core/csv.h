/// \file
/// CSV text (RFC 4180) for every command that prints CSV (`cat --format csv`, `query --format
/// csv` and the ops that write .csv through it), so they quote alike: a field is quoted when it
/// holds a comma, a double quote, CR or LF, when it is empty (so that an empty string differs
/// from a null, which is an empty cell), and when it starts or ends with a space (which some
/// readers trim). Inside quotes a double quote is doubled.
#pragma once

#include <string>
#include <string_view>

namespace geolake {

/// \brief Whether `text` must be quoted as a CSV field (see the file comment).
bool CsvNeedsQuotes(std::string_view text);

/// \brief Append `text` as one CSV field, quoted when needed.
void AppendCsvField(std::string_view text, std::string* out);

/// \brief `text` as one CSV field, quoted when needed.
std::string CsvField(std::string_view text);

/// \brief Builds one CSV line: fields separated by commas, ended by LF.
///
/// Text cells are quoted when needed; literal cells (numbers, booleans, dates: text that never
/// needs quotes) are written as they are; a null cell is empty. Not thread-safe; the line is
/// owned by the caller.
class CsvLine {
 public:
  explicit CsvLine(std::string* out) : out_(out) {}

  /// \brief Add a text cell (quoted when needed).
  void Text(std::string_view text) {
    Separate();
    AppendCsvField(text, out_);
  }
  /// \brief Add a cell that needs no quotes as it is (a number, true/false, a date).
  void Literal(std::string_view text) {
    Separate();
    out_->append(text);
  }
  /// \brief Add an empty cell (a null).
  void Null() { Separate(); }
  /// \brief End the line with LF; the next cell starts a new line.
  void End() {
    out_->push_back('\n');
    first_ = true;
  }

 private:
  void Separate() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }

  std::string* out_;
  bool first_ = true;
};

}  // namespace geolake
