// The language-neutral golden vectors (clients/golden-vectors.json), shared with the Python
// tests: each decodes to its value, and the value encodes back to the same bytes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { decode, encode } from "@msgpack/msgpack";

const vectors = JSON.parse(readFileSync(new URL("../../golden-vectors.json", import.meta.url), "utf8"));

for (const vector of [...vectors.requests, ...vectors.replies]) {
  test(`golden vector: ${vector.name}`, () => {
    const bytes = Buffer.from(vector.hex, "hex");
    assert.deepEqual(decode(bytes), vector.value);
    assert.equal(Buffer.from(encode(vector.value)).toString("hex"), vector.hex);
  });
}

test("the vectors cover asks, a tell and both reply shapes", () => {
  const kinds = vectors.requests.map((v) => v.kind);
  assert.ok(kinds.includes("ping") && kinds.includes("record_tool"));
  assert.deepEqual(vectors.replies.map((v) => v.value.ok), [true, false]);
  assert.equal(vectors.protocol, 1);
});
