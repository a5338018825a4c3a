#!/usr/bin/env bash
# Install what geolake needs to build, test and run its demo on Debian 12, and nothing that is
# already there. Safe to run repeatedly: when everything is present it only checks (seconds).
#
# Usage: [GEOLAKE_DEPS_BENCH=1] scripts/install-deps.sh [BUILD_DIR]
#   GEOLAKE_DEPS_BENCH=1 (set by `make bench`) also installs the peers only the benchmarks run:
#   GeoPandas (Debian's python3-geopandas, with python3-rtree for its spatial index).
#   BUILD_DIR (default: build) receives the test oracles under BUILD_DIR/oracles: the scripts of
#   tests/oracles and the npm packages its package-lock.json pins (tests/oracles/README.md).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$here/build}"

packages=(
  build-essential cmake ninja-build pkg-config git ccache openssl clang-format clang-tidy clang-14
  libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev libtbb-dev
  libgeos-dev libproj-dev proj-data libgdal-dev gdal-bin libs2-dev libcairo2-dev
  libsqlite3-dev sqlite3 libpq-dev postgresql postgresql-15-postgis-3 jq
  libzstd-dev libsnappy-dev zlib1g-dev liblz4-dev libbrotli-dev libxxhash-dev
)

if [ "${GEOLAKE_DEPS_BENCH:-0}" = 1 ]; then packages+=(python3-geopandas python3-rtree); fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

# Node.js may come from another channel (it ships its own npm); Debian's packages only if absent.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Independent readers (DuckDB, hyparquet, parquet-wasm, icebird, avsc) for the tests: the
# scripts are copied every time (cheap, so an edited script is never stale), the packages are
# installed by `npm ci` only when the lock file differs from the one last installed. Nothing is
# fetched at test time.
oracles_src="$here/tests/oracles"
oracles_dest="$build_dir/oracles"
mkdir -p "$oracles_dest/lib"
cp "$oracles_src"/*.mjs "$oracles_src"/package.json "$oracles_src"/package-lock.json "$oracles_dest"/
cp "$oracles_src"/lib/*.mjs "$oracles_dest"/lib/
installed_lock="$oracles_dest/node_modules/.geolake-installed-lock.json"
if ! cmp -s "$oracles_src/package-lock.json" "$installed_lock"; then
  echo "install-deps: installing the oracle readers into $oracles_dest (npm ci)" >&2
  (cd "$oracles_dest" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$oracles_src/package-lock.json" "$installed_lock"
fi
