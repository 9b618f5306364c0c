#!/usr/bin/env bash
# Rebuilds ../static/near-connect.js from the pinned npm packages (package-lock.json):
# @hot-labs/near-connect bundled by esbuild into one readable script (no
# minifying, so a review can read it against the package). The output is
# committed, so `go run ./cmd/petal serve` and `go test ./...` need no npm;
# .ci/run rebuilds it and fails when it differs from the committed file.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error >/dev/null
out=../static/near-connect.js
{
	printf '/* @hot-labs/near-connect %s (MIT, HOT Labs), bundled for petal by adapters/http/pages/connector/build.sh */\n' \
		"$(node -p 'require("./node_modules/@hot-labs/near-connect/package.json").version')"
	npx --no-install esbuild entry.js --bundle --format=iife --target=es2020 --legal-comments=inline --log-level=error
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
