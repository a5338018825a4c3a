find_package(GEOS 3.11 REQUIRED)  # Debian libgeos-dev: GEOS::geos_c (we use only the C API)
