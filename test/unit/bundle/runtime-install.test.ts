/**
 * bundles.install with artifacts, signatures, hot swap and the data directory, on the in-process
 * test backend (the real sandbox: test/integration/bundle/).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../../src/index.js";
import { createArtifact, signArtifact, type VcpArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair, type KeyringInput } from "../../../src/bundle/keys.js";
import { digestOf } from "../../../src/integrity/digest.js";
import { bundleCode } from "../../support/bundles.js";
import { fireInput } from "../../support/fixtures.js";
import { createVmBackend } from "../../support/vm-backend.js";

const ops = generateKeyPair();
const dev = generateKeyPair();
const stranger = generateKeyPair();
const KEYRING: KeyringInput = {
  keys: [
    { key_id: "ops", public_key: ops.publicKeyPem, max_trust: "deployment" },
    { key_id: "dev", public_key: dev.publicKeyPem, max_trust: "session" },
  ],
};

const tagAction = (tag: string) => `function (input) { return { status: "modify", modified_context: Object.assign({}, input.context, { tag: ${JSON.stringify(tag)} }) }; }`;

function manifest(bundle: string, version: string, extra: Record<string, unknown> = {}) {
  return {
    bundle,
    version,
    trust: "deployment" as const,
    ...extra,
    hooks: [{ name: `${bundle}_hook`, type: "pre_inject" as const, action: "act", priority: 50, timeout_ms: 1000 }],
  };
}
function build(bundle: string, version: string, tag: string, extra: Record<string, unknown> = {}): VcpArtifact {
  return createArtifact(manifest(bundle, version, extra), bundleCode({ act: tagAction(tag) }));
}
const signed = (a: VcpArtifact, key = ops.privateKeyPem, id = "ops") => signArtifact(a, key, id);
const clone = (a: VcpArtifact): VcpArtifact => JSON.parse(JSON.stringify(a)) as VcpArtifact;

const open: Runtime[] = [];
const dirs: string[] = [];
async function runtime(options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  const rt = await createRuntime({ backend: createVmBackend(), keyring: KEYRING, registrationsPerMinute: 10_000, ...options });
  open.push(rt);
  return rt;
}
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-data-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function tagOf(rt: Runtime): Promise<unknown> {
  const r = await rt.fire("pre_inject", fireInput("pre_inject", {}));
  return r.context["tag"];
}

/** Everything a refused install must leave unchanged. */
async function observable(rt: Runtime, dir?: string) {
  return {
    list: rt.bundles.list().map(({ errors: _errors, ...rest }) => rest),
    revision: rt.status().registry_revision,
    chain: (await rt.hooks.chain("pre_inject")).map((h) => [h.name, h.action.digest, h.seq]),
    tag: await tagOf(rt),
    index: dir === undefined ? undefined : readFileSync(join(dir, "bundles", "installed.json"), "utf8"),
  };
}

describe("signature policy of bundles.install", () => {
  test("with a keyring, signatures are required by default: a { manifest, code } source is UNSIGNED_BUNDLE", async () => {
    const rt = await runtime();
    await expect(rt.bundles.install({ manifest: manifest("src", "1.0.0"), code: bundleCode({ act: tagAction("x") }) })).rejects.toMatchObject({ code: "UNSIGNED_BUNDLE" });
    expect(rt.bundles.list()).toEqual([]);
  });

  test("without a keyring, sources install (development default), unsigned", async () => {
    const rt = await runtime({ keyring: undefined });
    const info = await rt.bundles.install({ manifest: manifest("src", "1.0.0"), code: bundleCode({ act: tagAction("x") }) });
    expect(info).toMatchObject({ bundle: "src", signed_by: null, errors: [] });
    expect(await tagOf(rt)).toBe("x");
  });

  test("a signed artifact installs with signed_by; a source's digest equals its built artifact's", async () => {
    const rt = await runtime();
    const a = signed(build("pii", "1.0.0", "v1"));
    const info = await rt.bundles.install(a);
    expect(info).toMatchObject({ bundle: "pii", version: "1.0.0", digest: a.digest, trust: "deployment", signed_by: "ops", errors: [] });
    const loose = await runtime({ keyring: undefined });
    expect((await loose.bundles.install({ manifest: manifest("pii", "1.0.0"), code: a.code })).digest).toBe(a.digest);
  });

  test("trust above what the keyring allows is refused at install", async () => {
    const rt = await runtime();
    await expect(rt.bundles.install(signed(build("pii", "1.0.0", "v1", { trust: "system" })))).rejects.toMatchObject({ code: "TRUST_EXCEEDS_KEY" });
    await expect(rt.bundles.install(signed(build("pii", "1.0.0", "v1"), dev.privateKeyPem, "dev"))).rejects.toMatchObject({ code: "TRUST_EXCEEDS_KEY" });
    expect(rt.bundles.list()).toEqual([]);
  });
});

describe("a refused install changes nothing", () => {
  const v1 = signed(build("pii", "1.1.0", "v1"));
  const refusals: Array<[string, string, () => unknown]> = [
    ["tampered code", "DIGEST_MISMATCH", () => Object.assign(clone(v1), { code: v1.code.replace("v1", "evil") })],
    [
      "code and digest re-hashed",
      "SIGNATURE_INVALID",
      () => {
        const t = Object.assign(clone(v1), { code: v1.code.replace("v1", "evil") });
        t.digest = digestOf({ manifest: t.manifest, code: t.code });
        return t;
      },
    ],
    ["signed by an unknown key", "SIGNATURE_INVALID", () => signed(build("pii", "1.2.0", "v2"), stranger.privateKeyPem, "stranger")],
    ["signed with the wrong key under a known id", "SIGNATURE_INVALID", () => signed(build("pii", "1.2.0", "v2"), stranger.privateKeyPem, "ops")],
    ["signatures stripped", "UNSIGNED_BUNDLE", () => ({ ...signed(build("pii", "1.2.0", "v2")), signatures: [] })],
    ["a source instead of an artifact", "UNSIGNED_BUNDLE", () => ({ manifest: manifest("pii", "1.2.0"), code: bundleCode({ act: tagAction("v2") }) })],
    ["over-privileged trust", "TRUST_EXCEEDS_KEY", () => signed(build("pii", "1.2.0", "v2", { trust: "system" }))],
    ["a hook action that is not exported", "ACTION_NOT_CALLABLE", () => signed(createArtifact(manifest("pii", "1.2.0"), bundleCode({ other: tagAction("v2") })))],
    ["code that throws at load", "INVALID_BUNDLE", () => signed(createArtifact(manifest("pii", "1.2.0"), "throw new Error('nope');"))],
    ["a lower version", "VERSION_DOWNGRADE", () => signed(build("pii", "1.0.9", "old"))],
    ["code above maxBundleBytes", "BUNDLE_TOO_LARGE", () => signed(build("pii", "1.2.0", "x".repeat(5000)))],
    ["a hook name owned by another bundle", "DUPLICATE_HOOK", () => signed(createArtifact({ ...manifest("pii", "1.2.0"), hooks: [{ name: "other_hook", type: "pre_inject", action: "act", priority: 1, timeout_ms: 10 }] }, bundleCode({ act: tagAction("v2") })))],
  ];

  test.each(refusals)("%s ⇒ %s; the installed revision, registry, chain and data directory are unchanged", async (_label, code, make) => {
    const dir = dataDir();
    const rt = await runtime({ dataDir: dir, maxBundleBytes: 4000 });
    await rt.bundles.install(signed(build("other", "1.0.0", "other")));
    await rt.bundles.install(v1);
    const before = await observable(rt, dir);
    expect(before.tag).toBe("v1");

    const err = await rt.bundles.install(make() as VcpArtifact).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code });

    expect(await observable(rt, dir)).toEqual(before);
    // Status says why the last attempt failed; the old version stays active.
    const info = rt.bundles.get("pii")!;
    expect(info.errors).toEqual([expect.objectContaining({ code, message: (err as Error).message })]);
    expect(info.version).toBe("1.1.0");
  });
});

describe("hot swap", () => {
  test("a new version replaces the old atomically; installing the same digest again is a no-op", async () => {
    const rt = await runtime();
    await rt.bundles.install(signed(build("pii", "1.0.0", "v1")));
    expect(await tagOf(rt)).toBe("v1");
    const v2 = signed(build("pii", "2.0.0", "v2"));
    const info = await rt.bundles.install(v2);
    expect(info).toMatchObject({ version: "2.0.0", digest: v2.digest });
    expect(await tagOf(rt)).toBe("v2");
    expect((await rt.hooks.chain("pre_inject")).map((h) => h.action.digest)).toEqual([v2.digest]);

    const revision = rt.status().registry_revision;
    expect(await rt.bundles.install(v2)).toBe(info);
    expect(rt.status().registry_revision).toBe(revision);
  });

  test("a failed swap keeps the old version and records why; the next success clears the errors", async () => {
    const rt = await runtime();
    await rt.bundles.install(signed(build("pii", "1.0.0", "v1")));
    await expect(rt.bundles.install(signed(build("pii", "2.0.0", "v2"), stranger.privateKeyPem, "ops"))).rejects.toMatchObject({ code: "SIGNATURE_INVALID" });
    expect(await tagOf(rt)).toBe("v1");
    expect(rt.bundles.get("pii")!.errors).toHaveLength(1);
    expect(rt.status().bundles[0]!.errors[0]!.code).toBe("SIGNATURE_INVALID");
    await rt.bundles.install(signed(build("pii", "2.0.0", "v2")));
    expect(rt.bundles.get("pii")!.errors).toEqual([]);
    expect(await tagOf(rt)).toBe("v2");
  });

  test("a downgrade needs allowDowngrade", async () => {
    const rt = await runtime();
    await rt.bundles.install(signed(build("pii", "2.0.0", "v2")));
    const old = signed(build("pii", "1.0.0", "v1"));
    await expect(rt.bundles.install(old)).rejects.toMatchObject({ code: "VERSION_DOWNGRADE", message: expect.stringContaining("1.0.0 is lower than the installed 2.0.0") });
    expect(await rt.bundles.install(old, { allowDowngrade: true })).toMatchObject({ version: "1.0.0" });
    expect(await tagOf(rt)).toBe("v1");
  });

  test("concurrent installs of one bundle are serialized: the last one wins, nothing is lost", async () => {
    const rt = await runtime();
    const versions = ["1.0.0", "1.1.0", "1.2.0", "1.3.0"].map((v) => signed(build("pii", v, v)));
    await Promise.all(versions.map((a) => rt.bundles.install(a)));
    expect(rt.bundles.get("pii")!.version).toBe("1.3.0");
    expect(await rt.hooks.chain("pre_inject")).toHaveLength(1);
    expect(await tagOf(rt)).toBe("1.3.0");
  });
});

describe("persistence in the data directory", () => {
  test("installed bundles come back after a restart, in the same chain order, and their hooks fire", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir });
    await first.bundles.install(signed(build("alpha", "1.0.0", "alpha")));
    await first.bundles.install(signed(build("beta", "1.0.0", "beta")));
    await first.bundles.install(signed(build("alpha", "1.1.0", "alpha2")));
    const list = first.bundles.list();
    const chain = (await first.hooks.chain("pre_inject")).map((h) => h.name);
    const tag = await tagOf(first);
    await first.close();

    const second = await runtime({ dataDir: dir });
    expect(second.bundles.list()).toEqual(list);
    expect((await second.hooks.chain("pre_inject")).map((h) => h.name)).toEqual(chain);
    expect(await tagOf(second)).toBe(tag);
  });

  test("an install that cannot be persisted is undone: not installed in memory either", async () => {
    const dir = dataDir();
    const rt = await runtime({ dataDir: dir });
    await rt.bundles.install(signed(build("alpha", "1.0.0", "alpha")));
    const before = await observable(rt, dir);
    // A file where the bundle's directory must go makes the artifact write fail.
    writeFileSync(join(dir, "bundles", "gamma"), "in the way");
    await expect(rt.bundles.install(signed(build("gamma", "1.0.0", "gamma")))).rejects.toMatchObject({ code: "STORE_CORRUPT", message: expect.stringContaining("persisting bundle 'gamma'") });
    expect(rt.bundles.get("gamma")).toBeUndefined();
    const after = await observable(rt, dir);
    expect({ ...after, revision: undefined }).toEqual({ ...before, revision: undefined });
    expect((await rt.hooks.chain("pre_inject")).map((h) => h.name)).toEqual(["alpha_hook"]);
  });

  test("unsigned sources persist too when signatures are optional", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir, keyring: undefined });
    await first.bundles.install({ manifest: manifest("loose", "1.0.0"), code: bundleCode({ act: tagAction("loose") }) });
    await first.close();
    const second = await runtime({ dataDir: dir, keyring: undefined });
    expect(await tagOf(second)).toBe("loose");
  });

  test("a removed bundle stays removed after a restart", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir });
    await first.bundles.install(signed(build("alpha", "1.0.0", "alpha")));
    await first.bundles.remove("alpha");
    await first.close();
    const second = await runtime({ dataDir: dir });
    expect(second.bundles.list()).toEqual([]);
  });

  test("stored bundles are re-verified at start: a tampered artifact stops the start, naming bundle and file", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir });
    const a = signed(build("alpha", "1.0.0", "alpha"));
    await first.bundles.install(a);
    await first.close();
    const file = join(dir, "bundles", "alpha", `${a.digest.slice("sha256:".length)}.vcpb`);
    writeFileSync(file, readFileSync(file, "utf8").replace("alpha\\\"", "evil\\\""));
    await expect(runtime({ dataDir: dir })).rejects.toMatchObject({
      code: "DIGEST_MISMATCH",
      message: expect.stringContaining(`reloading installed bundle 'alpha' from ${file}`),
    });
  });

  test("a stored bundle whose key left the keyring stops the start (no silent downgrade to unsigned)", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir });
    await first.bundles.install(signed(build("alpha", "1.0.0", "alpha")));
    await first.close();
    await expect(runtime({ dataDir: dir, keyring: { keys: KEYRING.keys.filter((k) => k.key_id !== "ops") } })).rejects.toMatchObject({ code: "SIGNATURE_INVALID" });
    await expect(runtime({ dataDir: dir, keyring: { keys: [] }, requireSignatures: false })).rejects.toMatchObject({ code: "SIGNATURE_INVALID" });
  });

  test("an unsigned stored bundle does not load once signatures are required", async () => {
    const dir = dataDir();
    const first = await runtime({ dataDir: dir, keyring: undefined });
    await first.bundles.install({ manifest: manifest("loose", "1.0.0"), code: bundleCode({ act: tagAction("loose") }) });
    await first.close();
    await expect(runtime({ dataDir: dir })).rejects.toMatchObject({ code: "UNSIGNED_BUNDLE" });
  });
});

test("invalid runtime options: keyring and maxBundleBytes", async () => {
  await expect(runtime({ keyring: { keys: [{ key_id: "x", public_key: "nope", max_trust: "system" }] } })).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  await expect(runtime({ maxBundleBytes: 0 })).rejects.toMatchObject({ code: "INVALID_CONFIG", details: { field: "maxBundleBytes" } });
});
