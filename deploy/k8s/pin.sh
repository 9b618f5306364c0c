#!/usr/bin/env bash
# Pins the image of every manifest here to one build:
#   docker build -f deploy/Dockerfile --build-arg BUILD_ID=$id -t ghcr.io/petal-near/petal:$id .
#   deploy/k8s/pin.sh $id
# sets kustomization.yaml's newTag (kubectl apply -k) and the tag written in
# deployment.yaml and migrate-job.yaml (kubectl apply -f), so the Job
# migrates with the image the replicas serve. A build id is a tag: letters,
# digits, '.', '_' and '-', 1-128 characters.
set -euo pipefail
id="${1:-}"
[[ "$id" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || { echo "usage: $0 BUILD_ID (a valid image tag, e.g. \$(git rev-parse --short HEAD))" >&2; exit 2; }
[ "$id" != latest ] || { echo "$0: pin a build, not latest" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
sed -i -E "s|^(    newTag: )\"[^\"]*\"|\1\"$id\"|" "$here/kustomization.yaml"
sed -i -E "s|(image: ghcr.io/petal-near/petal):[A-Za-z0-9_.-]+|\1:$id|" "$here/deployment.yaml" "$here/migrate-job.yaml"
grep -q "newTag: \"$id\"" "$here/kustomization.yaml" || { echo "$0: kustomization.yaml has no newTag line" >&2; exit 1; }
echo "pinned ghcr.io/petal-near/petal:$id"
