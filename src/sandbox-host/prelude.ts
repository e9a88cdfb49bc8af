/**
 * Guest-side code run first in every sandbox context (DESIGN §4.3). It is kept here as a string
 * constant rather than under `sandbox/prelude/` so that `tsc` output carries it without a copy step
 * and no file path has to be resolved at run time.
 *
 * ```
 *  host                                   guest context
 *  ────                                   ─────────────
 *  evalClosureSync(PRELUDE, [cbs, cfg]) ─▶ capture intrinsics, build frozen `vcp`, strip global,
 *                                          replace ArrayBuffer, install the `__vcp_bundle` trap;
 *                                          return {finish,run,deliver}
 *  script.runSync(bundle code)          ─▶ bundle top level assigns __vcp_bundle (trapped)
 *  finish()                             ─▶ capture exports, delete trap, tame + deep-freeze intrinsics,
 *                                          lock global bindings; return "name\nname…"
 *  run(export, callId, now, native, ...inputJson pieces) ─▶ "R<n>:<result><chain_state>" | "T<n>:<msg><stack>" | "I<msg>" | "P<id>"
 *                                          (a reply longer than config.pieceChars as pieces {n, 0: …, 1: …})
 *  settledCb(id, reply)  (after "P")   ◀─  the guest promise settled: the same encoding, strings or pieces
 *  deliver(id, ...reply pieces)  (vcp.fetch only) ─▶ settles the guest promise of one fetch
 * ```
 *
 * Rules the prelude follows because bundle code runs in the same realm between the prelude and
 * `finish()` and may have replaced any built-in method by then:
 * - every intrinsic it uses is captured at the top, before any bundle code runs;
 * - raw host callbacks (`$0`..`$2`, `$4`) are only ever called directly (`cb(x)`), never passed to or through
 *   an overridable function (`.call`, `.apply`, array methods, iterators), and never stored in a
 *   guest-reachable object;
 * - no array writes or iteration protocols where a guest setter/iterator could observe closure values;
- descriptors it passes to `Object.defineProperty` have a null prototype (no inherited `get`/`value`);
- no `in` on ordinary objects (an inherited `Object.prototype.value` would answer);
- an async result is never handed to isolated-vm as a promise (its `Then`/`Catch` would go through
  guest-replaceable `Promise.prototype.then` and species): the prelude chains with the captured
  intrinsic `then` and reports the settlement through a host callback, as a string.
 */
import { jsonTextDepth } from "../model/json-bounds.js";

export const PRELUDE_SOURCE = String.raw`"use strict"; // SECURITY: strict frames are censored from CallSite.getFunction/getThis and fn.caller, so bundle code cannot reach prelude closures.
const logCb = $0, sha256Cb = $1, fetchCb = $2, settledCb = $4; // SECURITY: raw callbacks live only in this closure, never on the global or a reachable object.
const G = globalThis;
// SECURITY: intrinsics captured before bundle code runs; later replacements cannot subvert the prelude.
const ObjectFreeze = Object.freeze, ObjectCreate = Object.create, ObjectKeys = Object.keys;
const ObjectDefineProperty = Object.defineProperty, ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ObjectGetPrototypeOf = Object.getPrototypeOf, ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
const ReflectOwnKeys = Reflect.ownKeys, ReflectApply = Reflect.apply, ReflectDeleteProperty = Reflect.deleteProperty;
const ReflectConstruct = Reflect.construct, ObjectHasOwn = Object.hasOwn;
const JSONparse = JSON.parse, JSONstringify = JSON.stringify, ArrayIsArray = Array.isArray;
const StringCtor = String, TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, PromiseCtor = Promise;
const PromiseReject = Promise.reject;
const PromiseProto = Promise.prototype, PromiseThen = Promise.prototype.then; // SECURITY: native promises settle through the intrinsic then, whatever the bundle did to Promise.prototype.
const ObjectProto = Object.prototype, FunctionProto = Function.prototype, ArrayProto = Array.prototype;
const ErrorCtors = [Error, AggregateError, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];
if (typeof SuppressedError === "function") ErrorCtors[ErrorCtors.length] = SuppressedError;
const StringSlice = String.prototype.slice, StringCharCodeAt = String.prototype.charCodeAt, StringIndexOf = String.prototype.indexOf;
const ReflectHas = Reflect.has, SyntaxErrorCtor = SyntaxError;
const WeakSetCtor = WeakSet, WeakSetHas = WeakSet.prototype.has, WeakSetAdd = WeakSet.prototype.add;
const config = JSONparse($3);
const RESULT_BYTES = config.resultBytes, LOG_LINE_BYTES = config.logLineBytes, SHA256_MAX = config.sha256MaxChars;
const JSON_DEPTH = config.jsonDepth; // the runtime's input depth bound: one rule for what goes in and what comes out
// SECURITY: the host's own scanner (model/json-bounds.ts), embedded as source; it calls no method a bundle could replace.
const jsonTextDepth = ` + String(jsonTextDepth) + String.raw`;
// Whether JSON text nests deeper than limit (model/json-bounds.ts jsonTextExceeds): nesting never exceeds
// the number of "{" and "[" characters, which the captured indexOf counts far faster than the scan walks
// the text; only a text with more of them than limit is scanned.
// SECURITY: captured intrinsics only (ReflectApply, StringIndexOf): a bundle's replaced indexOf is never called.
function jsonTextExceeds(text, limit) {
  let count = 0;
  for (let i = ReflectApply(StringIndexOf, text, ["{", 0]); i !== -1; i = ReflectApply(StringIndexOf, text, ["{", i + 1])) if (++count > limit) return jsonTextDepth(text, limit) > limit;
  for (let i = ReflectApply(StringIndexOf, text, ["[", 0]); i !== -1; i = ReflectApply(StringIndexOf, text, ["[", i + 1])) if (++count > limit) return jsonTextDepth(text, limit) > limit;
  return false;
}
const MESSAGE_MAX = 1024, STACK_MAX = 4096;
const PIECE_CHARS = config.pieceChars;

function slice(s, a, b) { return ReflectApply(StringSlice, s, [a, b]); }

// Intrinsics that no global name reaches; collected before bundle code can run.
const hiddenRoots = [
  ObjectGetPrototypeOf(function* () {}),
  ObjectGetPrototypeOf(async function () {}),
  ObjectGetPrototypeOf(async function* () {}),
  ObjectGetPrototypeOf(Uint8Array),
  ObjectGetPrototypeOf([][Symbol.iterator]()),
  ObjectGetPrototypeOf(new Map()[Symbol.iterator]()),
  ObjectGetPrototypeOf(new Set()[Symbol.iterator]()),
  ObjectGetPrototypeOf(""[Symbol.iterator]()),
  ObjectGetPrototypeOf(/a/[Symbol.matchAll]("")),
  ObjectGetPrototypeOf((function () { return arguments; })()),
];
function addRoot(f) { try { const r = f(); if (r !== null && (typeof r === "object" || typeof r === "function")) hiddenRoots[hiddenRoots.length] = r; } catch (e) {} }
addRoot(() => ObjectGetPrototypeOf([].values().map((x) => x)));
addRoot(() => ObjectGetPrototypeOf(Iterator.from({ next() { return { done: true }; } })));
addRoot(() => { const s = new Intl.Segmenter().segment("a"); hiddenRoots[hiddenRoots.length] = ObjectGetPrototypeOf(s[Symbol.iterator]()); return ObjectGetPrototypeOf(s); });
addRoot(() => {
  const had = ObjectGetOwnPropertyDescriptor(Error, "prepareStackTrace");
  Error.prepareStackTrace = (e, frames) => frames;
  const frames = new Error().stack;
  if (had === undefined) ReflectDeleteProperty(Error, "prepareStackTrace"); else ObjectDefineProperty(Error, "prepareStackTrace", had);
  return ArrayIsArray(frames) && frames.length > 0 ? ObjectGetPrototypeOf(frames[0]) : null;
});

// ── clock: one instant per call ──
// Counting loop iterations between two edges of any ticking clock turns it into a fine timer, so the
// guest's clocks do not tick while it runs: Date.now(), new Date(), Date() and vcp.now() all return
// callNow, the host's wall-clock time (whole milliseconds) when the current call started (for
// top-level code: when its context was created). Time advances only between calls.
let callNow = config.nowMs; // SECURITY: the only time source guest code has; set by run() from the host, never read from a clock here.

// ── capabilities: guest wrappers that pass only strings/primitives to the captured callbacks ──
const pendingFetches = ObjectCreate(null);
const vcpSource = {
  log(level, message, fields) {
    const l = StringCtor(level);
    if (l !== "debug" && l !== "info" && l !== "warn" && l !== "error") {
      throw new TypeErrorCtor("vcp.log: level must be one of debug, info, warn, error");
    }
    let m = message === undefined ? "" : StringCtor(message);
    if (m.length > LOG_LINE_BYTES) m = slice(m, 0, LOG_LINE_BYTES);
    let f = "";
    if (fields !== undefined && fields !== null) {
      try { f = JSONstringify(fields); } catch (e) { f = "{\"_unserializable\":true}"; }
      if (typeof f !== "string") f = "";
      else if (f.length > LOG_LINE_BYTES) f = "{\"_truncated\":true}";
      else if (jsonTextExceeds(f, JSON_DEPTH)) f = "{\"_too_deep\":true}"; // SECURITY: the host re-checks
    }
    logCb(l, m, f); // SECURITY: only three strings cross to the host.
  },
  sha256(text) {
    const t = StringCtor(text);
    if (t.length > SHA256_MAX) throw new RangeErrorCtor("vcp.sha256: text longer than " + SHA256_MAX + " characters");
    const r = sha256Cb(t); // SECURITY: one string in, one string out.
    if (typeof r !== "string" || r.length !== 64) throw new TypeErrorCtor("vcp.sha256 failed");
    return r;
  },
  now() {
    return callNow; // the same instant as Date.now(): see "clock" below
  },
};
if (fetchCb !== undefined) { // SECURITY: below system trust the capability is absent, not refused.
  vcpSource.fetch = function fetch(url, init) {
    const u = StringCtor(url);
    let initJson = "{}";
    if (init !== undefined && init !== null) {
      let headers = null;
      const h = init.headers;
      if (h !== undefined && h !== null) {
        headers = ObjectCreate(null);
        const keys = ObjectKeys(h);
        for (let i = 0; i < keys.length; i++) headers[keys[i]] = StringCtor(h[keys[i]]);
      }
      const body = init.body === undefined || init.body === null ? null : StringCtor(init.body);
      const method = init.method === undefined ? "GET" : StringCtor(init.method);
      const initObj = ObjectCreate(null); // no inherited toJSON
      initObj.method = method; initObj.headers = headers; initObj.body = body;
      initJson = JSONstringify(initObj);
    }
    const reply = fetchCb(u, initJson); // SECURITY: URL and JSON text only; the host decides before any I/O.
    if (typeof reply !== "string" || reply[0] !== "#") {
      return ReflectApply(PromiseReject, PromiseCtor, [new TypeErrorCtor(typeof reply === "string" ? slice(reply, 1, 1025) : "vcp.fetch refused")]);
    }
    const id = slice(reply, 1);
    return new PromiseCtor((resolve, reject) => { pendingFetches[id] = { resolve: resolve, reject: reject }; });
  };
}
const vcp = ObjectFreeze(vcpSource); // SECURITY: the capability object cannot be altered by one call for the next.

// ── reduce the global to the allowlist + vcp ──
const allow = ObjectCreate(null);
for (let i = 0; i < config.allow.length; i++) allow[config.allow[i]] = true;
const globalKeys = ReflectOwnKeys(G);
for (let i = 0; i < globalKeys.length; i++) {
  const k = globalKeys[i];
  if (typeof k === "string" && allow[k] === true) continue;
  // SECURITY: everything not on the ECMAScript allowlist goes (WebAssembly, SharedArrayBuffer, Atomics, WeakRef, FinalizationRegistry, console); fail closed if it cannot.
  if (!ReflectDeleteProperty(G, k)) throw new TypeErrorCtor("prelude: cannot remove global " + StringCtor(k));
}
ObjectDefineProperty(G, "vcp", { __proto__: null, value: vcp, writable: false, enumerable: false, configurable: false }); // SECURITY: binding cannot be replaced.

// ── ArrayBuffer: no resizable buffers ──
// isolated-vm counts ArrayBuffer memory in its ArrayBuffer::Allocator, which refuses an allocation
// that would take heap + external bytes past memoryLimit ("Array buffer allocation failed"). V8 backs a
// resizable buffer (options.maxByteLength) with reserved pages that never pass through that allocator,
// so resize()/transfer() could grow it without limit. The global constructor is replaced by a wrapper
// that refuses the option; the intrinsic is reachable by no name (built-in frames hide it from CallSites).
const ArrayBufferIntrinsic = ArrayBuffer, ArrayBufferProto = ArrayBuffer.prototype;
const ArrayBufferResizable = ObjectGetOwnPropertyDescriptor(ArrayBufferProto, "resizable").get;
function refuseResizable(what) { throw new RangeErrorCtor(what + ": resizable ArrayBuffers (maxByteLength) are not available in the sandbox"); }
const ArrayBufferWrapper = function ArrayBuffer(length) {
  if (new.target === undefined) throw new TypeErrorCtor("Constructor ArrayBuffer requires 'new'");
  const options = arguments.length > 1 ? arguments[1] : undefined;
  const n = length === undefined ? 0 : +length; // guest valueOf runs here, in a strict frame, not inside the intrinsic
  if (options !== null && (typeof options === "object" || typeof options === "function") && options.maxByteLength !== undefined) {
    refuseResizable("new ArrayBuffer"); // SECURITY: resizable backing stores escape isolated-vm's memoryLimit.
  }
  return ReflectConstruct(ArrayBufferIntrinsic, [n], new.target); // SECURITY: the options object never reaches the intrinsic.
};
ObjectDefineProperty(ArrayBufferWrapper, "prototype", { __proto__: null, value: ArrayBufferProto, writable: false, enumerable: false, configurable: false });
ObjectDefineProperty(ArrayBufferWrapper, "isView", { __proto__: null, value: ArrayBuffer.isView, writable: true, enumerable: false, configurable: true });
ObjectDefineProperty(ArrayBufferWrapper, Symbol.species, ObjectGetOwnPropertyDescriptor(ArrayBufferIntrinsic, Symbol.species));
ObjectDefineProperty(ArrayBufferProto, "constructor", { __proto__: null, value: ArrayBufferWrapper, writable: true, enumerable: false, configurable: true }); // SECURITY: buf.constructor does not lead back to the intrinsic.
ObjectDefineProperty(G, "ArrayBuffer", { __proto__: null, value: ArrayBufferWrapper, writable: true, enumerable: false, configurable: true });
// Defence in depth, should a resizable buffer ever exist: it can neither grow in place nor be
// transferred into a larger resizable buffer (transfer keeps resizability; transferToFixedLength
// allocates a fixed buffer through the counting allocator).
if (!ReflectDeleteProperty(ArrayBufferProto, "resize")) throw new TypeErrorCtor("prelude: cannot remove ArrayBuffer.prototype.resize"); // SECURITY
const ArrayBufferTransfer = ArrayBufferProto.transfer;
if (typeof ArrayBufferTransfer === "function") {
  ObjectDefineProperty(ArrayBufferProto, "transfer", { __proto__: null, writable: true, enumerable: false, configurable: true, value: {
    transfer() {
      if (ReflectApply(ArrayBufferResizable, this, []) === true) refuseResizable("ArrayBuffer.prototype.transfer"); // SECURITY
      return ReflectApply(ArrayBufferTransfer, this, arguments);
    } }.transfer });
}

// Non-constructible methods with the built-in's name, defined like built-in methods (writable,
// non-enumerable, configurable until finish() freezes the prototype).
function replaceMethod(obj, key, method) {
  ObjectDefineProperty(obj, key, { __proto__: null, value: method, writable: true, enumerable: false, configurable: true });
}
function replaceConstructor(proto, wrapper) {
  ObjectDefineProperty(wrapper, "prototype", { __proto__: null, value: proto, writable: false, enumerable: false, configurable: false });
  ObjectDefineProperty(proto, "constructor", { __proto__: null, value: wrapper, writable: true, enumerable: false, configurable: true }); // SECURITY: x.constructor does not lead back to the intrinsic.
}

// ── Date: the frozen clock ──
const DateIntrinsic = Date, DateProto = Date.prototype, DateProtoToString = Date.prototype.toString;
const DateWrapper = function Date(year, monthIndex, day, hours, minutes, seconds, ms) {
  // SECURITY: "now" is callNow; only explicit arguments reach the intrinsic's own clock-free paths.
  if (new.target === undefined) return ReflectApply(DateProtoToString, ReflectConstruct(DateIntrinsic, [callNow], DateIntrinsic), []);
  if (arguments.length === 0) return ReflectConstruct(DateIntrinsic, [callNow], new.target);
  return ReflectConstruct(DateIntrinsic, arguments, new.target);
};
replaceMethod(DateWrapper, "now", { now() { return callNow; } }.now); // SECURITY: no ticking clock inside a call.
replaceMethod(DateWrapper, "parse", DateIntrinsic.parse);
replaceMethod(DateWrapper, "UTC", DateIntrinsic.UTC);
replaceConstructor(DateProto, DateWrapper);
ObjectDefineProperty(G, "Date", { __proto__: null, value: DateWrapper, writable: true, enumerable: false, configurable: true });

// ── ICU: text and locale lists are bounded before ICU sees them ──
// ICU works on copies outside the V8 heap, which isolated-vm's memoryLimit does not count, and does
// not stop for termination: NFKD normalization expands a character up to 18 times ("\uFDFA"), and a
// locales "list" {length: 2**32-1} is walked index by index in C++ for minutes. Intl itself is absent;
// these are the built-ins that reach ICU anyway. The intrinsics are held only by this closure.
const ICU_TEXT_MAX = config.icuTextMaxChars, LOCALE_TAGS_MAX = 8, LOCALE_TAG_MAX = 64;
function thisText(what, v) {
  if (v === null || v === undefined) throw new TypeErrorCtor(what + " called on null or undefined");
  return StringCtor(v);
}
function icuText(what, s) {
  // SECURITY: the cap applies to the primitive string handed to ICU, after every guest conversion ran.
  if (s.length > ICU_TEXT_MAX) throw new RangeErrorCtor(what + ": a string of " + s.length + " characters exceeds the sandbox limit of " + ICU_TEXT_MAX + " (ICU memory is outside the isolate's memory limit)");
  return s;
}
function localeTag(what, tag) {
  if (typeof tag === "string" && tag.length > LOCALE_TAG_MAX) throw new RangeErrorCtor(what + ": a locale tag longer than " + LOCALE_TAG_MAX + " characters");
  return tag;
}
// A fresh list of at most LOCALE_TAGS_MAX tags: the intrinsic never reads the guest's object.
function localeList(what, locales) {
  if (locales === undefined || locales === null || (typeof locales !== "object" && typeof locales !== "function")) return localeTag(what, locales);
  const n = +locales.length;
  const len = n !== n || n < 0 ? 0 : n;
  if (len > LOCALE_TAGS_MAX) throw new RangeErrorCtor(what + ": more than " + LOCALE_TAGS_MAX + " locales");
  const copy = [];
  let j = 0;
  for (let i = 0; i < len; i++) {
    if (!ReflectHas(locales, i)) continue;
    let tag = locales[i];
    if (tag !== null && (typeof tag === "object" || typeof tag === "function")) tag = StringCtor(tag);
    ObjectDefineProperty(copy, j++, { __proto__: null, value: localeTag(what, tag), writable: true, enumerable: true, configurable: true });
  }
  return copy;
}
// Formatting and collation options: V8 copies every string option outside the heap before it checks
// it against the allowed values ({timeZone: "a".repeat(3e7)} took 150 MB of host RSS). The intrinsic
// gets a fresh object holding the ECMA-402 options, read once, strings at most LOCALE_TAG_MAX long.
const LOCALE_OPTION_NAMES = ["localeMatcher", "usage", "sensitivity", "ignorePunctuation", "collation", "numeric", "caseFirst",
  "numberingSystem", "style", "currency", "currencyDisplay", "currencySign", "unit", "unitDisplay", "notation", "compactDisplay",
  "signDisplay", "useGrouping", "roundingMode", "roundingPriority", "roundingIncrement", "trailingZeroDisplay",
  "minimumIntegerDigits", "minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits",
  "calendar", "hour12", "hourCycle", "timeZone", "weekday", "era", "year", "month", "day", "dayPeriod", "hour", "minute",
  "second", "fractionalSecondDigits", "timeZoneName", "formatMatcher", "dateStyle", "timeStyle"];
function localeOptions(what, options) {
  if (options === undefined || options === null || (typeof options !== "object" && typeof options !== "function")) return options;
  const copy = ObjectCreate(null);
  for (let i = 0; i < LOCALE_OPTION_NAMES.length; i++) {
    let v = options[LOCALE_OPTION_NAMES[i]];
    if (v === undefined) continue;
    if (v !== null && (typeof v === "object" || typeof v === "function")) v = StringCtor(v);
    if (typeof v === "string" && v.length > LOCALE_TAG_MAX) throw new RangeErrorCtor(what + ": option " + LOCALE_OPTION_NAMES[i] + " longer than " + LOCALE_TAG_MAX + " characters");
    copy[LOCALE_OPTION_NAMES[i]] = v;
  }
  return copy;
}
const StringProto = String.prototype;
const StringNormalize = StringProto.normalize, StringLocaleCompare = StringProto.localeCompare;
const StringToLocaleUpperCase = StringProto.toLocaleUpperCase, StringToLocaleLowerCase = StringProto.toLocaleLowerCase;
replaceMethod(StringProto, "normalize", { normalize() {
  const s = icuText("String.prototype.normalize", thisText("String.prototype.normalize", this));
  return ReflectApply(StringNormalize, s, [arguments[0]]); // SECURITY: a checked primitive, never the guest's object.
} }.normalize);
replaceMethod(StringProto, "localeCompare", { localeCompare(that) {
  const s = icuText("String.prototype.localeCompare", thisText("String.prototype.localeCompare", this));
  const t = icuText("String.prototype.localeCompare", StringCtor(that));
  const what = "String.prototype.localeCompare";
  return ReflectApply(StringLocaleCompare, s, [t, localeList(what, arguments[1]), localeOptions(what, arguments[2])]); // SECURITY
} }.localeCompare);
replaceMethod(StringProto, "toLocaleUpperCase", { toLocaleUpperCase() {
  const s = icuText("String.prototype.toLocaleUpperCase", thisText("String.prototype.toLocaleUpperCase", this));
  return ReflectApply(StringToLocaleUpperCase, s, [localeList("String.prototype.toLocaleUpperCase", arguments[0])]); // SECURITY
} }.toLocaleUpperCase);
replaceMethod(StringProto, "toLocaleLowerCase", { toLocaleLowerCase() {
  const s = icuText("String.prototype.toLocaleLowerCase", thisText("String.prototype.toLocaleLowerCase", this));
  return ReflectApply(StringToLocaleLowerCase, s, [localeList("String.prototype.toLocaleLowerCase", arguments[0])]); // SECURITY
} }.toLocaleLowerCase);
// Number, BigInt and Date formatting goes through ICU formatters too: their text is bounded by the
// value, their locale lists are not.
function boundLocales(proto, key, what) {
  const intrinsic = proto[key];
  replaceMethod(proto, key, { [key]() {
    return ReflectApply(intrinsic, this, [localeList(what, arguments[0]), localeOptions(what, arguments[1])]); // SECURITY
  } }[key]);
}
boundLocales(Number.prototype, "toLocaleString", "Number.prototype.toLocaleString");
boundLocales(BigInt.prototype, "toLocaleString", "BigInt.prototype.toLocaleString");
boundLocales(DateProto, "toLocaleString", "Date.prototype.toLocaleString");
boundLocales(DateProto, "toLocaleDateString", "Date.prototype.toLocaleDateString");
boundLocales(DateProto, "toLocaleTimeString", "Date.prototype.toLocaleTimeString");

// ── text compiled at run time: RegExp patterns, eval and Function sources ──
// Irregexp parses and compiles a pattern in zone memory outside the V8 heap, without checking for
// termination: 13,000 "\p{L}" (65 KB, flag u) take 160 MB at construction; 1,000 "\p{RGI_Emoji}"
// (flag v) 1.2 GB; 16 MB of "(?:a|b)" ~1 GB. A regular-expression literal is validated the same way
// when its source is parsed, so eval and the Function constructors are bounded too. Every such text
// is at most CODE_TEXT_MAX characters, with at most PROPERTY_ESCAPE_BUDGET weighted property escapes
// (the rule of compiled-text.ts, mirrored here).
const CODE_TEXT_MAX = config.codeTextMaxChars, PROPERTY_ESCAPE_BUDGET = config.propertyEscapeBudget;
const STRING_PROPERTY_WEIGHT = config.stringPropertyWeight, STRING_PROPERTY_PREFIX = "RGI_Emoji";
function checkCompiledText(what, text) {
  if (text.length > CODE_TEXT_MAX) throw new RangeErrorCtor(what + ": " + text.length + " characters exceed the sandbox limit of " + CODE_TEXT_MAX + " for text compiled at run time");
  let weight = 0;
  for (let i = ReflectApply(StringIndexOf, text, ["\\"]); i !== -1; i = ReflectApply(StringIndexOf, text, ["\\", i + 2])) {
    const c = ReflectApply(StringCharCodeAt, text, [i + 1]);
    if (c !== 0x70 && c !== 0x50) continue; // \p, \P; an escaped backslash is skipped whole
    weight += ReflectApply(StringSlice, text, [i + 3, i + 3 + STRING_PROPERTY_PREFIX.length]) === STRING_PROPERTY_PREFIX ? STRING_PROPERTY_WEIGHT : 1;
    if (weight > PROPERTY_ESCAPE_BUDGET) throw new RangeErrorCtor(what + ": more Unicode property escapes (\\p{…}) than the sandbox allows (" + PROPERTY_ESCAPE_BUDGET + ", an emoji-sequence property counts " + STRING_PROPERTY_WEIGHT + ")");
  }
  return text;
}

const RegExpIntrinsic = RegExp, RegExpProto = RegExp.prototype;
const RegExpGlobalGetter = ObjectGetOwnPropertyDescriptor(RegExpProto, "global").get;
const RegExpCompile = RegExpProto.compile, RegExpSplit = RegExpProto[Symbol.split], RegExpMatchAll = RegExpProto[Symbol.matchAll];
const RegExpMatch = RegExpProto[Symbol.match], RegExpSearch = RegExpProto[Symbol.search];
const SymbolMatch = Symbol.match, SymbolMatchAll = Symbol.matchAll, SymbolSearch = Symbol.search, SymbolSplit = Symbol.split;
// Has [[RegExpMatcher]]: its source was bounded when it was created (wrapper or literal).
function isRegExpObject(v) {
  if (v === null || (typeof v !== "object" && typeof v !== "function")) return false;
  try { return typeof ReflectApply(RegExpGlobalGetter, v, []) === "boolean"; } catch (e) { return false; }
}
// What the intrinsic constructor may see: a real RegExp (the intrinsic reads its [[OriginalSource]],
// no guest code) or primitive strings already checked. Nothing changes between check and use.
function regExpArguments(what, pattern, flags) {
  let p, f = flags === undefined ? undefined : StringCtor(flags);
  if (isRegExpObject(pattern)) p = pattern;
  else if (pattern !== null && (typeof pattern === "object" || typeof pattern === "function") && pattern[SymbolMatch]) {
    const source = pattern.source; // IsRegExp: a RegExp-like object lends its source and flags
    p = source === undefined ? undefined : StringCtor(source);
    if (flags === undefined) { const fl = pattern.flags; f = fl === undefined ? undefined : StringCtor(fl); }
  } else p = pattern === undefined ? undefined : StringCtor(pattern);
  if (typeof p === "string") checkCompiledText(what, p); // SECURITY: before the intrinsic parses it.
  return [p, f];
}
function newRegExp(what, pattern, flags) {
  return ReflectConstruct(RegExpIntrinsic, regExpArguments(what, pattern, flags), RegExpIntrinsic);
}
const RegExpWrapper = function RegExp(pattern, flags) {
  if (new.target === undefined && flags === undefined && isRegExpObject(pattern) && pattern.constructor === RegExpWrapper) return pattern;
  const args = regExpArguments("RegExp", pattern, flags);
  return ReflectConstruct(RegExpIntrinsic, args, new.target === undefined ? RegExpIntrinsic : new.target);
};
// Only Symbol.species (and escape, where V8 has it) carry over: the legacy statics (RegExp.$1,
// lastMatch, input, …) would show one call's last match, possibly another session's text, to the next.
ObjectDefineProperty(RegExpWrapper, Symbol.species, ObjectGetOwnPropertyDescriptor(RegExpIntrinsic, Symbol.species));
{ const d = ObjectGetOwnPropertyDescriptor(RegExpIntrinsic, "escape"); if (d !== undefined) ObjectDefineProperty(RegExpWrapper, "escape", d); }
replaceConstructor(RegExpProto, RegExpWrapper);
ObjectDefineProperty(G, "RegExp", { __proto__: null, value: RegExpWrapper, writable: true, enumerable: false, configurable: true });
replaceMethod(RegExpProto, "compile", { compile(pattern, flags) {
  const p = isRegExpObject(pattern) ? pattern : pattern === undefined ? undefined : checkCompiledText("RegExp.prototype.compile", StringCtor(pattern));
  return ReflectApply(RegExpCompile, this, [p, flags === undefined ? undefined : StringCtor(flags)]); // SECURITY
} }.compile);
// @@split and @@matchAll build a new RegExp through the species constructor, which is the intrinsic
// when this.constructor is undefined: on a RegExp-like object that would compile its "source" unchecked.
function requireRegExp(what, v) {
  if (!isRegExpObject(v)) throw new TypeErrorCtor(what + " called on an object that is not a RegExp"); // SECURITY
}
replaceMethod(RegExpProto, SymbolSplit, { [SymbolSplit](string, limit) {
  requireRegExp("RegExp.prototype[Symbol.split]", this);
  return ReflectApply(RegExpSplit, this, [string, limit]);
} }[SymbolSplit]);
replaceMethod(RegExpProto, SymbolMatchAll, { [SymbolMatchAll](string) {
  requireRegExp("RegExp.prototype[Symbol.matchAll]", this);
  return ReflectApply(RegExpMatchAll, this, [string]);
} }[SymbolMatchAll]);
// String.prototype.match/matchAll/search compile a non-RegExp argument as a pattern (RegExpCreate):
// they follow the spec's steps here, with the checked constructor.
function requireCallable(what, m) {
  if (typeof m !== "function") throw new TypeErrorCtor(what + ": Symbol method is not a function");
  return m;
}
replaceMethod(StringProto, "match", { match(regexp) {
  if (this === null || this === undefined) throw new TypeErrorCtor("String.prototype.match called on null or undefined");
  if (regexp !== undefined && regexp !== null) {
    const m = regexp[SymbolMatch];
    if (m !== undefined && m !== null) return ReflectApply(requireCallable("String.prototype.match", m), regexp, [this]);
  }
  const s = StringCtor(this);
  return ReflectApply(RegExpMatch, newRegExp("String.prototype.match", regexp, undefined), [s]);
} }.match);
replaceMethod(StringProto, "search", { search(regexp) {
  if (this === null || this === undefined) throw new TypeErrorCtor("String.prototype.search called on null or undefined");
  if (regexp !== undefined && regexp !== null) {
    const m = regexp[SymbolSearch];
    if (m !== undefined && m !== null) return ReflectApply(requireCallable("String.prototype.search", m), regexp, [this]);
  }
  const s = StringCtor(this);
  return ReflectApply(RegExpSearch, newRegExp("String.prototype.search", regexp, undefined), [s]);
} }.search);
replaceMethod(StringProto, "matchAll", { matchAll(regexp) {
  if (this === null || this === undefined) throw new TypeErrorCtor("String.prototype.matchAll called on null or undefined");
  if (regexp !== undefined && regexp !== null) {
    if (regexp !== null && (typeof regexp === "object" || typeof regexp === "function") && (isRegExpObject(regexp) || regexp[SymbolMatch])) {
      const flags = regexp.flags;
      if (flags === undefined || flags === null) throw new TypeErrorCtor("String.prototype.matchAll: flags is null or undefined");
      if (ReflectApply(StringIndexOf, StringCtor(flags), ["g"]) === -1) throw new TypeErrorCtor("String.prototype.matchAll called with a non-global RegExp argument");
    }
    const m = regexp[SymbolMatchAll];
    if (m !== undefined && m !== null) return ReflectApply(requireCallable("String.prototype.matchAll", m), regexp, [this]);
  }
  const s = StringCtor(this);
  return ReflectApply(RegExpMatchAll, newRegExp("String.prototype.matchAll", regexp, "g"), [s]);
} }.matchAll);

// eval and the four Function constructors (the three hidden ones are reached through prototypes).
const EvalIntrinsic = eval;
ObjectDefineProperty(G, "eval", { __proto__: null, writable: true, enumerable: false, configurable: true, value: { eval(x) {
  if (typeof x !== "string") return x;
  // SECURITY: an indirect eval (the callee is not named eval): global scope, never this closure.
  return EvalIntrinsic(checkCompiledText("eval", x));
} }.eval });
function wrapCodeConstructor(intrinsic, name) {
  const wrapper = { [name]: function () {
    let checked = "";
    const args = [];
    for (let i = 0; i < arguments.length; i++) {
      const a = StringCtor(arguments[i]);
      if (a.length > CODE_TEXT_MAX) checkCompiledText(name, a);
      checked = checkCompiledText(name, checked + a + "\n");
      ObjectDefineProperty(args, i, { __proto__: null, value: a, writable: true, enumerable: true, configurable: true });
    }
    return ReflectConstruct(intrinsic, args, new.target === undefined ? intrinsic : new.target); // SECURITY: checked primitives only.
  } }[name];
  replaceConstructor(intrinsic.prototype, wrapper);
  return wrapper;
}
const FunctionWrapper = wrapCodeConstructor(Function, "Function");
ObjectDefineProperty(G, "Function", { __proto__: null, value: FunctionWrapper, writable: true, enumerable: false, configurable: true });
const codeIntrinsics = [Function, EvalIntrinsic, RegExpIntrinsic, DateIntrinsic];
{
  const kinds = [[function* () {}, "GeneratorFunction"], [async function () {}, "AsyncFunction"], [async function* () {}, "AsyncGeneratorFunction"]];
  for (let i = 0; i < kinds.length; i++) {
    const intrinsic = ObjectGetPrototypeOf(kinds[i][0]).constructor;
    wrapCodeConstructor(intrinsic, kinds[i][1]);
    codeIntrinsics[codeIntrinsics.length] = intrinsic;
  }
}

// The intrinsics as they are before any bundle code runs: what finish() freezes, whatever the bundle
// has done to the global bindings by then.
let intrinsicRoots = { v: ArrayBufferIntrinsic, next: null };
for (let i = 0; i < codeIntrinsics.length; i++) intrinsicRoots = { v: codeIntrinsics[i], next: intrinsicRoots };
{
  const names = ObjectGetOwnPropertyNames(G);
  for (let i = 0; i < names.length; i++) {
    const d = ObjectGetOwnPropertyDescriptor(G, names[i]);
    if (d !== undefined && ObjectHasOwn(d, "value")) intrinsicRoots = { v: d.value, next: intrinsicRoots };
  }
  for (let i = 0; i < hiddenRoots.length; i++) intrinsicRoots = { v: hiddenRoots[i], next: intrinsicRoots };
  intrinsicRoots = { v: vcp, next: intrinsicRoots };
}

// The bundle's "var __vcp_bundle = …" assigns through this trap, so the exports never stay global.
let bundleExports, bundleSet = false;
ObjectDefineProperty(G, "__vcp_bundle", {
  __proto__: null, configurable: true, enumerable: false,
  get() { return bundleExports; },
  set(v) { bundleExports = v; bundleSet = true; },
});

// Data properties commonly assigned on instances (e.g. "this.name = …" in an Error subclass).
// Freezing them would make such assignments fail (the "override mistake"); they become accessors whose
// setter defines an own property on the receiver and refuses to touch the prototype itself.
function tame(obj, key) {
  const d = ObjectGetOwnPropertyDescriptor(obj, key);
  if (d === undefined || !ObjectHasOwn(d, "value")) return;
  const value = d.value;
  ObjectDefineProperty(obj, key, {
    __proto__: null, configurable: false, enumerable: d.enumerable,
    get: function () { return value; },
    set: function (v) {
      if (this === obj || this === null || this === undefined) throw new TypeErrorCtor("Cannot assign to read only property of a frozen built-in");
      ObjectDefineProperty(this, key, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
    },
  });
}
// Prototypes come from the captures above: by finish() the bundle may have rebound the global names.
function tameAll() {
  const op = ["constructor", "toString", "valueOf", "toLocaleString", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable"];
  for (let i = 0; i < op.length; i++) tame(ObjectProto, op[i]);
  const fp = ["constructor", "toString", "bind", "apply", "call"];
  for (let i = 0; i < fp.length; i++) tame(FunctionProto, fp[i]);
  for (let i = 0; i < ErrorCtors.length; i++) {
    const p = ErrorCtors[i].prototype;
    tame(p, "constructor"); tame(p, "name"); tame(p, "message"); tame(p, "toString");
  }
  tame(ArrayProto, "constructor"); tame(ArrayProto, "toString"); tame(ArrayProto, "push");
  tame(PromiseProto, "constructor");
}

// roots: a linked list { v, next } (no array writes after bundle code has run).
function deepFreeze(roots) {
  const seen = new WeakSetCtor();
  let stack = roots;
  while (stack !== null) {
    const o = stack.v; stack = stack.next;
    if (o === null || (typeof o !== "object" && typeof o !== "function") || o === G) continue;
    if (ReflectApply(WeakSetHas, seen, [o])) continue;
    ReflectApply(WeakSetAdd, seen, [o]);
    ObjectFreeze(o);
    stack = { v: ObjectGetPrototypeOf(o), next: stack };
    const keys = ReflectOwnKeys(o);
    for (let i = 0; i < keys.length; i++) {
      const d = ObjectGetOwnPropertyDescriptor(o, keys[i]);
      if (d === undefined) continue;
      if (ObjectHasOwn(d, "value")) stack = { v: d.value, next: stack };
      else { stack = { v: d.get, next: stack }; stack = { v: d.set, next: stack }; }
    }
  }
}

let finished = false, fns = null;
function finish() {
  if (finished) throw new TypeErrorCtor("prelude: finish called twice");
  finished = true;
  // SECURITY: the exports object is held only by this closure from now on.
  if (!ReflectDeleteProperty(G, "__vcp_bundle")) throw new TypeErrorCtor("bundle redefined globalThis.__vcp_bundle");
  const ex = bundleExports;
  bundleExports = undefined;
  if (!bundleSet || ex === null || (typeof ex !== "object" && typeof ex !== "function")) {
    throw new TypeErrorCtor("bundle code did not assign an exports object to globalThis.__vcp_bundle");
  }
  fns = ObjectCreate(null);
  let names = "";
  const keys = ObjectKeys(ex);
  for (let i = 0; i < keys.length; i++) {
    const v = ex[keys[i]];
    if (typeof v === "function") { fns[keys[i]] = v; names = names === "" ? keys[i] : names + "\n" + keys[i]; }
  }
  tameAll();
  // Only built-ins and vcp are hardened: globals the bundle itself created are module state. Roots are
  // the intrinsics captured before bundle code ran, plus whatever the allowlisted names hold now.
  let roots = intrinsicRoots;
  const names2 = ObjectGetOwnPropertyNames(G);
  for (let i = 0; i < names2.length; i++) {
    if (allow[names2[i]] !== true) continue;
    const d = ObjectGetOwnPropertyDescriptor(G, names2[i]);
    if (d !== undefined && ObjectHasOwn(d, "value")) roots = { v: d.value, next: roots };
  }
  deepFreeze(roots); // SECURITY: built-ins, their prototypes and the unnamed intrinsics are frozen, so a call cannot pollute the next.
  for (let i = 0; i < names2.length; i++) {
    if (allow[names2[i]] !== true) continue;
    const d = ObjectGetOwnPropertyDescriptor(G, names2[i]);
    // SECURITY: global bindings of built-ins cannot be replaced (globalThis.JSON = …).
    if (d !== undefined && ObjectHasOwn(d, "value") && d.configurable) ObjectDefineProperty(G, names2[i], { __proto__: null, writable: false, configurable: false });
  }
  return names;
}

function errorText(e) {
  let message, stack = "";
  try {
    if (e !== null && (typeof e === "object" || typeof e === "function")) {
      const m = e.message;
      message = m === undefined ? StringCtor(e) : StringCtor(m);
      const s = e.stack;
      if (typeof s === "string") stack = s;
      const n = e.name;
      if (typeof n === "string" && n !== "" && n !== "Error" && stack === "") message = n + ": " + message;
    } else {
      message = StringCtor(e);
    }
  } catch (err) {
    message = "exception could not be converted to a string";
    stack = "";
  }
  if (message.length > MESSAGE_MAX) message = slice(message, 0, MESSAGE_MAX);
  if (stack.length > STACK_MAX) stack = slice(stack, 0, STACK_MAX);
  return [message, stack];
}
function encodeThrow(e) {
  const t = errorText(e);
  return "T" + t[0].length + ":" + t[0] + t[1];
}
function shortMessage(e) { return errorText(e)[0]; }

function utf8Bytes(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = ReflectApply(StringCharCodeAt, s, [i]);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 2 : 3;
  }
  return n;
}

function serialize(result, input, nat) {
  let r;
  // SECURITY: getters, proxies, toJSON and cycles run here in the guest, under the isolate timeout.
  try { r = JSONstringify(result); } catch (e) { return "Iresult is not JSON-serializable: " + shortMessage(e); }
  // Event profiles: an action that returns nothing is decoded by its profile (ai-memory: allow).
  if (nat === true && r === undefined) r = "null";
  if (typeof r !== "string") return "Iresult is undefined or not JSON-serializable";
  let c;
  if (nat === true) {
    // SECURITY: a native input has no chain_state: the guest's input object is never read back.
    c = "{}";
  } else {
    let cs;
    try { cs = input !== null && typeof input === "object" ? input.chain_state : undefined; }
    catch (e) { return "Ichain_state could not be read: " + shortMessage(e); }
    if (cs === null || typeof cs !== "object" || ArrayIsArray(cs)) return "Ichain_state must be a JSON object";
    try { c = JSONstringify(cs); } catch (e) { return "Ichain_state is not JSON-serializable: " + shortMessage(e); }
    if (typeof c !== "string" || c[0] !== "{") return "Ichain_state must serialize to a JSON object";
  }
  const chars = r.length + c.length;
  // SECURITY: oversized results never leave the isolate (the host re-checks the length).
  if (chars > RESULT_BYTES || (chars * 3 > RESULT_BYTES && utf8Bytes(r) + utf8Bytes(c) > RESULT_BYTES)) {
    return "Iresult and chain_state exceed " + RESULT_BYTES + " bytes";
  }
  // SECURITY: too-deep results never leave the isolate (the host re-checks): every copy after this one
  // (parse in the worker, serialize into the reply frame, parse in the runtime) recurses once per level.
  if (jsonTextExceeds(r, JSON_DEPTH + 1)) return "Iresult nests deeper than " + JSON_DEPTH + " levels below its fields (limits.json_depth)";
  if (jsonTextExceeds(c, JSON_DEPTH)) return "Ichain_state nests deeper than " + JSON_DEPTH + " levels (limits.json_depth)";
  return "R" + r.length + ":" + r + c;
}

// Async results: the host learns of a settlement through settledCb(id, reply), never through a
// promise it would have to chain on inside the isolate.
function settleLater(id, out, input, then, nat) {
  let done = false;
  // SECURITY: one-shot, and tagged with this call's id: a handler a guest kept from an earlier call is ignored by the host.
  const report = (reply) => { if (!done) { done = true; settledCb(id, outgoing(reply)); } };
  const onFulfilled = (v) => { report(serialize(v, input, nat)); };
  const onRejected = (e) => { report(encodeThrow(e)); };
  try {
    // SECURITY: intrinsic then, captured before bundle code ran; a replaced Promise.prototype.then is never called.
    ReflectApply(then, out, [onFulfilled, onRejected]);
  } catch (e) {
    report(encodeThrow(e));
  }
}

// Long text from the host arrives in pieces (isolate-host.ts pushPieces: a long string would stay in
// this isolate until a full GC); joined here it is an ordinary string that the next scavenge frees.
// The rest array is the engine's own: indexed reads of its elements consult no prototype.
function joinPieces(pieces) {
  if (pieces.length === 1) return pieces[0];
  let text = "";
  for (let i = 0; i < pieces.length; i++) text += pieces[i];
  return text;
}

// A reply longer than PIECE_CHARS leaves as pieces in a null-prototype object { n, 0: …, 1: … }
// (isolate-host.ts joinPieces): isolated-vm copies it out as plain data, so the host gets ordinary
// strings where one long string would stay in its heap until a full GC.
function outgoing(text) {
  if (text.length <= PIECE_CHARS) return text;
  const pieces = ObjectCreate(null); // SECURITY: null prototype: no setter a bundle put on a prototype sees these writes.
  let n = 0;
  for (let at = 0; at < text.length; at += PIECE_CHARS) pieces[n++] = slice(text, at, at + PIECE_CHARS);
  pieces.n = n;
  return pieces;
}

function run(name, callId, nowMs, nat, ...inputPieces) {
  return outgoing(runCall(name, callId, nowMs, nat, inputPieces));
}

function runCall(name, callId, nowMs, nat, inputPieces) {
  if (typeof nowMs === "number") callNow = nowMs; // SECURITY: the clock moves only here, between calls.
  const fn = fns === null ? undefined : fns[name];
  if (typeof fn !== "function") return "Iaction is not an exported function of the bundle";
  let input;
  try { input = JSONparse(joinPieces(inputPieces)); } catch (e) { return "Iinput is not valid JSON"; }
  let out;
  try { out = fn(input); } catch (e) { return encodeThrow(e); }
  if (out !== null && (typeof out === "object" || typeof out === "function")) {
    let then;
    try {
      // A native promise (what an async action returns) is settled through the intrinsic then; any
      // other object is a thenable only through its own then, which is the guest's own code.
      then = ObjectGetPrototypeOf(out) === PromiseProto ? PromiseThen : out.then;
    } catch (e) { return encodeThrow(e); }
    if (typeof then === "function") {
      const id = StringCtor(callId);
      settleLater(id, out, input, then, nat === true);
      return "P" + id;
    }
  }
  return serialize(out, input, nat === true);
}

function deliver(id, ...replyPieces) {
  const reply = joinPieces(replyPieces);
  const w = pendingFetches[id];
  if (w === undefined) return;
  ReflectDeleteProperty(pendingFetches, id);
  if (reply[0] !== "{") { w.reject(new TypeErrorCtor(slice(reply, 1, 1025))); return; }
  let v;
  try { v = JSONparse(reply); } catch (e) { w.reject(new TypeErrorCtor("vcp.fetch: malformed response")); return; }
  w.resolve(v);
}

return { finish: finish, run: run, deliver: deliver };
`;

/**
 * Global names a guest context keeps (ECMA-262 and ECMA-402 built-ins shipped by the V8 of Node 24),
 * besides `vcp`. Everything else on a fresh context's global is deleted by the prelude, including:
 * `WebAssembly` (its memory escapes the isolate heap limit), `SharedArrayBuffer` and `Atomics`
 * (shared memory, timing), `FinalizationRegistry` and `WeakRef` (observable GC), `console`.
 */
export const GUEST_GLOBAL_ALLOWLIST: readonly string[] = Object.freeze([
  "globalThis", "Infinity", "NaN", "undefined",
  "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
  "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
  "Object", "Function", "Boolean", "Symbol",
  "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError",
  "SuppressedError",
  "Number", "BigInt", "Math", "Date", "String", "RegExp",
  "Array", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
  "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
  "Map", "Set", "WeakMap", "WeakSet",
  "ArrayBuffer", "DataView", "JSON",
  "Iterator", "Promise", "Reflect", "Proxy",
  "DisposableStack", "AsyncDisposableStack",
  // SECURITY: no `Intl` (ECMA-402, not ECMA-262): its ICU objects live outside the V8 heap and are not
  // counted by isolated-vm's memoryLimit (200k retained Collators held 243 MB against a 15 MB limit).
]);
