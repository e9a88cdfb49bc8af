/**
 * Bounds on text that guest code hands to V8 or ICU work done outside the isolate's heap.
 *
 * isolated-vm's `memoryLimit` counts the V8 heap only. Irregexp parses and compiles a pattern in zone
 * memory outside it, and ICU (normalization, collation, case mapping) works on copies outside it;
 * neither checks for termination. Measured on Node 24.21 / isolated-vm 7.0.1 against a 64 MiB isolate
 * (host RSS peak over the run):
 *
 * | guest code | host RSS | time |
 * |---|---|---|
 * | `"\uFDFA".repeat(2**24).normalize("NFKD")` | +1,218 MB | 3.2 s past a 3 s timeout |
 * | `new RegExp("\\p{L}".repeat(13000), "u")` (65 KB) | +164 MB | 0.6 s |
 * | `new RegExp("\\p{RGI_Emoji}".repeat(1000), "v").test("")` | +1,185 MB | 2.4 s |
 * | `"a".localeCompare("b", {length: 2**25})` | +261 MB | 2 s; `2**32-1` runs for minutes |
 *
 * The prelude enforces these limits inside the isolate (RegExp, `String.prototype.match/matchAll/
 * search`, `RegExp.prototype.compile/@@split/@@matchAll`, `eval`, the Function constructors, the
 * ICU-backed String/Number/BigInt/Date methods); {@link checkBundleCodeText} applies the property
 * escape rule to a bundle's code before V8 parses it (a regular-expression literal is validated, in
 * zone memory, when its script is compiled).
 */
import { VcpError } from "../errors.js";

/**
 * Longest string (UTF-16 code units) handed to ICU by `normalize`, `localeCompare`,
 * `toLocaleUpperCase` and `toLocaleLowerCase`: NFKD expands a character up to 18×, so 256 Ki
 * characters cost at most ≈ 20 MB outside the heap.
 */
export const ICU_TEXT_MAX_CHARS = 262_144;

/**
 * Longest text compiled at run time: a RegExp pattern, or an `eval`/`Function` source (which may hold
 * regular-expression literals). The worst pattern of this length measured, `".".repeat(16384)` with
 * flags `ui`, compiles in ≈ 0.3 s and ≈ 11 MB.
 */
export const CODE_TEXT_MAX_CHARS = 16_384;

/**
 * Unicode property escapes (`\p{…}`, `\P{…}`) one run-time text may hold, weighted: ≈ 14 KB of zone
 * memory each with flag `u`, ≈ 1.2 MB for an emoji-sequence property of strings (`\p{RGI_Emoji…}`,
 * flag `v`), which therefore counts {@link STRING_PROPERTY_WEIGHT}.
 */
export const PROPERTY_ESCAPE_BUDGET = 64;
export const STRING_PROPERTY_WEIGHT = 32;
/** The same weighted budget for a whole bundle's code, checked at load: ≤ 32 emoji properties (≈ 40 MB). */
export const BUNDLE_PROPERTY_ESCAPE_BUDGET = 1024;

const STRING_PROPERTY_PREFIX = "RGI_Emoji";

/**
 * Weighted count of property escapes in `text`, stopping once it exceeds `budget`. An escaped
 * backslash (`\\p`) is skipped whole, like the regular-expression parser does. The prelude's
 * `checkCompiledText` applies the same rule inside the isolate.
 *
 * @example
 * ```ts
 * propertyEscapeWeight("\\p{L}+\\p{RGI_Emoji}", 1024); // 33
 * ```
 */
export function propertyEscapeWeight(text: string, budget: number): number {
  let weight = 0;
  for (let i = text.indexOf("\\"); i !== -1 && weight <= budget; i = text.indexOf("\\", i + 2)) {
    const c = text.charCodeAt(i + 1);
    if (c !== 0x70 /* p */ && c !== 0x50 /* P */) continue;
    weight += text.startsWith(STRING_PROPERTY_PREFIX, i + 3) ? STRING_PROPERTY_WEIGHT : 1;
  }
  return weight;
}

/**
 * Refuse a bundle whose code holds more weighted property escapes than
 * {@link BUNDLE_PROPERTY_ESCAPE_BUDGET}, before V8 parses (and so validates the literals of) it.
 *
 * @example
 * ```ts
 * checkBundleCodeText("policy", code); // throws VcpError("INVALID_BUNDLE") naming the limit
 * ```
 */
export function checkBundleCodeText(bundleName: string, code: string): void {
  const weight = propertyEscapeWeight(code, BUNDLE_PROPERTY_ESCAPE_BUDGET);
  // SECURITY: regular-expression literals are parsed in zone memory outside the isolate's limit.
  if (weight > BUNDLE_PROPERTY_ESCAPE_BUDGET) {
    throw new VcpError(
      "INVALID_BUNDLE",
      `bundle ${bundleName}: code holds more Unicode property escapes (\\p{…}) than the sandbox allows (${BUNDLE_PROPERTY_ESCAPE_BUDGET}; an emoji-sequence property counts ${STRING_PROPERTY_WEIGHT})`,
      { bundle: bundleName, rule: "property_escapes", limit: BUNDLE_PROPERTY_ESCAPE_BUDGET },
    );
  }
}
