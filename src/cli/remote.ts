/**
 * Commands that talk to a running server over its HTTP API (DESIGN §6.2), as an operator:
 * `vcp-hooks push <file.vcpb>` uploads a bundle, `vcp-hooks status` summarizes GET /v1/status.
 * The server is `--server` or VCP_SERVER (default http://127.0.0.1:8787); the operator token is
 * `--token` or VCP_OPERATOR_TOKEN. A server's error is printed verbatim (code and message).
 */
import { DEFAULTS, messageWithCauses, readArtifactFile } from "../index.js";
import { CheckFailed, escapeControl, EXIT_FAILED, EXIT_OK, parseCommand, printJson, stringOption, UsageError, type Command, type Io } from "./common.js";

const DEFAULT_SERVER = `http://${DEFAULTS.listen.host}:${DEFAULTS.listen.port}`;
const REQUEST_TIMEOUT_MS = 60_000;

export interface Target {
  server: string;
  token: string;
}

export function targetOf(command: string, values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Target {
  const server = (stringOption(command, values, "server") ?? env["VCP_SERVER"] ?? DEFAULT_SERVER).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`${command}: --server '${server}' is not a URL (e.g. http://127.0.0.1:8787)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${command}: --server must be an http(s) URL, not '${server}'`);
  const token = stringOption(command, values, "token") ?? env["VCP_OPERATOR_TOKEN"];
  if (!token) throw new UsageError(`${command}: no operator token: pass --token or set VCP_OPERATOR_TOKEN`);
  return { server, token };
}

/** One request; a non-2xx answer becomes a CheckFailed carrying the server's own code and message. */
export async function request(target: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${target.server}${path}`, {
      method,
      headers: { authorization: `Bearer ${target.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    // undici's own message is "fetch failed"; the reason is in its cause (connect ECONNREFUSED …, getaddrinfo ENOTFOUND …).
    throw new CheckFailed(`cannot reach ${target.server} (${messageWithCauses(err)})`, "UNREACHABLE");
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text for the message
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new CheckFailed(`${method} ${path}: ${response.status} ${error?.code ?? ""}${error?.message ? `: ${error.message}` : typeof parsed === "string" ? `: ${parsed.slice(0, 300)}` : ""}`.trim(), error?.code ?? `HTTP_${response.status}`);
  }
  return parsed;
}

export const CONNECTION_OPTIONS = { server: { type: "string" }, token: { type: "string" } } as const;

const PUSH_USAGE = `usage: vcp-hooks push <file.vcpb> [--server URL] [--token T] [--json]

Uploads a signed bundle to a running server (PUT /v1/bundles/<name>) and prints what it installed.
With a shared store (store.kind redis) it also prints which replicas accepted the revision, which
refused it (each with its code: e.g. SIGNATURE_INVALID when its keyring does not trust the signer;
such a replica is not ready until it runs the active revision) and which had not answered within
the server's store.upload_wait_ms.
--server defaults to VCP_SERVER or ${DEFAULT_SERVER}; --token to VCP_OPERATOR_TOKEN.
Exit 1 with the server's error code and message when it refuses the bundle, and exit 1 (after
printing what was installed) when a replica refused it.`;

export const pushCommand: Command = {
  name: "push",
  summary: "upload a .vcpb to a running server (PUT /v1/bundles/<name>)",
  usage: PUSH_USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("push", args, CONNECTION_OPTIONS, { min: 1, max: 1, names: "the .vcpb file" });
    if (help) {
      io.out(PUSH_USAGE);
      return EXIT_OK;
    }
    const target = targetOf("push", values);
    const artifact = await readArtifactFile(positionals[0]!);
    const name = artifact.manifest["bundle"];
    if (typeof name !== "string") throw new CheckFailed(`${positionals[0]}: the artifact has no manifest.bundle`, "INVALID_BUNDLE");
    const info = (await request(target, "PUT", `/v1/bundles/${encodeURIComponent(name)}`, artifact)) as Record<string, unknown>;
    const replicas = info["replicas"] as { accepted: string[]; refused: Array<{ replica: string; code: string; message: string }>; pending: string[] } | undefined;
    if (io.json) printJson(io, info);
    else {
      io.out(`${info["unchanged"] === true ? "already installed (nothing changed):" : "installed"} ${String(info["bundle"])}@${String(info["version"])} on ${target.server} (digest ${String(info["digest"]).slice(0, 16)}…, trust ${String(info["trust"])}, signed by ${String(info["signed_by"] ?? "nobody")})`);
      if (replicas !== undefined) {
        io.out(`  replicas: accepted ${replicas.accepted.join(", ") || "none"}${replicas.pending.length > 0 ? `; no answer yet from ${replicas.pending.join(", ")}` : ""}`);
        for (const r of replicas.refused) io.out(`  REFUSED by replica ${r.replica} (${r.code}): ${r.message} — it is not ready until it runs this revision`);
      }
    }
    return replicas !== undefined && replicas.refused.length > 0 ? EXIT_FAILED : EXIT_OK;
  },
};

const STATUS_USAGE = `usage: vcp-hooks status [--server URL] [--token T] [--json]

A running server's state (GET /v1/status): bundles, exec hooks first (they run outside the sandbox),
sandbox (restarts, quarantined and slow bundles, queue), audit head and lag; with a shared store
(store.kind redis) every replica's bundle revision and refusals, and start-up warnings. --json prints
the whole document.`;

function renderStatus(io: Io, status: Record<string, any>): void {
  const server = status["server"] ?? {};
  const sandbox = status["sandbox"] ?? {};
  const audit = status["audit"] ?? {};
  io.out(`server ${server.version ?? "?"}, up ${server.uptime_s ?? "?"} s${server.closing ? ", draining" : ""}, config ${server.config ?? "?"}`);
  const bundles: Array<Record<string, any>> = status["bundles"] ?? [];
  io.out(`bundles (${bundles.length}):`);
  for (const b of bundles) io.out(`  ${b.bundle}@${b.version}  trust ${b.trust}  signed by ${b.signed_by ?? "nobody"}  ${String(b.digest).slice(0, 16)}…`);
  // PROFILES §6: exec hooks first — they run scripts outside the sandbox, with the server's user.
  const hooks: Array<Record<string, any>> = status["hooks"] ?? [];
  const exec = hooks.filter((h) => h.sandboxed === false);
  if (exec.length > 0) {
    io.out(`exec hooks (${exec.length}, NOT sandboxed):`);
    for (const h of exec) {
      io.out(`  ${h.bundle}/${h.hook}  ${h.profile ?? ""} ${h.event ?? h.type}  ${h.exec?.shell ? "sh -c " : ""}${h.exec?.command ?? "?"}  sha256 ${String(h.exec?.sha256 ?? "").slice(0, 16)}…  calls ${h.calls ?? 0}, errors ${h.errors ?? 0}, timeouts ${h.timeouts ?? 0}`);
    }
  }
  io.out(`hooks: ${hooks.length - exec.length} sandboxed${exec.length > 0 ? `, ${exec.length} exec` : ""}`);
  io.out(`sandbox: restarts ${sandbox.restarts ?? 0}, in flight ${sandbox.inFlight ?? 0}, queued ${sandbox.queued ?? 0}, quarantined ${(sandbox.quarantined ?? []).length}, slow ${(sandbox.slowBundles ?? []).length}, watchdog kills ${sandbox.watchdogKills ?? 0}`);
  io.out(audit.enabled ? `audit: head seq ${audit.head?.seq ?? "–"}, pending ${audit.pending ?? 0}, lag ${audit.lag_ms ?? 0} ms` : "audit: off");
  const retention = audit.retention;
  if (retention != null) {
    io.out(`  retention: ${retention.segments} rotated segment(s), ${retention.bytes} bytes on disk, deleted ${retention.deleted_segments} (${retention.deleted_bytes} bytes)${
      retention.blocked ? `; HOLDING ${retention.held_segments} segment(s) (${retention.held_bytes} bytes) past the limits: ${escapeControl(String(retention.blocked_reason))}` : ""
    }${retention.last_error ? `; last run failed: ${escapeControl(String(retention.last_error))}` : ""}`);
  }
  renderStore(io, status["store"]);
}

/** With a shared store: this replica, then one line per replica (revision, refusals), then the warnings. */
function renderStore(io: Io, store: Record<string, any> | undefined): void {
  if (store?.kind !== "redis") return;
  const connection = store.connection ?? {};
  io.out(`store: redis ${store.url} prefix '${store.prefix}', this replica '${store.replica_id}', config version ${store.config_version}, ${connection.connected ? "connected" : `NOT CONNECTED since ${connection.since ?? "?"}${connection.last_error ? ` (${connection.last_error})` : ""}`}`);
  io.out(`  shared bundle revision: ${store.bundles?.revision ?? "–"} (newest read ${store.bundles?.desired_revision ?? "–"})`);
  for (const r of (store.replicas ?? []) as Array<Record<string, any>>) {
    const refused = (r.refused ?? []) as Array<Record<string, any>>;
    io.out(`  replica ${r.id}${r.self ? " (this one)" : ""}: ${r.live ? (refused.length > 0 ? "live, NOT READY (refused the active revision)" : "live") : `gone (${Math.round((r.seen_ms_ago ?? 0) / 1000)} s)`}, revision ${r.revision ?? "–"}, ${Object.keys(r.bundles ?? {}).length} bundle(s), version ${r.version}, config ${r.config_version}`);
    for (const x of refused) io.out(`    refused ${x.removed === true ? `the removal of ${x.bundle}` : `${x.bundle}@${x.version ?? "?"} ${String(x.digest).slice(0, 16)}…`} (${x.code}); keeps ${r.bundles?.[x.bundle] ? `${x.bundle}@${r.bundles[x.bundle].version}` : "no revision of it"}`);
  }
  for (const w of (store.warnings ?? []) as string[]) io.out(`  WARNING: ${w}`);
}

export const statusCommand: Command = {
  name: "status",
  summary: "a running server's bundles, sandbox and audit state (GET /v1/status)",
  usage: STATUS_USAGE,
  async run(args, io) {
    const { values, help } = parseCommand("status", args, CONNECTION_OPTIONS, { min: 0, max: 0, names: "" });
    if (help) {
      io.out(STATUS_USAGE);
      return EXIT_OK;
    }
    const status = (await request(targetOf("status", values), "GET", "/v1/status")) as Record<string, unknown>;
    if (io.json) printJson(io, status);
    else renderStatus(io, status);
    return EXIT_OK;
  },
};
