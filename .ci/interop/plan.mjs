// The traffic the interop recorders record: calls a web page (or any
// client) makes to the Agent Invoke Service, run against the reference
// server through a recorder the project does not write. drive is
// self-contained (it uses only fetch and timers), so record-chromium.mjs
// runs its source inside a page and record-node.mjs runs it in Node.
//
// ctx: {base, key, bundlesKey, agent, exportPath, lagMs}. Returns a log of
// what it did, one line per call.
export async function drive(ctx) {
  const log = [];
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const invokeURL = (suffix) => ctx.base + '/api/invoke/' + ctx.agent + (suffix || '');
  const bearer = { Authorization: 'Bearer ' + ctx.key };
  const frames = (text) => text.split(/\r\n\r\n|\n\n|\r\r/).filter((f) => f.trim() !== '');
  const runOf = (text) => {
    const m = /"runID":"([^"]+)"/.exec(text);
    return m ? m[1] : '';
  };
  // call sends a request and reads its whole answer.
  async function call(name, url, init) {
    const resp = await fetch(url, init);
    const text = await resp.text();
    log.push(name + ': ' + resp.status + ' ' + (resp.headers.get('content-type') || '') + ' ' + text.length + ' bytes');
    return { resp, text, thread: resp.headers.get('x-svc-thread-id') || '' };
  }
  // stream reads an SSE answer until stop(textSoFar) says so, then stops
  // reading (the client may stop at runComplete) or reads to the end.
  async function stream(name, url, init, stop) {
    const resp = await fetch(url, init);
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
      if (stop && stop(text)) {
        await reader.cancel();
        log.push(name + ': stopped reading after ' + text.length + ' bytes');
        return { resp, text, thread: resp.headers.get('x-svc-thread-id') || '' };
      }
    }
    log.push(name + ': ' + resp.status + ' read to its end, ' + text.length + ' bytes');
    return { resp, text, thread: resp.headers.get('x-svc-thread-id') || '' };
  }
  const sse = (body, extra) => ({ method: 'POST', headers: { ...bearer, Accept: 'text/event-stream', 'Content-Type': 'text/plain', ...(extra || {}) }, body });
  const threadURL = (t, rest) => ctx.base + '/api/threads/' + t + (rest || '');
  // lagged waits out the report lag since the last run completed, so the
  // thread's follow-ups are judged.
  const lagged = () => sleep(ctx.lagMs + 500);

  // A new thread, read to the end (SSE-01..06, EVT-01/02, THREAD-03/04).
  const first = await stream('sse new thread', invokeURL(), sse('hello from the interop client'));
  const thread = first.thread;
  // The same thread by header (THREAD-02), a script with two events; its
  // follow-ups once the report lag is over (THREAD-02, ASYNC-03).
  await stream('sse by header', invokeURL(), sse('@say one\n@say two', { 'X-SVC-Thread-Id': thread }));
  await lagged();
  await call('thread after the run by header', threadURL(thread), { headers: bearer });
  await call('thread events after the run by header', threadURL(thread, '/events'), { headers: { ...bearer, Accept: 'application/json' } });
  // The thread by path (THREAD-01); its follow-up comes last.
  await stream('sse by path', invokeURL('/thread/' + thread), sse('@say on the path'));
  // A client that stops reading at runComplete (SSE-06: legal).
  await stream('sse stopped at runComplete', invokeURL(), sse('@say stop early'), (t) => /"runComplete":true/.test(t));
  // A run that fails after content (SSE-07).
  await stream('sse failing run', invokeURL(), sse('@say partial\n@fail the tool broke'));
  // Richer event objects (EVT-04..07): a tool call, a step, a request for
  // input.
  await stream('sse richer events', invokeURL(), sse('@waiting\n@toolinput calculator {"a":1}\n@tool calculator {"a":1}\n@step Summarise\n@say done'));
  await stream('sse ask', invokeURL(), sse('@ask sensitive fields=token Paste a token\n@say after the ask'));
  // The envelope (FMT-02) and the plain-text forms (FMT-03/04/05/06).
  await call('envelope', invokeURL(), { method: 'POST', headers: { ...bearer, Accept: 'application/json', 'Content-Type': 'text/plain' }, body: 'an envelope' });
  await call('plain text', invokeURL(), { method: 'POST', headers: { ...bearer, 'Content-Type': 'text/plain' }, body: 'plain please' });
  await call('sse, loosely', invokeURL(), { method: 'POST', headers: { ...bearer, Accept: 'text/event-stream, */*', 'Content-Type': 'text/plain' }, body: 'loose accept' });
  await call('json, loosely', invokeURL(), { method: 'POST', headers: { ...bearer, Accept: 'application/json, */*', 'Content-Type': 'text/plain' }, body: 'loose json' });
  await call('slow plain text', invokeURL(), { method: 'POST', headers: { ...bearer, 'Content-Type': 'text/plain' }, body: '@say a\n@pause 800ms\n@say b\n@pause 800ms\n@say c' });
  // An async run and its events (ASYNC-01/02/04).
  const ack = await call('async', invokeURL('?async=true'), { method: 'POST', headers: { ...bearer, 'Content-Type': 'text/plain' }, body: '@pause 1500ms\n@say later' });
  let asyncThread = '', asyncRun = '';
  try {
    const a = JSON.parse(ack.text);
    asyncThread = a.threadID;
    asyncRun = a.runID;
  } catch (e) {
    log.push('async: answer not JSON');
  }
  if (asyncThread && asyncRun) {
    await call('events of the async run', threadURL(asyncThread, '/events?runID=' + encodeURIComponent(asyncRun)),
      { headers: { ...bearer, Accept: 'application/json' } });
  }
  // An abort mid-stream (ASYNC-06): the script pauses after its first
  // content; the abort goes once that content arrived (a recorder that
  // buffers answers delivers it only at the end).
  let aborted = false;
  await stream('sse aborted', invokeURL(), sse('@say working\n@pause 3s\n@say after'), (t) => {
    const th = /"threadID":"([^"]+)"/.exec(t);
    if (!aborted && th && /"content":"working"/.test(t)) {
      aborted = true;
      fetch(threadURL(th[1], '/abort'), { method: 'POST', headers: bearer }).then((r) => r.text()).then(() => log.push('abort sent'));
    }
    return false;
  });
  // Refusals (ERR-02, ERR-03, ERR-10).
  await call('no key', invokeURL(), { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'who am I' });
  await call('malformed key', invokeURL(), { method: 'POST', headers: { Authorization: 'Bearer not-a-key', 'Content-Type': 'text/plain' }, body: 'bad key' });
  // The bundle export (BUNDLE-01/05, DROP-04).
  if (ctx.exportPath) {
    await call('bundle export', ctx.base + ctx.exportPath, { headers: { Authorization: 'Bearer ' + ctx.bundlesKey } });
  }
  // The follow-ups of the run by path and of the async run's new thread
  // (THREAD-01, THREAD-03), once the report lag is over.
  await lagged();
  await call('thread after the run by path', threadURL(thread), { headers: bearer });
  if (asyncThread) {
    await call('async thread', threadURL(asyncThread), { headers: bearer });
  }
  return log;
}
