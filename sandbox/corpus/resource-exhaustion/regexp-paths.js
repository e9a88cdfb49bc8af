/* corpus {"id":"regexp-paths","category":"resource-exhaustion","title":"every way to make V8 compile a pattern or source text (constructor, subclass, compile, match/matchAll/search strings, RegExp-likes through @@split/@@matchAll, eval, the four Function constructors) is bounded","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"refused":{"new":"RangeError","call":"RangeError","subclass":"RangeError","reflect":"RangeError","species":"RangeError","compile":"RangeError","regexp_like":"RangeError","match":"RangeError","matchAll":"RangeError","search":"RangeError","split_like":"TypeError","matchAll_like":"TypeError","eval":"RangeError","eval_literal":"RangeError","function":"RangeError","function_args":"RangeError","async_function":"RangeError","generator":"RangeError","async_generator":"RangeError","long_pattern":"RangeError"},"legacy_statics":"undefined","still_works":{"re":true,"split":["a","b"],"match":"b","eval":2}},"recycled":"none"}} */
// Three emoji-sequence properties weigh 96 against a budget of 64: cheap enough (≈ 4 MB) that each
// probe would succeed without the wrappers, so the test fails unless every path is bounded.
const HEAVY = "\\p{RGI_Emoji}".repeat(3);
function name(f) {
  try { f(); return "returned"; } catch (e) { return e && e.constructor ? e.constructor.name : typeof e; }
}
export function action(input) {
  const like = { [Symbol.match]: true, source: HEAVY, flags: "v", constructor: undefined };
  const refused = {
    new: name(() => new RegExp(HEAVY, "v")),
    call: name(() => RegExp(HEAVY, "v")),
    subclass: name(() => new (class extends RegExp {})(HEAVY, "v")),
    reflect: name(() => Reflect.construct(/x/.constructor, [HEAVY, "v"])),
    species: name(() => new (RegExp[Symbol.species])(HEAVY, "v")),
    compile: name(() => /x/v.compile(HEAVY, "v")),
    regexp_like: name(() => new RegExp(like)),
    match: name(() => "x".match({ toString: () => HEAVY })),
    matchAll: name(() => [..."x".matchAll(HEAVY)]),
    search: name(() => "x".search(HEAVY)),
    split_like: name(() => RegExp.prototype[Symbol.split].call(like, "x")),
    matchAll_like: name(() => RegExp.prototype[Symbol.matchAll].call(like, "x")),
    eval: name(() => (0, eval)("/" + HEAVY + "/v")),
    eval_literal: name(() => (0, eval)("(function () { return 1; /" + HEAVY + "/v; })")),
    function: name(() => Function("return /" + HEAVY + "/v")),
    function_args: name(() => Function("a = /" + HEAVY.slice(0, 26) + "/v", "b = /" + HEAVY.slice(26) + "/v", "return a")),
    async_function: name(() => new (Object.getPrototypeOf(async function () {}).constructor)("return /" + HEAVY + "/v")),
    generator: name(() => new (Object.getPrototypeOf(function* () {}).constructor)("yield /" + HEAVY + "/v")),
    async_generator: name(() => new (Object.getPrototypeOf(async function* () {}).constructor)("yield /" + HEAVY + "/v")),
    long_pattern: name(() => new RegExp("(?:a|b)".repeat(3000))),
  };
  "PII 123-45-6789".replace(/(\d{3})-(\d{2})-(\d{4})/, "$1");
  return {
    status: "continue",
    annotations: {
      refused,
      legacy_statics: typeof RegExp.$1,
      still_works: { re: /\p{L}+/u.test("é"), split: "a,b".split(/,/), match: "abc".match("b")[0], eval: (0, eval)("1 + 1") },
    },
  };
}
