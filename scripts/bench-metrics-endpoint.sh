#!/usr/bin/env bash
# The cost of `zkherd load --metrics-addr` to a run: fair lock at 1,000
# clients, without and with the endpoint (scraped every second by a real
# Prometheus), in ABBA order on one local ensemble. Prints each run's
# throughput and acquire p99 from its report.json, and the medians.
#
#   scripts/bench-metrics-endpoint.sh [PAIRS] [DURATION]    (default 3 20s)
set -euo pipefail
pairs=${1:-3}
duration=${2:-20s}
work=$(mktemp -d)
bin=$work/zkherd
go build -o "$bin" .
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

"$bin" cluster up --nodes 1 >"$work/cluster.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
	server=$(grep -o '127\.0\.0\.1:[0-9]*' "$work/cluster.log" | head -1 || true)
	[ -n "$server" ] && "$bin" cluster status --server "$server" >/dev/null 2>&1 && break
	sleep 0.5
done
[ -n "$server" ] || { cat "$work/cluster.log"; exit 1; }

metrics=127.0.0.1:$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
promaddr=127.0.0.1:$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: zkherd-load
    static_configs: [{targets: ["$metrics"]}]
YAML
/usr/bin/prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
	--web.listen-address="$promaddr" >"$work/prometheus.log" 2>&1 &
pids+=($!)

run() { # run NAME [FLAGS...]
	local name=$1
	shift
	"$bin" load --scenario fair-lock --clients 1000 --duration "$duration" --server "$server" \
		--out "$work/$name" --no-tui "$@" >/dev/null 2>&1
	python3 - "$work/$name/report.json" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
print("%-10s throughput %7.1f/s  acquire p99 %8.1f ms  operations %d" % (
    sys.argv[2], s["throughput_per_s"], s["latency_ms"]["acquire"]["p99"], s["operations"]))
PY
}
# A first run warms the server up (JIT, heap); it is not counted.
run warmup >/dev/null
for i in $(seq 0 $((2 * pairs - 1))); do
	# ABBA: off on, on off, ...
	if (( (i % 2 == 1) == ((i / 2) % 2 == 0) )); then
		run "on-$i" --metrics-addr "$metrics" --metrics-linger 2s
	else
		run "off-$i"
	fi
done | tee "$work/runs.txt"
python3 - "$work/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for side in ("off", "on"):
    t = [float(r[2].rstrip("/s")) for r in rows if r[0].startswith(side)]
    p = [float(r[5]) for r in rows if r[0].startswith(side)]
    print("%-3s median throughput %.1f/s (%s), acquire p99 %.1f ms" % (side, statistics.median(t), ", ".join("%.1f" % x for x in t), statistics.median(p)))
PY
