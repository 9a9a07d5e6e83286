#!/usr/bin/env bash
# Runs real applications built on the LeanCloud API against a fresh Roost, unchanged but for the server address:
# Waline's server (@waline/vercel, its LeanCloud storage through leancloud-storage 4) driven through its client
# API and its admin calls; in Debian's Chromium, from a page on another origin: Waline's browser client, Valine's
# widget (leancloud-storage 3 in the page), the Hexo/NexT visitor counter (fetch with the app key) and a
# leancloud-storage 4 counter. Prints one PASS/FAIL line per flow; docs/compatibility.md "Waline and Valine"
# lists them.
# Not part of `npm test` or CI: it installs the apps from the npm registry.
#
#   scripts/apps-check.sh
#
# APPS_DIR  where the apps are installed (default: a folder in the run's work folder; an existing one with the
#           apps installed is reused, e.g. APPS_DIR=/tmp/roost-apps to install once).
# ROOST_REF which Roost to run: a commit (default HEAD) or `worktree` (see scripts/suite-common.sh).
# DATABASE_URL  postgres://… runs Roost on PostgreSQL (a fresh database); unset: SQLite in a fresh data folder.
# CHROMIUM  the browser (default /usr/bin/chromium; `apt-get install chromium`).
# KEEP=1    keep the work folder (roost.log, waline.log, roost-requests.log with every request the apps sent
#           to Roost and its status, browser-N.png of a failing browser flow) and print its path.
#
# Exit status 0 when every flow passes, 1 when some fail, 2 when the run could not start.
set -euo pipefail

roost_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/roost-apps-check.XXXXXX)
apps_dir=${APPS_DIR:-$work/apps}
# The versions the flows were written against (docs/compatibility.md, "Waline and Valine").
apps=(@waline/vercel@1.39.3 @waline/client@3.13.0 @waline/api@1.1.0 valine@1.5.3)

server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [[ "${KEEP:-}" == 1 ]]; then echo "work folder kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "apps-check: $*" >&2; exit 2; }
# shellcheck source=suite-common.sh
source "$roost_dir/scripts/suite-common.sh"

[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || fail "no Chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install chromium)"
if [[ ! -d "$apps_dir/node_modules/@waline/vercel" || ! -d "$apps_dir/node_modules/valine" ]]; then
  echo "apps-check: installing ${apps[*]} into $apps_dir" >&2
  mkdir -p "$apps_dir"
  [[ -f "$apps_dir/package.json" ]] || echo '{"private":true}' >"$apps_dir/package.json"
  (cd "$apps_dir" && npm install --no-audit --no-fund "${apps[@]}" >&2) || fail "npm install failed in $apps_dir"
fi

start_roost waline
echo "apps-check: Roost $commit on $store" >&2
status=0
ROOST_URL="http://127.0.0.1:$port" APP_ID="$app_id" APP_KEY="$app_key" MASTER_KEY="$master_key" \
  APPS_DIR="$apps_dir" WORK="$work" node "$roost_dir/scripts/apps-check/run.mjs" || status=$?
echo "apps-check: Roost $commit on $store: $( ((status == 0)) && echo 'every flow passed' || echo 'some flows failed')"
exit "$status"
