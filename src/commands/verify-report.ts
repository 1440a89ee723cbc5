import type { Config } from "../config.ts";
import { clip } from "../http/status-page/format.ts";
import { openRuntime } from "../runtime.ts";
import { verify, type KeyList, type VerifyLine, type VerifyOptions } from "../sync/verify.ts";
import { commandLogger, shortId, table } from "./output.ts";

function keys(label: string, list: KeyList | undefined): string | null {
  if (!list || list.count === 0) return null;
  return `${label} ${list.count}: ${list.first.map((key) => shortId(key, 28)).join(", ")}${list.count > list.first.length ? ", …" : ""}`;
}

function detailOf(line: VerifyLine): string {
  if (line.status === "rejected") return `${line.recordKey ? `${shortId(line.recordKey, 28)}: ` : ""}${line.reason ?? ""}`;
  return [keys("missing", line.missingKeys), keys("extra", line.extraKeys)].filter((part) => part !== null).join("; ");
}

/** `coldsync verify`: reconciles, prints the checks as a table (or JSON), and sets the exit code: 1 unless every check is ok. */
export async function runVerify(config: Config, options: VerifyOptions, json: boolean): Promise<void> {
  const runtime = await openRuntime(config, { logger: commandLogger(config) });
  try {
    const result = await verify(runtime.syncContext({ trigger: "cli" }), options);
    if (json) {
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
}
