import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { trainingFiles } from "../src/data/paths.ts";
import {
  canonicalCodeSet,
  groupOf,
  isNarrativeCode,
  NARRATIVE_CODES,
  NARRATIVES,
  narrativeInfo,
  normaliseNarrativeCode,
  subCodes,
} from "../src/taxonomy/cards.ts";

test("the taxonomy has the 33 ClimateCheck codes: 0_0, five group codes and 27 sub-codes", () => {
  assert.equal(NARRATIVE_CODES.length, 33);
  assert.equal(new Set(NARRATIVE_CODES).size, 33);
  assert.deepEqual(
    NARRATIVES.filter((n) => n.level === 0).map((n) => n.code),
    ["0_0", "1_0", "2_0", "3_0", "4_0", "5_0"],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((g) => subCodes(g as 1).length),
    [8, 5, 6, 5, 3],
  );
  for (const n of NARRATIVES) assert.ok(n.description.length > 20, n.code);
});

test("labels match the published SKOS taxonomy", { skip: !existsSync(trainingFiles().taxonomy) }, () => {
  const ttl = readFileSync(trainingFiles().taxonomy, "utf8");
  const published = new Map<string, string>();
  for (const m of ttl.matchAll(
    /^:(\d(?:_\d)?) rdf:type skos:Concept ;[\s\S]*?skos:prefLabel "([^"]+)"@en/gm,
  )) {
    published.set(m[1], m[2]);
  }
  for (const n of NARRATIVES) {
    const key = n.code === "0_0" ? "0" : n.level === 0 ? String(n.group) : n.code;
    assert.equal(n.skosLabel, published.get(key), n.code);
  }
});

test("codes are validated and normalised from dotted level-3 codes", () => {
  assert.equal(normaliseNarrativeCode("5.3.2"), "5_3");
  assert.equal(normaliseNarrativeCode(" 2_1 "), "2_1");
  assert.equal(normaliseNarrativeCode("3"), "3_0");
  assert.equal(normaliseNarrativeCode("0_0"), "0_0");
  assert.equal(normaliseNarrativeCode("1_9"), undefined);
  assert.equal(normaliseNarrativeCode("x"), undefined);
  assert.equal(normaliseNarrativeCode(""), undefined);
  assert.equal(isNarrativeCode("6_0"), false);
  assert.equal(groupOf("4_5"), 4);
  assert.throws(() => narrativeInfo("9_9"), /unknown CARDS code "9_9"/);
});

test("canonicalCodeSet: 0_0 only alone, X_0 dropped beside a sub-code of its group, taxonomy order", () => {
  assert.deepEqual(canonicalCodeSet(["0_0", "1_6"]), ["1_6"]);
  assert.deepEqual(canonicalCodeSet(["5_1", "1_0", "1_6"]), ["1_6", "5_1"]);
  assert.deepEqual(canonicalCodeSet(["2_0", "5_1"]), ["2_0", "5_1"]);
  assert.deepEqual(canonicalCodeSet([]), ["0_0"]);
  assert.throws(() => canonicalCodeSet(["7_1"]), /unknown CARDS code/);
});
