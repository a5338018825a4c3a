// FileWriter tests that take minutes (label slow, `make test-slow`): every type, variant and
// codec written to its own file and read by the three independent readers (18 oracle runs,
// about 4 minutes). file_writer_test.cc has the quick form of the same check.
#include <gtest/gtest.h>

#include <string>

#include "geolake/formats/parquet/file_writer.h"
#include "geolake/formats/parquet/file_writer_test_util.h"
#include "geolake/testing/testing.h"

namespace geolake::parquet::file_writer_testing {
namespace {

TEST(FileWriterTest, FullMatrixOfFilesReadByIndependentReaders) {
  if (auto why = ::geolake::testing::MissingOracle("verify_parquet.mjs")) GTEST_SKIP() << *why;
  const Schema schema = AllTypesSchema();
  for (Variant v : {Variant::kDictionary, Variant::kPlain, Variant::kAlternative}) {
    for (CompressionCodec codec : AllCodecs()) {
      WriterOptions options;
      options.row_group_rows = 700;
      for (const auto& leaf : schema.leaves()) {
        options.column_options[leaf.dotted_path()] = VariantOptions(v, leaf, codec);
      }
      const std::string name = "all_" + std::to_string(static_cast<int>(v)) + "_" +
                               std::string(CodecName(codec)) + ".parquet";
      const std::string path =
          WriteToDisk(name, WriteFile(schema, options, {AllTypesBatch(schema, 2000)}));
      const CommandResult r = Verify(path, "--strict-values --quiet");
      EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.output;
    }
  }
}

}  // namespace
}  // namespace geolake::parquet::file_writer_testing
