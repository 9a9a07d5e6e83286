#!/usr/bin/env bash
# Runs the LeanCloud Python SDK's own test suite (leancloud/python-sdk, nose tests under tests/) against a fresh
# Roost, and prints pass/fail counts and the failing tests' names. Not part of `npm test` or CI: it needs
# Debian's python3 with the SDK's dependencies as Debian packages (no pip index is needed):
#   apt-get install python3-nose python3-requests python3-requests-toolbelt python3-arrow python3-dateutil \
#     python3-iso8601 python3-six python3-gevent python3-werkzeug python3-wsgi-intercept python3-flask
#
#   scripts/python-sdk-suite.sh [SDK_DIR]
#
# SDK_DIR (argument or env, default /tmp/pysdk): a copy of the SDK. When it has no setup.py it is created from
#   SDK_GIT at SDK_REF. Its tests/ is copied into the work folder and run from there; the SDK copy is left as it is.
# SDK_GIT   a git directory or URL of leancloud/python-sdk (default: the mirror under /work/.mirror when present,
#           else https://github.com/leancloud/python-sdk.git).
# SDK_REF   the SDK commit (default 9ed38c8, v3.0.2).
# PYTHON    the interpreter (default /usr/bin/python3, the one the Debian packages are installed for).
# ROOST_REF which Roost to run: a commit (default HEAD, built from `git archive`) or `worktree` (the
#           checkout's files as they are, untracked ones included).
# DATABASE_URL  postgres://… runs Roost on PostgreSQL (use a fresh database); unset: SQLite in a fresh data folder.
# TESTS     nose test names to run part of the suite (default: tests, the whole of it), e.g. tests/test_query.py.
# KEEP=1    keep the work folder (roost.log, nose.out, nosetests.xml) and print its path.
#
# What differs from the SDK's own run, outside the assertions:
#   1. Debian has no `secure_cookie` (the SDK's cookie session middleware imports it): a minimal stand-in
#      (HMAC-signed JSON with the same SecureCookie(data, secret).serialize() / unserialize(raw, secret)) is put on
#      PYTHONPATH from the work folder;
#   2. the image the file tests download (i1.wp.com/leancloud.cn/images/static/default-avatar.png) is served from
#      the work folder by python3 -m http.server, and the copied tests name that address instead;
#   3. the hosted test app's standing objects are created first (below, "standing data").
# The SDK reads its server from LEANCLOUD_API_SERVER and its keys from APP_ID, APP_KEY and MASTER_KEY.
#
# Output: progress on stderr, then on stdout the commit, store, "passed N of M" and one line per failing test
# ("FAIL module.test :: first line of the error"). Exit status 0 when every test passes, 1 when some fail, 2 when
# the run could not start.
set -euo pipefail

roost_dir=$(cd "$(dirname "$0")/.." && pwd)
sdk_dir=${1:-${SDK_DIR:-/tmp/pysdk}}
sdk_ref=${SDK_REF:-9ed38c8}
python=${PYTHON:-/usr/bin/python3}
"$python" -c 'import nose, requests, requests_toolbelt, arrow, iso8601, six, gevent, werkzeug' 2>/dev/null ||
  { echo "python-sdk-suite: $python lacks the SDK's dependencies (see the apt-get line at the top)" >&2; exit 2; }

# shellcheck source=suite-common.sh
source "$roost_dir/scripts/suite-common.sh"
begin_suite python-sdk-suite python-sdk

# --- the SDK ---------------------------------------------------------------------------------------------
prepare_sdk python-sdk-suite setup.py
cp -r "$sdk_dir/tests" "$work/tests"

mkdir -p "$work/pylib/secure_cookie" "$work/static"
touch "$work/pylib/secure_cookie/__init__.py"
cat >"$work/pylib/secure_cookie/cookie.py" <<'EOF'
# Stand-in for secure_cookie.cookie (not packaged by Debian): what leancloud.engine.cookie_session uses.
import base64, hashlib, hmac, json


class SecureCookie(dict):
    def __init__(self, data=None, secret_key=None):
        dict.__init__(self, data or {})
        self.secret_key = secret_key

    def serialize(self):
        body = base64.urlsafe_b64encode(json.dumps(dict(self)).encode())
        mac = hmac.new(self.secret_key, body, hashlib.sha256).hexdigest().encode()
        return (mac + b"?" + body).decode()

    @classmethod
    def unserialize(cls, raw, secret_key):
        raw = raw.encode() if isinstance(raw, str) else raw
        mac, _, body = raw.partition(b"?")
        if not hmac.compare_digest(mac, hmac.new(secret_key, body, hashlib.sha256).hexdigest().encode()):
            return cls({}, secret_key)
        return cls(json.loads(base64.urlsafe_b64decode(body)), secret_key)
EOF
# A 1x1 PNG stands in for the avatar: the tests only store and read it back.
"$python" -c '
import struct, sys, zlib
def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)) \
  + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00\x00")) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)' "$work/static/default-avatar.png"
static_port=$(free_port)
(cd "$work/static" && exec "$python" -m http.server --bind 127.0.0.1 "$static_port") >"$work/static.log" 2>&1 &
pids+=($!)
grep -rl 'i1.wp.com/leancloud.cn/images/static' "$work/tests" | xargs sed -i \
  "s#http://i1.wp.com/leancloud.cn/images/static/#http://127.0.0.1:$static_port/#g"

# --- Roost -----------------------------------------------------------------------------------------------
start_roost python-sdk-suite
export APP_ID=$app_id APP_KEY=$app_key MASTER_KEY=$master_key LEANCLOUD_API_SERVER="http://127.0.0.1:$port"

# --- the hosted test app's standing data ----------------------------------------------------------------
# tests/test_query.py creates its 50 A (age 0..9, five times) and 50 B (work_year likewise) in the teardown of
# test_matches_key_in_query, so the first of the two tests reads what the hosted test app already held: the same
# objects are created here, in one batch.
batch=$(node -e '
  const requests = [];
  for (let i = 0; i < 5; i++) for (let k = 0; k < 10; k++)
    requests.push({ method: "POST", path: "/1.1/classes/A", body: { age: k } },
      { method: "POST", path: "/1.1/classes/B", body: { work_year: k } });
  console.log(JSON.stringify({ requests }));')
curl -sS -X POST "$LEANCLOUD_API_SERVER/1.1/batch" -H 'Content-Type: application/json' \
  -H "X-LC-Id: $app_id" -H "X-LC-Key: $master_key,master" -d "$batch" | grep -qv '"error"' || fail "seeding A and B failed"
# tests/test_push.py sends a push with the app key, as the hosted test app allowed clients to (README "Settings").
curl -sS -X PUT "$LEANCLOUD_API_SERVER/1.1/settings" -H 'Content-Type: application/json' \
  -H "X-LC-Id: $app_id" -H "X-LC-Key: $master_key,master" -d '{"clientPushAllowed":true}' | grep -qv '"error"' ||
  fail "setting clientPushAllowed failed"
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$static_port/" && break; sleep 0.1; done

# --- the suite -------------------------------------------------------------------------------------------
echo "python-sdk-suite: running the SDK suite against $LEANCLOUD_API_SERVER ($store)" >&2
set +e
# shellcheck disable=SC2086
(cd "$work" && PYTHONPATH="$sdk_dir:$work/pylib" "$python" -m nose --with-xunit --xunit-file="$work/nosetests.xml" \
  -v ${TESTS:-tests}) >"$work/nose.out" 2>&1
set -e
[[ -s "$work/nosetests.xml" ]] || { tail -40 "$work/nose.out" >&2; fail "the suite did not finish"; }

"$python" - "$work/nosetests.xml" "$commit" "$store" <<'EOF'
import sys, time, xml.etree.ElementTree as ET
file, commit, store = sys.argv[1:]
passed, skipped, failed = 0, 0, []
for case in ET.parse(file).getroot().iter("testcase"):
    name = case.get("classname") + "." + case.get("name")
    problem = case.find("failure")
    if problem is None:
        problem = case.find("error")
    if problem is not None:
        message = (problem.get("message") or "").strip().split("\n")[0][:200]
        failed.append("FAIL %s :: %s %s" % (name, problem.get("type", ""), message))
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print("roost %s (%s), %s" % (commit, store, time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())))
print("passed %d of %d: %d failed; %d skipped in the SDK (not counted)" % (passed, passed + len(failed), len(failed), skipped))
for line in failed:
    print(line)
sys.exit(1 if failed else 0)
EOF
