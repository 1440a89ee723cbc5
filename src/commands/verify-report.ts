import type { Config } from "../config.ts";
import { clip, clipMiddle } from "../clip.ts";
import { openRuntime } from "../runtime.ts";
import { verify, type KeyList, type VerifyLine, type VerifyOptions } from "../sync/verify.ts";
import { requireMigrated } from "../warehouse/migrate.ts";
import { commandLogger, table } from "./output.ts";

function keys(label: string, list: KeyList | undefined): string | null {
  if (!list || list.count === 0) return null;
  return `${label} ${list.count}: ${list.first.map((key) => clipMiddle(key, 28)).join(", ")}${list.count > list.first.length ? ", …" : ""}`;
}

/**
 * `missing 2: key1, key2; extra 1: key3; differs 3: key4, key5, … (status 2, name 1)`: the rows the warehouse
 * does not hold live, the live rows no record read names, the rows whose values differ, then how many of them
 * differ per column.
 */
function valuesOf(line: VerifyLine): string {
  const missing = keys("missing", line.missingKeys);
  const extra = keys("extra", line.extraKeys);
  const differing = keys("differs", line.differingKeys);
  if (missing === null && extra === null && differing === null) return line.status === "ok" ? "values equal" : line.status;
  const columns = Object.entries(line.columns ?? {}).map(([column, rows]) => `${column} ${rows}`);
  return [missing, extra, differing === null ? null : `${differing} (${columns.join(", ")})`].filter((part) => part !== null).join("; ");
}

function detailOf(line: VerifyLine): string {
  if (line.status === "rejected") return `${line.recordKey ? `${clipMiddle(line.recordKey, 28)}: ` : ""}${line.reason ?? ""}`;
  if (line.status === "unknown") return line.reason ?? "";
  if (line.table !== undefined) return valuesOf(line);
  return [keys("missing", line.missingKeys), keys("extra", line.extraKeys)].filter((part) => part !== null).join("; ");
}

/** `coldsync verify`: reconciles, prints the checks as a table (or JSON), and sets the exit code: 1 unless every check is ok. */
export async function runVerify(config: Config, options: VerifyOptions, json: boolean): Promise<void> {
  const runtime = await openRuntime(config, { logger: commandLogger(config), createSchema: false });
  try {
    await requireMigrated(runtime.warehouse);
    const result = await verify(runtime.syncContext({ trigger: "cli" }), options);
    if (json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      console.log(
        table(
          ["campaign", "stream", "upstream", "warehouse", "rejected", "check", "detail"],
          result.lines.map((line) => [
            line.campaignUid === null ? "account" : clipMiddle(line.campaignUid, 24),
            line.table === undefined ? line.stream : `${line.stream} → ${line.table}`,
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
      // A history that disagrees with its row is the warehouse's own doing: verifying again changes nothing.
      if (result.lines.some((line) => line.status === "differs" && !line.table?.endsWith("_history"))) {
        console.log("values also differ where the upstream changed a record after the last sync: verify again after a sync to tell the two apart");
      }
    }
    process.exitCode = result.problems === 0 ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
