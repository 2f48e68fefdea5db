// The DuckDB anchor for bench/bill: per-interface 95th of in and out bytes
// for one month of the benchmark CSV, with DuckDB's quantile_disc on all
// cores, printed as JSON {name: {samples, in_bps, out_bps}}.
//
//   node bench/bill/duckdb.mjs big.csv 2026-07 [epoch|iso]
//
// quantile_disc(x, q) is the value at 0-based index floor(q·(n−1)) of the
// sorted values (checked against linecheck's rrdtool-style rank by the
// bench script: it prints both and the script compares them).
import os from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';

const [path, month, kind = 'epoch'] = process.argv.slice(2);
const start = `${month}-01 00:00:00+00`;
const db = await DuckDBInstance.create(':memory:', { threads: String(os.availableParallelism()) });
const con = await db.connect();
await con.run("SET TimeZone = 'UTC'");
const ts = kind === 'epoch' ? 'to_timestamp(timestamp)' : 'timestamp::TIMESTAMPTZ';
const types = kind === 'epoch'
  ? "{'timestamp': 'BIGINT', 'interface': 'VARCHAR', 'in_bytes': 'BIGINT', 'out_bytes': 'BIGINT'}"
  : "{'timestamp': 'VARCHAR', 'interface': 'VARCHAR', 'in_bytes': 'BIGINT', 'out_bytes': 'BIGINT'}";
const q = `
  SELECT interface, count(*) AS n,
         quantile_disc(in_bytes, 0.95) AS in95, quantile_disc(out_bytes, 0.95) AS out95
  FROM read_csv('${path.replace(/'/g, "''")}', header = true, columns = ${types})
  WHERE ${ts} >= TIMESTAMPTZ '${start}' AND ${ts} < TIMESTAMPTZ '${start}' + INTERVAL 1 MONTH
  GROUP BY interface ORDER BY interface`;
const reader = await con.runAndReadAll(q);
const out = {};
for (const [name, n, in95, out95] of reader.getRows()) {
  out[name] = { samples: Number(n), in_bps: Number(in95) * 8 / 300, out_bps: Number(out95) * 8 / 300 };
}
console.log(JSON.stringify(out));
