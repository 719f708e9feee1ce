/**
 * Error analysis of the shipped narratives gates on dev (issue 23): false alarms and misses on the written dev split
 * by kind and target code, on the mainstream and contrarian dev sources, and the gate features that drive a few of
 * them (the largest terms x_j w_j of the linear gate's logit). Reads dev only; prints to stdout, writes nothing.
 * `node --import tsx bench/narratives-errors.ts [fast|full] [examples per kind]`.
 */
import { join } from "node:path";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { LogisticModel } from "../src/learning/logistic.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { CUE_DIM, cueBucket, stanceCues } from "../src/narratives/cues.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import { NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
import { DESCRIBED_CODES, NarrativeFeatures } from "../src/narratives/features.ts";
import { stanceCell } from "../src/narratives/train.ts";
import { tokenize } from "../src/text/tokenize.ts";

const which = process.argv[2] === "full" ? "full" : "fast";
const perKind = Number(process.argv[3] ?? 4);

async function main(): Promise<void> {
  const json = await readNarrativeModel(
    join(NARRATIVES_MODEL_DIR, which === "full" ? FULL_MODEL_FILE : FAST_MODEL_FILE),
  );
  const encoder = json.encoder ? await openUseLite() : undefined;
  const c = new NarrativeClassifier(json, encoder);
  const features = NarrativeFeatures.fromJSON(json.features);
  const gate = LogisticModel.fromJSON(json.gate.model);
  const fam = json.features.config.families;
  const codes = DESCRIBED_CODES.length;
  // Block layout, as NarrativeFeatures.blocks builds it.
  const blocks: { name: string; width: number; label: (k: number, tokens: string[]) => string }[] = [];
  const words = json.features.word?.terms ?? [];
  const chars = json.features.char?.terms ?? [];
  if (fam.includes("word")) blocks.push({ name: "word", width: words.length, label: (k) => words[k] });
  if (fam.includes("char")) blocks.push({ name: "char", width: chars.length, label: (k) => `'${chars[k]}'` });
  if (fam.includes("desc")) blocks.push({ name: "desc", width: codes, label: (k) => DESCRIBED_CODES[k] });
  if (fam.includes("use")) {
    blocks.push({ name: "use", width: json.features.descEmbeddings?.[0]?.length ?? 0, label: (k) => `${k}` });
    blocks.push({ name: "use-desc", width: codes, label: (k) => DESCRIBED_CODES[k] });
  }
  if (fam.includes("cues"))
    blocks.push({
      name: "cue",
      width: CUE_DIM,
      label: (k, tokens) => [...new Set(stanceCues(tokens).filter((s) => cueBucket(s) === k))].join("|"),
    });
  if (fam.includes("contrast")) {
    blocks.push({ name: "contrast-word", width: codes, label: (k) => DESCRIBED_CODES[k] });
    blocks.push({ name: "contrast-cue", width: codes, label: (k) => DESCRIBED_CODES[k] });
    if (fam.includes("use"))
      blocks.push({ name: "contrast-use", width: codes, label: (k) => DESCRIBED_CODES[k] });
  }
  const nameOf = (j: number, tokens: string[]): string => {
    let off = 0;
    for (const b of blocks) {
      if (j < off + b.width) return `${b.name}:${b.label(j - off, tokens)}`;
      off += b.width;
    }
    return `?${j}`;
  };
  const emb = async (texts: string[]) => (encoder ? await encoder.embed(texts) : undefined);
  const explain = async (text: string): Promise<string> => {
    const e = (await emb([text]))?.[0];
    const x = features.vector(text, e);
    const tokens = tokenize(text);
    const terms = Array.from(x.indices, (j, k) => ({ j, v: x.values[k] * gate.weights[j] }));
    terms.sort((a, b) => Math.abs(b.v) - Math.abs(a.v));
    const byBlock = new Map<string, number>();
    for (const t of terms) {
      const b = nameOf(t.j, tokens).split(":")[0];
      byBlock.set(b, (byBlock.get(b) ?? 0) + t.v);
    }
    const top = terms
      .slice(0, 8)
      .map((t) => `${nameOf(t.j, tokens)} ${t.v >= 0 ? "+" : ""}${t.v.toFixed(2)}`);
    const blockSums = [...byBlock].map(([b, v]) => `${b} ${v >= 0 ? "+" : ""}${v.toFixed(2)}`).join(", ");
    return `      linear logit ${(gate.decision(x)[0]).toFixed(2)} = bias ${gate.bias[0].toFixed(2)} + [${blockSums}]\n      top: ${top.join("; ")}`;
  };

  const data = await loadNarrativeData();
  const written = data.contrastDev;
  const preds = await c.classify(written.map((t) => t.text));
  const named = preds.map((p) => p.narrative >= NARRATIVE_THRESHOLD);
  console.log(`# ${which}.json on the written dev split (${written.length} texts), check rule`);
  const kinds = ["contrarian", "mainstream", "rebuttal", "mainstream-words"] as const;
  for (const kind of kinds) {
    const idx = written.flatMap((t, i) => (t.kind === kind ? [i] : []));
    const errs = idx.filter((i) => (kind === "contrarian" ? !named[i] : named[i]));
    console.log(
      `\n## ${kind}: ${errs.length} of ${idx.length} ${kind === "contrarian" ? "missed" : "given a narrative"} (${(errs.length / idx.length).toFixed(3)})`,
    );
    const byCode = new Map<string, [number, number]>();
    for (const i of idx) {
      const k = written[i].targetCode.split("_")[0];
      const v = byCode.get(k) ?? [0, 0];
      v[1]++;
      if (errs.includes(i)) v[0]++;
      byCode.set(k, v);
    }
    console.log(
      `   by target group: ${[...byCode]
        .sort()
        .map(([k, [e, n]]) => `${k}: ${e}/${n}`)
        .join(", ")}`,
    );
    const codeErr = new Map<string, number>();
    for (const i of errs) codeErr.set(written[i].targetCode, (codeErr.get(written[i].targetCode) ?? 0) + 1);
    console.log(
      `   by target code: ${[...codeErr]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${n}`)
        .join(", ")}`,
    );
    const shown = errs
      .slice()
      .sort((a, b) =>
        kind === "contrarian"
          ? preds[a].narrative - preds[b].narrative
          : preds[b].narrative - preds[a].narrative,
      )
      .slice(0, perKind);
    for (const i of shown) {
      console.log(
        `   - [${written[i].targetCode}] P=${preds[i].narrative.toFixed(2)} ${preds[i].codes.join(",")} "${written[i].text}"`,
      );
      console.log(await explain(written[i].text));
    }
  }

  console.log(`\n# ${which}.json on the stance dev sources, check rule`);
  const sp = await c.classify(data.stanceDev.map((e) => e.text));
  const cells = data.stanceDev.map(stanceCell);
  for (const cell of [...new Set(cells)].sort()) {
    const idx = cells.flatMap((x, i) => (x === cell ? [i] : []));
    const narrative = data.stanceDev[idx[0]].narrative;
    const errs = idx.filter((i) => sp[i].narrative >= NARRATIVE_THRESHOLD !== narrative);
    console.log(
      `\n## ${cell} (${narrative ? "contrarian: missed" : "mainstream: given a narrative"}) ${errs.length}/${idx.length} = ${(errs.length / idx.length).toFixed(3)}`,
    );
    const shown = errs
      .slice()
      .sort((a, b) => (narrative ? sp[a].narrative - sp[b].narrative : sp[b].narrative - sp[a].narrative))
      .slice(0, Math.min(2, perKind));
    for (const i of shown) {
      console.log(
        `   - P=${sp[i].narrative.toFixed(2)} ${sp[i].codes.join(",")} "${data.stanceDev[i].text.slice(0, 200)}"`,
      );
      console.log(await explain(data.stanceDev[i].text));
    }
  }
  const users = [
    "Arctic summer sea ice extent has declined sharply since 1979",
    "The Greenland ice sheet is losing ice and adding to sea level rise",
    "Changes in solar activity cannot explain the warming since 1950",
    "Sea level rise is accelerating",
    "Nearly all climate scientists agree that humans are warming the planet",
    "No, Arctic ice is not recovering",
    "Arctic sea ice has recovered and is growing again.",
  ];
  console.log(`\n# ${which}.json on the user-reported claims`);
  const up = await c.classify(users);
  for (const [i, t] of users.entries()) {
    console.log(`   - P=${up[i].narrative.toFixed(2)} ${up[i].codes.join(",")} "${t}"`);
    console.log(await explain(t));
  }
  await encoder?.close();
}

await main();
