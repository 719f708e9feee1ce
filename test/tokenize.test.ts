import assert from "node:assert/strict";
import { test } from "node:test";
import { splitSentences } from "../src/text/sentences.ts";
import { contentTokens, tokenize } from "../src/text/tokenize.ts";

test("tokenize keeps numbers, units and contractions and lower-cases", () => {
  assert.deepEqual(tokenize("Sea-level rose 3.2 mm/yr; CO2 isn't 400ppm. Über"), [
    "sea-level",
    "rose",
    "3.2",
    "mm",
    "yr",
    "co2",
    "isn't",
    "400ppm",
    "über",
  ]);
});

test("contentTokens drops function words but keeps negations", () => {
  assert.deepEqual(contentTokens("The ice is not melting at all"), ["ice", "not", "melting"]);
});

test("splitSentences handles abbreviations, initials, decimals and structured headings", () => {
  assert.deepEqual(
    splitSentences(
      "BACKGROUND: Sea level rose 3.2 mm per year (e.g. Smith et al. 2020). It is accelerating! METHODS: We used J. Smith's data. Results were clear.",
    ),
    [
      "BACKGROUND: Sea level rose 3.2 mm per year (e.g. Smith et al. 2020).",
      "It is accelerating!",
      "METHODS: We used J. Smith's data.",
      "Results were clear.",
    ],
  );
  assert.deepEqual(splitSentences("   "), []);
});
