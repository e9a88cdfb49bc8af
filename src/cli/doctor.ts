/**
 * `vcp-hooks doctor [--config vcp.yaml | --server URL]` (PROFILES §3.5): deployment problems no single
 * install or request reveals — ai-memory `required_events` with no enabled hook (every such event is
 * denied 503), profiles enabled without a bundle, bundles of profiles not enabled — and notes (exec
 * hooks, hooks on advisory events). Local mode reads the config and its data directory; server mode
 * reads `GET /v1/profiles`, `GET /v1/status` and `GET /v1/hooks?profile=…&event=…` with an operator
 * token. Exit 1 when a problem needs action, 0 otherwise, 2 on a usage error.
 */
import { existsSync } from "node:fs";
import { loadConfigFile } from "../index.js";
import { diagnose, localView, serverView, type Finding } from "../tooling/doctor.js";
import { EXIT_FAILED, EXIT_OK, escapeControl, parseCommand, printJson, UsageError, type Command } from "./common.js";
import { CONNECTION_OPTIONS, request, targetOf } from "./remote.js";

const USAGE = `usage: vcp-hooks doctor [--config vcp.yaml] [--json]
       vcp-hooks doctor --server URL [--token T] [--json]

Reports deployment problems: ai-memory required_events that no enabled hook handles (each such event
is denied with 503), profiles enabled with no bundle, bundles of profiles that are not enabled; and
notes: exec hooks, hooks on advisory events, timeouts that look like seconds, every profile enabled
because profiles: is absent.
Local mode (default) reads the config (default ./vcp.yaml) and the bundles installed in its data_dir;
--server reads a running server (GET /v1/profiles, /v1/status, /v1/hooks) with an operator token
(--token or VCP_OPERATOR_TOKEN). Exit 1 when there is a problem, 0 when there is none.`;

export const doctorCommand: Command = {
  name: "doctor",
  summary: "report deployment problems (required events without hooks, profiles without bundles, bundles of disabled profiles)",
  usage: USAGE,
  async run(args, io) {
    const { values, help } = parseCommand("doctor", args, { ...CONNECTION_OPTIONS, config: { type: "string", short: "c" } }, { min: 0, max: 0, names: "" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const serverGiven = typeof values["server"] === "string";
    if (serverGiven && typeof values["config"] === "string") throw new UsageError("doctor: give --config (local) or --server (a running server), not both");
    let source: string;
    let findings: Finding[];
    if (serverGiven) {
      const target = targetOf("doctor", values);
      source = target.server;
      findings = await diagnose(await serverView(source, (path) => request(target, "GET", path)));
    } else {
      const file = typeof values["config"] === "string" ? values["config"] : "vcp.yaml";
      if (!existsSync(file)) throw new UsageError(`doctor: ${file} does not exist (give the file with --config, or a running server with --server)`);
      source = file;
      findings = await diagnose(await localView(loadConfigFile(file)));
    }
    const problems = findings.filter((f) => f.severity === "problem");
    if (io.json) printJson(io, { source, ok: problems.length === 0, problems: problems.length, findings });
    else {
      if (findings.length === 0) io.out(`${source}: no problems found`);
      else io.out(`${source}: ${problems.length} problem${problems.length === 1 ? "" : "s"}, ${findings.length - problems.length} note${findings.length - problems.length === 1 ? "" : "s"}`);
      // SECURITY: names come from bundles and the server: control characters are escaped.
      for (const f of findings) io.out(`  ${f.severity === "problem" ? "PROBLEM" : "note   "} ${f.code}: ${escapeControl(f.message)}`);
    }
    return problems.length > 0 ? EXIT_FAILED : EXIT_OK;
  },
};
