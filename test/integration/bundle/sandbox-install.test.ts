/**
 * The bundle pipeline end to end on the real isolated-vm sandbox: build a TypeScript policy, sign,
 * install, fire, restart from the data directory. In this process from the sources (the runtime forks
 * the compiled sandbox host, src/pool/host-entry.ts); the child processes below, plain Node, load dist/.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { buildBundle, generateKeyPair, serializeArtifact, signArtifact } from "../../../src/tooling.js";
import { fireInput } from "../../support/fixtures.js";
import { policyDir, policyYaml, removeDir, TS_POLICY } from "../../unit/bundle/helpers.js";

const ops = generateKeyPair();
const keyring = { keys: [{ key_id: "ops", public_key: ops.publicKeyPem, max_trust: "deployment" as const }] };
const policy = policyDir({ "policy.yaml": policyYaml("strip-pii", [{ name: "strip_pii_before_inject", action: "stripPii" }]), ...TS_POLICY });
const dataDir = mkdtempSync(join(tmpdir(), "vcp-data-int-"));
afterAll(() => {
  removeDir(policy);
  rmSync(dataDir, { recursive: true, force: true });
});

async function redacted(rt: Runtime): Promise<unknown> {
  const r = await rt.fire("pre_inject", fireInput("pre_inject", { note: "mail me at a.b@example.com" }));
  expect(r.hook_results[0]).toMatchObject({ hook: "strip_pii_before_inject", outcome: "ok" });
  return r.context["note"];
}

test("build → sign → install in the sandbox → fire; reloaded from the data directory after a restart", async () => {
  const { artifact } = await buildBundle(policy);
  const signed = signArtifact(artifact, ops.privateKeyPem, "ops");
  const first = (await createRuntime({ dataDir, keyring, sandbox: { threads: 1 } }));
  try {
    expect(await first.bundles.install(signed)).toMatchObject({ bundle: "strip-pii", signed_by: "ops", digest: artifact.digest });
    expect(await redacted(first)).toBe("mail me at [email]");
  } finally {
    await first.close();
  }
  const second = (await createRuntime({ dataDir, keyring, sandbox: { threads: 1 } }));
  try {
    expect(second.bundles.list()).toMatchObject([{ bundle: "strip-pii", digest: artifact.digest, signed_by: "ops" }]);
    expect(await redacted(second)).toBe("mail me at [email]");
  } finally {
    await second.close();
  }
});

test("buildBundle in a process without --no-node-snapshot (the CLI's case) checks exports in a sandbox process, same bytes", async () => {
  const inProcess = serializeArtifact((await buildBundle(policy)).artifact);
  const script = `import("${new URL("../../../dist/src/tooling.js", import.meta.url).href}").then(async (m) => {
    const { artifact } = await m.buildBundle(${JSON.stringify(policy)});
    process.stdout.write(m.serializeArtifact(artifact));
  }).catch((e) => { process.stderr.write(String(e && e.message)); process.exit(1); });`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, NODE_OPTIONS: "" } });
  expect(stdout).toBe(inProcess);
});

test("a missing export is caught by the sandbox-process check too", async () => {
  const broken = policyDir({ "policy.yaml": policyYaml("ghost", [{ name: "ghost_hook", action: "missingFn" }]), ...TS_POLICY });
  try {
    const script = `import("${new URL("../../../dist/src/tooling.js", import.meta.url).href}").then((m) => m.buildBundle(${JSON.stringify(broken)}))
      .then(() => process.exit(0), (e) => { process.stdout.write(JSON.stringify({ code: e.code, message: e.message })); process.exit(1); });`;
    const result = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, NODE_OPTIONS: "" } }).then(
      () => undefined,
      (e: { stdout: string }) => JSON.parse(e.stdout) as { code: string; message: string },
    );
    expect(result).toMatchObject({ code: "ACTION_NOT_CALLABLE", message: expect.stringContaining("hook 'ghost_hook': action 'missingFn'") });
  } finally {
    removeDir(broken);
  }
});
