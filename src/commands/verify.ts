import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { openRuntime } from "../runtime.ts";
import { verify, type KeyList, type VerifyLine, type VerifyOptions } from "../sync/verify.ts";
import { clip } from "../http/status-page/format.ts";
import { commandLogger, shortId, table } from "./output.ts";

interface VerifyFlags {
  campaign?: string;
  deep?: true | string;
  json?: boolean;
}

function deepOf(flag: VerifyFlags["deep"]): VerifyOptions["deep"] {
  if (flag === undefined) return undefined;
  if (flag === true || flag === "mismatched") return "mismatched";
  if (flag === "all") return "all";
  throw new Error(`--deep: must be given alone (campaigns whose counts disagree) or as --deep=all, got "${flag}"`);
}

function keys(label: string, list: KeyList | undefined): string | null {
  if (!list || list.count === 0) return null;
  return `${label} ${list.count}: ${list.first.map((key) => shortId(key, 28)).join(", ")}${list.count > list.first.length ? ", …" : ""}`;
}

function detailOf(line: VerifyLine): string {
  if (line.status === "rejected") return `${line.recordKey ? `${shortId(line.recordKey, 28)}: ` : ""}${line.reason ?? ""}`;
  return [keys("missing", line.missingKeys), keys("extra", line.extraKeys)].filter((part) => part !== null).join("; ");
}

export function register(program: Command): void {
  program
    .command("verify")
    .description("reconcile the warehouse with the upstream: key sets of the account's listings, counts per campaign and stream; exit 1 unless all is ok")
    .option("--campaign <uid>", "check one campaign only")
    .option("--deep [which]", "compare key sets of leads and events too: for campaigns whose counts disagree, or --deep=all")
    .option("--json", "print the result as JSON (identifiers in full)")
    .action(async (flags: VerifyFlags) => {
      const config = loadConfig(process.env, ["apiKey"]);
      const deep = deepOf(flags.deep);
      const runtime = await openRuntime(config, { logger: commandLogger(config) });
      try {
        const result = await verify(runtime.syncContext({ trigger: "cli" }), {
          ...(flags.campaign ? { campaignUid: flags.campaign } : {}),
          ...(deep ? { deep } : {}),
        });
        if (flags.json) {
          console.log(JSON.stringify(result, null, 2));
        } else {
          console.log(
            table(
              ["campaign", "stream", "upstream", "warehouse", "rejected", "check", "detail"],
              result.lines.map((line) => [
                line.campaignUid === null ? "account" : shortId(line.campaignUid),
                line.stream,
                line.upstream,
                line.warehouse,
                line.rejected,
                line.status,
                clip(detailOf(line), 72),
              ]),
            ),
          );
          console.log(
            result.problems === 0
              ? `all ${result.lines.length} checks are ok (${result.requests} requests)`
              : `${result.problems} of ${result.lines.length} checks are not ok (${result.requests} requests)`,
          );
        }
        process.exitCode = result.problems === 0 ? 0 : 1;
      } finally {
        await runtime.close();
      }
    });
}
