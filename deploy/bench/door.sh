#!/usr/bin/env bash
# The tool door against its floor, as issue 20 measures it: GET /api/v1/networks
# from a real `petal serve` beside a bare net/http server (deploy/bench/bare, a
# separate process) answering the same bytes under the same Content-Type, each
# pinned to one core with GOMAXPROCS=1, the load generator (wrk) pinned to the
# other, the servers taken in turn, identical answer bytes checked first. Once
# for each PETAL_LIMITS. With HONO=1, also a minimal Hono 4 app on Node
# (deploy/bench/hono) with an in-memory per-address limiter, as the original
# stack had. Run from anywhere in the repo:
#
#	bash deploy/bench/door.sh                      # memory and postgres limits
#	LIMITS=postgres ROUNDS=5 bash deploy/bench/door.sh
#	HONO=1 bash deploy/bench/door.sh
#	PROFILE=1 LIMITS=memory bash deploy/bench/door.sh   # also a CPU profile of petal under load
#
# Needs wrk (apt-get install wrk), taskset, psql and a PostgreSQL that lets
# the current user create a database (127.0.0.1:5432 unless DATABASE_URL
# names one; the script makes a fresh database and drops it after).
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=${ROUNDS:-3}           # paired rounds per limits setting, alternating who goes first
DURATION=${DURATION:-5s}      # one wrk run
CONNS=${CONNS:-32}            # wrk's keep-alive connections
LIMITS=${LIMITS:-"memory postgres"}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PETAL_PORT=${PETAL_PORT:-18787}
BARE_PORT=${BARE_PORT:-18788}
HONO_PORT=${HONO_PORT:-18789}
METRICS_PORT=${METRICS_PORT:-18790}
PATH_UNDER_TEST=/api/v1/networks

for tool in wrk taskset psql curl go; do
	command -v "$tool" >/dev/null || { echo "door.sh needs $tool" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
dbname=""
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "$dbname" ]; then
		psql -h 127.0.0.1 -d postgres -qc "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/petal" ./cmd/petal
go build -o "$work/bare" ./deploy/bench/bare

if [ -z "${DATABASE_URL:-}" ]; then
	dbname="petal_door_bench_$$"
	psql -h 127.0.0.1 -d postgres -qc "CREATE DATABASE $dbname" >/dev/null
	DATABASE_URL="postgres://$(id -un)@127.0.0.1:5432/$dbname?sslmode=disable"
fi

wait_up() { # url
	for _ in $(seq 300); do
		curl -fs -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "nothing answered at $1" >&2
	return 1
}

# reqs url: one wrk run on the load core, its requests/s; any answer but 2xx fails the run.
reqs() {
	local out
	out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$DURATION" "$1")
	if grep -q "Non-2xx" <<<"$out"; then
		echo "$out" >&2
		echo "$1 answered something other than 2xx under load" >&2
		return 1
	fi
	awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# same_bytes name url: the answer's body and Content-Type equal petal's.
same_bytes() {
	curl -fs -D "$work/$1.head" -o "$work/$1.body" "$2"
	cmp -s "$work/petal.body" "$work/$1.body" || { echo "$1 answers other bytes than petal" >&2; exit 1; }
	local a b
	a=$(grep -i '^content-type:' "$work/petal.head" | tr -d '\r')
	b=$(grep -i '^content-type:' "$work/$1.head" | tr -d '\r')
	[ "${a,,}" = "${b,,}" ] || { echo "$1 answers $b, petal $a" >&2; exit 1; }
}

hono_ready=""
start_hono() {
	[ -n "$hono_ready" ] && return 0
	mkdir -p "$work/hono"
	cp deploy/bench/hono/package.json deploy/bench/hono/app.mjs "$work/hono/"
	(cd "$work/hono" && npm install --silent --no-audit --no-fund >/dev/null)
	taskset -c "$SERVER_CPU" node "$work/hono/app.mjs" "$HONO_PORT" "$work/petal.body" "$ctype" >"$work/hono.log" 2>&1 &
	pids+=($!)
	wait_up "http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST"
	same_bytes hono "http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST"
	hono_ready=1
}

echo "GET $PATH_UNDER_TEST: servers on CPU $SERVER_CPU (GOMAXPROCS=1), wrk -t1 -c$CONNS -d$DURATION on CPU $LOAD_CPU, $ROUNDS rounds"
for limits in $LIMITS; do
	metrics=()
	[ "${PROFILE:-}" = 1 ] && metrics=("PETAL_METRICS_ADDR=127.0.0.1:$METRICS_PORT")
	# The limit is far above the load: this measures checking it, not refusing.
	taskset -c "$SERVER_CPU" env GOMAXPROCS=1 DATABASE_URL="$DATABASE_URL" PETAL_ADDR="127.0.0.1:$PETAL_PORT" \
		PETAL_LIMITS="$limits" PETAL_TOOL_CALLS_PER_MIN=1000000000 PETAL_LOG_LEVEL="${PETAL_LOG_LEVEL:-info}" \
		NEAR_AI_API_KEY= "${metrics[@]}" "$work/petal" serve >"$work/petal-$limits.log" 2>&1 &
	petal_pid=$!
	pids+=("$petal_pid")
	wait_up "http://127.0.0.1:$PETAL_PORT/api/v1/health"
	curl -fs -D "$work/petal.head" -o "$work/petal.body" "http://127.0.0.1:$PETAL_PORT$PATH_UNDER_TEST"
	ctype=$(grep -i '^content-type:' "$work/petal.head" | tr -d '\r' | cut -d' ' -f2-)
	if [ -z "${bare_pid:-}" ]; then
		GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/bare" -addr "127.0.0.1:$BARE_PORT" -body "$work/petal.body" -type "$ctype" >"$work/bare.log" 2>&1 &
		bare_pid=$!
		pids+=("$bare_pid")
		wait_up "http://127.0.0.1:$BARE_PORT$PATH_UNDER_TEST"
	fi
	same_bytes bare "http://127.0.0.1:$BARE_PORT$PATH_UNDER_TEST"
	[ "${HONO:-}" = 1 ] && start_hono

	petal_url="http://127.0.0.1:$PETAL_PORT$PATH_UNDER_TEST"
	bare_url="http://127.0.0.1:$BARE_PORT$PATH_UNDER_TEST"
	hono_url="http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST"
	DURATION=1s reqs "$petal_url" >/dev/null # warm up
	DURATION=1s reqs "$bare_url" >/dev/null
	if [ "${PROFILE:-}" = 1 ]; then
		curl -fs -o "door-$limits.prof" "http://127.0.0.1:$METRICS_PORT/debug/pprof/profile?seconds=4" &
		prof=$!
		DURATION=5s reqs "$petal_url" >/dev/null
		wait "$prof"
		echo "CPU profile of petal under load: door-$limits.prof (go tool pprof -top $work/petal door-$limits.prof)"
	fi
	p_all="" b_all="" h_all="" ratios=""
	for r in $(seq "$ROUNDS"); do
		if [ $((r % 2)) = 1 ]; then
			b=$(reqs "$bare_url"); p=$(reqs "$petal_url")
		else
			p=$(reqs "$petal_url"); b=$(reqs "$bare_url")
		fi
		h=""
		[ "${HONO:-}" = 1 ] && h=$(reqs "$hono_url")
		p_all="$p_all $p" b_all="$b_all $b" h_all="$h_all $h"
		ratios="$ratios $(awk -v p="$p" -v b="$b" 'BEGIN {printf "%.2f", p/b}')"
		echo "  limits=$limits round $r: petal $p req/s, bare $b req/s${h:+, hono $h req/s}"
	done
	pm=$(median <<<"$p_all") bm=$(median <<<"$b_all")
	line="limits=$limits: petal $pm req/s, bare $bm req/s, petal/bare $(awk -v p="$pm" -v b="$bm" 'BEGIN {printf "%.2f", p/b}') (rounds:$ratios)"
	if [ "${HONO:-}" = 1 ]; then
		hm=$(median <<<"$h_all")
		line="$line; hono $hm req/s, petal/hono $(awk -v p="$pm" -v h="$hm" 'BEGIN {printf "%.2f", p/h}')"
	fi
	echo "$line"
	kill "$petal_pid"
	wait "$petal_pid" 2>/dev/null || true
done
