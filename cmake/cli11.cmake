find_package(CLI11 REQUIRED)  # Debian libcli11-dev: CLI11::CLI11
