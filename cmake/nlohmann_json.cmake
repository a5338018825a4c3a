find_package(nlohmann_json 3.10 REQUIRED)  # Debian nlohmann-json3-dev: nlohmann_json::nlohmann_json
find_package(simdjson QUIET)  # Debian libsimdjson-dev: simdjson::simdjson (fast GeoJSON path)
