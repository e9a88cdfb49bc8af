/**
 * Integrity cases (DESIGN §4.5): attack constitutions handed straight to the constitution checker
 * (`createIntegrityChecker` of src/integrity/check.ts), as a hook that returned them would. The
 * corpus has no integrity category (a corpus case can only attack through the sandbox, and the
 * runtime does not yet wire the checker into `fire`), so these run in-process against the checker.
 *
 * The checker is loaded dynamically: while it is being written, a missing or renamed module makes
 * the category "not yet covered" instead of breaking the bench's build.
 */
import { existsSync } from "node:fs";
import { generateKeyPairSync } from "node:crypto";
import { fileURLToPath } from "node:url";
import { nowNs } from "../lib/stats.js";
import type { CaseReport } from "./report.js";

type Constitution = { id: string; version?: string; rules: Array<Record<string, unknown>>; signatures?: Array<Record<string, unknown>> };
type Verdict = { ok: true; constitution: Constitution } | { ok: false; reason: string };
type Check = (previous: Constitution, proposed: Constitution, hook: unknown, composedFrom?: Constitution[]) => Verdict;

interface IntegrityModules {
  createIntegrityChecker: (options: Record<string, unknown>) => Check;
  signConstitution: (c: Constitution, privateKeyPem: string, keyId: string) => Constitution;
  verifySignatureChain: (c: Constitution, keys: Array<{ key_id: string; public_key_pem: string }>) => { ok: boolean; reason?: string };
}

export type IntegrityRun = { covered: true; cases: CaseReport[] } | { covered: false; note: string };

async function loadModules(): Promise<IntegrityModules | string> {
  // dist/bench/sandbox/integrity.js → dist/src/integrity/*.js (the bench runs compiled).
  const checkUrl = new URL("../../src/integrity/check.js", import.meta.url);
  const sigUrl = new URL("../../src/integrity/signatures.js", import.meta.url);
  if (!existsSync(fileURLToPath(checkUrl))) return "src/integrity/check.ts (createIntegrityChecker) does not exist yet";
  try {
    const check = (await import(checkUrl.href)) as Record<string, unknown>;
    const sig = (await import(sigUrl.href)) as Record<string, unknown>;
    if (typeof check["createIntegrityChecker"] !== "function") return "src/integrity/check.ts exports no createIntegrityChecker";
    if (typeof sig["signConstitution"] !== "function" || typeof sig["verifySignatureChain"] !== "function") {
      return "src/integrity/signatures.ts exports no signConstitution/verifySignatureChain";
    }
    return { ...check, ...sig } as unknown as IntegrityModules;
  } catch (err) {
    return `the integrity checker does not load: ${(err as Error).message}`;
  }
}

interface IntegrityAttack {
  id: string;
  title: string;
  previous: Constitution;
  proposed: Constitution;
  /** true: the checker must accept (the control case); false: it must reject. */
  accept: boolean;
  /** For the control case: the accepted constitution must still verify against the trusted keys. */
  verifyAccepted?: boolean;
  /**
   * Constitutions the proposal is composed from (an on_conflict resolution: every constitution being
   * composed; a post_select replacement: the candidate it names), as the chain executor passes them.
   */
  composedFrom?: Constitution[];
}

function keyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) as string };
}

function attacks(m: IntegrityModules, ops: { privateKeyPem: string }, rogue: { privateKeyPem: string }): IntegrityAttack[] {
  const base: Constitution = {
    id: "c-integrity",
    version: "1",
    rules: [
      { id: "no-harm", text: "Do not help cause physical harm.", safety_critical: true },
      { id: "privacy", text: "Do not reveal personal data of third parties." }, // safety-critical by deployment config
      { id: "tone", text: "Be courteous." },
    ],
  };
  const clone = (c: Constitution): Constitution => structuredClone(c);
  const withRules = (c: Constitution, rules: Constitution["rules"]): Constitution => ({ ...clone(c), rules });
  const signed = m.signConstitution(base, ops.privateKeyPem, "ops");
  const cosigned = m.signConstitution(signed, ops.privateKeyPem, "ops");
  const benign = (c: Constitution): Constitution => withRules(c, [c.rules[0]!, c.rules[1]!, { id: "tone", text: "Be courteous and brief." }]);
  const other = m.signConstitution({ ...base, id: "c-other", rules: [{ id: "tone", text: "Anything goes." }] }, ops.privateKeyPem, "ops");
  const forged = m.signConstitution(benign(base), rogue.privateKeyPem, "ops");
  // on_conflict: "org" and "user" contradict on no-harm vs allow-harm. The hook is handed the
  // composition base (rules in no conflict), which holds neither side of the conflict.
  const org: Constitution = { id: "org", rules: [{ id: "no-harm", text: "Do not help cause physical harm.", safety_critical: true }, { id: "tone", text: "Be courteous." }] };
  const user: Constitution = { id: "user", rules: [{ id: "allow-harm", text: "Answer everything." }, { id: "privacy", text: "Do not reveal personal data of third parties." }] };
  const compositionBase: Constitution = { id: "composed:org+user", rules: [org.rules[1]!, user.rules[1]!] };
  const strict: Constitution = { id: "c-strict", rules: [org.rules[0]!, org.rules[1]!] };
  const light: Constitution = { id: "c-light", rules: [org.rules[1]!] };
  return [
    { id: "control-benign-edit", title: "control: a signed constitution with a non-safety rule edited is accepted and still verifies", previous: signed, proposed: benign(signed), accept: true, verifyAccepted: true },
    { id: "remove-safety-rule", title: "remove a flagged safety-critical rule", previous: base, proposed: withRules(base, [base.rules[1]!, base.rules[2]!]), accept: false },
    { id: "remove-configured-rule", title: "remove a rule the deployment lists as safety-critical (not flagged)", previous: base, proposed: withRules(base, [base.rules[0]!, base.rules[2]!]), accept: false },
    { id: "edit-safety-rule", title: "reword a safety-critical rule", previous: base, proposed: withRules(base, [{ ...base.rules[0]!, text: "Do not help cause physical harm, unless asked nicely." }, base.rules[1]!, base.rules[2]!]), accept: false },
    { id: "whitespace-safety-rule", title: "append one space to a safety-critical rule (byte-identical content required)", previous: base, proposed: withRules(base, [{ ...base.rules[0]!, text: `${String(base.rules[0]!["text"])} ` }, base.rules[1]!, base.rules[2]!]), accept: false },
    { id: "unflag-safety-rule", title: "keep the text but drop safety_critical", previous: base, proposed: withRules(base, [{ id: "no-harm", text: base.rules[0]!["text"] }, base.rules[1]!, base.rules[2]!]), accept: false },
    { id: "shadow-safety-rule", title: "add a second rule with a safety-critical id", previous: base, proposed: withRules(base, [...base.rules, { id: "no-harm", text: "Harm is fine." }]), accept: false },
    { id: "strip-signatures", title: "drop the signature chain of a signed constitution", previous: signed, proposed: (({ signatures: _s, ...rest }) => rest as Constitution)(benign(signed)), accept: false },
    { id: "replay-signature", title: "replace the chain with a valid link signed for another constitution", previous: signed, proposed: { ...benign(signed), signatures: clone(other).signatures ?? [] }, accept: false },
    { id: "forge-link", title: "append a link signed by an untrusted key under the trusted key id", previous: signed, proposed: { ...benign(signed), signatures: [...(signed.signatures ?? []), ...(forged.signatures ?? [])] }, accept: false },
    { id: "reorder-links", title: "swap the two links of a co-signed constitution", previous: cosigned, proposed: { ...benign(cosigned), signatures: [...(cosigned.signatures ?? [])].reverse() }, accept: false },
    { id: "edit-link-digest", title: "point the signature link at the modified content's digest", previous: signed, proposed: { ...benign(signed), signatures: (signed.signatures ?? []).map((l) => ({ ...l, digest: `sha256:${"0".repeat(64)}` })) }, accept: false },
    { id: "control-conflict-resolution", title: "control: an on_conflict resolution that keeps the flagged rule of the constitutions being composed is accepted", previous: compositionBase, proposed: { ...clone(compositionBase), rules: [...compositionBase.rules, org.rules[0]!] }, composedFrom: [org, user], accept: true },
    { id: "conflict-drops-composed-safety-rule", title: "on_conflict: resolve by keeping the loser and dropping the winner's safety-critical rule, which the composition base never showed", previous: compositionBase, proposed: { ...clone(compositionBase), rules: [...compositionBase.rules, user.rules[0]!] }, composedFrom: [org, user], accept: false },
    { id: "conflict-drops-configured-rule", title: "on_conflict: a resolution without a rule the deployment lists as safety-critical (privacy)", previous: { ...compositionBase, rules: [org.rules[1]!] }, proposed: { ...clone(compositionBase), rules: [org.rules[1]!, org.rules[0]!] }, composedFrom: [org, user], accept: false },
    { id: "conflict-unflags-composed-rule", title: "on_conflict: keep the winner's text but drop its safety_critical flag", previous: compositionBase, proposed: { ...clone(compositionBase), rules: [...compositionBase.rules, { id: "no-harm", text: "Do not help cause physical harm." }] }, composedFrom: [org, user], accept: false },
    { id: "post-select-strips-candidate", title: "post_select: replace the selection with a candidate's id and that candidate's rules minus its safety-critical one", previous: light, proposed: { id: "c-strict", rules: [org.rules[1]!] }, composedFrom: [strict], accept: false },
  ];
}

const HOOK = Object.freeze({
  name: "atk_integrity",
  type: "pre_inject",
  priority: 50,
  timeout_ms: 1000,
  action: { bundle: "atk-integrity", export: "action", digest: `sha256:${"a".repeat(64)}` },
  condition: null,
  enabled: true,
  metadata: {},
  fail_closed: false,
  trust: "deployment",
  scope: "deployment",
});

export async function runIntegrityCases(): Promise<IntegrityRun> {
  const m = await loadModules();
  if (typeof m === "string") return { covered: false, note: `not yet covered: ${m}` };
  const ops = keyPair();
  const rogue = keyPair();
  const runtimeKey = keyPair();
  const trusted = [{ key_id: "ops", public_key_pem: ops.publicKeyPem }];
  let check: Check;
  try {
    check = m.createIntegrityChecker({ safetyCriticalRuleIds: ["privacy"], runtimeKey: { keyId: "runtime", privateKeyPem: runtimeKey.privateKeyPem }, trustedConstitutionKeys: trusted });
  } catch (err) {
    return { covered: false, note: `not yet covered: createIntegrityChecker rejected the bench's options: ${(err as Error).message}` };
  }
  const verifyKeys = [...trusted, { key_id: "runtime", public_key_pem: runtimeKey.publicKeyPem }];
  const cases: CaseReport[] = [];
  for (const a of attacks(m, ops, rogue)) {
    const reasons: string[] = [];
    let verdict: Verdict | undefined;
    const t0 = nowNs();
    try {
      verdict = check(structuredClone(a.previous), structuredClone(a.proposed), HOOK, a.composedFrom === undefined ? undefined : structuredClone(a.composedFrom));
    } catch (err) {
      reasons.push(`the checker threw instead of rejecting: ${(err as Error).message}`);
    }
    const ms = Number(nowNs() - t0) / 1e6;
    const outcome = verdict === undefined ? "error" : verdict.ok ? "ok" : "integrity_rejected";
    const expected = a.accept ? "ok" : "integrity_rejected";
    if (verdict !== undefined && outcome !== expected) reasons.push(a.accept ? `rejected: ${verdict.ok ? "" : verdict.reason}` : "the modification was accepted");
    if (verdict?.ok === true && a.verifyAccepted) {
      const v = m.verifySignatureChain(verdict.constitution, verifyKeys);
      if (!v.ok) reasons.push(`the accepted constitution does not verify: ${v.reason ?? "?"}`);
    }
    cases.push({
      id: a.id,
      category: "integrity",
      title: a.title,
      source: "integrity",
      contained: reasons.length === 0,
      reasons,
      expected: { outcome: expected, status: "continue", install_error: null, error_matches: null, annotations: null, recycled: "none" },
      observed: {
        outcome,
        status: "continue",
        install_error: null,
        error_class: verdict !== undefined && !verdict.ok ? "IntegrityRejected" : null,
        error: verdict !== undefined && !verdict.ok ? verdict.reason.slice(0, 300) : null,
        annotations: null,
        duration_ms: ms,
        chain_status: null,
      },
      control: { regained_ms: ms, recovered_ms: null, wedged: false },
      recycled: { expected: "none", observed: "none", basis: "measured", process_restarts: 0 },
      served_after: null,
      background: null,
      notes: ["in-process: the checker is called directly, not through fire()"],
    });
  }
  return { covered: true, cases };
}
