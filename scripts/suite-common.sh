# Sourced by the SDK suite runners (scripts/sdk-suite.sh, scripts/php-sdk-suite.sh, scripts/python-sdk-suite.sh):
# the SDK's sources and a fresh Roost for one run.
#
#   begin_suite NAME REPO  starts a run named NAME (its messages' prefix): a fresh work folder $work, removed at
#                      exit unless KEEP=1, with the processes in $pids stopped first; `fail MESSAGE` (exit 2); and,
#                      unless SDK_GIT is set, SDK_GIT pointed at leancloud/REPO: the mirror under /work/.mirror when
#                      present, else the GitHub URL.
#   prepare_sdk NAME MARKER   when $sdk_dir has no file MARKER, fills it with the SDK at $sdk_ref from $SDK_GIT
#                      (a git directory: `git archive`; else a URL: clone and checkout).
#   start_roost NAME   builds Roost at ROOST_REF (a commit, default HEAD, from `git archive`; or `worktree`, the
#                      checkout's files as they are) in $work/roost, creates an application named NAME and starts
#                      the server on a free port (log in $work/roost.log), stopped at the end. Sets: commit,
#                      store (sqlite or postgresql, from DATABASE_URL), port, app_id, app_key, master_key.
#
# Needs from the caller: $roost_dir (the checkout) and $sdk_dir, $sdk_ref.

begin_suite() {
  suite_name=$1
  work=$(mktemp -d "/tmp/roost-$suite_name.XXXXXX")
  pids=()
  trap end_suite EXIT
  [[ -n "${SDK_GIT:-}" ]] && return
  if [[ -d "/work/.mirror/leancloud+$2/repo" ]]; then SDK_GIT="/work/.mirror/leancloud+$2/repo"
  else SDK_GIT="https://github.com/leancloud/$2.git"; fi
}

end_suite() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [[ "${KEEP:-}" == 1 ]]; then echo "work folder kept: $work" >&2; else rm -rf "$work"; fi
}

fail() { echo "$suite_name: $*" >&2; exit 2; }

prepare_sdk() {
  local name=$1 marker=$2
  [[ -f "$sdk_dir/$marker" ]] && return
  echo "$name: preparing the SDK at $sdk_dir from $SDK_GIT@$sdk_ref" >&2
  mkdir -p "$sdk_dir"
  if [[ -d "$SDK_GIT" ]]; then
    git --git-dir="$SDK_GIT" archive "$sdk_ref" | tar -x -C "$sdk_dir"
  else
    git clone --quiet "$SDK_GIT" "$sdk_dir" && git -C "$sdk_dir" checkout --quiet "$sdk_ref"
  fi
}

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

start_roost() {
  local name=$1 roost_ref=${ROOST_REF:-HEAD} keys
  mkdir -p "$work/roost" "$work/data"
  if [[ "$roost_ref" == worktree ]]; then
    commit="$(git -C "$roost_dir" rev-parse --short HEAD)+worktree"
    (cd "$roost_dir" && git ls-files -co --exclude-standard -z | xargs -0 tar -c) | tar -x -C "$work/roost"
  else
    commit=$(git -C "$roost_dir" rev-parse --short "$roost_ref")
    git -C "$roost_dir" archive "$roost_ref" | tar -x -C "$work/roost"
  fi
  ln -s "$roost_dir/node_modules" "$work/roost/node_modules"
  echo "$name: building Roost $commit" >&2
  (cd "$work/roost" && npm run --silent build) >&2 || fail "build failed"

  port=$(free_port)
  export DATA_DIR="$work/data" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn
  store=${DATABASE_URL:+postgresql}
  store=${store:-sqlite}
  # PostgreSQL needs a key to seal secrets with (docs/operations.md, Secrets at rest); SQLite makes its own.
  if [ "$store" = postgresql ] && [ -z "${ROOST_SECRET_KEY:-}" ]; then
    export ROOST_SECRET_KEY="$(node -e 'console.log(require("crypto").randomBytes(32).toString("base64"))')"
  fi
  keys=$(cd "$work/roost" && node dist/cli.js app create --name "$name") || fail "app create failed"
  app_id=$(node -e 'console.log(JSON.parse(process.argv[1]).appId)' "$keys")
  app_key=$(node -e 'console.log(JSON.parse(process.argv[1]).appKey)' "$keys")
  master_key=$(node -e 'console.log(JSON.parse(process.argv[1]).masterKey)' "$keys")

  (cd "$work/roost" && exec node dist/main.js) >"$work/roost.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 1 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then break; fi
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/roost.log" >&2; fail "Roost exited at start"; }
    sleep 0.1
  done
}
