/**
 * Semantic-version precedence (semver.org §11) for the downgrade check of `bundles.install`.
 * Hand-written because it is a dozen lines and the project has no semver dependency; it only
 * orders versions that the manifest schema already accepted.
 */

/**
 * Compare two semantic versions: negative when `a` < `b`, 0 when equal in precedence (build
 * metadata is ignored), positive when `a` > `b`.
 *
 * @example
 * ```ts
 * compareVersions("1.2.0", "1.10.0") < 0; // true
 * compareVersions("1.0.0-rc.1", "1.0.0") < 0; // true
 * ```
 */
export function compareVersions(a: string, b: string): number {
  const [coreA, preA] = split(a);
  const [coreB, preB] = split(b);
  for (let i = 0; i < 3; i++) {
    const d = compareNumeric(coreA[i] ?? "0", coreB[i] ?? "0");
    if (d !== 0) return d;
  }
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  const idsA = preA.split(".");
  const idsB = preB.split(".");
  for (let i = 0; i < Math.min(idsA.length, idsB.length); i++) {
    const x = idsA[i]!;
    const y = idsB[i]!;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    let d: number;
    if (nx && ny) d = compareNumeric(x, y);
    else if (nx !== ny) d = nx ? -1 : 1; // numeric identifiers sort before alphanumeric ones
    else d = x < y ? -1 : x > y ? 1 : 0;
    if (d !== 0) return d;
  }
  return idsA.length - idsB.length;
}

function split(version: string): [string[], string | undefined] {
  const noBuild = version.split("+")[0] ?? version;
  const dash = noBuild.indexOf("-");
  const core = dash === -1 ? noBuild : noBuild.slice(0, dash);
  return [core.split("."), dash === -1 ? undefined : noBuild.slice(dash + 1)];
}

/** Compare decimal digit strings of any length without losing precision. */
function compareNumeric(x: string, y: string): number {
  const a = x.replace(/^0+(?=\d)/, "");
  const b = y.replace(/^0+(?=\d)/, "");
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
