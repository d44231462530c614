# agent-manager's image: the built service, helm 4 from the npm package, the Generic agent chart.
# Build: npm run image:build   (scripts/image-build.sh; or docker build -t agent-manager:0.1.0 .)
# Needs only the npm registry and node:20-slim; nothing is fetched at run time. Where no registry
# can be pulled from, scripts/image-base.sh makes both bases from Debian's packages and Node.js
# from npm, and passes them as NODE_IMAGE and RUN_IMAGE.
ARG NODE_IMAGE=node:20-slim
ARG RUN_IMAGE=node:20-slim

# ---- build: npm ci (compiles better-sqlite3, extracts helm, generates the Prisma clients), then tsc
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from C source (no prebuilt binary is downloaded); node-gyp takes the
# headers of the image's own Node instead of downloading them.
RUN apt-get update \
  && apt-get install -y --no-install-recommends build-essential python3 \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
# npm 11 runs only the install scripts package.json's "allowScripts" allows (better-sqlite3's build),
# not Prisma's engine download; node:20 ships npm 10.
RUN npm install -g npm@11.19.1 --no-audit --no-fund
WORKDIR /app
# What npm ci and its postinstall (scripts/install-helm.mjs, prisma generate) read.
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts ./scripts
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
# scripts/image-prune.mjs: node_modules keeps only what the bundle (dist/service) loads, and helm 4.
RUN npm run build \
  && node scripts/image-prune.mjs \
  && mkdir -p /data

# ---- run: no compiler, no npm at run time, a user that is not root
FROM ${RUN_IMAGE}
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATABASE_URL=file:/data/agent-manager.db \
    HELM_BIN=/app/node_modules/.cache/agent-manager/helm4/helm \
    HOME=/tmp \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data \
    NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/service ./dist/service
# The migrations the service applies at start, and the charts it installs agents with (major 0,
# kagent.dev/v1alpha2, the default; major 1, kagent.dev/v1alpha3).
COPY --from=build /app/prisma/migrations ./prisma/migrations
COPY charts/agent ./charts/agent
COPY charts/agent-v1 ./charts/agent-v1
COPY bin ./bin
# The SQLite default's folder (a single replica); replicas use PostgreSQL (DATABASE_URL).
COPY --from=build --chown=10001:10001 /data /data
USER 10001:10001
EXPOSE 8080
# --heap-growing-percent keeps the old generation close to what is live (README, "Memory"); node
# refuses it in NODE_OPTIONS, so it is given here.
CMD ["node", "--heap-growing-percent=30", "dist/service/main.mjs"]
