// Session ownership (DESIGN §6.5): one rule (src/pipeline/access.ts) behind every session operation,
// and the per-owner cap. Another client's session must be indistinguishable from a missing one.
import { describe, expect, test } from "vitest";
import { maySee } from "../../../src/pipeline/access.js";
import { createPipeline, type PipelineDeps } from "../../../src/pipeline/index.js";
import { VcpError } from "../../../src/errors.js";
import { baseConstitution, fakeFire, fakeRegistry, quietLogger } from "./support.js";

const clock = { now: () => 0, wallNow: () => 1_767_225_600_000 };
const A = { principal: { id: "app-a", role: "client" } };
const B = { principal: { id: "app-b", role: "client" } };
const OPS = { principal: { id: "ops", role: "operator" } };

function setup(extra: Partial<PipelineDeps> = {}) {
  const fake = fakeFire();
  const registry = fakeRegistry();
  const pipeline = createPipeline({
    fire: fake.fire,
    periodicHooks: registry.periodicHooks,
    onRegistryChange: registry.onRegistryChange,
    conflictStrategy: "most_restrictive",
    clock,
    logger: quietLogger(),
    ...extra,
  });
  return { pipeline, calls: fake.calls };
}

async function errorOf(run: () => unknown): Promise<VcpError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected an error");
}

test.each([
  // owner, principal, may see
  ["app-a", undefined, true],
  [null, undefined, true],
  ["app-a", { id: "app-a", role: "client" }, true],
  ["app-a", { id: "app-b", role: "client" }, false],
  [null, { id: "app-a", role: "client" }, false],
  ["app-a", { id: "ops", role: "operator" }, true],
  [null, { id: "runtime", role: "system" }, true],
  ["app-a", { id: "", role: "client" }, false],
] as const)("maySee(%j, %j) = %s", (owner, principal, expected) => {
  expect(maySee(owner, principal)).toBe(expected);
});

describe("ownership", () => {
  test("the owner is recorded on open and shown in the view; the embedding application owns principal-less sessions", () => {
    const { pipeline } = setup();
    expect(pipeline.open({ session_id: "a1", context: {}, constitution: baseConstitution }, A).owner).toBe("app-a");
    expect(pipeline.open({ session_id: "e1", context: {}, constitution: baseConstitution }).owner).toBeNull();
    expect(pipeline.ownerOf("a1")).toBe("app-a");
    expect(pipeline.ownerOf("e1")).toBeNull();
    expect(pipeline.ownerOf("nope")).toBeUndefined();
  });

  test("another client gets exactly the missing-session error on every operation, and nothing runs or changes", async () => {
    const { pipeline, calls } = setup();
    pipeline.open({ session_id: "a1", context: { user: "a" }, constitution: baseConstitution, state: "start" }, A);
    const before = pipeline.get("a1");
    const inputs = {
      adapt: { selected: baseConstitution, candidates: [baseConstitution], selection_rationale: "r", selection_algorithm: "a" },
      transition: { to: "hijacked", trigger: "b" },
      conflict: { constitutions: [baseConstitution], conflicting_rules: [], conflict_severity: "warning" as const },
      violation: { output: "o", violated_rules: [], severity: "minor" as const, violation_evidence: "e" },
    };
    for (const op of ["adapt", "transition", "conflict", "violation"] as const) {
      const onA = await errorOf(() => pipeline[op]("a1", inputs[op] as never, B));
      const onMissing = await errorOf(() => pipeline[op]("zz", inputs[op] as never, B));
      expect(onA.code, op).toBe("SESSION_NOT_FOUND");
      expect(onA.message.replace("a1", "<id>"), op).toBe(onMissing.message.replace("zz", "<id>"));
    }
    expect((await errorOf(() => pipeline.close("a1", B))).code).toBe("SESSION_NOT_FOUND");
    expect(pipeline.get("a1", B)).toBeUndefined();
    expect(pipeline.list(B)).toEqual([]);
    expect(calls).toEqual([]);
    expect(pipeline.get("a1")).toEqual(before);
  });

  test("the owner, operators and the embedding application see and act on it", async () => {
    const { pipeline } = setup();
    pipeline.open({ session_id: "a1", context: {}, constitution: baseConstitution }, A);
    pipeline.open({ session_id: "b1", context: {}, constitution: baseConstitution }, B);
    expect(pipeline.list(A).map((s) => s.session_id)).toEqual(["a1"]);
    expect(pipeline.list(OPS).map((s) => s.session_id).sort()).toEqual(["a1", "b1"]);
    expect(pipeline.list().map((s) => s.session_id).sort()).toEqual(["a1", "b1"]);
    expect((await pipeline.transition("a1", { to: "next", trigger: "t" }, A)).outcome).toBe("transitioned");
    expect((await pipeline.transition("a1", { to: "after", trigger: "t" }, OPS)).outcome).toBe("transitioned");
    await pipeline.close("a1", OPS);
    expect(pipeline.get("a1")).toBeUndefined();
  });
});

describe("sessions per owner", () => {
  test("the open past the cap is SESSION_LIMIT and stores nothing; other owners and the embedding application are not counted against it", async () => {
    const { pipeline } = setup({ maxSessionsPerOwner: 2 });
    pipeline.open({ session_id: "a1", context: {}, constitution: baseConstitution }, A);
    pipeline.open({ session_id: "a2", context: {}, constitution: baseConstitution }, A);
    const err = await errorOf(() => pipeline.open({ session_id: "a3", context: {}, constitution: baseConstitution }, A));
    expect(err.code).toBe("SESSION_LIMIT");
    expect(err.details).toMatchObject({ principal: "app-a", limit: 2 });
    expect(pipeline.get("a3")).toBeUndefined();
    expect(pipeline.open({ session_id: "b1", context: {}, constitution: baseConstitution }, B).owner).toBe("app-b");
    for (let i = 0; i < 5; i++) pipeline.open({ session_id: `e${i}`, context: {}, constitution: baseConstitution });
    // A close frees the slot only once the session is gone.
    await pipeline.close("a1", A);
    expect(pipeline.open({ session_id: "a3", context: {}, constitution: baseConstitution }, A).session_id).toBe("a3");
    expect((await errorOf(() => pipeline.open({ session_id: "a4", context: {}, constitution: baseConstitution }, A))).code).toBe("SESSION_LIMIT");
  });

  test("a refused open of an existing id does not use up a slot", async () => {
    const { pipeline } = setup({ maxSessionsPerOwner: 2 });
    pipeline.open({ session_id: "a1", context: {}, constitution: baseConstitution }, A);
    expect((await errorOf(() => pipeline.open({ session_id: "a1", context: {}, constitution: baseConstitution }, A))).code).toBe("SESSION_EXISTS");
    expect(pipeline.open({ session_id: "a2", context: {}, constitution: baseConstitution }, A).owner).toBe("app-a");
  });
});

describe("session ids are per owner (issue 10)", () => {
  const open = (pipeline: ReturnType<typeof setup>["pipeline"], id: string, access?: typeof A, text = "") =>
    pipeline.open({ session_id: id, context: { text }, constitution: baseConstitution }, access);

  test("two principals opening the same id get two independent sessions; neither learns of the other", async () => {
    const { pipeline, calls } = setup();
    expect(open(pipeline, "s1", A, "from a")).toMatchObject({ session_id: "s1", owner: "app-a" });
    // No SESSION_EXISTS: B's open of an id A uses reveals nothing and squats nothing.
    expect(open(pipeline, "s1", B, "from b")).toMatchObject({ session_id: "s1", owner: "app-b" });
    expect(pipeline.get("s1", A)?.context).toEqual({ text: "from a" });
    expect(pipeline.get("s1", B)?.context).toEqual({ text: "from b" });
    await pipeline.transition("s1", { to: "active", trigger: "t" }, A);
    expect(pipeline.get("s1", A)?.state).toBe("active");
    expect(pipeline.get("s1", B)?.state).toBeNull();
    // Each chain carries its own session's key; hooks see the caller's id.
    const keys = new Set(calls.map((c) => c.input.sessionKey));
    await pipeline.transition("s1", { to: "active", trigger: "t" }, B);
    expect(calls.map((c) => c.input.session.id)).toEqual(["s1", "s1"]);
    expect(new Set(calls.map((c) => c.input.sessionKey)).size).toBe(keys.size + 1);
    expect(pipeline.list(A).map((v) => v.owner)).toEqual(["app-a"]);
    await pipeline.close("s1", A);
    expect(pipeline.get("s1", A)).toBeUndefined();
    expect(pipeline.get("s1", B)?.owner).toBe("app-b");
    expect(open(pipeline, "s1", A).owner).toBe("app-a");
  });

  test("a client's keyOf is always its own namespace; `owner` cannot move it", () => {
    const { pipeline } = setup();
    open(pipeline, "s1", A);
    expect(pipeline.keyOf("s1", A)).not.toBe(pipeline.keyOf("s1", B));
    expect(pipeline.keyOf("s1", { ...B, owner: "app-a" })).toBe(pipeline.keyOf("s1", B));
    expect(pipeline.get("s1", { ...B, owner: "app-a" })).toBeUndefined();
    expect(pipeline.ownerOf("s1", B)).toBeUndefined();
  });

  test("operators: the one open session of an id; several ⇒ SESSION_AMBIGUOUS naming the owners; `owner` picks one", async () => {
    const { pipeline } = setup();
    open(pipeline, "s1", A, "a");
    expect(pipeline.get("s1", OPS)?.owner).toBe("app-a");
    open(pipeline, "s1", B, "b");
    const err = await errorOf(() => pipeline.get("s1", OPS));
    expect(err.code).toBe("SESSION_AMBIGUOUS");
    expect(err.details?.["owners"]).toEqual(["app-a", "app-b"]);
    expect(pipeline.get("s1", { ...OPS, owner: "app-b" })?.context).toEqual({ text: "b" });
    expect(pipeline.get("s1", { ...OPS, owner: "app-c" })).toBeUndefined();
    await pipeline.close("s1", { ...OPS, owner: "app-a" });
    expect(pipeline.get("s1", OPS)?.owner).toBe("app-b");
    expect(pipeline.list(OPS).map((v) => [v.session_id, v.owner])).toEqual([["s1", "app-b"]]);
  });

  test("the embedding application keeps today's behaviour: its own session of an id first, the id itself as key", () => {
    const { pipeline } = setup();
    open(pipeline, "s1", A, "a");
    open(pipeline, "s1", undefined, "app");
    expect(pipeline.keyOf("s1")).toBe("s1");
    expect(pipeline.get("s1")?.owner).toBeNull();
    expect(pipeline.get("s1", { owner: "app-a" })?.owner).toBe("app-a");
    expect(pipeline.keyOf("never-opened")).toBe("never-opened");
  });
});
