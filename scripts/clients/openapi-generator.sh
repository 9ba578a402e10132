#!/usr/bin/env bash
# openapi-generator-cli, pinned, from Maven Central, for the generated-client tests
# (test/daemons/openapi-go-client.test.ts): downloaded once into .cache/ inside the project (git-ignored)
# and run with the machine's Java (scripts/install-system-deps.sh installs one where none is).
# Maven's own client when there is one (it checks the checksums), else curl with the sha1
# Maven Central publishes beside the jar. Idempotent; one download at a time. Prints the jar's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=7.17.0
DIR=.cache/openapi-generator
JAR="$DIR/openapi-generator-cli-$VERSION.jar"
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [ ! -s "$JAR" ]; then
  command -v java >/dev/null || { echo "scripts/clients/openapi-generator.sh: java is required (scripts/install-system-deps.sh)" >&2; exit 1; }
  if command -v mvn >/dev/null; then
    mvn -q dependency:copy "-Dartifact=org.openapitools:openapi-generator-cli:$VERSION" "-DoutputDirectory=$DIR" >&2
  else
    URL="https://repo1.maven.org/maven2/org/openapitools/openapi-generator-cli/$VERSION/openapi-generator-cli-$VERSION.jar"
    curl -fsSL -o "$JAR.part" "$URL"
    echo "$(curl -fsSL "$URL.sha1")  $JAR.part" | sha1sum -c --quiet - >&2
    mv "$JAR.part" "$JAR"
  fi
fi
echo "$PWD/$JAR"
