#!/usr/bin/env bash
# Resolves Apache Cassandra 5.0 (org.apache.cassandra:cassandra-all and its runtime
# dependencies) from Maven Central with Maven, and caches the jars on this machine by version;
# then compiles boxbench's launcher (cassandra/BoxbenchCassandra.java, dbms/cassandra/cassandra.go) against
# them with Debian's JDK:
#
#   /var/cache/boxbench/cassandra/<version>/lib/*.jar, SHA256SUMS
#   /var/cache/boxbench/cassandra/<version>/launcher/BoxbenchCassandra.class, SOURCE.sha256
#   /var/cache/boxbench/cassandra/<version>/observer/boxbench-observer.jar, SOURCE.sha256
#
# Debian has no Cassandra. The version is pinned (scripts/cassandra/pom.xml's
# cassandra.version, overridable with CASSANDRA_VERSION); the dependencies' versions are the ones
# cassandra-all's own pom pins. Maven checks each download against Central's checksum and fails
# on a mismatch (-C); SHA256SUMS records what was cached, and a cached directory is reused only
# when every jar still matches it. Runs on Java 17 (Cassandra 4.1 does not). Prints the lib
# directory on its last line. Run as root; no argument.
# Needs Debian's maven and openjdk-17-jdk-headless (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")"

CASSANDRA_VERSION=${CASSANDRA_VERSION:-5.0.5}
case "$CASSANDRA_VERSION" in
  5.0.[0-9]*) ;;
  *) echo "cassandra: CASSANDRA_VERSION=$CASSANDRA_VERSION is not a 5.0.x release" >&2; exit 2 ;;
esac
ROOT=${BOXBENCH_CASSANDRA_CACHE:-/var/cache/boxbench/cassandra}
DIR=$ROOT/$CASSANDRA_VERSION

built() {
  [ -f "$DIR/SHA256SUMS" ] && [ -f "$DIR/lib/cassandra-all-$CASSANDRA_VERSION.jar" ] &&
    (cd "$DIR/lib" && sha256sum --quiet --strict -c ../SHA256SUMS) >/dev/null 2>&1
}

mkdir -p "$ROOT"
if ! built; then
  exec 9>"$ROOT/.lock"
  flock 9
  if ! built; then
    echo "cassandra: resolving cassandra-all $CASSANDRA_VERSION and its dependencies with Maven" >&2
    tmp=$(mktemp -d "$ROOT/.build-XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    start=$(date +%s)
    # A private local repository: nothing of another Maven user's cache decides what is cached.
    mvn -B -q -C -f cassandra/pom.xml -Dcassandra.version="$CASSANDRA_VERSION" \
      -Dmaven.repo.local="$tmp/repo" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp/lib" >&2
    rm -rf "$tmp/repo"
    (cd "$tmp/lib" && sha256sum -- *.jar) >"$tmp/SHA256SUMS"
    echo "$(( $(date +%s) - start ))" >"$tmp/resolve-seconds"
    rm -rf "$DIR"
    mv "$tmp" "$DIR"
    chmod -R a+rX "$DIR"
    trap - EXIT
    echo "cassandra: $(ls "$DIR/lib" | wc -l) jars in $(cat "$DIR/resolve-seconds") s into $DIR" >&2
  fi
  exec 9>&-
fi

# The launcher: recompiled when its source changed (the hash of the source is kept beside it).
src=$PWD/cassandra/BoxbenchCassandra.java
want=$(sha256sum <"$src" | cut -d' ' -f1)
if [ "$(cat "$DIR/launcher/SOURCE.sha256" 2>/dev/null)" != "$want" ] || [ ! -f "$DIR/launcher/BoxbenchCassandra.class" ]; then
  exec 9>"$ROOT/.lock"
  flock 9
  tmp=$(mktemp -d "$DIR/.launcher-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  javac -nowarn -d "$tmp" -cp "$DIR/lib/*" "$src" >&2
  echo "$want" >"$tmp/SOURCE.sha256"
  chmod -R a+rX "$tmp"
  rm -rf "$DIR/launcher"
  mv "$tmp" "$DIR/launcher"
  trap - EXIT
  exec 9>&-
  echo "cassandra: launcher compiled into $DIR/launcher" >&2
fi
# The observer (cassandra/BoxbenchObserver.java, dbms/cassandra/observer.go): a Java agent that writes
# the JVM's and the node's own counters when a run asks; its own jar, recompiled the same way.
src=$PWD/cassandra/BoxbenchObserver.java
want=$(sha256sum <"$src" | cut -d' ' -f1)
if [ "$(cat "$DIR/observer/SOURCE.sha256" 2>/dev/null)" != "$want" ] || [ ! -f "$DIR/observer/boxbench-observer.jar" ]; then
  exec 9>"$ROOT/.lock"
  flock 9
  tmp=$(mktemp -d "$DIR/.observer-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  javac -nowarn -d "$tmp/classes" "$src" >&2
  printf 'Premain-Class: BoxbenchObserver\n' >"$tmp/manifest"
  # A fixed timestamp: the same source gives the same jar (its sha256 is in the image recipe).
  jar --create --date=2026-01-01T00:00:00Z --file "$tmp/boxbench-observer.jar" --manifest "$tmp/manifest" -C "$tmp/classes" . >&2
  rm -rf "$tmp/classes" "$tmp/manifest"
  echo "$want" >"$tmp/SOURCE.sha256"
  chmod -R a+rX "$tmp"
  rm -rf "$DIR/observer"
  mv "$tmp" "$DIR/observer"
  trap - EXIT
  exec 9>&-
  echo "cassandra: observer compiled into $DIR/observer" >&2
fi
echo "$DIR/lib"
