/// \file
/// Helpers shared by the avro tests (include only from *_test.cc): the fixture manifests,
/// reading files, the canonical text of a decoded value, and running the avsc oracle.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "geolake/core/hex.h"
#include "geolake/formats/avro/datum.h"
#include "geolake/formats/avro/schema.h"
#include "geolake/testing/environment.h"

namespace geolake::avro::testing {

/// Every .avro file under the third-party Iceberg fixtures (::geolake::testing::
/// IcebergFixturesDir(); callers skip first when they are missing), sorted.
inline std::vector<std::string> FixtureAvroFiles() {
  std::vector<std::string> files;
  const std::filesystem::path root = ::geolake::testing::IcebergFixturesDir();
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".avro") {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline void AppendQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c < 0x20) {
      out->append("\\u00");
      AppendHexByte(c, out);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

/// The canonical text of `datum` under `schema`, the same text avsc_dump.cjs prints.
inline void Canon(const Datum& datum, const Node& schema, std::string* out) {
  const Node* chosen = &schema;
  if (schema.type == Type::kUnion) {
    // A tagged value names its branch; an untagged one goes to the first branch of its kind,
    // as the encoder does.
    if (datum.branch() >= 0) {
      chosen = schema.branches[datum.branch()];
    } else {
      for (const Node* branch : schema.branches) {
        if (branch->type == datum.type()) {
          chosen = branch;
          break;
        }
      }
    }
  }
  const Node& node = *chosen;
  switch (node.type) {
    case Type::kNull:
      out->append("null");
      return;
    case Type::kBoolean:
      out->append(datum.boolean() ? "true" : "false");
      return;
    case Type::kInt:
    case Type::kLong:
      out->append(std::to_string(datum.int64()));
      return;
    case Type::kFloat:
    case Type::kDouble: {
      char buf[64];
      auto res = node.type == Type::kFloat
                     ? std::to_chars(buf, buf + sizeof(buf), static_cast<double>(datum.float32()))
                     : std::to_chars(buf, buf + sizeof(buf), datum.float64());
      out->append(buf, res.ptr);
      return;
    }
    case Type::kString:
      AppendQuoted(datum.bytes(), out);
      return;
    case Type::kBytes:
    case Type::kFixed:
      out->append("\"hex:" + HexEncode(datum.bytes()) + "\"");
      return;
    case Type::kEnum:
      AppendQuoted(node.symbols[datum.enum_index()], out);
      return;
    case Type::kArray:
      out->push_back('[');
      for (std::size_t i = 0; i < datum.items().size(); ++i) {
        if (i > 0) out->push_back(',');
        Canon(datum.items()[i], *node.items, out);
      }
      out->push_back(']');
      return;
    case Type::kMap: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, value] : datum.map_entries()) {
        if (!first) out->push_back(',');
        first = false;
        AppendQuoted(key, out);
        out->push_back(':');
        Canon(value, *node.values, out);
      }
      out->push_back('}');
      return;
    }
    case Type::kRecord:
      out->push_back('{');
      for (std::size_t i = 0; i < node.fields.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendQuoted(node.fields[i].name, out);
        out->push_back(':');
        Canon(datum.fields()[i], *node.fields[i].type, out);
      }
      out->push_back('}');
      return;
    case Type::kUnion:
      out->append("<untagged union>");
      return;
  }
}

inline std::string CanonRecords(const std::vector<Datum>& records, const Node& schema) {
  std::string out = "[";
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (i > 0) out.push_back(',');
    Canon(records[i], schema, &out);
  }
  out.push_back(']');
  return out;
}

/// A skip reason when the avsc oracle is not installed, else nullopt.
inline std::optional<std::string> MissingAvsc() {
  return ::geolake::testing::MissingOracle("node_modules/avsc");
}

/// Run avsc_dump.cjs on `files`; one output line per file ("count\tcanon"). Callers skip with
/// MissingAvsc() first; adds a gtest failure with a clear message and returns false if node or
/// the oracle fails.
inline bool RunAvsc(const std::vector<std::string>& files, std::vector<std::string>* lines) {
  const std::string modules = ::geolake::testing::OraclePath("node_modules");
  std::string command = "node '" + ::geolake::testing::SourceDir() +
                        "/src/geolake/formats/avro/testdata/avsc_dump.cjs' '" + modules + "'";
  for (const auto& file : files) command += " '" + file + "'";
  command += " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run: " << command;
    return false;
  }
  std::string output;
  char buf[65536];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  const int rc = pclose(pipe);
  if (rc != 0) {
    ADD_FAILURE() << "avsc oracle failed (is node installed?): exit " << rc << "\n" << output;
    return false;
  }
  lines->clear();
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines->push_back(line);
  if (lines->size() != files.size()) {
    ADD_FAILURE() << "avsc oracle printed " << lines->size() << " lines for " << files.size()
                  << " files:\n"
                  << output.substr(0, 2000);
    return false;
  }
  return true;
}

}  // namespace geolake::avro::testing
