#!/usr/bin/env bash
# Install what geolake needs to build, test and run its demo on Debian 12, and nothing that is
# already there. Safe to run repeatedly: when everything is present it only checks (seconds).
#
# Usage: scripts/install-deps.sh [BUILD_DIR]
#   BUILD_DIR (default: build) receives the npm oracle packages under BUILD_DIR/oracles when
#   ../shared/oracles exists beside the checkout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$here/build}"

packages=(
  build-essential cmake ninja-build pkg-config git clang-format clang-tidy clang-14 libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev libtbb-dev
  libgeos-dev libproj-dev proj-data libgdal-dev gdal-bin libs2-dev libcairo2-dev
  libsqlite3-dev sqlite3 libpq-dev postgresql jq
  libzstd-dev libsnappy-dev zlib1g-dev liblz4-dev libbrotli-dev libxxhash-dev
)

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

# Independent readers (DuckDB, hyparquet, parquet-wasm, icebird, avsc) for the e2e tests.
shared_oracles="$here/../shared/oracles"
if [ -d "$shared_oracles" ] && command -v npm >/dev/null 2>&1; then
  dest="$build_dir/oracles"
  if [ ! -d "$dest/node_modules/@duckdb" ] || [ ! -d "$dest/node_modules/icebird" ]; then
    echo "install-deps: installing oracle readers into $dest" >&2
    mkdir -p "$dest"
    bash "$shared_oracles/install.sh" "$dest" >&2
  fi
fi
exit 0
