# Codecs for Parquet pages and Avro blocks, all from Debian packages.
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)                                  # gzip, deflate
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)     # PkgConfig::ZSTD
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)       # PkgConfig::LZ4
pkg_check_modules(BROTLI REQUIRED IMPORTED_TARGET libbrotlidec libbrotlienc)  # PkgConfig::BROTLI
find_package(Snappy REQUIRED)                                # Snappy::snappy
