/** Section narratives-fast: the narratives section without the systems that need the sentence encoder. */
import { narrativesBench } from "./narratives.ts";
import type { Bench } from "./report.ts";

export const bench: Bench = () => narrativesBench({ encoder: false });
