// Drives the interop traffic plan (plan.mjs) from Node's fetch against a
// base URL: a recorder in between (mitmproxy) writes the HAR file.
//
// usage: node record-node.mjs CTX_JSON
import fs from 'node:fs';
import { drive } from './plan.mjs';

const ctx = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
for (const line of await drive(ctx)) console.log('  node: ' + line);
