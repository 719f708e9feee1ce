/**
 * The CARDS taxonomy (Coan et al. 2021) as used by ClimateCheck 2026 task 2: 33 codes.
 * `0_0` = no narrative; `X_0` = group-level code (group X, no sub-narrative fits); `X_Y` = sub-narrative.
 * `skosLabel` is the label exactly as published in cards.ttl (typos included); `name` is our display name.
 */

export type Group = 0 | 1 | 2 | 3 | 4 | 5;

export interface NarrativeCodeInfo {
  readonly code: string;
  readonly group: Group;
  /** 0 for `0_0` and for the group codes `X_0`, 1 for sub-narratives. */
  readonly level: 0 | 1;
  readonly name: string;
  readonly skosLabel: string;
  readonly description: string;
}

const entry = (code: string, name: string, skosLabel: string, description: string): NarrativeCodeInfo => {
  const [g, s] = code.split("_");
  return { code, group: Number(g) as Group, level: s === "0" ? 0 : 1, name, skosLabel, description };
};

export const NARRATIVES: readonly NarrativeCodeInfo[] = [
  entry(
    "0_0",
    "No contrarian narrative",
    "Not climate misinformation or related to the climate.",
    "The text makes no contrarian claim about climate change, or is not about the climate.",
  ),
  entry(
    "1_0",
    "Global warming is not happening",
    "Global warming is not happening",
    "Denies that the planet is warming: warming has stopped, is not happening, or the evidence for it is wrong.",
  ),
  entry(
    "1_1",
    "Ice isn't melting",
    "Ice isn't melting",
    "Ice, permafrost or snow cover is not melting: Antarctica, Greenland and Arctic sea ice are growing, glaciers are not vanishing.",
  ),
  entry(
    "1_2",
    "Heading into an ice age",
    "Heading into ice age",
    "We are heading into global cooling or a new ice age, for example because of a solar minimum.",
  ),
  entry(
    "1_3",
    "Weather is cold",
    "Weather is cold",
    "Cold weather, snow, record low temperatures or a cold winter show that global warming is not happening.",
  ),
  entry(
    "1_4",
    "Hiatus in warming",
    "Hiatus in warming",
    "There has been no warming, a pause or hiatus in warming, or the planet is cooling, over recent years or decades.",
  ),
  entry(
    "1_5",
    "Oceans are cooling",
    "Oceans are cooling",
    "The oceans are cooling or ocean heat content is not increasing.",
  ),
  entry(
    "1_6",
    "Sea level rise is exaggerated",
    "See level rise is exagerated",
    "Sea level rise is exaggerated, not accelerating, or not caused by warming; islands and coasts are not being flooded.",
  ),
  entry(
    "1_7",
    "Extremes aren't increasing",
    "Extremes aren't increasing",
    "Extreme weather such as hurricanes, droughts, floods, wildfires and heatwaves is not increasing or not linked to climate change.",
  ),
  entry(
    "1_8",
    "They changed the name",
    "Changed the name",
    "They changed the name from global warming to climate change because warming stopped.",
  ),
  entry(
    "2_0",
    "Human greenhouse gases are not causing global warming",
    "Human GHGs are not causing global warming",
    "Accepts that the climate changes but denies that human greenhouse gas emissions are the cause.",
  ),
  entry(
    "2_1",
    "It's natural cycles",
    "It's natural cycles",
    "Climate change is natural: it's the sun, volcanoes and geology, ocean oscillations, past climate change, or human CO2 emissions are tiny.",
  ),
  entry(
    "2_2",
    "Non-greenhouse-gas forcings",
    "Non-GHG forcings",
    "Warming is caused by other human or natural forcings than greenhouse gases, such as aerosols, land use, urban heat islands or cosmic rays.",
  ),
  entry(
    "2_3",
    "No evidence for the greenhouse effect",
    "No evidence for GHE",
    "There is no evidence that CO2 drives warming: CO2 is a trace gas, the greenhouse effect is saturated, CO2 lags temperature, water vapour dominates, no tropospheric hot spot, CO2 was higher in the past.",
  ),
  entry(
    "2_4",
    "CO2 is not rising",
    "CO2 not rising",
    "Atmospheric CO2 concentrations are not rising, or the measurements are wrong.",
  ),
  entry(
    "2_5",
    "Emissions are not raising CO2 levels",
    "Emissions not raising CO2 levels",
    "Human emissions are not what raises atmospheric CO2; the rise comes from oceans or other natural sources.",
  ),
  entry(
    "3_0",
    "Climate impacts are not bad",
    "Climate impacts are not bad",
    "Accepts warming but claims its impacts are not bad, or are beneficial.",
  ),
  entry(
    "3_1",
    "Climate sensitivity is low",
    "Sensitivity is low",
    "Climate sensitivity is low: doubling CO2 causes little warming, negative feedbacks cancel it out.",
  ),
  entry(
    "3_2",
    "No impact on species",
    "No species impact",
    "Species, plants, polar bears, coral reefs and ocean life are fine and can adapt; climate change does not threaten them.",
  ),
  entry(
    "3_3",
    "CO2 is not a pollutant",
    "Not a pollutant",
    "CO2 is not a pollutant; it is plant food and beneficial, greening the planet and raising crop yields.",
  ),
  entry(
    "3_4",
    "It's only a few degrees",
    "Only a few degrees",
    "Warming of a few degrees is small and harmless, or a warmer climate is better.",
  ),
  entry(
    "3_5",
    "No link to conflict",
    "No link to conflict",
    "Climate change is not linked to conflict, war, migration or security problems.",
  ),
  entry(
    "3_6",
    "No health impacts",
    "No health impacts",
    "Climate change has no health impacts; cold kills more people than heat.",
  ),
  entry(
    "4_0",
    "Climate solutions won't work",
    "Climate solutions won't work",
    "Climate policies and solutions will not work, are too costly, or are not needed.",
  ),
  entry(
    "4_1",
    "Climate policies are harmful",
    "Policies are harmful",
    "Climate policies are harmful: they increase costs, weaken security, harm the environment, limit freedom, or burden the economy and the poor.",
  ),
  entry(
    "4_2",
    "Climate policies are ineffective",
    "Policies are ineffective",
    "Climate policies are ineffective: green jobs fail, markets are better, the impact is negligible, one country cannot matter, China emits more, better to adapt or wait for a technological fix.",
  ),
  entry(
    "4_3",
    "Climate action is too hard",
    "Too hard",
    "Climate policy is too difficult to achieve, or lacks public support.",
  ),
  entry(
    "4_4",
    "Clean energy won't work",
    "Clean energy won't work",
    "Renewable and clean energy such as wind, solar, biofuels or carbon capture is unreliable, expensive or unproven.",
  ),
  entry(
    "4_5",
    "We need fossil energy",
    "We need energy",
    "We need fossil fuels: they are plentiful and cheap, essential for development, or nuclear is the answer.",
  ),
  entry(
    "5_0",
    "Climate movement or science is unreliable",
    "Climate movement/science is unreliable",
    "Climate science or the climate movement cannot be trusted.",
  ),
  entry(
    "5_1",
    "Climate science is unreliable",
    "Science is unreliable",
    "Climate science is unreliable or uncertain: there is no consensus, and proxies, temperature records or climate models are unreliable.",
  ),
  entry(
    "5_2",
    "Climate movement is unreliable",
    "Movement is unreliable",
    "The climate movement is alarmist, biased or hypocritical: climate is a religion, and the media, politicians, environmentalists and scientists are alarmist or biased.",
  ),
  entry(
    "5_3",
    "Climate change is a conspiracy",
    "Climate is conspiracy",
    "Climate change is a hoax or a conspiracy: policy or science is a conspiracy, data are fabricated or manipulated.",
  ),
];

const BY_CODE = new Map(NARRATIVES.map((n) => [n.code, n]));

export const NARRATIVE_CODES: readonly string[] = NARRATIVES.map((n) => n.code);
export const GROUPS: readonly Group[] = [0, 1, 2, 3, 4, 5];
export const NO_NARRATIVE = "0_0";

export function isNarrativeCode(code: string): boolean {
  return BY_CODE.has(code);
}

export function narrativeInfo(code: string): NarrativeCodeInfo {
  const info = BY_CODE.get(code);
  if (!info) throw new Error(`unknown CARDS code "${code}" (expected one of ${NARRATIVE_CODES.join(", ")})`);
  return info;
}

export function groupOf(code: string): Group {
  return narrativeInfo(code).group;
}

/** The group-level code `X_0` of a group. */
export function groupCode(group: Group): string {
  return `${group}_0`;
}

/** Sub-narrative codes of a group (excluding `X_0`). */
export function subCodes(group: Group): string[] {
  return NARRATIVES.filter((n) => n.group === group && n.level === 1).map((n) => n.code);
}

/**
 * Normalises a code as written in data files: trims, accepts dots (`5.3.2`) or underscores, keeps the first two
 * parts, maps a bare group (`3`) to its group code `3_0`. Returns undefined when the result is not a taxonomy code.
 */
export function normaliseNarrativeCode(raw: string): string | undefined {
  const parts = raw
    .trim()
    .split(/[._]/)
    .filter((p) => p !== "");
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) return undefined;
  const code = parts.length === 1 ? `${parts[0]}_0` : `${parts[0]}_${parts[1]}`;
  return isNarrativeCode(code) ? code : undefined;
}

/**
 * Applies the annotation rules to a set of codes: no duplicates, `0_0` only alone, and a group code `X_0` is
 * dropped when a sub-code of the same group is present. Sorted in taxonomy order.
 */
export function canonicalCodeSet(codes: Iterable<string>): string[] {
  const set = new Set<string>();
  for (const c of codes) set.add(narrativeInfo(c).code);
  if (set.size > 1) set.delete(NO_NARRATIVE);
  for (const c of [...set]) {
    const info = narrativeInfo(c);
    if (info.level === 0 && info.group !== 0 && subCodes(info.group).some((s) => set.has(s))) set.delete(c);
  }
  if (set.size === 0) set.add(NO_NARRATIVE);
  return NARRATIVE_CODES.filter((c) => set.has(c));
}
