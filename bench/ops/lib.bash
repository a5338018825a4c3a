# Helpers the ops benchmarks share (bench/ops/*.sh source this). Times are seconds as text; a
# peer that did not finish is ">T" and one that failed is any other non-number.

# faster A B: A < B (both numbers).
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# ratio PEER GEOLAKE: PEER / GEOLAKE to two places (> 1: geolake faster); ">R" when the peer did
# not finish in its timeout; "-" when either side has no time.
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (b !~ /^[0-9]/ || b <= 0) { print "-"; exit }
    if (a ~ /^>/) { printf ">%.1f", substr(a, 2) / b; exit }
    if (a !~ /^[0-9]/) { print "-"; exit }
    printf "%.2f", a / b }'
}

# at_least RATIO TARGET: a ratio (as ratio prints it) that reaches TARGET.
at_least() { awk -v r="${1#>}" -v t="$2" 'BEGIN { exit !(r != "-" && r + 0 >= t) }'; }
