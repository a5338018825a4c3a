#!/usr/bin/env bash
# Reading files others wrote: for every file of the parquet-testing corpus that DuckDB reads,
# `geolake cat --format jsonl` prints the values DuckDB returns (lists, maps, structs, every
# encoding and codec in the corpus); every file in bad_data/ is refused with one stderr line
# naming the file and a non-zero exit (or, where DuckDB reads it, read with DuckDB's values).
# The comparison and its few normalizations are in parquet_corpus_compare.mjs; files skipped
# (DuckDB refuses them) and known defects are listed with their reasons in its output.
#
# Under ASan + UBSan without `make asan` (which builds and runs everything):
#   cmake --preset asan && ninja -C build/asan geolake geolake_parquet_test
#   (cd build/asan && ctest -R 'e2e.parquet_corpus_vs_duckdb|parquet' --output-on-failure)
# A sanitizer report ends `geolake cat` with a non-zero exit and a multi-line stderr (the preset
# builds with -fno-sanitize-recover=all), which fails a data/ file and a bad_data/ file alike.
source "$(dirname "${BASH_SOURCE[0]}")/lib/harness.bash" "$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
needs_oracles
# The corpus (apache/parquet-testing, data/ and bad_data/) is third-party: only development and
# CI machines have it, in the shared folder; GEOLAKE_PARQUET_CORPUS points elsewhere.
if [ -n "${GEOLAKE_PARQUET_CORPUS:-}" ]; then
  corpus="$GEOLAKE_PARQUET_CORPUS"
else
  needs_shared corpus/parquet-testing/data
  needs_shared corpus/parquet-testing/bad_data
  corpus="$shared/corpus/parquet-testing"
fi
node "$here/parquet_corpus_compare.mjs" "$oracles" "$bin" "$corpus"
