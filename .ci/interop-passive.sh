#!/usr/bin/env bash
# Interop proof for passive judging (docs/passive.md, "Outside recorders"):
# the reference server's traffic is recorded by HAR writers this project
# does not write, each file is judged, and the judgement is held by
# har/interop_test.go (TestOutsideRecordings): no failure on clean traffic,
# each recorder's gaps untested with their reasons, and a broken server's
# violations caught where the recorder shows them.
#
# Recorders: mitmproxy's har_dump addon (Debian's mitmproxy package), with
# Node's fetch as the client; headless Chromium (Debian's chromium) driven
# through the DevTools protocol by a page on the service's origin, its HAR
# written by the npm chrome-har library (.ci/interop/record-chromium.mjs).
# Both run the same traffic plan (.ci/interop/plan.mjs), against the clean
# server and against one with defects.
#
# .ci/run calls it when INVOKECONF_FULL=1. The HAR files and their reports
# land in reports/out/interop/ (INVOKECONF_INTEROP_OUT). With
# --update-fixtures it also refreshes har/testdata/interop/ (keys replaced),
# which go test ./har judges offline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
update_fixtures=0
if [ "${1:-}" = "--update-fixtures" ]; then update_fixtures=1; fi
out=${INVOKECONF_INTEROP_OUT:-reports/out/interop}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== interop: install the recorders"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
need=()
command -v mitmdump >/dev/null 2>&1 || need+=(mitmproxy)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
har_dump=/usr/share/doc/mitmproxy/examples/contrib/har_dump.py
if [ ! -f "$har_dump" ] && [ -f "$har_dump.gz" ]; then
  gunzip -c "$har_dump.gz" >"$work/har_dump.py"
  har_dump=$work/har_dump.py
fi
# The whole output is read before its first line is printed: `| head -1` closed
# the pipe early, mitmdump died of the broken pipe, and pipefail failed the run.
mitm_version=$(mitmdump --version 2>&1 || true)
echo "${mitm_version%%$'\n'*}"
chromium --version 2>/dev/null
mkdir -p "$work/npm"
(cd "$work/npm" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent chrome-har@1.3.1 chrome-remote-interface@0.34.0)
cp .ci/interop/*.mjs "$work/npm/"
go build -o "$work/invokeconf" ./cmd/invokeconf

# say prints a step with the time.
say() { echo "== interop $(date +%T): $*"; }

# free_port prints a free loopback port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for FILE or wait_for_port PORT, up to 20 s.
wait_for() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.2; done; echo "no $1 after 20 s" >&2; return 1; }
wait_for_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.2; done; echo "nothing on port $1 after 20 s" >&2; return 1; }

# profile_value FILE ROLE prints the key of a role from a written profile.
profile_key() { awk -v role="$2" '/^keys:/{k=1;next} /^[^ ]/{k=0} k && $1==role":"{print $2; exit}' "$1"; }

# record NAME [serve flags...] records the plan against a reference server
# started with the flags, through mitmproxy and through Chromium.
record() {
  local name=$1
  shift
  say "the $name server"
  local profile=$work/$name.yaml
  "$work/invokeconf" serve --addr 127.0.0.1:0 --quiet --write-profile "$profile" "$@" >"$work/serve-$name.log" 2>&1 &
  local serve=$!
  pids+=("$serve")
  wait_for "$profile"
  local base
  base=$(sed -n 's/^baseURL: //p' "$profile")
  local ctx='{"base":"%s","key":"%s","bundlesKey":"%s","agent":"agt_main01","exportPath":"/api/assistants/agt_export01/projects/prj_export01/bundle","lagMs":1000}'
  # mitmproxy, in front of the server as a reverse proxy.
  local mport
  mport=$(free_port)
  mitmdump --mode "reverse:$base" --listen-host 127.0.0.1 --listen-port "$mport" -q \
    -s "$har_dump" --set "hardump=$out/mitmproxy-$name.har" >"$work/mitm-$name.log" 2>&1 &
  local mitm=$!
  pids+=("$mitm")
  wait_for_port "$mport"
  # shellcheck disable=SC2059
  printf "$ctx" "http://127.0.0.1:$mport" "$(profile_key "$profile" agent)" "$(profile_key "$profile" bundles)" >"$work/ctx-mitm.json"
  (cd "$work/npm" && timeout 120 node record-node.mjs "$work/ctx-mitm.json")
  say "mitmproxy writes its HAR file"
  kill -INT "$mitm"
  wait "$mitm" || true
  [ -s "$out/mitmproxy-$name.har" ] || { cat "$work/mitm-$name.log"; echo "mitmproxy wrote no HAR file" >&2; return 1; }
  # Chromium, a page on the server's origin.
  local profile_dir=$work/chromium-$name
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-crash-reporter --user-data-dir="$profile_dir" --remote-debugging-port=0 about:blank \
    >"$work/chromium-$name.log" 2>&1 &
  local chrome=$!
  pids+=("$chrome")
  wait_for "$profile_dir/DevToolsActivePort"
  say "Chromium records"
  # shellcheck disable=SC2059
  printf "$ctx" "$base" "$(profile_key "$profile" agent)" "$(profile_key "$profile" bundles)" >"$work/ctx.json"
  (cd "$work/npm" && timeout 180 node record-chromium.mjs "$(head -1 "$profile_dir/DevToolsActivePort")" "$work/ctx.json" "$out/chrome-har-$name.har")
  kill "$chrome" "$serve"
  wait "$chrome" "$serve" 2>/dev/null || true
}

record clean
record defects --defect no-close --defect richer-merged --defect openai-errors --defect events-first-run

say "judge each recording (reports in $out)"
for f in "$out"/*.har; do
  n=$(basename "$f" .har)
  code=0
  "$work/invokeconf" judge --report-lag 1s --out "$out/$n" "$f" >"$out/$n.txt" || code=$?
  echo "$n: $(grep '^Verdict:' "$out/$n.txt") (exit $code)"
done

say "hold the judgement (har/interop_test.go)"
INVOKECONF_INTEROP_DIR=$out go test -count=1 -run 'TestOutsideRecordings' ./har

if [ "$update_fixtures" = 1 ]; then
  echo "== interop: refresh har/testdata/interop (keys replaced)"
  mkdir -p "$root/har/testdata/interop"
  for f in "$out"/*.har; do
    # Each key keeps its <user>-<key> ID; its secret is replaced.
    sed -E 's/(sk-svc-[A-Za-z0-9_]+-[A-Za-z0-9_]+-)[A-Za-z0-9_-]+/\1RecordedSecretReplaced/g' "$f" >"$root/har/testdata/interop/$(basename "$f")"
  done
  go test -count=1 -run 'TestOutsideRecordings' ./har
fi
