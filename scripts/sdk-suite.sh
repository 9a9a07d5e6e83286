#!/usr/bin/env bash
# Runs the LeanCloud JavaScript SDK's own test suite (leancloud/javascript-sdk, test/index.js with
# REAL_BACKEND=1) against a fresh Roost, and prints pass/fail counts and the failing tests' names.
# Not part of `npm test` or CI: it needs the SDK's sources and its dev dependencies from the npm registry.
#
#   scripts/sdk-suite.sh [SDK_DIR]
#
# SDK_DIR (argument or env, default /tmp/jssdk): a checkout of the SDK. When it has no package.json it is
#   created from SDK_GIT at SDK_REF; when it has no node_modules the test dependencies are installed there
#   (its package.json's devDependencies are trimmed to the ones the tests load, so no git dependency or
#   build tool is fetched). Nothing of the SDK is ever copied into Roost.
# SDK_GIT   a git directory or URL of leancloud/javascript-sdk (default: the mirror under /work/.mirror
#           when present, else https://github.com/leancloud/javascript-sdk.git).
# SDK_REF   the SDK commit (default 1fcc28d, v4.15.3, the version the reference was written from).
# ROOST_REF which Roost to run: a commit (default HEAD, built from `git archive`, so uncommitted edits in
#           the checkout do not leak in) or `worktree` (the files of the checkout as they are, untracked
#           ones included).
# DATABASE_URL  postgres://… runs Roost on PostgreSQL (the app is new, so an existing database is fine);
#           unset: SQLite in a fresh data folder.
# HOOKKEY   is set to a dummy value: without one the SDK refuses ignoreHook() before sending anything; Roost
#           runs no hooks and accepts the SDK's __ignore_hooks flag.
# GREP      passed to mocha --grep to run part of the suite.
# TEST_TIMEOUT_MS  per-test timeout (default 20000; the SDK's own script uses 300000).
# KEEP=1    keep the work folder (roost.log, mocha.out with each failure's stack, report.json) and print its path.
#
# Output: progress and failing titles on stderr, then on stdout the commit, store, "passed N of M" and one line
# per failing test ("FAIL <full title> :: <first line of the error>"). Exit status 0 when every test passes,
# 1 when some fail, 2 when the run could not start.
set -euo pipefail

roost_dir=$(cd "$(dirname "$0")/.." && pwd)
sdk_dir=${1:-${SDK_DIR:-/tmp/jssdk}}
sdk_ref=${SDK_REF:-1fcc28d}

# shellcheck source=suite-common.sh
source "$roost_dir/scripts/suite-common.sh"
begin_suite sdk-suite javascript-sdk

# --- the SDK ---------------------------------------------------------------------------------------------
prepare_sdk sdk-suite package.json
if [[ ! -d "$sdk_dir/node_modules/mocha" ]]; then
  echo "sdk-suite: installing the SDK's test dependencies" >&2
  (cd "$sdk_dir" && node -e '
    const fs = require("fs");
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    // What test/index.js and babel.config.json load; the rest (webpack, jsdoc, a git-hosted docdash) is for
    // builds. The lock stays: with newer Babel releases the sources fail to load (AdapterManager).
    const keep = ["@babel/core", "@babel/register", "@babel/preset-env", "@babel/plugin-transform-runtime",
      "babel-plugin-transform-inline-environment-variables", "babel-plugin-istanbul", "@pollyjs/core",
      "@pollyjs/adapter-node-http", "@pollyjs/persister-fs", "expect.js", "mocha", "should"];
    pkg.devDependencies = Object.fromEntries(keep.map((name) => [name, pkg.devDependencies[name]]));
    delete pkg.scripts.precommit;
    fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2));
  ' && npm install --no-audit --no-fund --ignore-scripts >&2) || fail "npm install failed in $sdk_dir"
fi

# --- Roost -----------------------------------------------------------------------------------------------
start_roost sdk-suite

# --- the hosted test app's standing data ----------------------------------------------------------------
# Some tests read objects that lived in the SDK authors' hosted test app rather than ones they create (seen in
# the SDK's recordings/): a GameScore whose arr holds "contains-all-test" (created 2017), and at least one user
# before the User tests run; and at least ten GameScore objects, which `#cloudQuery` reads with `limit 10`
# (the recorded answers held objects with no fields of their own, and counted 1,225). The same objects are
# created here, so those tests test Roost, not the seed.
seed() {
  curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port$1" -H 'Content-Type: application/json' \
    -H "X-LC-Id: $app_id" -H "X-LC-Key: $master_key,master" -d "$2" | grep -q '^20[01]$' || fail "seeding $1 failed"
}
seed /1.1/classes/GameScore '{"score":2,"playerName":"sdf","cheatMode":false,"arr":["contains-all-test"]}'
seed /1.1/users '{"username":"sdk-suite-standing-user","password":"standing-user-password"}'
for _ in 1 2 3 4 5 6 7 8 9; do seed /1.1/classes/GameScore '{}'; done
# AV.Status's tests follow (and send to) a standing user of the hosted app, `leeyeh` (5627906060b22ef9c464cc99);
# the suite takes another id from STATUS_TARGET_USER_ID, so the same user is created here.
status_target=$(curl -sS -X POST "http://127.0.0.1:$port/1.1/users" -H 'Content-Type: application/json' \
  -H "X-LC-Id: $app_id" -H "X-LC-Key: $master_key,master" -d '{"username":"leeyeh","password":"standing-user-password"}' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).objectId||""))')
[[ -n "$status_target" ]] || fail "seeding the status target user failed"
# The hosted test app's console default on Person (`should fetch when save when creating new object` reads it
# back): set as a column default (README "Class schemas").
seed /1.1/schemas/Person '{"company":{"default":"leancloud"}}'

# --- the suite -------------------------------------------------------------------------------------------
# mocha 3's json reporter prints nothing when an error holds a cycle, so a small reporter of our own writes
# what the summary needs.
cat >"$work/reporter.cjs" <<'EOF'
const fs = require('fs');
const Base = require(require.resolve('mocha/lib/reporters/base', { paths: [process.cwd()] }));
module.exports = function SummaryReporter(runner) {
  Base.call(this, runner);
  const failed = [];
  const firstLine = (err) => String((err && err.message) || err).split('\n')[0].slice(0, 200);
  runner.on('fail', (test, err) => {
    failed.push({ title: test.fullTitle(), hook: test.type === 'hook', error: firstLine(err) });
    process.stderr.write(`  FAIL ${test.fullTitle()}\n`);
    console.log(`FAIL ${test.fullTitle()}\n${String((err && err.stack) || err).split('\n').slice(0, 12).join('\n')}\n`);
  });
  // The tests --grep selects, listed at the start: mocha 3 empties each suite's test list once the suite has
  // run, and a test a failed hook skipped gets no event.
  const selected = [];
  runner.on('start', () => {
    const walk = (suite) => {
      for (const test of suite.tests) if (runner._grep.test(test.fullTitle()) !== Boolean(runner._invert)) selected.push(test);
      suite.suites.forEach(walk);
    };
    walk(runner.suite);
  });
  runner.on('end', () => {
    const tests = { passed: [], failed: [], pending: [], notRun: [] };
    for (const test of selected) {
      const title = test.fullTitle();
      if (test.pending) tests.pending.push(title);
      else if (test.state === 'failed') tests.failed.push(title);
      else if (test.state === 'passed') tests.passed.push(title);
      else tests.notRun.push(title);
    }
    fs.writeFileSync(process.env.SDK_SUITE_REPORT, JSON.stringify({ tests, failures: failed }, null, 2));
  });
};
EOF
echo "sdk-suite: running the SDK suite against http://127.0.0.1:$port ($store)" >&2
set +e
# --unhandled-rejections=warn: the suite was written for Node before 15, where a promise a test forgets to
# return only warned when it failed; as an uncaught exception it would fail whichever test runs at that moment.
(cd "$sdk_dir" && env NODE_OPTIONS=--unhandled-rejections=warn REAL_BACKEND=1 PLATFORM=NODE_JS APPID="$app_id" APPKEY="$app_key" MASTERKEY="$master_key" STATUS_TARGET_USER_ID="$status_target" \
  SERVER_URL="http://127.0.0.1:$port" HOOKKEY=roost-runs-no-hooks SDK_SUITE_REPORT="$work/report.json" node_modules/.bin/mocha \
  --require @babel/register --timeout "${TEST_TIMEOUT_MS:-20000}" --reporter "$work/reporter.cjs" \
  ${GREP:+--grep "$GREP"} test/index.js) >"$work/mocha.out" 2>&1
set -e
[[ -s "$work/report.json" ]] || { tail -40 "$work/mocha.out" >&2; fail "the suite did not finish"; }

node - "$work/report.json" "$commit" "$store" <<'EOF'
const fs = require('fs');
const [file, commit, store] = process.argv.slice(2);
const { tests, failures } = JSON.parse(fs.readFileSync(file, 'utf8'));
const total = tests.passed.length + tests.failed.length + tests.notRun.length;
console.log(`roost ${commit} (${store}), ${new Date().toISOString().slice(0, 16)}Z`);
console.log(`passed ${tests.passed.length} of ${total}: ${tests.failed.length} failed, ${tests.notRun.length} not run ` +
  `after a failed hook; ${tests.pending.length} pending in the SDK (skipped, not counted)`);
for (const f of failures) console.log(`FAIL ${f.title} :: ${f.error}`);
for (const title of tests.notRun) console.log(`NOT RUN ${title}`);
process.exit(failures.length === 0 ? 0 : 1);
EOF
