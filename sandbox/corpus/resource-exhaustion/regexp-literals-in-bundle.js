/* corpus {"id":"regexp-literals-in-bundle","category":"resource-exhaustion","title":"bundle code with 40 \\p{RGI_Emoji} literals: V8 validates every literal in zone memory when it compiles the script (~1.2 MB each); refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"install_error":"INVALID_BUNDLE","recycled":"none"}} */
// Literals are parsed before any prelude wrapper can run, so the host counts the property escapes
// of the bundle's code (weighted: an emoji-sequence property counts 32 of a budget of 1,024).
const A = [/\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v];
const B = [/\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v];
const C = [/\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v];
const D = [/\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v, /\p{RGI_Emoji}/v];
export function action(input) {
  return { status: "continue", annotations: { n: A.length + B.length + C.length + D.length } };
}
