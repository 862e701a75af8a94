#!/bin/bash
# Alternating A/B of two builds on one machine: for each benchmark named, one round of this
# checkout ("after") then one of another, built checkout ("before"), N times; prints the postrider
# rows with their CPU per message. Both checkouts need `npm ci && npm run build`; the other one
# must sit beside ../shared/peers as this one does (the Postfix peer's scripts).
#
#   bench/alternate.sh /tmp/postrider-09758ac 3 http smtp delivery
set -euo pipefail
before=${1:?usage: bench/alternate.sh BEFORE_DIR [N] [benchmark...]}
n=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
names=("${@:-http smtp delivery}")
after=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/postrider-alternate-XXXXXX)
for i in $(seq 1 "$n"); do
  for b in ${names[@]}; do
    for side in after before; do
      dir=$after; [ "$side" = before ] && dir=$before
      extra=""; [ "$b" = delivery ] && extra="--profile=false --count-reads=false --m=100"
      (cd "$dir" && npm run --silent bench -- "$b" --rounds=1 $extra --no-write > "$out/$b-$side-$i.md" 2> "$out/$b-$side-$i.err")
      echo "$b $side $i: $(grep -h 'CPU ms' "$out/$b-$side-$i.md" | head -1)"
    done
  done
done
echo "sections kept in $out"
