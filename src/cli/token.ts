/**
 * `vcp-hooks token [--role operator|client|approver|metrics] [--id name] [--approves client[,client…]]`:
 * a fresh bearer token, and the `auth:` entry for vcp.yaml that holds only its SHA-256 — the server
 * never stores a token.
 */
import { generateToken, hashToken, ROLES, type Role } from "../server/index.js";
import { EXIT_OK, parseCommand, printJson, stringOption, UsageError, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks token [--role operator|client|approver|metrics] [--id name] [--approves client[,client…]] [--json]

Prints a new random token (32 bytes, shown once: store it in your secret manager) and the
vcp.yaml 'auth:' entry with its token_sha256. Default role: client; default id: <role>-<8 hex>.
An approver token decides Amplifier approvals (the human's token; an agent's client token never
can); --approves names the client ids whose approvals it sees and decides (default: every client's).
A metrics token reads GET /metrics and nothing else (give it to the Prometheus scraper).`;

export const tokenCommand: Command = {
  name: "token",
  summary: "create a bearer token and print its vcp.yaml auth entry (token_sha256)",
  usage: USAGE,
  async run(args, io) {
    const { values, help } = parseCommand("token", args, { role: { type: "string" }, id: { type: "string" }, approves: { type: "string" } }, { min: 0, max: 0, names: "" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const role = stringOption("token", values, "role") ?? "client";
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`token: --role must be one of ${ROLES.join(", ")}, not '${role}'`);
    const approvesText = stringOption("token", values, "approves");
    if (approvesText !== undefined && role !== "approver") throw new UsageError(`token: --approves is for --role approver only`);
    const approves = approvesText?.split(",").map((s) => s.trim());
    // The same rule as the config schema's auth[].approves.
    if (approves !== undefined && approves.some((id) => id.length < 1 || id.length > 64)) throw new UsageError(`token: --approves must list client ids of 1 to 64 characters, separated by commas`);
    const token = generateToken(role as Role);
    const sha = hashToken(token);
    const id = stringOption("token", values, "id") ?? `${role}-${sha.slice(0, 8)}`;
    // The same rule as the config schema's auth[].id.
    if (id.length < 1 || id.length > 64) throw new UsageError(`token: --id must be 1 to 64 characters`);
    if (io.json) {
      printJson(io, { token, token_sha256: sha, role, id, ...(approves !== undefined ? { approves } : {}) });
      return EXIT_OK;
    }
    const approvesYaml = approves !== undefined ? `, approves: ${JSON.stringify(approves)}` : "";
    io.out(`token (shown once; the server keeps only its SHA-256):\n  ${token}\nvcp.yaml:\n  auth:\n    - { id: ${JSON.stringify(id)}, role: ${role}, token_sha256: ${sha}${approvesYaml} }`);
    return EXIT_OK;
  },
};
