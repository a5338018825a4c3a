find_package(GDAL REQUIRED)  # Debian libgdal-dev: GDAL::GDAL
