#!/usr/bin/env bash
# The tool door against its floor, as issue 20 measures it: GET /api/v1/networks
# from a real `petal serve` beside a bare net/http server (deploy/bench/bare, a
# separate process) answering the same bytes under the same Content-Type, each
# pinned to one core with GOMAXPROCS=1, the load generator (wrk) pinned to the
# other, the servers taken in turn, identical answer bytes checked first. Once
# for each PETAL_LIMITS. With HONO=1, also the original stack: a Hono 4 app
# on Node (deploy/bench/hono) doing per request what petal does for this route
# (request id, CORS headers, an in-memory per-address limit, metrics, a JSON
# access line), its limits in memory whatever PETAL_LIMITS says, as the
# original's were. Run from anywhere in the repo:
#
#	bash deploy/bench/door.sh                      # memory and postgres limits
#	LIMITS=postgres ROUNDS=5 bash deploy/bench/door.sh
#	HONO=1 bash deploy/bench/door.sh
#	HONO=1 CORS=hono bash deploy/bench/door.sh     # Hono's own cors middleware (its slow path)
#	PROFILE=1 LIMITS=memory bash deploy/bench/door.sh   # also a CPU profile of petal under load
#	BEFORE=main bash deploy/bench/door.sh          # also petal built at another commit, in the same rounds
#	ADDRESSES=each LIMITS=postgres bash deploy/bench/door.sh  # a new client address every request
#	                                               # (cf-connecting-ip from loopback, a trusted proxy)
#	TRACED=1 bash deploy/bench/door.sh             # also petal with OpenTelemetry on, exporting every
#	                                               # request's spans over OTLP/HTTP to deploy/bench/otlpsink
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
SINK_PORT=${SINK_PORT:-18791}
PATH_UNDER_TEST=/api/v1/networks
ADDRESSES=${ADDRESSES:-one}   # one: every request from loopback; each: a new address every request
wrk_script=()
[ "$ADDRESSES" = each ] && wrk_script=(-s deploy/bench/new-address.lua)

for tool in wrk taskset psql curl go; do
	command -v "$tool" >/dev/null || { echo "door.sh needs $tool" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
dbname=""
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -n "${BEFORE:-}" ] && psql -h 127.0.0.1 -d postgres -qc "DROP DATABASE IF EXISTS petal_door_before_$$ WITH (FORCE)" >/dev/null 2>&1
	if [ -n "$dbname" ]; then
		psql -h 127.0.0.1 -d postgres -qc "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/petal" ./cmd/petal
go build -o "$work/bare" ./deploy/bench/bare
if [ "${TRACED:-}" = 1 ]; then
	go build -o "$work/otlpsink" ./deploy/bench/otlpsink
	# The sink on the load core: its work is the collector's, not petal's.
	taskset -c "$LOAD_CPU" "$work/otlpsink" -addr "127.0.0.1:$SINK_PORT" >"$work/otlpsink.log" 2>&1 &
	pids+=($!)
fi
if [ -n "${BEFORE:-}" ]; then
	mkdir -p "$work/before-src"
	git archive "$BEFORE" | tar -x -C "$work/before-src"
	(cd "$work/before-src" && go build -o "$work/petal-before" ./cmd/petal)
fi

if [ -z "${DATABASE_URL:-}" ]; then
	dbname="petal_door_bench_$$"
	psql -h 127.0.0.1 -d postgres -qc "CREATE DATABASE $dbname" >/dev/null
	DATABASE_URL="postgres://$(id -un)@127.0.0.1:5432/$dbname?sslmode=disable"
fi
before_db_url=""
if [ -n "${BEFORE:-}" ]; then
	# Its own database: the two builds may want different schemas.
	psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS petal_door_before_$$" -qc "CREATE DATABASE petal_door_before_$$" >/dev/null
	before_db_url=$(sed "s|/[^/?]*\(?\)|/petal_door_before_$$\1|" <<<"$DATABASE_URL")
fi

wait_up() { # url
	for _ in $(seq 300); do
		curl -fs -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "nothing answered at $1" >&2
	return 1
}

# reqs url pid: one wrk run on the load core; prints its requests/s and the
# server's CPU time per request in µs (utime+stime of pid from /proc, which
# other load on a shared machine inflates far less than the wall clock). Any
# answer but 2xx fails the run.
reqs() {
	local out t0 t1 n
	t0=$(awk '{print $14 + $15}' "/proc/$2/stat")
	out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$DURATION" "${wrk_script[@]}" "$1")
	t1=$(awk '{print $14 + $15}' "/proc/$2/stat")
	if grep -q "Non-2xx" <<<"$out"; then
		echo "$out" >&2
		echo "$1 answered something other than 2xx under load" >&2
		return 1
	fi
	n=$(awk '/requests in/ {print $1}' <<<"$out")
	awk -v out="$out" -v n="$n" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN {split(out, l, "\n"); for (i in l) if (l[i] ~ /Requests\/sec/) {split(l[i], f, " "); rps = f[2]}
		printf "%d %.1f", rps, t / hz * 1e6 / n}'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# same_bytes name url: the answer's body and Content-Type equal petal's.
same_bytes() {
	curl -fs -D "$work/$1.head" -o "$work/$1.body" "$2"
	cmp -s "$work/petal.body" "$work/$1.body" || { echo "$1 answers other bytes than petal" >&2; exit 1; }
	local a b
	a=$(grep -i '^content-type:' "$work/petal.head" | tr -d '\r')
	b=$(grep -i '^content-type:' "$work/$1.head" | tr -d '\r')
	[ "${a,,}" = "${b,,}" ] || { echo "$1 answers $b, petal $a" >&2; exit 1; }
}

# header_names name: the answer's header names, lower case, sorted.
header_names() { tail -n +2 "$work/$1.head" | tr -d '\r' | cut -d: -f1 | grep . | tr 'A-Z' 'a-z' | sort | paste -sd' '; }

hono_ready=""
start_hono() {
	[ -n "$hono_ready" ] && return 0
	mkdir -p "$work/hono"
	cp deploy/bench/hono/package.json deploy/bench/hono/app.mjs "$work/hono/"
	(cd "$work/hono" && npm install --silent --no-audit --no-fund >/dev/null)
	taskset -c "$SERVER_CPU" env PETAL_TOOL_CALLS_PER_MIN=1000000000 \
		node "$work/hono/app.mjs" "$HONO_PORT" "$work/petal.body" "$ctype" >"$work/hono.log" 2>&1 &
	hono_pid=$!
	pids+=("$hono_pid")
	wait_up "http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST"
	same_bytes hono "http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST"
	echo "headers: petal $(header_names petal); hono $(header_names hono)"
	hono_ready=1
}

echo "GET $PATH_UNDER_TEST from $ADDRESSES address(es): servers on CPU $SERVER_CPU (GOMAXPROCS=1), wrk -t1 -c$CONNS -d$DURATION on CPU $LOAD_CPU, $ROUNDS rounds"
for limits in $LIMITS; do
	metrics=()
	[ "${PROFILE:-}" = 1 ] && metrics=("PETAL_METRICS_ADDR=127.0.0.1:$METRICS_PORT")
	# The limit is far above the load: this measures checking it, not refusing.
	taskset -c "$SERVER_CPU" env GOMAXPROCS=1 DATABASE_URL="$DATABASE_URL" PETAL_ADDR="127.0.0.1:$PETAL_PORT" \
		PETAL_LIMITS="$limits" PETAL_TOOL_CALLS_PER_MIN=1000000000 PETAL_TRUSTED_PROXIES=127.0.0.1/32 \
		NEAR_AI_API_KEY= "${metrics[@]}" "$work/petal" serve >"$work/petal-$limits.log" 2>&1 &
	petal_pid=$!
	pids+=("$petal_pid")
	wait_up "http://127.0.0.1:$PETAL_PORT/api/v1/health"
	before_port=$((PETAL_PORT + 10))
	if [ -n "${BEFORE:-}" ]; then
		taskset -c "$SERVER_CPU" env GOMAXPROCS=1 DATABASE_URL="$before_db_url" PETAL_ADDR="127.0.0.1:$before_port" \
			PETAL_LIMITS="$limits" PETAL_TOOL_CALLS_PER_MIN=1000000000 PETAL_TRUSTED_PROXIES=127.0.0.1/32 \
			NEAR_AI_API_KEY= "$work/petal-before" serve >"$work/petal-before-$limits.log" 2>&1 &
		before_pid=$!
		pids+=("$before_pid")
		wait_up "http://127.0.0.1:$before_port/api/v1/health"
	fi
	traced_port=$((PETAL_PORT + 20))
	if [ "${TRACED:-}" = 1 ]; then
		# Every request sampled (the SDK's default), batched every 100 ms.
		taskset -c "$SERVER_CPU" env GOMAXPROCS=1 DATABASE_URL="$DATABASE_URL" PETAL_ADDR="127.0.0.1:$traced_port" \
			PETAL_LIMITS="$limits" PETAL_TOOL_CALLS_PER_MIN=1000000000 PETAL_TRUSTED_PROXIES=127.0.0.1/32 NEAR_AI_API_KEY= \
			OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$SINK_PORT" OTEL_BSP_SCHEDULE_DELAY=100 \
			"$work/petal" serve >"$work/petal-traced-$limits.log" 2>&1 &
		traced_pid=$!
		pids+=("$traced_pid")
		wait_up "http://127.0.0.1:$traced_port/api/v1/health"
	fi
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
	[ -n "${BEFORE:-}" ] && same_bytes before "http://127.0.0.1:$before_port$PATH_UNDER_TEST"
	[ "${TRACED:-}" = 1 ] && same_bytes traced "http://127.0.0.1:$traced_port$PATH_UNDER_TEST"

	# name url pid, for every server taken in turn; bare first.
	servers=("bare http://127.0.0.1:$BARE_PORT$PATH_UNDER_TEST $bare_pid" "petal http://127.0.0.1:$PETAL_PORT$PATH_UNDER_TEST $petal_pid")
	[ -n "${BEFORE:-}" ] && servers+=("petal@$BEFORE http://127.0.0.1:$before_port$PATH_UNDER_TEST $before_pid")
	[ "${HONO:-}" = 1 ] && servers+=("hono http://127.0.0.1:$HONO_PORT$PATH_UNDER_TEST $hono_pid")
	[ "${TRACED:-}" = 1 ] && servers+=("petal-traced http://127.0.0.1:$traced_port$PATH_UNDER_TEST $traced_pid")
	for sv in "${servers[@]}"; do
		read -r _ url pid <<<"$sv"
		DURATION=1s reqs "$url" "$pid" >/dev/null # warm up
	done
	if [ "${PROFILE:-}" = 1 ]; then
		curl -fs -o "door-$limits.prof" "http://127.0.0.1:$METRICS_PORT/debug/pprof/profile?seconds=4" &
		prof=$!
		DURATION=5s reqs "http://127.0.0.1:$PETAL_PORT$PATH_UNDER_TEST" "$petal_pid" >/dev/null
		wait "$prof"
		echo "CPU profile of petal under load: door-$limits.prof (go tool pprof -top <petal binary> door-$limits.prof)"
	fi
	declare -A rps=() cpu=() ratio=() cpuratio=()
	vshono="" cpuvshono=""
	n=${#servers[@]}
	for r in $(seq "$ROUNDS"); do
		# Each round starts with another server, so none always meets the same neighbour.
		declare -A got=()
		say="  limits=$limits round $r:"
		for k in $(seq 0 $((n - 1))); do
			read -r name url pid <<<"${servers[$(((k + r) % n))]}"
			got[$name]=$(reqs "$url" "$pid")
		done
		read -r brps bcpu <<<"${got[bare]}"
		for sv in "${servers[@]}"; do
			read -r name _ _ <<<"$sv"
			read -r x c <<<"${got[$name]}"
			rps[$name]="${rps[$name]:-} $x" cpu[$name]="${cpu[$name]:-} $c"
			ratio[$name]="${ratio[$name]:-} $(awk -v a="$x" -v b="$brps" 'BEGIN {printf "%.2f", a/b}')"
			cpuratio[$name]="${cpuratio[$name]:-} $(awk -v a="$c" -v b="$bcpu" 'BEGIN {printf "%.2f", b/a}')"
			say="$say $name $x req/s ${c} µs;"
		done
		echo "$say"
		if [ -n "${got[hono]:-}" ]; then
			read -r prps pcpu <<<"${got[petal]}"
			read -r hrps hcpu <<<"${got[hono]}"
			vshono="$vshono $(awk -v a="$prps" -v b="$hrps" 'BEGIN {printf "%.2f", a/b}')"
			cpuvshono="$cpuvshono $(awk -v a="$pcpu" -v b="$hcpu" 'BEGIN {printf "%.2f", b/a}')"
		fi
	done
	line="limits=$limits (medians of $ROUNDS rounds; ratio = req/s ÷ bare's in the same round; cpu ratio = bare's CPU µs per request ÷ this one's):"
	for sv in "${servers[@]}"; do
		read -r name _ _ <<<"$sv"
		line="$line
    $name: $(median <<<"${rps[$name]}") req/s, $(median <<<"${cpu[$name]}") CPU-µs/req"
		[ "$name" != bare ] && line="$line, ratio $(median <<<"${ratio[$name]}") (rounds:${ratio[$name]}), cpu ratio $(median <<<"${cpuratio[$name]}")"
	done
	[ -n "$vshono" ] && line="$line
    petal ÷ hono: by req/s $(median <<<"$vshono") (rounds:$vshono), by CPU a request (hono's µs ÷ petal's) $(median <<<"$cpuvshono") (rounds:$cpuvshono)"
	if [ -n "${BEFORE:-}" ]; then
		kill "$before_pid"
		wait "$before_pid" 2>/dev/null || true
	fi
	if [ "${TRACED:-}" = 1 ]; then
		{ grep -c '"trace_id"' "$work/petal-traced-$limits.log" || true; } | sed 's/^/    petal-traced log lines with a trace_id: /'
		kill "$traced_pid"
		wait "$traced_pid" 2>/dev/null || true
	fi
	echo "$line"
	kill "$petal_pid"
	wait "$petal_pid" 2>/dev/null || true
done
