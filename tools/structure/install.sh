#!/bin/sh
# Installs the structure check's own packages (dependency-cruiser and the typescript 5 it parses
# .ts with) when its lock file changed since the last install: `npm ci` wipes node_modules first,
# so running it on every check made two checks at once break each other, and cost seconds each.
set -e
cd "$(dirname "$0")"
stamp=node_modules/.installed-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then exit 0; fi
npm ci --no-audit --no-fund --silent
cp package-lock.json "$stamp"
