import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import type { VerifyOptions } from "../sync/verify.ts";

interface VerifyFlags {
  campaign?: string;
  deep?: true | string;
  values?: boolean;
  json?: boolean;
}

function deepOf(flag: VerifyFlags["deep"]): VerifyOptions["deep"] {
  if (flag === undefined) return undefined;
  if (flag === true || flag === "mismatched") return "mismatched";
  if (flag === "all") return "all";
  throw new Error(`--deep: must be given alone (campaigns whose counts disagree) or as --deep=all, got "${flag}"`);
}

export function register(program: Command): void {
  program
    .command("verify")
    .description("reconcile the warehouse with the upstream: key sets of the account's listings, counts per campaign and stream; exit 1 unless all is ok")
    .option("--campaign <uid>", "check one campaign only")
    .option("--deep [which]", "compare key sets of leads and events too: for campaigns whose counts disagree, or --deep=all")
    .option(
      "--values",
      "compare the values of the rows held with the records read (listings, replies, the key sets walked) and each campaign's detail (one request more per campaign)",
    )
    .option("--json", "print the result as JSON (identifiers in full)")
    .action(async (flags: VerifyFlags) => {
      const config = loadConfig(process.env, ["apiKey"]);
      const deep = deepOf(flags.deep);
      // Loaded only when the command runs: `verify --help` needs neither the database driver nor the HTTP client.
      const { runVerify } = await import("./verify-report.ts");
      const options: VerifyOptions = { ...(flags.campaign ? { campaignUid: flags.campaign } : {}), ...(deep ? { deep } : {}), ...(flags.values ? { values: true } : {}) };
      await runVerify(config, options, flags.json === true);
    });
}
