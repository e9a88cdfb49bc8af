/**
 * N real `vcp-hooks serve` processes (from dist/: `npm run build` first) sharing one `vcp.yaml` and
 * one Redis, each on an ephemeral loopback port with its own data directory (`--data-dir`) and replica
 * id (`VCP_REPLICA_ID`). A replica can be `kill -9`ed, stopped and started again; one can be given
 * config overrides (its own config file) to play a misconfigured peer.
 *
 * @example
 * ```ts
 * const set = await startReplicas({ count: 3 });            // A, B, C + a fresh redis-server
 * const [a, b] = set.replicas;
 * await a.request("PUT", "/v1/bundles/demo", { token: set.tokens.operator, body: set.sign(manifest, code) });
 * await b.kill9();
 * await set.close();
 * ```
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { VcpArtifact } from "../../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../../src/tooling.js";
import { startRedisServer, type RedisServerHandle } from "./redis-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SERVE = join(ROOT, "dist/src/cli/serve.js");
const START_TIMEOUT_MS = 90_000;

export interface ReplicaReply {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export interface Replica {
  readonly name: string;
  /** http://127.0.0.1:<port> of the running process (changes at every start). */
  url: string;
  readonly dataDir: string;
  pid(): number | undefined;
  running(): boolean;
  /** Everything the process wrote (JSON log lines on stdout, the banner on stderr), all starts. */
  output(): string;
  request(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<ReplicaReply>;
  /** SIGKILL: no drain, no cleanup (its Redis records expire on their own). */
  kill9(): Promise<void>;
  /** SIGTERM and wait: a graceful stop. */
  stop(): Promise<void>;
  /**
   * Start again (same data directory and replica id), after a stop or kill. Resolves once /readyz
   * answers 200, or with `{ ready: false }` once it serves (a replica expected not to be ready).
   */
  start(options?: { ready?: boolean }): Promise<void>;
}

export interface ReplicaSetOptions {
  count?: number;
  /** Share an existing Redis; default: a fresh one, closed with the set. */
  redis?: RedisServerHandle;
  /** Merged over the shared vcp.yaml (top-level keys replace; `store` is merged). */
  config?: Record<string, unknown>;
  /** Per replica name: top-level keys of its own config file (e.g. another keyring or prefix). */
  perReplica?: Record<string, Record<string, unknown>>;
  /** Replica names; default A, B, C, … */
  names?: string[];
  /** The deployment signing key (key_id `ops`); default: a fresh one. */
  signingKey?: { privateKeyPem: string; publicKeyPem: string };
  /** More bearer tokens, added to the shared `auth:` (stored as SHA-256 hashes, as always). */
  extraAuth?: Array<{ id: string; role: "operator" | "client" | "approver"; token: string; approves?: string[] }>;
}

export interface ReplicaSet {
  redis: RedisServerHandle;
  replicas: Replica[];
  byName(name: string): Replica;
  tokens: { operator: string; client: string; client2: string };
  /** The deployment's signing key, in every replica's keyring as key_id `ops` (max_trust deployment). */
  signingKey: { privateKeyPem: string; publicKeyPem: string; keyId: string };
  /** A `.vcpb` signed with the deployment key (or another). */
  sign(manifest: Record<string, unknown>, code: string, key?: { privateKeyPem: string; keyId: string }): VcpArtifact;
  /** The shared config as written (JSON, valid YAML). */
  config: Record<string, unknown>;
  /** Start one more replica (with optional per-replica overrides) on this Redis; its replica id is its name unless given; `ready: false`: do not wait for /readyz 200. */
  add(name: string, overrides?: Record<string, unknown>, options?: { replicaId?: string; ready?: boolean }): Promise<Replica>;
  close(): Promise<void>;
}

export async function startReplicas(options: ReplicaSetOptions = {}): Promise<ReplicaSet> {
  const ownRedis = options.redis === undefined;
  const redis = options.redis ?? (await startRedisServer());
  const root = mkdtempSync(join(tmpdir(), "vcp-replicas-"));
  const prefix = `t${randomBytes(4).toString("hex")}`;
  const tokens = { operator: `vcp_op_${randomBytes(12).toString("hex")}`, client: `vcp_cl_${randomBytes(12).toString("hex")}`, client2: `vcp_cl_${randomBytes(12).toString("hex")}` };
  const keyPair = options.signingKey ?? generateKeyPair();
  const signingKey = { ...keyPair, keyId: "ops" };
  const hash = (token: string) => createHash("sha256").update(token).digest("hex");
  const base: Record<string, unknown> = {
    listen: { host: "127.0.0.1", port: 0 },
    data_dir: "./data-unused",
    auth: [
      { id: "ops", role: "operator", token_sha256: hash(tokens.operator) },
      { id: "app", role: "client", token_sha256: hash(tokens.client) },
      { id: "app2", role: "client", token_sha256: hash(tokens.client2) },
      ...(options.extraAuth ?? []).map((e) => ({ id: e.id, role: e.role, token_sha256: hash(e.token), ...(e.approves !== undefined ? { approves: e.approves } : {}) })),
    ],
    keyring: { keys: [{ key_id: "ops", public_key: keyPair.publicKeyPem, max_trust: "deployment" }] },
    require_signatures: true,
    pool: { threads: 1 },
    log_level: "info",
    ...options.config,
    store: { kind: "redis", url: redis.url, prefix, heartbeat_ms: 500, reconcile_ms: 2000, command_timeout_ms: 2000, connect_timeout_ms: 5000, max_backoff_ms: 1000, ...(options.config?.store as object | undefined) },
  };
  const sharedConfigPath = join(root, "vcp.yaml");
  writeFileSync(sharedConfigPath, JSON.stringify(base, null, 2));

  const replicas: Replica[] = [];
  const set: ReplicaSet = {
    redis,
    replicas,
    byName(name) {
      const found = replicas.find((r) => r.name === name);
      if (found === undefined) throw new Error(`no replica ${name}`);
      return found;
    },
    tokens,
    signingKey,
    sign: (manifest, code, key = signingKey) => signArtifact(createArtifact(manifest, code) as VcpArtifact, key.privateKeyPem, key.keyId) as VcpArtifact,
    config: base,
    async add(name, overrides, addOptions = {}) {
      let configPath = sharedConfigPath;
      if (overrides !== undefined) {
        const own = { ...base, ...overrides, store: { ...(base.store as object), ...(overrides.store as object | undefined) } };
        configPath = join(root, `vcp-${name}.yaml`);
        writeFileSync(configPath, JSON.stringify(own, null, 2));
      }
      const replica = createReplica(name, configPath, join(root, name), addOptions.replicaId ?? name);
      replicas.push(replica);
      await replica.start({ ready: addOptions.ready ?? true });
      return replica;
    },
    async close() {
      await Promise.all(replicas.map((r) => r.stop().catch(() => r.kill9())));
      if (ownRedis) await redis.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  const names = options.names ?? Array.from({ length: options.count ?? 3 }, (_, i) => String.fromCharCode(65 + i));
  try {
    // One at a time: each start builds a sandbox process; on a busy 2-core machine parallel starts only contend.
    for (const name of names) await set.add(name, options.perReplica?.[name]);
  } catch (err) {
    await set.close();
    throw err;
  }
  return set;
}

function createReplica(name: string, configPath: string, dataDir: string, replicaId: string): Replica {
  mkdirSync(dataDir, { recursive: true });
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = "";

  const replica: Replica = {
    name,
    url: "",
    dataDir,
    pid: () => child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    output: () => output,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token !== undefined) headers.authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        body = typeof requestOptions.body === "string" ? requestOptions.body : JSON.stringify(requestOptions.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(`${replica.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text === "" ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
    async kill9() {
      if (!replica.running()) return;
      child!.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (!replica.running()) return;
      child!.kill("SIGTERM");
      await exited;
    },
    async start(startOptions = {}) {
      if (replica.running()) return;
      const proc = spawn(process.execPath, ["--no-node-snapshot", SERVE, "--config", configPath, "--data-dir", dataDir, "--port", "0"], {
        cwd: dataDir,
        env: { ...process.env, VCP_REPLICA_ID: replicaId, VCP_OPERATOR_TOKEN: "", VCP_CLIENT_TOKEN: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = proc;
      exited = new Promise((resolveExit) => proc.once("exit", () => resolveExit()));
      const startOutput = output.length;
      await new Promise<void>((resolveStart, reject) => {
        const timer = setTimeout(() => reject(new Error(`replica ${name} did not start in ${START_TIMEOUT_MS} ms:\n${output.slice(startOutput)}`)), START_TIMEOUT_MS);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /vcp-hooks serving at (http:\/\/[^\s"]+)/.exec(output.slice(startOutput));
          if (match !== null) {
            clearTimeout(timer);
            replica.url = match[1]!;
            resolveStart();
          }
        };
        proc.stdout!.on("data", onData);
        proc.stderr!.on("data", onData);
        proc.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`replica ${name} exited (${code ?? signal}) before serving:\n${output.slice(startOutput)}`));
        });
      });
      if (startOptions.ready === false) return;
      // Serving: wait until chains can run (the sandbox host is up).
      const deadline = Date.now() + START_TIMEOUT_MS;
      for (;;) {
        const ready = await fetch(`${replica.url}/readyz`).then((r) => r.status === 200, () => false);
        if (ready) break;
        if (Date.now() > deadline) throw new Error(`replica ${name} never became ready:\n${output.slice(startOutput)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
  return replica;
}

/** Poll `check` until it returns a value other than undefined/false (generous ceiling for a busy CI machine). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last !== undefined ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
