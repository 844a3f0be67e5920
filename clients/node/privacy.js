// What a user keeps out of memory never leaves this process: `<private>…</private>` text (the
// tag in any case; a tag left open hides the rest — in JSON text, to the end of its string) and
// paths the project's `.slmcode/exclude` lists (one glob a line, `.gitignore`-style without `!`:
// no `/` = a name at any depth, a `/` inside = anchored at the project root, a trailing `/` = a
// directory and all below it). A call naming an excluded path is not sent; a record naming one is
// dropped from its list; any other mention becomes «excluded». The same rules as the Python
// client's (slmactor/logic/text/private.py); clients/privacy-vectors.json holds cases both pass.

import { readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";

export const PRIVATE_MARK = "«private»";
export const EXCLUDED_MARK = "«excluded»";
const PLAIN = /<private\s*>[\s\S]*?(?:<\/private\s*>|$(?![\s\S]))/gi;
const IN_JSON = /<private\s*>(?:\\[\s\S]|[^"\\])*?(?:<\/private\s*>|(?="))/gi;
const CLOSE = /<\/private\s*>/gi;
const WORD = /[^\s"'`<>|;,=(){}[\]]+/g;
const CALL_KINDS = new Set(["record_tool", "fail"]);
const RECHECK_MS = 1000;

export function stripPrivate(text) {
  if (!text.toLowerCase().includes("<private")) return text;
  const head = text.trimStart().slice(0, 1);
  const pattern = head === "{" || head === "[" ? IN_JSON : PLAIN;
  return text.replace(pattern, PRIVATE_MARK).replace(CLOSE, "");
}

export function parsePatterns(text) {
  const out = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line && !line.startsWith("#") && !line.startsWith("!") && !out.includes(line)) out.push(line);
  }
  return out;
}

// fnmatch's rules (Python's fnmatchcase): `*` any run (slashes too), `?` one character, `[...]`.
function globRegex(glob) {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") out += "[\\s\\S]*";
    else if (c === "?") out += "[\\s\\S]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) out += "\\[";
      else {
        let body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = "^" + body.slice(1);
        out += `[${body}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

export class Excluder {
  constructor(root, patterns = []) {
    this.root = root;
    this.patterns = patterns;
    this._globs = patterns.map((p) => p.replace(/^\/+|\/+$/g, "")).filter(Boolean)
      .map((g) => ({ anchored: g.includes("/"), re: globRegex(g) }));
  }

  get active() { return this._globs.length > 0; }

  _relative(word) {
    let path = word.trim().replace(/^file:\/\//, "");
    while (path.startsWith("./")) path = path.slice(2);
    path = path.replace(/(?::\d+)+:?$/, "");
    const root = this.root.replace(/\/+$/, "");
    if (path.startsWith("/")) {
      if (path === root) return null;
      if (path.startsWith(root + "/")) return path.slice(root.length + 1);
      return path.replace(/^\/+/, "");
    }
    if (path.startsWith("~")) return path.replace(/^[~/]+/, "");
    return path || null;
  }

  excludes(word) {
    const rel = this._relative(word);
    if (!rel) return false;
    const parts = rel.split("/").filter((p) => p && p !== ".");
    if (parts.length === 0) return false;
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    return this._globs.some(({ anchored, re }) => (anchored ? prefixes : parts).some((n) => re.test(n)));
  }

  mentions(text) {
    return this.active && (text.match(WORD) || []).some((w) => this.excludes(w));
  }

  scrub(text) {
    if (!this.active) return text;
    return text.replace(WORD, (w) => (this.excludes(w) ? EXCLUDED_MARK : w));
  }
}

function mentions(value, excluder) {
  if (typeof value === "string") return excluder.mentions(value);
  if (Array.isArray(value)) return value.some((v) => mentions(v, excluder));
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.values(value).some((v) => mentions(v, excluder));
  }
  return false;
}

/** `value` without private spans and excluded paths (a map in a list naming one is dropped). */
export function scrub(value, excluder) {
  if (typeof value === "string") {
    const text = stripPrivate(value);
    return excluder ? excluder.scrub(text) : text;
  }
  if (Array.isArray(value)) {
    const kept = excluder && excluder.active
      ? value.filter((v) => !(v && typeof v === "object" && !Array.isArray(v) && mentions(v, excluder)))
      : value;
    return kept.map((v) => scrub(v, excluder));
  }
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrub(v, excluder);
    return out;
  }
  return value;
}

const cache = new Map();

/** The exclude list of `project` (empty when it has none), read again at most once a second. */
export function excluderFor(project) {
  if (!project) return new Excluder("");
  const now = Date.now();
  const known = cache.get(project);
  if (known && now - known.at < RECHECK_MS) return known.excluder;
  const file = join(project, ".slmcode", "exclude");
  let stamp = null;
  try {
    const st = statSync(file);
    stamp = `${st.mtimeMs}:${st.size}`;
  } catch { /* no exclude list */ }
  if (known && known.stamp === stamp) {
    known.at = now;
    return known.excluder;
  }
  let patterns = [];
  if (stamp !== null) {
    try { patterns = parsePatterns(readFileSync(file, "utf8").slice(0, 65536)); } catch { /* unreadable */ }
  }
  let root = project;
  try { root = realpathSync(project); } catch { /* keep as given */ }
  const excluder = new Excluder(root, patterns);
  if (cache.size > 256) cache.clear();
  cache.set(project, { at: now, stamp, excluder });
  return excluder;
}

/** The body as it may leave by `excluder`'s rules; null for a call on an excluded path. */
export function withheldBy(kind, body, excluder) {
  if (!excluder.active && !JSON.stringify(body).toLowerCase().includes("<private")) return body;
  if (CALL_KINDS.has(kind) && mentions(body, excluder)) return null;
  return scrub(body, excluder);
}

/** The body as it may leave; null when it is a call on an excluded path (not to be sent). */
export function withheld(kind, body, project) {
  return withheldBy(kind, body, excluderFor(project));
}
