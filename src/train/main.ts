#!/usr/bin/env node
/** The `climatecheck-train` command (program.ts). */
import { runProgram } from "../cli/run.ts";
import { trainProgram } from "./program.ts";

await runProgram(trainProgram());
