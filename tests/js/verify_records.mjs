// The JavaScript verifier over records a Python test wrote: `node tests/js/verify_records.mjs
// FILE`, FILE a JSON list of game records; prints the list of their reports as JSON (the key and
// the lines too). Driven by tests/server/test_verify_record.py, which compares the places where
// each verifier finds a tampered record failing.

import { readFileSync } from "node:fs";

import { verifyRecord } from "../../clients/playhall_web/static/lib/playhall.js";

const records = JSON.parse(readFileSync(process.argv[2], "utf8"));
const reports = [];
for (const record of records) reports.push(await verifyRecord(record));
process.stdout.write(JSON.stringify(reports));
