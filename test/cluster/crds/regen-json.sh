#!/usr/bin/env bash
# Regenerate crds/json/*.json (used by up.sh when no kubectl is available) from crds/*.yaml.
# Needs python3 with PyYAML. Run after editing a CRD YAML file.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p json
for f in *.yaml; do
  python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1])), indent=2))' "$f" >"json/${f%.yaml}.json"
  echo "json/${f%.yaml}.json"
done
