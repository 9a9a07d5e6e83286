#!/usr/bin/env bash
# Runs the LeanCloud PHP SDK's own test suite (leancloud/php-sdk, PHPUnit tests under test/) against a fresh
# Roost, and prints pass/fail counts and the failing tests' names. Not part of `npm test` or CI: it needs PHP
# with curl and PHPUnit (Debian: `apt-get install php-cli php-curl php-mbstring phpunit`).
#
#   scripts/php-sdk-suite.sh [SDK_DIR]
#
# SDK_DIR (argument or env, default /tmp/phpsdk): a copy of the SDK. When it has no composer.json it is
#   created from SDK_GIT at SDK_REF. The SDK needs nothing but ext-curl (src/autoload.php loads it); its tests
#   are copied into the work folder and adapted there, the SDK copy is left as it is.
# SDK_GIT   a git directory or URL of leancloud/php-sdk (default: the mirror under /work/.mirror when
#           present, else https://github.com/leancloud/php-sdk.git).
# SDK_REF   the SDK commit (default 66f57f0, v0.14.2).
# ROOST_REF which Roost to run: a commit (default HEAD, built from `git archive`) or `worktree` (the
#           checkout's files as they are, untracked ones included).
# DATABASE_URL  postgres://… runs Roost on PostgreSQL (use a fresh database: one sealed under another run's
#           ROOST_SECRET_KEY refuses to start); unset: SQLite in a fresh data folder.
# FILTER    passed to phpunit --filter to run part of the suite.
# ENGINE=0  leave out test/engine (the SDK's LeanEngine app, served here by `php -S` on a free port).
# KEEP=1    keep the work folder (roost.log, phpunit.out, junit.xml) and print its path.
#
# The tests were written for PHPUnit 5.7; Debian ships 9.6. The adaptations are mechanical and made on the
# copy of test/ only, never on an assertion:
#   1. `function setUp()`, `tearDown()`, `setUpBeforeClass()`, `tearDownAfterClass()` gain `: void`;
#   2. `extends TestCase` becomes `extends RoostCompatTestCase` (bootstrap.php below), which brings back
#      PHPUnit 5's setExpectedException(class, message, code) as expectException + expectExceptionMessage +
#      expectExceptionCode, and assertContains/assertNotContains on a string (PHPUnit 9 takes iterables only)
#      as assertStringContainsString/assertStringNotContainsString;
#   3. beStrictAboutTestsThatDoNotTestAnything="false", PHPUnit 5.7's default (9's marks a test without an
#      assertion risky, and the junit log counts it as an error).
#
# Output: progress on stderr, then on stdout the commit, store, "passed N of M" and one line per failing test
# ("FAIL Class::test :: first line of the message"). Exit status 0 when every test passes, 1 when some fail,
# 2 when the run could not start.
set -euo pipefail

roost_dir=$(cd "$(dirname "$0")/.." && pwd)
sdk_dir=${1:-${SDK_DIR:-/tmp/phpsdk}}
sdk_ref=${SDK_REF:-66f57f0}
command -v php >/dev/null && command -v phpunit >/dev/null || { echo "php-sdk-suite: needs php and phpunit" >&2; exit 2; }

# shellcheck source=suite-common.sh
source "$roost_dir/scripts/suite-common.sh"
begin_suite php-sdk-suite php-sdk

# --- the SDK ---------------------------------------------------------------------------------------------
prepare_sdk php-sdk-suite composer.json
cp -r "$sdk_dir/test" "$work/test"
find "$work/test" -name '*Test.php' -print0 | xargs -0 sed -i -E \
  -e 's/function (setUp|tearDown|setUpBeforeClass|tearDownAfterClass)\(\)( *)\{/function \1(): void\2{/' \
  -e 's/extends TestCase\b/extends RoostCompatTestCase/'
cat >"$work/bootstrap.php" <<EOF
<?php
require '$sdk_dir/src/autoload.php';

// PHPUnit 5.7 spellings the SDK's tests use, on PHPUnit 9.
abstract class RoostCompatTestCase extends PHPUnit\Framework\TestCase {
    public function setExpectedException(\$exception, \$message = null, \$code = null) {
        \$this->expectException(\$exception);
        if (\$message !== null && \$message !== '') \$this->expectExceptionMessage(\$message);
        if (\$code !== null) \$this->expectExceptionCode(\$code);
    }
    public static function assertContains(\$needle, \$haystack, string \$message = ''): void {
        if (is_string(\$haystack)) parent::assertStringContainsString(\$needle, \$haystack, \$message);
        else parent::assertContains(\$needle, \$haystack, \$message);
    }
    public static function assertNotContains(\$needle, \$haystack, string \$message = ''): void {
        if (is_string(\$haystack)) parent::assertStringNotContainsString(\$needle, \$haystack, \$message);
        else parent::assertNotContains(\$needle, \$haystack, \$message);
    }
}
EOF
engine_dir=
[[ "${ENGINE:-1}" == 0 ]] || engine_dir="<testsuite name=\"engine\"><directory suffix=\"Test.php\">$work/test/engine</directory></testsuite>"
cat >"$work/phpunit.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="$work/bootstrap.php" colors="false" beStrictAboutTestsThatDoNotTestAnything="false">
  <testsuites>
    <testsuite name="sdk">
      <directory suffix="Test.php">$work/test</directory>
      <exclude>$work/test/engine</exclude>
    </testsuite>
    $engine_dir
  </testsuites>
</phpunit>
EOF

# --- Roost -----------------------------------------------------------------------------------------------
start_roost php-sdk-suite
export LEANCLOUD_APP_ID=$app_id LEANCLOUD_APP_KEY=$app_key LEANCLOUD_APP_MASTER_KEY=$master_key
export LEANCLOUD_API_SERVER="http://127.0.0.1:$port"

# --- the hosted test app's standing data and settings ------------------------------------------------------
# UserTest::testRequestChangePhoneNumber logs in a user "Remember to create this user before hand", so it is
# created here; and UserTest::testFindUserWithSession expects a signed-in user to find users (the hosted test
# app's class permission on _User), which in Roost is the setting userQueryPermission (README "Settings").
as_master() {
  curl -sS -o /dev/null -w '%{http_code}' -X "$1" "$LEANCLOUD_API_SERVER$2" -H 'Content-Type: application/json' \
    -H "X-LC-Id: $LEANCLOUD_APP_ID" -H "X-LC-Key: $LEANCLOUD_APP_MASTER_KEY,master" -d "$3" | grep -q '^20[01]$'
}
as_master POST /1.1/users '{"username":"php_test_change_phone_number","password":"blabla"}' || fail "seeding a user failed"
as_master PUT /1.1/settings '{"userQueryPermission":true}' || fail "setting userQueryPermission failed"

# The SDK's LeanEngine tests call an app server of the SDK's own (test/engine/index.php), which talks to Roost.
if [[ -n "$engine_dir" ]]; then
  export LEANCLOUD_APP_HOST=127.0.0.1 LEANCLOUD_APP_PORT=$(free_port)
  # From the SDK's folder, as its Makefile (test_engine) does: index.php requires src/autoload.php from there.
  (cd "$sdk_dir" && exec php -S "$LEANCLOUD_APP_HOST:$LEANCLOUD_APP_PORT" test/engine/index.php) >"$work/engine.log" 2>&1 &
  pids+=($!)
  sleep 0.5
fi

# --- the suite -------------------------------------------------------------------------------------------
echo "php-sdk-suite: running the SDK suite against $LEANCLOUD_API_SERVER ($store)" >&2
set +e
(cd "$work" && phpunit -c "$work/phpunit.xml" --log-junit "$work/junit.xml" ${FILTER:+--filter "$FILTER"}) >"$work/phpunit.out" 2>&1
set -e
[[ -s "$work/junit.xml" ]] || { tail -40 "$work/phpunit.out" >&2; fail "the suite did not finish"; }

php -r '
  [$_, $file, $commit, $store] = $argv;
  $xml = simplexml_load_file($file);
  $passed = 0; $skipped = 0; $failed = [];
  foreach ($xml->xpath("//testcase") as $case) {
    $name = $case["class"] . "::" . $case["name"];
    $problem = $case->failure ?: $case->error;
    if ($problem) {
      $text = trim((string)$problem);
      $lines = preg_split("/\n/", $text);
      $failed[] = "FAIL $name :: " . substr($lines[1] ?? $lines[0], 0, 200) . " " . substr($lines[0], 0, 120);
    } elseif (isset($case->skipped)) $skipped++;
    else $passed++;
  }
  $total = $passed + count($failed);
  printf("roost %s (%s), %s\n", $commit, $store, gmdate("Y-m-d\\TH:i\\Z"));
  printf("passed %d of %d: %d failed; %d skipped in the SDK (not counted)\n", $passed, $total, count($failed), $skipped);
  foreach ($failed as $line) echo $line, "\n";
  exit($failed ? 1 : 0);
' "$work/junit.xml" "$commit" "$store"
