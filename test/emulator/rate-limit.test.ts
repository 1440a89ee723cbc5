import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { Api, messageOf, useEmulator } from "../support/emulator.ts";

/** Contract A.2: a request rate above the per-key limit answers 429 with Retry-After in whole seconds. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 29 });

afterEach(() => {
  emulator().settings.rateLimit = 0;
});

function burst(key: string, size: number) {
  const api = new Api(emulator().url, key);
  return Promise.all(Array.from({ length: size }, () => api.get(PATHS.domains, { limit: 1 })));
}

describe("rate limit", () => {
  it("unlimited by default: a burst of 30 all succeeds", async () => {
    const answers = await burst("a", 30);
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
  });

  it("with rateLimit 2, a burst of 10 gets 429 with a whole-seconds Retry-After and a {message}", async () => {
    emulator().settings.rateLimit = 2;
    const answers = await burst("a", 10);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    for (const answer of limited) {
      expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      messageOf(answer);
    }
  });

  it("the limit is per key: another key is served while the first is limited", async () => {
    emulator().settings.rateLimit = 2;
    const first = await burst("a", 10);
    expect(first.some((answer) => answer.status === 429)).toBe(true);
    const other = await new Api(emulator().url, "b").get(PATHS.domains, { limit: 1 });
    expect(other.status).toBe(200);
  });

  it("after waiting Retry-After seconds the key is served again", async () => {
    emulator().settings.rateLimit = 2;
    const limited = (await burst("a", 10)).find((answer) => answer.status === 429);
    if (!limited) throw new Error("the burst was never limited");
    await sleep(Number(limited.headers.get("retry-after")) * 1000 + 100);
    expect((await new Api(emulator().url, "a").get(PATHS.domains, { limit: 1 })).status).toBe(200);
  });

  it("lifting the limit at runtime takes effect at once", async () => {
    emulator().settings.rateLimit = 2;
    await burst("b", 10);
    emulator().settings.rateLimit = 0;
    const answers = await burst("b", 10);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
  });
});
