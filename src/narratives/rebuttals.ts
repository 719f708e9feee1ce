/**
 * For every CARDS code, the mainstream statement it contradicts, on the same subject: "ice isn't melting" against
 * "ice is melting". A code's description and its rebuttal share their topic words, so what tells a text's
 * closeness to one from its closeness to the other is stance, not topic: the "contrast" features (features.ts)
 * are those differences, and each rebuttal is a training example of a text that carries no narrative.
 * Written from the IPCC AR6 summary findings, not from any evaluation text.
 */
export const REBUTTALS: Readonly<Record<string, string>> = {
  "1_0":
    "The planet is warming: global surface temperature has risen about 1.1 °C since pre-industrial times and keeps rising.",
  "1_1":
    "Ice is melting: Arctic sea ice is shrinking, glaciers are retreating, and the Greenland and Antarctic ice sheets are losing mass.",
  "1_2":
    "We are not heading into an ice age or global cooling: the planet keeps warming, and a solar minimum would barely offset it.",
  "1_3":
    "A cold winter or a snowstorm is weather, not climate: the long-term trend is warming, and record highs now outnumber record lows.",
  "1_4":
    "There has been no pause in warming: each of the last four decades has been warmer than the one before.",
  "1_5": "The oceans are warming: ocean heat content keeps increasing and reaches new records.",
  "1_6":
    "Sea level is rising and the rise is accelerating, caused by warming, and it floods low-lying coasts and islands.",
  "1_7":
    "Extreme weather is increasing with warming: heatwaves, heavy rainfall, droughts and wildfire weather are becoming more frequent and intense.",
  "1_8":
    "Scientists have used both terms, global warming and climate change, for decades; the warming continues.",
  "2_0": "Human greenhouse gas emissions are the dominant cause of the observed global warming.",
  "2_1":
    "Recent warming is not a natural cycle: the sun, volcanoes and ocean oscillations cannot explain it, human CO2 emissions do.",
  "2_2":
    "Greenhouse gases are the main driver of warming; aerosols, land use, urban heat islands and cosmic rays cannot explain it.",
  "2_3":
    "The greenhouse effect is well established: rising CO2 traps heat and drives warming, as measurements confirm.",
  "2_4": "Atmospheric CO2 concentrations are rising, as measured at Mauna Loa and stations around the world.",
  "2_5":
    "The rise in atmospheric CO2 comes from human emissions of fossil fuels and land use, not from the oceans.",
  "3_0": "The impacts of climate change are serious, and mostly harmful for people and nature.",
  "3_1": "Climate sensitivity is about 3 °C per doubling of CO2: feedbacks amplify the warming.",
  "3_2":
    "Climate change threatens species: coral reefs are bleaching, and polar bears and many ecosystems are at risk.",
  "3_3":
    "CO2 emissions are a pollutant that drives warming and ocean acidification; extra plant growth does not offset the harm.",
  "3_4": "A few degrees of global warming have large and dangerous impacts.",
  "3_5": "Climate change increases the risk of conflict, displacement and migration.",
  "3_6": "Climate change harms health: heatwaves kill, and diseases spread as the climate warms.",
  "4_0": "Climate policies and solutions work, and they are needed to cut emissions.",
  "4_1": "Climate policies bring economic and health benefits that outweigh their costs.",
  "4_2": "Climate policies are effective: carbon pricing and clean energy standards have cut emissions.",
  "4_3": "Climate action is achievable and has broad public support.",
  "4_4": "Renewable energy such as wind and solar is reliable and now cheaper than fossil fuels.",
  "4_5": "Clean energy can replace fossil fuels; development does not depend on coal, oil and gas.",
  "5_0": "Climate science and the climate movement can be trusted.",
  "5_1":
    "Climate science is reliable: there is a strong scientific consensus, and climate models and temperature records are accurate.",
  "5_2":
    "Climate scientists and the media report the evidence accurately; warnings about climate change are not alarmist.",
  "5_3": "Climate change is real, not a hoax or a conspiracy: the data are not fabricated or manipulated.",
};
