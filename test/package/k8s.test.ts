/**
 * deploy/k8s/: every manifest validates against the Kubernetes schemas (offline, kubernetes-models),
 * a broken one is refused, and the manifests agree with each other and with the real config loader:
 * the probes hit /readyz and /healthz on the port the config listens on, every Secret key and
 * ConfigMap a pod needs exists, every file vcp.yaml names is mounted, the selectors match, and the
 * ConfigMap's vcp.yaml is a valid `store: { kind: redis }` config.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, expect, test } from "vitest";
import YAML from "yaml";
import { resolveConfig } from "../../src/config/config.js";
import { storeOptionsFor } from "../../src/server/index.js";
import { checkManifest } from "../support/k8s-schema.js";

const DIR = "deploy/k8s";
type Obj = Record<string, any>;

const files = readdirSync(DIR).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml").sort();
const objects: Array<{ file: string; doc: Obj }> = files.flatMap((file) =>
  YAML.parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
    return { file, doc: d.toJS() as Obj };
  }),
);
const byKind = (kind: string): Obj => {
  const found = objects.filter((o) => o.doc.kind === kind);
  expect(found, `exactly one ${kind}`).toHaveLength(1);
  return found[0]!.doc;
};

describe("deploy/k8s manifests", () => {
  test("every manifest validates against the Kubernetes schema of its kind", async () => {
    expect(objects.map((o) => o.doc.kind).sort()).toEqual(["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"]);
    for (const { file, doc } of objects) expect(await checkManifest(doc), file).toEqual([]);
  });

  test("the check refuses a broken manifest, naming the field", async () => {
    const deployment = structuredClone(byKind("Deployment"));
    deployment.spec.replicas = "three";
    deployment.spec.template.spec.containers[0].ports[0].containerPort = "http";
    const problems = await checkManifest(deployment);
    expect(problems).toEqual([{ object: "Deployment/vcp-hooks", message: expect.stringMatching(/spec\/replicas must be integer/) }]);
    const noContainers = structuredClone(byKind("Deployment"));
    delete noContainers.spec.template.spec.containers;
    expect((await checkManifest(noContainers))[0]?.message).toMatch(/spec\/template\/spec must have required property containers/);
    const hpa = structuredClone(byKind("HorizontalPodAutoscaler"));
    hpa.spec.metrics[0].resource.target.averageUtilization = "70%";
    expect((await checkManifest(hpa))[0]?.message).toMatch(/averageUtilization must be integer/);
    expect(await checkManifest({ apiVersion: "apps/v1", kind: "Deploymnet", metadata: { name: "x" } })).toEqual([{ object: "Deploymnet/x", message: "no schema for kind 'Deploymnet' in apps/v1" }]);
    expect(await checkManifest({ apiVersion: "policy/v9", kind: "PodDisruptionBudget", metadata: { name: "x" } })).toEqual([{ object: "PodDisruptionBudget/x", message: "no schema for apiVersion 'policy/v9'" }]);
  });

  test("kustomization.yaml lists exactly the manifests", () => {
    const kustomization = YAML.parse(readFileSync(join(DIR, "kustomization.yaml"), "utf8")) as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual(files);
  });

  const deployment = byKind("Deployment");
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const configMap = byKind("ConfigMap");
  const secret = byKind("Secret");

  test("probes: readiness on /readyz, liveness and startup on /healthz, on the port vcp.yaml listens on", () => {
    const config = YAML.parse(configMap.data["vcp.yaml"]) as Obj;
    const port = container.ports.find((p: Obj) => p.name === "http");
    expect(port.containerPort).toBe(config.listen.port);
    expect(config.listen.host).toBe("0.0.0.0");
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(container.startupProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
  });

  test("the startupProbe outwaits pool.start_timeout_ms, so a slow start on a busy node is retried, not restarted", () => {
    const tokens = { VCP_OPERATOR_TOKEN: `vcp_op_${"o".repeat(43)}`, VCP_CLIENT_TOKEN: `vcp_cl_${"c".repeat(43)}`, VCP_METRICS_TOKEN: `vcp_mt_${"m".repeat(43)}`, VCP_REDIS_URL: "redis://redis:6379/0" };
    const config = withEnv(tokens, () => resolveConfig(YAML.parse(configMap.data["vcp.yaml"]) as Obj, "/etc/vcp-hooks/config"));
    const probe = container.startupProbe;
    const windowMs = ((probe.initialDelaySeconds ?? 0) + probe.periodSeconds * probe.failureThreshold) * 1000;
    // 30 s for the rest of a start: config, Redis connection, audit log, listen.
    expect(windowMs).toBeGreaterThanOrEqual(config.pool.start_timeout_ms + 30_000);
    // Each probe may take a while to be answered on that busy node.
    expect(probe.timeoutSeconds ?? 1).toBeGreaterThanOrEqual(3);
  });

  test("non-root, read-only root, no privilege escalation, no capabilities, no API token, bounded resources", () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ["ALL"] } });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(byKind("ServiceAccount").automountServiceAccountToken).toBe(false);
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources.limits).toMatchObject({ memory: expect.any(String) });
    // The image is pinned to a version, never :latest.
    expect(container.image).toMatch(/:[0-9][\w.-]*$/);
    // Every writable path is a volume: the data dir and /tmp.
    const mounts = new Map<string, Obj>(container.volumeMounts.map((m: Obj) => [m.mountPath, m]));
    const volumes = new Map<string, Obj>(pod.volumes.map((v: Obj) => [v.name, v]));
    const config = YAML.parse(configMap.data["vcp.yaml"]) as Obj;
    for (const writable of [config.data_dir, "/tmp"]) {
      const mount = mounts.get(writable);
      expect(mount, `${writable} is mounted`).toBeDefined();
      expect(volumes.get(mount!.name)?.emptyDir, `${writable} is an emptyDir`).toBeDefined();
      expect(mount!.readOnly).not.toBe(true);
    }
  });

  test("audit retention keeps a replica's shipped log well inside its data emptyDir (issue 27: a full emptyDir evicts the pod)", () => {
    const raw = YAML.parse(configMap.data["vcp.yaml"] as string) as Obj;
    const data = (pod.volumes as Obj[]).find((v) => v.name === "data")!;
    const gi = /^(\d+)Gi$/.exec(data.emptyDir.sizeLimit as string);
    expect(gi, "data emptyDir sizeLimit in Gi").not.toBeNull();
    const limit = Number(gi![1]) * 2 ** 30;
    // max_bytes counts the live file too; room is left for a sink that falls behind (held segments).
    expect(raw.audit.retention.max_bytes).toBeLessThanOrEqual(limit / 2);
    expect(raw.audit.rotate_bytes).toBeLessThan(raw.audit.retention.max_bytes / 4);
    expect(raw.audit.sink.url).toBeDefined(); // retention deletes only what the sink shipped
  });

  test("the ConfigMap's vcp.yaml is a valid redis-store config; its tokens, keys and files come from the Secret", () => {
    const text = configMap.data["vcp.yaml"] as string;
    const raw = YAML.parse(text) as Obj;
    expect(raw.store).toMatchObject({ kind: "redis", url_env: expect.any(String), prefix: expect.any(String) });
    expect(raw.store.url).toBeUndefined(); // a URL may carry the password: never in the ConfigMap
    // Each token_env and the store's url_env are filled from keys of the Secret.
    const env = new Map<string, Obj>(container.env.map((e: Obj) => [e.name, e]));
    expect(env.get("VCP_REPLICA_ID")?.valueFrom).toEqual({ fieldRef: { fieldPath: "metadata.name" } });
    for (const name of [...(raw.auth as Obj[]).map((entry) => entry.token_env), raw.store.url_env]) {
      const ref = env.get(name)?.valueFrom?.secretKeyRef;
      expect(ref, `${name} comes from the Secret`).toMatchObject({ name: secret.metadata.name });
      expect(Object.keys(secret.stringData)).toContain(ref.key);
    }
    // Each file vcp.yaml names is a key of a mounted Secret or ConfigMap volume.
    const mounted = new Map<string, string>();
    for (const mount of container.volumeMounts as Obj[]) {
      const volume = (pod.volumes as Obj[]).find((v) => v.name === mount.name)!;
      if (volume.secret) {
        expect(volume.secret.secretName).toBe(secret.metadata.name);
        for (const item of volume.secret.items as Obj[]) mounted.set(posix.join(mount.mountPath, item.path), item.key);
      }
      if (volume.configMap) {
        expect(volume.configMap.name).toBe(configMap.metadata.name);
        for (const key of Object.keys(configMap.data)) mounted.set(posix.join(mount.mountPath, key), key);
      }
    }
    for (const file of [raw.runtime_key_file, ...raw.keyring.keys.map((k: Obj) => k.public_key_file)]) {
      expect(mounted.has(file), `${file} is mounted`).toBe(true);
      expect(Object.keys(secret.stringData)).toContain(mounted.get(file));
    }
    expect(container.args).toEqual(["serve", "--config", [...mounted].find(([, key]) => key === "vcp.yaml")![0]]);

    // The real loader accepts it with real-looking tokens…
    const tokens = { VCP_OPERATOR_TOKEN: `vcp_op_${"o".repeat(43)}`, VCP_CLIENT_TOKEN: `vcp_cl_${"c".repeat(43)}`, VCP_METRICS_TOKEN: `vcp_mt_${"m".repeat(43)}`, [raw.store.url_env]: secret.stringData["redis-url"] };
    const config = withEnv(tokens, () => resolveConfig(raw, "/etc/vcp-hooks/config"));
    expect(config.store).toMatchObject({ kind: "redis", prefix: raw.store.prefix });
    // The runtime's store options take the URL from the variable the Secret fills.
    expect(withEnv(tokens, () => storeOptionsFor(config, process.env))).toMatchObject({ kind: "redis", url: secret.stringData["redis-url"], prefix: raw.store.prefix });
    expect(config.auth.map((a) => a.role)).toEqual(["operator", "client", "metrics"]);
    // …and refuses the Secret's placeholders, so nothing starts until they are replaced.
    const placeholders = { VCP_OPERATOR_TOKEN: secret.stringData["operator-token"], VCP_CLIENT_TOKEN: secret.stringData["client-token"], VCP_METRICS_TOKEN: secret.stringData["metrics-token"] };
    expect(() => withEnv(placeholders, () => resolveConfig(raw, "/etc/vcp-hooks/config"))).toThrow(/shorter than 32 characters/);
  });

  test("Service, PodDisruptionBudget and HorizontalPodAutoscaler point at the Deployment's pods", () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    const service = byKind("Service");
    expect(Object.entries(service.spec.selector).every(([k, v]) => labels[k] === v)).toBe(true);
    expect(service.spec.ports[0].targetPort).toBe("http");
    expect(service.spec.sessionAffinity ?? "None").toBe("None"); // any replica serves any session
    const pdb = byKind("PodDisruptionBudget");
    expect(Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => labels[k] === v)).toBe(true);
    const hpa = byKind("HorizontalPodAutoscaler");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: deployment.metadata.name });
    expect(hpa.spec.metrics).toEqual([expect.objectContaining({ type: "Resource", resource: expect.objectContaining({ name: "cpu" }) })]);
    // A CPU utilization target needs a CPU request; the PDB must leave replicas up at the HPA's minimum.
    expect(container.resources.requests.cpu).toBeDefined();
    expect(hpa.spec.minReplicas).toBeGreaterThan(pdb.spec.maxUnavailable);
    expect(deployment.spec.replicas).toBe(hpa.spec.minReplicas);
  });

  test("the NetworkPolicy selects the replicas, lets in only the HTTP port and lets out only DNS, Redis and the collector", () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    const policy = byKind("NetworkPolicy");
    expect(policy.spec.podSelector.matchLabels).toEqual(labels);
    expect([...policy.spec.policyTypes].sort()).toEqual(["Egress", "Ingress"]);
    expect(policy.spec.ingress).toEqual([{ ports: [{ protocol: "TCP", port: "http" }] }]);
    const outPorts = (policy.spec.egress as Array<{ ports: Array<{ port: number }>; to?: unknown }>).flatMap((rule) => rule.ports.map((p) => p.port));
    // The ports the pods really dial: Redis from the Secret's URL, the collector from the sink URL.
    const redisUrl = new URL(byKind("Secret").stringData["redis-url"] as string);
    const vcp = YAML.parse(byKind("ConfigMap").data["vcp.yaml"] as string) as { audit: { sink: { url: string } } };
    expect(outPorts).toEqual(expect.arrayContaining([53, Number(redisUrl.port || 6379), Number(new URL(vcp.audit.sink.url).port)]));
    expect(new Set(outPorts)).toEqual(new Set([53, Number(redisUrl.port || 6379), Number(new URL(vcp.audit.sink.url).port)]));
  });
});

function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
