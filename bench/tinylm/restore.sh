#!/usr/bin/env bash
# Restores a tiny-LM warm start that is no longer tracked (docs/experiments/removed.md says why), byte
# for byte from the commit that added it, and checks its SHA-256 before putting it in place.
#   bash bench/tinylm/restore.sh warm-start-30min [out-dir]      (default out-dir: bench/tinylm)
#   bash bench/tinylm/restore.sh --list
# A shallow clone lacks those commits; rebuild from scratch instead (the commands are in removed.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -A COMMIT=(
  [warm-start-30min]=9453aac9cfb0a4283ec0d642925c7acbda6f8383
  [warm-start-d64x4]=605a0fca48098748152d08838697f2189da7b4e1
)
declare -A SHA256=(
  [warm-start-30min]=4feaee97fcca649c60f1bb9b2afe13444ea3d16baba6f936efc74f2f0bed8667
  [warm-start-d64x4]=c3bd82f1aa0979b356daeae4e9019739f5aa32bc8d5c7155c8f9cf5986c031bf
)
if [ "${1:-}" = "--list" ]; then
  for name in "${!COMMIT[@]}"; do echo "$name ${COMMIT[$name]} ${SHA256[$name]}"; done | sort
  exit 0
fi
name="${1:-}"
name="${name%.gguf}"
if [ -z "$name" ] || [ -z "${COMMIT[$name]:-}" ]; then
  echo "usage: bash bench/tinylm/restore.sh <$(printf '%s\n' "${!COMMIT[@]}" | sort | paste -sd'|')> [out-dir]" >&2
  exit 2
fi
out="${2:-bench/tinylm}"
mkdir -p "$out"
tmp="$(mktemp "$out/.$name.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
if ! git cat-file -e "${COMMIT[$name]}:bench/tinylm/$name.gguf" 2>/dev/null; then
  echo "restore.sh: commit ${COMMIT[$name]} is not in this clone (shallow?); git fetch --unshallow, or rebuild $name (docs/experiments/removed.md)" >&2
  exit 1
fi
git show "${COMMIT[$name]}:bench/tinylm/$name.gguf" >"$tmp"
got="$(sha256sum "$tmp" | cut -d' ' -f1)"
if [ "$got" != "${SHA256[$name]}" ]; then
  echo "restore.sh: $name from ${COMMIT[$name]} has SHA-256 $got, expected ${SHA256[$name]}" >&2
  exit 1
fi
mv "$tmp" "$out/$name.gguf"
trap - EXIT
echo "$out/$name.gguf"
