#include "geolake/core/csv.h"

namespace geolake {

bool CsvNeedsQuotes(std::string_view text) {
  return text.empty() || text.find_first_of(",\"\r\n") != std::string_view::npos ||
         text.front() == ' ' || text.back() == ' ';
}

void AppendCsvField(std::string_view text, std::string* out) {
  if (!CsvNeedsQuotes(text)) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (const char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

std::string CsvField(std::string_view text) {
  std::string out;
  AppendCsvField(text, &out);
  return out;
}

}  // namespace geolake
