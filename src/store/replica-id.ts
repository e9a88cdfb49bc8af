/*
 * A replica's id: who it is in the store (heartbeat record, per-replica status, leases) and in its
 * audit records. In order: an explicit id (`VCP_REPLICA_ID`, e.g. a Kubernetes pod name from the
 * downward API), else the one kept in `<data_dir>/replica-id` (made once: `<host>-<random>`), so a
 * restarted replica keeps its id; without a data directory a fresh one per process.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { VcpError } from "../errors.js";
import { REPLICA_ID as REPLICA_ID_NAME } from "../model/names.js";

/** The rule itself is model/names.ts REPLICA_ID (the audit writer checks the same one). */
export const REPLICA_ID = REPLICA_ID_NAME.regex;
export const REPLICA_ID_FILE = "replica-id";

/**
 * @example
 * ```ts
 * resolveReplicaId({ explicit: process.env.VCP_REPLICA_ID, dataDir: "/var/lib/vcp" }); // "web-1-3fa9c2"
 * ```
 */
export function resolveReplicaId(source: { explicit?: string | undefined; dataDir?: string | undefined }): string {
  if (source.explicit !== undefined && source.explicit !== "") return checkReplicaId(source.explicit, "VCP_REPLICA_ID");
  const fresh = `${hostname().replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100) || "replica"}-${randomBytes(3).toString("hex")}`;
  if (source.dataDir === undefined) return fresh;
  const file = join(source.dataDir, REPLICA_ID_FILE);
  try {
    return checkReplicaId(readFileSync(file, "utf8").trim(), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  try {
    // "wx": the data directory is locked by now, but never replace an id another start wrote.
    writeFileSync(file, `${fresh}\n`, { mode: 0o644, flag: "wx" });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return checkReplicaId(readFileSync(file, "utf8").trim(), file);
  }
}

/**
 * The replica id rule, with INVALID_CONFIG naming where the id came from (`VCP_REPLICA_ID` or the
 * file); `vcp-hooks config check` applies it without starting anything.
 *
 * @example
 * ```ts
 * checkReplicaId(process.env.VCP_REPLICA_ID!, "VCP_REPLICA_ID"); // the id, or throws INVALID_CONFIG
 * ```
 */
export function checkReplicaId(id: string, from: string): string {
  if (!REPLICA_ID.test(id)) throw new VcpError("INVALID_CONFIG", `${from}: replica id '${id.slice(0, 140)}' must be 1–128 characters of A-Z a-z 0-9 . _ -`, { field: "replica_id", source: from });
  return id;
}
