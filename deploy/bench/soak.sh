#!/usr/bin/env bash
# The soak of issue 31: three `petal serve` processes on one database through
# Debian's PgBouncer (transaction mode), a fake NEAR node and a scripted NEAR AI
# at the network edge, and a paced mix of what people do (tool calls, chats on
# the scripted and the recorded model, SSE viewers joining and leaving, agent
# waits, explorations, publishing, map reads) from a crowd of addresses, for
# FOR (default 30m) at RATE actions a second (default 20). It prints, every
# minute, errors by route and code, p50/p99 per route and each replica's RSS
# and goroutines; PostgreSQL's connections and largest tables at the start and
# the end; and fails if any answer was a 5xx or anything is still held or
# running at the end. The body is BenchmarkSoak (cmd/petal/soak_bench_test.go);
# it ends itself after FOR, so go test's own timeout is off.
#
#	bash deploy/bench/soak.sh                 # 30 minutes
#	FOR=5m RATE=40 bash deploy/bench/soak.sh
#
# Needs PostgreSQL (PETAL_TEST_DATABASE_URL, default the local one as CI has it)
# and pgbouncer (apt-get install pgbouncer).
set -euo pipefail
cd "$(dirname "$0")/../.."
FOR=${FOR:-30m}
RATE=${RATE:-20}
export PETAL_TEST_DATABASE_URL="${PETAL_TEST_DATABASE_URL:-postgres://$(id -un)@127.0.0.1:5432/postgres?sslmode=disable}"
PETAL_SOAK_FOR="$FOR" PETAL_SOAK_RATE="$RATE" \
	go test ./cmd/petal -run '^$' -bench '^BenchmarkSoak$' -benchtime 1x -v -timeout 0 2>&1 |
	grep -v -e 'LOG stats:' -e 'LOG C-' -e 'LOG S-' -e '^\s*{"time"'
