/**
 * Twenty hand-written claims for the narratives benchmark: ten mainstream statements and ten contrarian ones on
 * the same ten topics, written before the model's rebuttal prototypes and never used for training or tuning.
 */
export interface HandClaim {
  topic: string;
  mainstream: string;
  contrarian: string;
  /** The code(s) a reader would give the contrarian claim. */
  expected: string;
}

export const HAND_CLAIMS: readonly HandClaim[] = [
  {
    topic: "sea ice",
    mainstream: "Arctic sea ice extent has declined sharply since the 1980s.",
    contrarian: "Arctic sea ice has recovered and is growing again.",
    expected: "1_1",
  },
  {
    topic: "sea level",
    mainstream: "Global sea level rise has accelerated over the past three decades.",
    contrarian: "Sea level rise is not accelerating at all.",
    expected: "1_6",
  },
  {
    topic: "cause of warming",
    mainstream: "Human emissions of carbon dioxide are the main cause of recent warming.",
    contrarian: "The warming is caused by the sun, not by CO2.",
    expected: "2_1",
  },
  {
    topic: "CO2 levels",
    mainstream: "Atmospheric CO2 has passed 420 parts per million and keeps rising.",
    contrarian: "CO2 levels are not really rising; the measurements are rigged.",
    expected: "2_4",
  },
  {
    topic: "extremes",
    mainstream: "Heatwaves have become more frequent and more intense as the planet warms.",
    contrarian: "Heatwaves were worse in the 1930s; extreme weather isn't increasing.",
    expected: "1_7",
  },
  {
    topic: "models",
    mainstream: "Climate models from the 1970s projected today's warming quite well.",
    contrarian: "Climate models have failed and always run too hot.",
    expected: "5_1",
  },
  {
    topic: "species",
    mainstream: "Warmer oceans are driving mass bleaching of coral reefs.",
    contrarian: "Coral reefs are doing fine and polar bears are thriving.",
    expected: "3_2",
  },
  {
    topic: "clean energy",
    mainstream: "Solar and wind power are now the cheapest sources of new electricity in most countries.",
    contrarian: "Wind and solar are unreliable and make electricity too expensive.",
    expected: "4_4",
  },
  {
    topic: "warming trend",
    mainstream: "The last decade was the warmest on record.",
    contrarian: "There has been no global warming for the past 18 years.",
    expected: "1_4",
  },
  {
    topic: "consensus",
    mainstream: "Nearly all climate scientists agree that humans are warming the planet.",
    contrarian: "The so-called 97% consensus is a fabricated myth.",
    expected: "5_1",
  },
];
