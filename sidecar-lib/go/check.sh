#!/bin/sh
# The Go reader's checks, Maven-free: formatting, vet, tests (incl. every test vector case).
set -eu
cd "$(dirname "$0")"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt needed: $unformatted" >&2
  exit 1
fi
go vet ./...
go test ./...
