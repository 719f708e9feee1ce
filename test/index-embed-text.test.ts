import assert from "node:assert/strict";
import { test } from "node:test";
import { titleAndLead } from "../src/index/embed-text.ts";

test("title and lead: the title, then the abstract cut at a word boundary", () => {
  const r = titleAndLead(40);
  const doc = {
    id: "1",
    title: "Sea ice",
    abstract: "Arctic sea ice declines every decade since 1979.",
    sentences: [],
  };
  assert.equal(r.text(doc), "Sea ice. Arctic sea ice declines every");
  assert.equal(r.text({ ...doc, title: undefined, abstract: "Short." }), "Short.");
});
