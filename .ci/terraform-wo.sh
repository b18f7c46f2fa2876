#!/usr/bin/env bash
# Builds terraform 1.11.4 into DIR (default .ci/tmp/terraform-1.11) from the
# Go module proxy, for the provider's write-only test
# (TestAccWriteOnlyProperties): write-only attributes need Terraform 1.11, and
# the CLI on PATH may be older.
#
# `go install github.com/hashicorp/terraform@v1.11.4` does not work: its
# go.mod replaces eight remote-state backends (s3, azurerm, gcs, ...) with
# nested modules the module zip does not contain, and declares
# `godebug tlskyber=0`, which newer Go refuses. So the module is copied, those
# backends are left out of internal/backend/init (the tests use the local
# backend) and the godebug line dropped. Took 11 minutes on two busy cores
# (3 minutes of CPU), with the module cache already holding most modules.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-.ci/tmp/terraform-1.11}")
version=v1.11.4
if [ -x "$dir/terraform" ] && [[ $(CHECKPOINT_DISABLE=1 "$dir/terraform" version 2>/dev/null || true) == "Terraform $version"$'\n'* ]]; then
  exit 0
fi
mod=$(GOFLAGS=-mod=mod go mod download -json "github.com/hashicorp/terraform@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
src=$(mktemp -d)
trap 'chmod -R u+w "$src"; rm -rf "$src"' EXIT
cp -r "$mod/." "$src"
chmod -R u+w "$src"
cd "$src"
sed -i '/^godebug tlskyber=0$/d' go.mod
for b in azure consul cos gcs kubernetes oss pg s3; do
  m=github.com/hashicorp/terraform/internal/backend/remote-state/$b
  go mod edit -dropreplace="$m" -droprequire="$m"
  sed -i "\#\"$m\"#d" internal/backend/init/init.go
done
go mod edit -dropreplace=github.com/hashicorp/terraform/internal/legacy -droprequire=github.com/hashicorp/terraform/internal/legacy
sed -i -E '/^[[:space:]]+"(azurerm|consul|cos|gcs|kubernetes|oss|pg|s3)":/d' internal/backend/init/init.go
mkdir -p "$dir"
GOWORK=off GOFLAGS=-mod=mod GOBIN="$dir" go install -trimpath -ldflags "-X github.com/hashicorp/terraform/version.dev=no" .
CHECKPOINT_DISABLE=1 "$dir/terraform" version
