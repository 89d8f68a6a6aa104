// Records the interop traffic plan (plan.mjs) as a web page makes it, in
// headless Chromium, through the DevTools protocol (chrome-remote-interface),
// and writes it as a HAR file with the npm chrome-har library, each body
// fetched as chrome-har's README says (Network.getResponseBody, set on the
// response before harFromMessages). The project does not write this HAR.
//
// usage: node record-chromium.mjs DEVTOOLS_PORT CTX_JSON OUT.har
import fs from 'node:fs';
import CDP from 'chrome-remote-interface';
import { harFromMessages } from 'chrome-har';
import { drive } from './plan.mjs';

const [port, ctxFile, out] = process.argv.slice(2);
const ctx = JSON.parse(fs.readFileSync(ctxFile, 'utf8'));
// deadline rejects after ms; its timer does not keep Node running.
const deadline = (ms, what) => new Promise((_, reject) => setTimeout(() => reject(new Error(what + ' took longer than ' + ms + ' ms')), ms).unref());

const client = await CDP({ port: Number(port) });
const { Network, Page, Runtime } = client;
const events = [];
const pending = new Set();
const finished = new Set();
client.on('event', (m) => {
  if (!/^(Page|Network)\./.test(m.method)) return;
  events.push({ method: m.method, params: m.params });
  const id = m.params && m.params.requestId;
  if (m.method === 'Network.requestWillBeSent') pending.add(id);
  if (m.method === 'Network.loadingFinished') { pending.delete(id); finished.add(id); }
  if (m.method === 'Network.loadingFailed') pending.delete(id);
});
try {
  await Network.enable({ maxTotalBufferSize: 64 << 20, maxResourceBufferSize: 16 << 20 });
  await Page.enable();
  const loaded = Page.loadEventFired();
  // The page lives on the service's origin, so its calls need no CORS.
  await Page.navigate({ url: ctx.base + '/' });
  await Promise.race([loaded, deadline(15000, 'loading the page')]);
  const res = await Promise.race([
    Runtime.evaluate({ expression: '(' + drive.toString() + ')(' + JSON.stringify(ctx) + ')', awaitPromise: true, returnByValue: true }),
    deadline(120000, 'the traffic plan'),
  ]);
  if (res.exceptionDetails) {
    throw new Error('the plan failed in the page: ' + JSON.stringify(res.exceptionDetails).slice(0, 2000));
  }
  for (const line of res.result.value) console.log('  page: ' + line);
  // Every request ends (the abort's stream ends on its own).
  const t0 = Date.now();
  while (pending.size > 0 && Date.now() - t0 < 15000) await new Promise((r) => setTimeout(r, 100));
  // Each body, as chrome-har's README says: set on the response.
  for (const e of events) {
    if (e.method !== 'Network.responseReceived' || !finished.has(e.params.requestId)) continue;
    try {
      const b = await Network.getResponseBody({ requestId: e.params.requestId });
      e.params.response.body = b.body;
      if (b.base64Encoded) e.params.response.encoding = 'base64';
    } catch (err) {
      console.log('  no body for ' + e.params.response.url + ': ' + err.message);
    }
  }
  const har = harFromMessages(events, { includeTextFromResponseBody: true });
  fs.writeFileSync(out, JSON.stringify(har, null, 2));
  console.log('wrote ' + out + ': ' + har.log.entries.length + ' entries');
} finally {
  await client.close();
}
