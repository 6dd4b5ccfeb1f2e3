#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against two adapters:
#   sdk - the official Python `mcp` SDK used directly (scripts/conformance/sdk_client.py): the baseline
#   app - the app's own client, McpConnection (scripts/conformance/app_client.py)
# and prints a table  | scenario | SDK | app |.  The app must pass every scenario the SDK passes.
#
#   scripts/mcp-conformance.sh                 every client scenario, both adapters
#   scripts/mcp-conformance.sh initialize auth/basic-cimd   only these scenarios
#
# Node 22 (the npm package `node`) and @modelcontextprotocol/conformance are installed with npm into a
# cache folder outside the repo, so nothing of this lands in the working tree:
#   CKS_CONFORMANCE_CACHE    default ${XDG_CACHE_HOME:-~/.cache}/cks-desktop-conformance
#   CKS_CONFORMANCE_VERSION  one suite version ("latest" to try the newest); unset: each of
#   CKS_CONFORMANCE_VERSIONS default "0.1.16 0.2.0-alpha.12", one table each
#   CKS_CONFORMANCE_ADAPTERS default "sdk app cli" (cli: the command line's flags only, cli_client.py)
#   CKS_CONFORMANCE_TIMEOUT  per-scenario timeout in ms (default 30000)
#   PYTHON                   the interpreter with cks_desktop and mcp (default: the repo's .venv)
# Each run's checks.json/stdout/stderr are kept under $CKS_CONFORMANCE_CACHE/results/<adapter>/<scenario>/.
#
# Exit status: 0 the app passes every scenario the SDK passes; 1 it does not; 3 npm could not install
# node or the suite (offline); 2 bad usage.
set -uo pipefail

# Both suite versions unless one is named: the release and the prerelease (SEP-2352 and others).
if [ -z "${CKS_CONFORMANCE_VERSION:-}" ]; then
  status=0
  for version in ${CKS_CONFORMANCE_VERSIONS:-0.1.16 0.2.0-alpha.12}; do
    CKS_CONFORMANCE_VERSION=$version bash "${BASH_SOURCE[0]}" "$@"
    rc=$?
    # bad usage (2) or offline (3) wins over a failed scenario (1)
    if [ $rc -gt $status ]; then status=$rc; fi
    echo
  done
  exit $status
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${CKS_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cks-desktop-conformance}
suite_version=${CKS_CONFORMANCE_VERSION:-0.1.16}
node_major=22
adapters=${CKS_CONFORMANCE_ADAPTERS:-sdk app cli}
timeout_ms=${CKS_CONFORMANCE_TIMEOUT:-30000}
python=${PYTHON:-$repo/.venv/bin/python}

case "$cache" in "$repo"|"$repo"/*) echo "CKS_CONFORMANCE_CACHE must be outside the repository." >&2; exit 2;; esac
command -v npm >/dev/null || { echo "npm is needed to install the conformance suite (and Node $node_major)." >&2; exit 3; }
[ -x "$python" ] || { echo "No Python at $python (set PYTHON)." >&2; exit 2; }
mkdir -p "$cache"

# -- Node 22 from npm's `node` package, then the suite run with it ------------------------------------
node_bin=$cache/node/node_modules/.bin
if ! "$node_bin/node" --version 2>/dev/null | grep -q "^v$node_major\."; then
  echo "Installing Node $node_major into $cache/node ..." >&2
  npm install --silent --no-audit --no-fund --prefix "$cache/node" "node@$node_major" >&2 \
    || { echo "npm could not install node@$node_major (offline?)." >&2; exit 3; }
  "$node_bin/node" --version >/dev/null 2>&1 || { echo "node@$node_major installed but does not run." >&2; exit 3; }
fi
export PATH="$node_bin:$PATH"

suite_dir=$cache/suite-$suite_version
conformance=$suite_dir/node_modules/.bin/conformance
if [ ! -x "$conformance" ] || [ "$suite_version" = latest ]; then
  echo "Installing @modelcontextprotocol/conformance@$suite_version ..." >&2
  npm install --silent --no-audit --no-fund --prefix "$suite_dir" "@modelcontextprotocol/conformance@$suite_version" >&2 \
    || { echo "npm could not install @modelcontextprotocol/conformance@$suite_version (offline?)." >&2; exit 3; }
fi
installed=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
  "$suite_dir/node_modules/@modelcontextprotocol/conformance/package.json")
sdk=$("$python" -c 'from importlib.metadata import version; print(version("mcp"))')

# -- scenarios ---------------------------------------------------------------------------------------
mapfile -t known < <("$conformance" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
if [ $# -gt 0 ]; then
  scenarios=("$@")
  for scenario in "${scenarios[@]}"; do
    printf '%s\n' "${known[@]}" | grep -qxF -- "$scenario" \
      || { echo "No client scenario '$scenario' in conformance $installed (see: $conformance list --client)." >&2; exit 2; }
  done
else
  scenarios=("${known[@]}")
fi
[ ${#scenarios[@]} -gt 0 ] || { echo "The suite listed no client scenarios." >&2; exit 1; }

# One scenario with one adapter: "pass", or "FAIL" with the failed checks' ids.
run_one() {
  local adapter=$1 scenario=$2 out
  out=$cache/results/$suite_version/$adapter/${scenario//\//_}
  rm -rf "$out"; mkdir -p "$out"
  local limit=$timeout_ms
  [ "$adapter" = cli ] && limit=$(( timeout_ms * 4 ))  # one Python process per command (add, login, call ...)
  MCP_CONFORMANCE_ADAPTER=$adapter "$conformance" client --scenario "$scenario" --timeout "$limit" \
    --command "$python $repo/scripts/conformance/${adapter}_client.py" -o "$out" >"$out/suite.log" 2>&1
  local rc=$?
  "$python" - "$out" "$rc" <<'EOF'
import json, pathlib, sys
out, rc = pathlib.Path(sys.argv[1]), int(sys.argv[2])
checks = [c for f in out.rglob("checks.json") for c in json.loads(f.read_text())]
failed = sorted({c.get("id", "?") for c in checks if c.get("status") in ("FAILURE", "ERROR")})
if rc == 0 and not failed and checks:
    print("pass")
else:
    print("FAIL" + (f" ({', '.join(failed)})" if failed else " (no checks: the client did not finish)"))
EOF
}

declare -A result
for scenario in "${scenarios[@]}"; do
  for adapter in $adapters; do
    result[$adapter,$scenario]=$(run_one "$adapter" "$scenario")
    echo "$scenario [$adapter]: ${result[$adapter,$scenario]}" >&2
  done
done

# -- the table ---------------------------------------------------------------------------------------
echo "Client conformance: @modelcontextprotocol/conformance $installed, Python mcp $sdk, $(date -u +%Y-%m-%d)"
echo
header="| scenario |"; rule="|---|"
for adapter in $adapters; do
  [ "$adapter" = sdk ] && header+=" SDK |" || header+=" $adapter |"; rule+="---|"
done
echo "$header"; echo "$rule"
declare -A passed
regressions=()
for scenario in "${scenarios[@]}"; do
  row="| $scenario |"
  for adapter in $adapters; do
    row+=" ${result[$adapter,$scenario]} |"
    [ "${result[$adapter,$scenario]}" = pass ] && passed[$adapter]=$(( ${passed[$adapter]:-0} + 1 ))
  done
  echo "$row"
  for adapter in $adapters; do
    [ "$adapter" = sdk ] && continue
    if [ "${result[sdk,$scenario]:-}" = pass ] && [ "${result[$adapter,$scenario]}" != pass ]; then
      regressions+=("$scenario [$adapter]")
    fi
  done
done
total="| **passed** |"
for adapter in $adapters; do total+=" ${passed[$adapter]:-0}/${#scenarios[@]} |"; done
echo "$total"
echo
if [ ${#regressions[@]} -gt 0 ]; then
  echo "The app fails ${#regressions[@]} scenario(s) the SDK passes: ${regressions[*]}"
  echo "(details: $cache/results/<adapter>/<scenario>/)"
  exit 1
fi
case " $adapters " in
  *" sdk "*) echo "The app (${adapters/sdk /}) passes every scenario the SDK passes." ;;
esac
