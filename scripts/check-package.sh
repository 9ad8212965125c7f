#!/usr/bin/env bash
# Checks what `cargo package` would publish: only the sources, Cargo files, README, the licence
# files, JSON Schemas and the just module (Cargo.toml's `include`); no tests, benchmark results or scratch.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

list=$(cargo package --list --allow-dirty --locked)
allowed='^(\.cargo_vcs_info\.json|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|README\.md|LICENSE-MIT|LICENSE-APACHE|agents\.just|schema/[a-z-]+\.schema\.json|src/[a-z_/]+\.rs)$'
unexpected=$(grep -Ev "$allowed" <<<"$list" || true)
if [[ -n "$unexpected" ]]; then
    printf 'files that should not be published:\n%s\n' "$unexpected" >&2
    exit 1
fi
for needed in Cargo.toml Cargo.lock README.md LICENSE-MIT LICENSE-APACHE src/main.rs src/lib.rs schema/record.schema.json agents.just; do
    grep -qx "$needed" <<<"$list" || { echo "the package lacks $needed" >&2; exit 1; }
done
echo "cargo package: $(wc -l <<<"$list") files, all expected"
