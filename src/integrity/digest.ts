import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical.js";

/** `sha256:<hex>` of the RFC 8785 canonical form of a JSON value (DESIGN §3.2, §4.5). */
export function digestOf(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}
