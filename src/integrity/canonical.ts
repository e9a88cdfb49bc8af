import canonicalizeLib from "canonicalize";

// canonicalize ships CommonJS typings whose default export is callable at run time.
const canonicalizeFn = canonicalizeLib as unknown as (value: unknown) => string | undefined;

/**
 * RFC 8785 (JCS) canonical JSON text of a JSON value, through the `canonicalize` library.
 * Throws on values JSON cannot represent (undefined at the top, functions, symbols).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeFn(value);
  if (text === undefined) throw new TypeError("value has no canonical JSON form");
  return text;
}
