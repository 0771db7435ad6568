# syntax=docker/dockerfile:1
#
# The Fargate pool task (functions/pool/main.ts) for linux/arm64 (Graviton). From the repo root:
#   docker buildx build --platform linux/arm64 -f infra/pool.Dockerfile -t skyforge-pool .
# The task definition must ask for the same architecture (runtimePlatform.cpuArchitecture = ARM64).

# ---- build: bundle the pool into one ESM file ----------------------------------------------------
# The bundle is plain JavaScript (no native addons), so this stage runs on the builder's own
# architecture: no emulation for npm ci and esbuild on an x86 CI runner.
FROM --platform=$BUILDPLATFORM node:24-slim AS build
WORKDIR /app
# Manifests first: the npm ci layer stays cached until the dependencies change.
# Full install (esbuild is a devDependency); the lock file pins every version.
COPY package.json package-lock.json ./
RUN npm ci
# Only what the bundle reads: its inputs are all under app/, lib/ and functions/.
COPY tsconfig.json ./
COPY app ./app
COPY lib ./lib
COPY functions ./functions
# The banner gives the ESM bundle a real `require`: bundled CommonJS dependencies (the AWS SDK,
# among others) call require("node:https") and the like, which esbuild's ESM shim refuses at run
# time ("Dynamic require of ... is not supported").
RUN node_modules/.bin/esbuild functions/pool/main.ts \
      --bundle --platform=node --format=esm --target=node24 \
      --banner:js="import { createRequire } from 'module'; const require = createRequire(import.meta.url);" \
      --outfile=dist/pool.mjs

# ---- runtime ---------------------------------------------------------------------------------------
FROM --platform=linux/arm64 node:24-slim AS runtime
# python3 runs the demo py-digest child (`python3 children/digest.py`, app/pool-kinds.ts); the
# pool spawns it from PATH. Drop this if no Python kind is served.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Owned by root: the children, each a user of its own, cannot rewrite their code or the pool's.
# Child argv paths (children/…) resolve against the working directory, /app.
COPY --from=build /app/dist/pool.mjs ./dist/pool.mjs
COPY children ./children
ENV NODE_ENV=production
# The pool runs as root so that it can start each child as a user of its own (a numeric uid with
# no capabilities and no new privileges: lib/pool/child-users.ts). A child then can't read the
# pool's environment (the task role's credentials endpoint) or another child's memory. The task
# definition drops every capability but the five that takes (lib/deploy-plan/pool-capabilities.ts).
USER root
# ECS sends SIGTERM on stop, then SIGKILL after the task's stopTimeout (30 s by default, 120 s at
# most). The pool drains its running jobs for SKYFORGE_POOL_DRAIN_SECONDS (25 by default) after
# SIGTERM: keep that under stopTimeout, or the drain is cut short by the SIGKILL.
# node runs as PID 1 and handles SIGTERM itself (functions/pool/main.ts); it reaps its own children
# but not orphaned grandchildren, so if a child program forks, set initProcessEnabled in the task
# definition (an init process as PID 1).
STOPSIGNAL SIGTERM
CMD ["node", "dist/pool.mjs"]
