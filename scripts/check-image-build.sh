#!/usr/bin/env bash
# The image's build stage compiles only what the Dockerfile copies (.dockerignore leaves out test/,
# bench/, …): compile exactly that, without Docker, so a source file that reaches outside it
# (an integration test importing test/support) fails here instead of in `docker build`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
context="$(mktemp -d /tmp/agent-manager-image-XXXXXX)"
trap 'rm -rf "$context"' EXIT
# The Dockerfile's COPY lines of the build stage, before `npm run build`.
for path in package.json package-lock.json prisma.config.ts scripts prisma tsconfig.json tsconfig.build.json nest-cli.json apps libs; do
  cp -r "$path" "$context/"
done
# What npm ci leaves there: the dependencies and the generated Prisma clients.
ln -s "$PWD/node_modules" "$context/node_modules"
rm -rf "$context/libs/store/src/generated"
cp -r libs/store/src/generated "$context/libs/store/src/generated"
cd "$context"
node_modules/.bin/tsc -p tsconfig.build.json --noEmit
echo "image build context: compiles"
