find_package(benchmark REQUIRED)  # Debian libbenchmark-dev: benchmark::benchmark
