/* corpus {"id":"icu-paths","category":"resource-exhaustion","title":"every built-in that reaches ICU refuses text over 256 Ki characters, locale lists over 8 tags and option strings over 64 characters, and the originals cannot be restored","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"refused":{"normalize":"RangeError","normalize_nfc":"RangeError","localeCompare_this":"RangeError","localeCompare_that":"RangeError","toLocaleUpperCase":"RangeError","toLocaleLowerCase":"RangeError","localeCompare_locales":"RangeError","upper_locales":"RangeError","number_locales":"RangeError","bigint_locales":"RangeError","date_locales":"RangeError","date_string_locales":"RangeError","time_string_locales":"RangeError","array_locales":"RangeError","long_tag":"RangeError","boxed_this":"RangeError"},"restore":{"assign":"TypeError","define":"TypeError","intl":"undefined","same_after":true},"options":{"time_zone":true,"collation":true,"currency":true},"small":{"nfkd":"fi","cmp":-1,"up":"İ","num":"1,234.5","eur":"€1,234.50","base":0}},"recycled":"none"}} */
// Each probe is just over a cap, so it would run (and cost ICU memory) without the sandbox's
// wrappers; with them every one is a RangeError raised before ICU sees the argument.
const OVER = 2 ** 18 + 1;
function name(f) {
  try { f(); return "returned"; } catch (e) { return e && e.constructor ? e.constructor.name : typeof e; }
}
export function action(input) {
  const big = "\u0101".repeat(OVER);
  const tags = Array.from({ length: 9 }, () => "en");
  const refused = {
    normalize: name(() => big.normalize("NFKD")),
    normalize_nfc: name(() => big.normalize()),
    localeCompare_this: name(() => big.localeCompare("a")),
    localeCompare_that: name(() => "a".localeCompare(big)),
    toLocaleUpperCase: name(() => big.toLocaleUpperCase()),
    toLocaleLowerCase: name(() => big.toLocaleLowerCase("tr")),
    localeCompare_locales: name(() => "a".localeCompare("b", tags)),
    upper_locales: name(() => "a".toLocaleUpperCase(tags)),
    number_locales: name(() => (1).toLocaleString(tags)),
    bigint_locales: name(() => (1n).toLocaleString(tags)),
    date_locales: name(() => new Date(0).toLocaleString(tags)),
    date_string_locales: name(() => new Date(0).toLocaleDateString(tags)),
    time_string_locales: name(() => new Date(0).toLocaleTimeString(tags)),
    array_locales: name(() => [1, 2].toLocaleString(tags)),
    long_tag: name(() => "a".localeCompare("b", "en-" + "a".repeat(200))),
    boxed_this: name(() => String.prototype.normalize.call({ toString: () => big })),
  };
  // V8 copies an option string outside the heap before rejecting it: the sandbox refuses it first.
  const long = "a".repeat(1000);
  const optionRefused = (f) => { try { f(); return false; } catch (e) { return /option \w+ longer than 64 characters/.test(String(e && e.message)); } };
  const options = {
    time_zone: optionRefused(() => new Date(0).toLocaleString("en", { timeZone: long })),
    collation: optionRefused(() => "a".localeCompare("b", "en", { collation: long })),
    currency: optionRefused(() => (1).toLocaleString("en", { style: "currency", currency: { toString: () => long } })),
  };
  const before = String.prototype.normalize;
  const restore = {
    assign: name(() => { String.prototype.normalize = function () { return "x"; }; }),
    define: name(() => Object.defineProperty(String.prototype, "localeCompare", { value: () => 0 })),
    intl: typeof globalThis.Intl,
    same_after: String.prototype.normalize === before,
  };
  const small = {
    nfkd: "\ufb01".normalize("NFKD"), cmp: "a".localeCompare("b"), up: "i".toLocaleUpperCase("tr"), num: (1234.5).toLocaleString("en-US"),
    eur: (1234.5).toLocaleString("en-US", { style: "currency", currency: "EUR" }), base: "a".localeCompare("A", "en", { sensitivity: "base" }),
  };
  return { status: "continue", annotations: { refused, restore, options, small } };
}
