#!/usr/bin/env bash
# Cross-language check of LeanCloud's push connection (docs/push-connection.md): Debian's protoc
# generates Java from Roost's messages.proto, and a Java 17 program logs in as the Android SDK does
# (loginMessage.systemInfo), parses what Roost sends with the generated classes, and acknowledges.
# Starts its own Roost on a throw-away SQLite file. Installs Debian's JDK 17, protobuf-compiler and
# libprotobuf-java when missing. About 8 s once installed; CI runs it (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null || ! command -v javac >/dev/null || [ ! -f /usr/share/java/protobuf.jar ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless protobuf-compiler libprotobuf-java >/dev/null
fi
work="$(mktemp -d)"
roost_pid=""
cleanup() {
  [ -n "$roost_pid" ] && kill "$roost_pid" 2>/dev/null && wait "$roost_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/java" "$work/classes" "$work/data"
protoc --proto_path=src/push/connection --java_out="$work/java" src/push/connection/messages.proto
javac -nowarn -cp /usr/share/java/protobuf.jar -d "$work/classes" $(find "$work/java" -name '*.java') scripts/java-push-check/PushCheck.java

env -u DATABASE_URL DATA_DIR="$work/data" HOST=127.0.0.1 PORT=0 LOG_LEVEL=info node --import tsx src/main.ts >"$work/roost.log" 2>&1 &
roost_pid=$!
for _ in $(seq 1 100); do
  grep -q '"roost is listening"' "$work/roost.log" 2>/dev/null && break
  sleep 0.2
done
url="$(grep -o '"url":"[^"]*"' "$work/roost.log" | head -1 | cut -d'"' -f4)"
app_id="$(awk '/appId:/ {print $2; exit}' "$work/data/default-app-keys.txt" 2>/dev/null)"
app_key="$(awk '/appKey:/ {print $2; exit}' "$work/data/default-app-keys.txt" 2>/dev/null)"
master_key="$(awk '/masterKey:/ {print $2; exit}' "$work/data/default-app-keys.txt" 2>/dev/null)"
[ -n "$url" ] && [ -n "$app_id" ] || { cat "$work/roost.log"; echo "roost did not start" >&2; exit 1; }

installation="java-check-$$"
curl -sf -X POST "$url/1.1/installations" -H "X-LC-Id: $app_id" -H "X-LC-Key: $app_key" -H 'Content-Type: application/json' \
  -d "{\"installationId\":\"$installation\",\"deviceType\":\"android\",\"channels\":[\"java\"]}" >/dev/null
java -cp "/usr/share/java/protobuf.jar:$work/classes" PushCheck "$url" "$app_id" "$master_key" "$installation"
