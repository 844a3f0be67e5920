// The Node client's door passes the same cases as the Python client's
// (clients/privacy-vectors.json, kept true to the Python rules by
// tests/logic/text/test_privacy_vectors.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Excluder, parsePatterns, scrub, stripPrivate, withheldBy } from "../privacy.js";

const vectors = JSON.parse(readFileSync(new URL("../../privacy-vectors.json", import.meta.url), "utf8"));
const excluder = new Excluder(vectors.root, parsePatterns(vectors.patterns));

test("exclude files parse as the Python client parses them", () => {
  assert.deepEqual(parsePatterns(vectors.patterns), vectors.parsed);
});

test("private spans are cut as in the Python client", () => {
  for (const { in: text, out } of vectors.strip) assert.equal(stripPrivate(text), out, text);
});

test("excluded paths match as in the Python client", () => {
  for (const { path, excluded } of vectors.excludes) assert.equal(excluder.excludes(path), excluded, path);
  for (const { in: text, out } of vectors.scrub) assert.equal(excluder.scrub(text), out);
});

test("message bodies leave as in the Python client", () => {
  for (const { kind, in: body, out } of vectors.withheld) assert.deepEqual(withheldBy(kind, body, excluder), out, kind);
  for (const { in: body, out } of vectors.scrub_body) assert.deepEqual(scrub(body, excluder), out);
});
