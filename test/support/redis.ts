import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, inject } from "vitest";

export interface TestRedis {
  url: string;
  prefix: string;
}

/** A key prefix of its own for one test file; every key under it is deleted afterwards. */
export function useTestRedis(label = "t"): TestRedis {
  const prefix = `coldsync-test-${label}-${randomBytes(4).toString("hex")}`;
  const url = inject("services").redisUrl;
  afterAll(async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    try {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
    } finally {
      redis.disconnect();
    }
  });
  return { url, prefix };
}
