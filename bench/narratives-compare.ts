/**
 * Dev figures of narratives model files side by side, without the baselines (issue 23: the shipped model before and
 * after a retrain; section `narratives` has the baselines): per dev source the share given a narrative, the written
 * dev split by kind, CARDS dev mean F1 (classify rule) and the hand-written claims. Dev only; the written test split
 * is not read. `node --import tsx bench/narratives-compare.ts NAME=PATH ...`
 */
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { memoEmbedder } from "../src/narratives/build.ts";
import { NarrativeClassifier, readNarrativeModel } from "../src/narratives/classifier.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import { NO_NARRATIVE } from "../src/taxonomy/cards.ts";
import { classifierPredict, evaluate } from "./narratives.ts";
import { HAND_CLAIMS } from "./narratives-claims.ts";

const fmt = (x: number) => x.toFixed(3);
const data = await loadNarrativeData();
const cardsDev = data.dev.filter((e) => e.id.startsWith("cards:"));
const encoder = await openUseLite();
const embedder = memoEmbedder(encoder);
const handTexts = HAND_CLAIMS.flatMap((h) => [h.mainstream, h.contrarian]);
for (const arg of process.argv.slice(2)) {
  const [name, path] = arg.includes("=") ? arg.split("=") : [arg, arg];
  const json = await readNarrativeModel(path);
  const c = new NarrativeClassifier(json, json.encoder ? embedder : undefined);
  for (const rule of ["check", "classify"] as const) {
    const predict = classifierPredict(c, rule);
    const f = await evaluate(predict, data.stanceDev, cardsDev, data.fliccTest, data.contrastDev);
    const w = f.writtenDev;
    const hand = await predict(handTexts);
    const flagged = HAND_CLAIMS.filter((_, k) => !hand[2 * k].codes.includes(NO_NARRATIVE)).length;
    const found = HAND_CLAIMS.filter((_, k) => !hand[2 * k + 1].codes.includes(NO_NARRATIVE)).length;
    console.log(
      `${name} ${rule}: written dev not-contrarian ${fmt(w.mainstream.value)} (mainstream ${fmt(w.byKind.mainstream.value)}, rebuttal ${fmt(w.byKind.rebuttal.value)}, words ${fmt(w.byKind["mainstream-words"].value)}), contrarian ${fmt(w.contrarian.value)}, right first ${fmt(w.rightFirst.value)} | ${Object.entries(
        f.shares,
      )
        .map(([k, v]) => `${k} ${fmt(v.value)}`)
        .join(
          ", ",
        )} | CARDS dev mean F1 ${fmt(f.cardsMeanF1.value)}, FLICC test macro F1 ${fmt(f.fliccMacroF1)}, ECE ${fmt(f.ece)} | hand: mainstream flagged ${flagged}/10, contrarian found ${found}/10`,
    );
  }
}
await encoder.close();
