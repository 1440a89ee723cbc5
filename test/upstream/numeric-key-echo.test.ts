import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scripted-upstream.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { startLocalServer } from "./support.ts";

/**
 * README, "Running the worker in production": "A key the upstream echoes back is replaced by [REDACTED] in its
 * answers before they are read, so it reaches neither an error nor the warehouse (a key of at least 8 characters)".
 * COLDSYNC_API_KEY may be any visible ASCII, so an all-digit key is valid; and the README itself lists upstreams that
 * send a documented string as a JSON number ("a uid "12345" sent as 12345"). Such an upstream echoes such a key as
 * a bare JSON number, outside every string: it must be replaced there too.
 */

const KEY = "73105829461";

describe("an all-digit API key the upstream echoes as a JSON number", () => {
  // As written, and as a float of the same value (Python's json.dumps writes `.0`). A number of another value that
  // holds the key's digits is left as it is.
  it.each([KEY, `${KEY}.0`, `${KEY}.00E+0`])("is replaced in the answer before it is read (%s)", async (echo) => {
    const server = await startLocalServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`[{"id":1,"name":"placed","api_key":${echo},"ratio":${KEY}.5,"total":${KEY}1}]`);
    });
    const client = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000 });
    try {
      const listing = await client.listWorkspaces();
      const read = JSON.stringify(listing.records.map((record) => record.value));
      expect(read).toContain('"name":"placed","api_key":"[REDACTED]"');
      expect(read).toContain(`"ratio":${KEY}.5,"total":${KEY}1,`);
    } finally {
      await client.close();
      await server.close();
    }
  });

  describe("through `coldsync sync --once`", () => {
    const databaseUrl = useTestDatabase("numeric_key_echo");
    let upstream: ScriptedUpstream;

    beforeAll(async () => {
      upstream = await startScriptedUpstream();
      const [workspace] = upstream.state.workspaces;
      Object.assign(workspace as object, { api_key: Number(KEY) });
    });
    afterAll(async () => {
      await upstream.close();
    });

    it("never reaches the warehouse", async () => {
      const outcome = await runColdsync(["sync", "--once"], {
        COLDSYNC_API_URL: upstream.url,
        COLDSYNC_API_KEY: KEY,
        COLDSYNC_ACCOUNT: "numeric-key",
        COLDSYNC_RATE_LIMIT: "500",
        DATABASE_URL: databaseUrl(),
      });
      expect(outcome.code, outcome.stderr).toBe(0);

      const client = new pg.Client({ connectionString: databaseUrl() });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT to_jsonb(w)::text AS row FROM coldsync.workspaces w");
        expect(rows).toHaveLength(1);
        expect(rows[0].row).toContain('"name": "Main"');
        expect(rows[0].row).not.toContain(KEY);
      } finally {
        await client.end();
      }
    });
  });
});
