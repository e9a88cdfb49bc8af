/**
 * A replica's identity (issue 18): the name every audit record of this process carries, so that the
 * hash chains of several replicas — one per replica — stay attributable when they are shipped to one
 * receiver or verified together.
 *
 * One rule, in this order:
 *   1. an id given explicitly (`replicaId` option; `serve` passes `VCP_REPLICA_ID` or `replica_id` of
 *      vcp.yaml — in Kubernetes the pod name through the Downward API);
 *   2. the id kept in `<state dir>/replica-id`, written the first time a replica starts there: the
 *      state dir holds the audit chain, so the chain and its id stay together across restarts;
 *   3. with no state dir at all (an in-memory runtime), the host name: nothing persists to tie it to.
 * A generated id is `<hostname>-<8 hex>`: readable in a log line, and two replicas on one host (or two
 * containers whose host names collide) still differ.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { VcpError } from "../errors.js";
import { REPLICA_ID } from "../model/names.js";

/** The file in a state directory that keeps a generated replica id. */
export const REPLICA_ID_FILE = "replica-id";

/** Throw INVALID_CONFIG (field `replica_id`, `where` it came from) unless `id` is a valid replica id. */
function checkReplicaId(id: string, where: string): string {
  if (typeof id !== "string" || !REPLICA_ID.regex.test(id)) {
    throw new VcpError("INVALID_CONFIG", `${where}: replica id ${JSON.stringify(String(id).slice(0, 300))} ${REPLICA_ID.rule}`, { field: "replica_id" });
  }
  return id;
}

/** `hostname` reduced to the replica-id alphabet (a host name may hold characters an id may not). */
function hostPart(): string {
  const cleaned = hostname().replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 200);
  return cleaned.length > 0 ? cleaned : "replica";
}

/**
 * This process's replica id: `explicit` when given (checked), else the one kept in `stateDir` (created
 * there on first use), else the host name.
 */
export function resolveReplicaId(explicit: string | undefined, stateDir: string | undefined): string {
  if (explicit !== undefined) return checkReplicaId(explicit, "VCP_REPLICA_ID, replica_id in vcp.yaml or the replicaId option");
  if (stateDir === undefined) return hostPart();
  const file = join(stateDir, REPLICA_ID_FILE);
  let kept: string | undefined;
  try {
    kept = readFileSync(file, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (kept !== undefined) {
    // A damaged file is an error, never a silent new identity: the chain would change owners unseen.
    if (!REPLICA_ID.regex.test(kept)) throw new VcpError("INVALID_CONFIG", `${file}: not a replica id (${REPLICA_ID.rule}); fix it or delete it to generate a new one`, { field: "replica_id", file });
    return kept;
  }
  const id = `${hostPart()}-${randomBytes(4).toString("hex")}`;
  // Written whole or not at all (rename), so a crash never leaves a half id behind.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${id}\n`, { mode: 0o644 });
  renameSync(tmp, file);
  return id;
}
