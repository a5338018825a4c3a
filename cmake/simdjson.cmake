# Debian libsimdjson-dev (scripts/install-deps.sh): simdjson::simdjson, the On Demand JSON parser
# of the GeoJSONSeq reader (src/geolake/sources/geojsonseq_source.cc).
find_package(simdjson 3.0 REQUIRED)
