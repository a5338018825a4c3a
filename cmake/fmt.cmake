find_package(fmt REQUIRED)  # Debian libfmt-dev: fmt::fmt
