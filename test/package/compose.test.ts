/**
 * deploy/compose.yaml (3 replicas + Redis + nginx): valid against the Compose specification's JSON
 * schema (the copy dclint ships), clean under dclint's rules, a broken copy refused naming the path,
 * and consistent with its vcp.yaml (through the real config loader) and nginx.conf. No container
 * engine is needed: CI's machines have none, and the docker CLI here has no compose plugin.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { promisify } from "node:util";
import { Ajv } from "ajv";
import { afterAll, describe, expect, test } from "vitest";
import YAML from "yaml";
import { resolveConfig } from "../../src/config/config.js";

type Obj = Record<string, any>;
const run = promisify(execFile);
const DCLINT = "node_modules/dclint/bin/dclint.cjs";

// Compose merges `<<: *anchor` keys before it reads a file; so does the check.
const parse = (file: string): Obj => YAML.parse(readFileSync(file, "utf8"), { merge: true }) as Obj;
// A draft-07 schema (Ajv's default draft); its `$schema` spells the meta-schema URI in a form Ajv does not register.
const { $schema: _draft07, ...schema } = JSON.parse(readFileSync("node_modules/dclint/schemas/compose.schema.json", "utf8")) as Obj;
const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
const problems = (doc: Obj): string[] => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`));

const scratch = mkdtempSync(join(tmpdir(), "vcp-compose-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const compose = parse("deploy/compose.yaml");
const replicas = Object.keys(compose.services).filter((name) => /^vcp-\d+$/.test(name));
const vcpYamlText = readFileSync("deploy/vcp.compose.yaml", "utf8");
const vcpYaml = YAML.parse(vcpYamlText) as Obj;
const nginx = readFileSync("deploy/nginx.conf", "utf8");

describe("deploy/compose.yaml", () => {
  test("validates against the Compose specification (and so does the quick-start compose.yaml)", () => {
    expect(problems(compose)).toEqual([]);
    expect(problems(parse("compose.yaml"))).toEqual([]);
  });

  test("a broken compose file is refused, naming what is wrong", () => {
    const broken = structuredClone(compose);
    broken.services.lb.restart = 3;
    broken.services["vcp-1"].ports = "8787";
    broken.volumez = {};
    expect(problems(broken)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^\/services\/lb\/restart must be string/),
      expect.stringMatching(/^\/services\/vcp-1\/ports must be array/),
      expect.stringMatching(/^\/ must NOT have additional properties .*volumez/),
    ]));
  });

  test("dclint finds nothing (style-only rules off, see deploy/.dclintrc.yaml), and does find a defect in a broken copy", async () => {
    const clean = await run(process.execPath, [DCLINT, "deploy/compose.yaml", "-c", "deploy/.dclintrc.yaml", "-f", "json", "--color", "false"]);
    const report = JSON.parse(clean.stdout) as Array<{ errorCount: number; warningCount: number; messages: unknown[] }>;
    expect(report[0]!.messages).toEqual([]);
    const bad = join(scratch, "compose.yaml");
    writeFileSync(bad, readFileSync("deploy/compose.yaml", "utf8").replace("image: redis:7.4-alpine", "image: redis"));
    const dirty = await run(process.execPath, [DCLINT, bad, "-c", "deploy/.dclintrc.yaml", "-f", "json", "--color", "false"]).then(
      () => { throw new Error("dclint accepted an image without a version tag"); },
      (err: { code: number; stdout: string }) => err,
    );
    expect(dirty.code).toBe(1);
    expect(JSON.parse(dirty.stdout)[0].messages).toEqual([expect.objectContaining({ rule: "service-image-require-explicit-tag", data: { image: "redis", serviceName: "redis" } })]);
  });

  test("three replicas: one shared vcp.yaml, each its own id and data volume, tokens required, Redis healthy first", () => {
    expect(replicas).toEqual(["vcp-1", "vcp-2", "vcp-3"]);
    const ids = new Set<string>();
    const dataVolumes = new Set<string>();
    for (const name of replicas) {
      const service = compose.services[name] as Obj;
      expect(service.command).toEqual(["serve", "--config", "/etc/vcp-hooks/vcp.yaml"]);
      expect(service.volumes).toContain("./vcp.compose.yaml:/etc/vcp-hooks/vcp.yaml:ro");
      ids.add(service.environment.VCP_REPLICA_ID);
      const data = (service.volumes as string[]).find((v) => v.endsWith(`:${vcpYaml.data_dir}`));
      expect(data, `${name} mounts a volume at data_dir`).toBeDefined();
      dataVolumes.add(data!.split(":")[0]!);
      for (const auth of vcpYaml.auth as Obj[]) expect(service.environment[auth.token_env], `${name} ${auth.token_env}`).toMatch(/^\$\{\w+:\?/);
      expect(service.depends_on.redis).toEqual({ condition: "service_healthy" });
      expect(service.depends_on.keys).toEqual({ condition: "service_completed_successfully" });
      expect(service).toMatchObject({ read_only: true, cap_drop: ["ALL"], security_opt: ["no-new-privileges:true"] });
      expect(service.healthcheck.test.join(" ")).toContain("/readyz");
    }
    expect(ids).toEqual(new Set(replicas));
    expect(dataVolumes.size).toBe(3);
    for (const volume of dataVolumes) expect(Object.keys(compose.volumes)).toContain(volume);
    // Acknowledged Redis writes survive a Redis crash.
    expect(compose.services.redis.command.join(" ")).toContain("--appendfsync always");
  });

  test("vcp.compose.yaml is a valid redis-store config pointing at the compose Redis; its key files are mounted", () => {
    const env = { VCP_OPERATOR_TOKEN: `vcp_op_${"o".repeat(43)}`, VCP_CLIENT_TOKEN: `vcp_cl_${"c".repeat(43)}` };
    Object.assign(process.env, env);
    try {
      const config = resolveConfig(vcpYaml, "/etc/vcp-hooks");
      expect(config.store).toMatchObject({ kind: "redis", url: "redis://redis:6379/0" });
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
    expect(new URL(vcpYaml.store.url).hostname).toBe("redis");
    expect(Object.keys(compose.services)).toContain("redis");
    const mounts = (compose.services["vcp-1"].volumes as string[]).map((v) => v.split(":"));
    // runtime_key_file lies in the keys volume, which the keys service fills with `keygen --out …/runtime`.
    const keysMount = mounts.find(([source]) => source === "vcp-keys")!;
    expect(posix.dirname(vcpYaml.runtime_key_file)).toBe(keysMount[1]);
    expect(keysMount[2]).toBe("ro");
    expect(compose.services.keys.entrypoint.join(" ")).toContain(`keygen --out /srv/vcp/.vcp/${posix.basename(vcpYaml.runtime_key_file, ".pem")}`);
    expect(compose.services.keys.volumes).toEqual(["vcp-keys:/srv/vcp/.vcp"]);
    // The keyring's public key is the operator's file, mounted where vcp.yaml looks.
    const publisher = (compose.services["vcp-1"].volumes as string[]).find((v) => v.endsWith(`}:${vcpYaml.keyring.keys[0].public_key_file}:ro`));
    expect(publisher).toMatch(/^\$\{VCP_PUBLISHER_PUBKEY:\?[^}]+\}:/);
  });

  test("nginx balances over exactly the replicas, on loopback, without buffering streams or retrying POSTs", () => {
    const upstream = /upstream vcp_hooks \{([^}]*)\}/.exec(nginx)![1]!;
    const servers = [...upstream.matchAll(/server ([\w-]+):(\d+)/g)].map((m) => [m[1], Number(m[2])]);
    expect(servers).toEqual(replicas.map((name) => [name, vcpYaml.listen.port]));
    expect(compose.services.lb.volumes).toContain("./nginx.conf:/etc/nginx/nginx.conf:ro");
    const listen = Number(/listen (\d+);/.exec(nginx)![1]);
    expect(compose.services.lb.ports).toEqual([`127.0.0.1:8787:${listen}`]);
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(nginx).not.toMatch(/non_idempotent/);
    for (const name of replicas) expect(compose.services.lb.depends_on[name]).toEqual({ condition: "service_healthy" });
  });
});
