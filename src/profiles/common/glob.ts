/**
 * Globs of profile matchers (repo-yaml `matcher`/`match.ability_scope`/`match.only_if_changed_paths`,
 * ai-memory namespace matchers), compiled to RE2.
 *
 * Why not picomatch: it compiles a glob to a backtracking JavaScript RegExp, and a glob such as
 * `*a*a*a*a*a*a*a*a*a*a*b` (written by an untrusted repository's `.system/hooks/` YAML) makes one
 * match of a 30-character `ability_id` take over a second and a 40-character one minutes — on the
 * host, outside any isolate or timeout. RE2 matches in time linear in the input.
 *
 * Syntax (the common glob subset; `dot: true` semantics — a leading dot is an ordinary character):
 *
 * | glob | matches |
 * |---|---|
 * | `*` | any run of characters except `/` |
 * | `?` | one character except `/` |
 * | `**` as a whole path segment (`**`, `a/**`, `**‌/b`, `a/**‌/b`) | any number of segments, none included |
 * | `[abc]` `[a-z]` `[!a-z]` `[^a-z]` | one character of (not of) the class, never `/` |
 * | `{a,b,c}` (nestable) | one of the alternatives |
 * | `\x` | the character `x` literally |
 * | leading `!` | negation: everything the rest does not match |
 *
 * Anything else is literal. `**` that is not a whole segment (`a**b`) is `*`. An empty text matches
 * only an empty glob.
 */
import { RE2JS } from "re2js";
import { chargeScan, type ScanMeter } from "./scan.js";

/** Longest glob accepted: compiling is linear, but a matcher is not a place for a novel. */
export const MAX_GLOB_LENGTH = 1024;

/** A glob that cannot be compiled: the message names what is wrong (callers prefix the field). */
export class GlobError extends Error {}

function quote(ch: string): string {
  return /[A-Za-z0-9_]/.test(ch) ? ch : ch === "/" ? "/" : `\\x{${ch.codePointAt(0)!.toString(16)}}`;
}

/** The RE2 source of `glob` (no anchors); `depth` counts open `{` for nested alternatives. */
function translate(glob: string): string {
  let out = "";
  let i = 0;
  const braces: number[] = []; // positions in `out` where a `(?:` of an open `{` starts
  const atSegmentStart = (at: number): boolean => at === 0 || glob[at - 1] === "/";
  while (i < glob.length) {
    const ch = glob[i]!;
    if (ch === "\\") {
      const next = glob[i + 1];
      if (next === undefined) throw new GlobError("ends with a lone backslash");
      out += quote(next);
      i += 2;
      continue;
    }
    if (ch === "*") {
      let j = i;
      while (glob[j] === "*") j++;
      const whole = j - i >= 2 && atSegmentStart(i) && (j === glob.length || glob[j] === "/");
      if (!whole) {
        out += "[^/]*";
      } else if (j === glob.length) {
        // `**` at the end: the rest of the path (`a/**` also matches `a` itself, as in picomatch).
        if (out.endsWith("/")) out = `${out.slice(0, -1)}(?:/.*)?`;
        else out += ".*";
      } else {
        // `**/`: zero or more whole segments.
        out += "(?:[^/]*/)*";
        j++; // the `/` is part of the repetition
      }
      i = j;
      continue;
    }
    if (ch === "?") {
      out += "[^/]";
      i++;
      continue;
    }
    if (ch === "[") {
      const end = glob.indexOf("]", i + 2); // `[]...]`: a `]` right after `[` is a member
      if (end === -1) {
        out += quote(ch);
        i++;
        continue;
      }
      let body = glob.slice(i + 1, end);
      let negate = false;
      if (body.startsWith("!") || body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      let cls = "";
      for (let k = 0; k < body.length; k++) {
        const c = body[k]!;
        if (c === "-" && k > 0 && k < body.length - 1) cls += "-";
        else if (c === "\\" && k + 1 < body.length) cls += quote(body[++k]!);
        else cls += quote(c);
      }
      if (cls === "") throw new GlobError("has an empty character class");
      out += negate ? `[^/${cls}]` : `[${cls}]`;
      i = end + 1;
      continue;
    }
    if (ch === "{") {
      braces.push(out.length);
      out += "(?:";
      i++;
      continue;
    }
    if (ch === "," && braces.length > 0) {
      out += "|";
      i++;
      continue;
    }
    if (ch === "}" && braces.length > 0) {
      braces.pop();
      out += ")";
      i++;
      continue;
    }
    out += quote(ch);
    i++;
  }
  if (braces.length > 0) throw new GlobError("has an unclosed '{'");
  return out;
}

/**
 * A compiled glob: a whole-string test that charges `meter` (common/scan.ts) for the text before
 * matching it, and the size of its RE2 program, the per-character factor of its cost.
 */
export interface CompiledGlob {
  (text: string, meter?: ScanMeter): boolean;
  readonly programSize: number;
}

/**
 * Compile `glob` to a whole-string test running in linear time. Throws {@link GlobError} naming what
 * is wrong (too long, lone backslash, unclosed brace).
 *
 * @example
 * ```ts
 * compileGlob("fs.*")("fs.write");          // true
 * compileGlob("src/**")("src/a/b.ts");      // true
 * compileGlob("*.{ts,js}")("dir/x.ts");     // false: `*` stops at `/`
 * ```
 */
export function compileGlob(glob: string): CompiledGlob {
  // SECURITY: a length cap before any work on the pattern.
  if (glob.length > MAX_GLOB_LENGTH) throw new GlobError(`is ${glob.length} characters long; the limit is ${MAX_GLOB_LENGTH}`);
  const negated = glob.startsWith("!");
  const source = translate(negated ? glob.slice(1) : glob);
  let re: RE2JS;
  try {
    // SECURITY: RE2 (linear time), never a backtracking RegExp: the glob may come from an untrusted
    // repository and the text from the agent; matching runs on the host, outside any isolate.
    re = RE2JS.compile(`^(?:${source})$`, RE2JS.DOTALL);
  } catch (err) {
    throw new GlobError(`cannot be compiled: ${(err as Error).message}`);
  }
  const programSize = re.programSize();
  const test = (text: string, meter?: ScanMeter): boolean => {
    // An empty text is no path: only an empty glob matches it (picomatch's rule, kept).
    if (text === "") return (source === "") !== negated;
    chargeScan(meter, text.length, programSize);
    return re.matches(text) !== negated;
  };
  return Object.assign(test, { programSize });
}
