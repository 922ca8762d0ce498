'use strict';
// The TypeScript SDK's Client, as a program uses it.
//
//   node ts_client.cjs SDK_DIR TARGET SCENARIO PLAN
//
// SDK_DIR is an npm prefix holding @modelcontextprotocol/sdk (.clients/ts-1.32.2, .clients/ts-1.22.0).
// TARGET, SCENARIO, PLAN and what is printed are as for the Python drivers (_driver.py beside this
// file). The string a program hands to its model is the result's text content; a call is cancelled
// with an AbortController's signal, the SDK's documented way.
const path = require('path');
const readline = require('readline');

const [sdkDir, targetJson, scenario, planFile] = process.argv.slice(2);
const target = JSON.parse(targetJson);
const plan = JSON.parse(require('fs').readFileSync(planFile, 'utf8'));
const sdk = (p) => require(path.join(path.resolve(sdkDir), 'node_modules/@modelcontextprotocol/sdk/dist/cjs', p));
const { Client } = sdk('client/index.js');

function transport() {
  if (target.transport === 'stdio') {
    const { StdioClientTransport } = sdk('client/stdio.js');
    const [command, ...rest] = target.command;
    return new StdioClientTransport({ command, args: rest, env: target.env, stderr: 'inherit' });
  }
  if (target.transport === 'sse') {
    const { SSEClientTransport } = sdk('client/sse.js');
    return new SSEClientTransport(new URL(target.url));
  }
  const { StreamableHTTPClientTransport } = sdk('client/streamableHttp.js');
  return new StreamableHTTPClientTransport(new URL(target.url));
}

// The SDK hands a progress notification to its handler in a microtask, but takes a response at once
// and forgets the call's progress handler: a notification read in the same chunk as the response
// (the server sent it first) reaches onerror as "for an unknown token" instead. Kept apart, as late.
const UNKNOWN_TOKEN = 'Received a progress notification for an unknown token: ';
let late = [];
function onerror(error) {
  const message = String(error && error.message);
  if (!message.startsWith(UNKNOWN_TOKEN)) return;
  const p = JSON.parse(message.slice(UNKNOWN_TOKEN.length)).params;
  late.push([p.progress, p.total ?? null]);
}

async function call(client, callArgs, options = {}) {
  const progress = [];
  const onprogress = (p) => progress.push([p.progress, p.total ?? null]);
  late = [];
  try {
    const r = await client.callTool({ name: 'execute_tests', arguments: callArgs }, undefined, { ...options, onprogress });
    const text = (r.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    const summary = r.structuredContent ? r.structuredContent.summary : null;
    return { text, is_error: Boolean(r.isError), summary, progress, late_progress: late, raised: null };
  } catch (e) {
    const raised = e instanceof Error ? `${e.constructor.name}: ${e.message}` : `${typeof e}: ${String(e)}`;
    return { text: null, is_error: null, summary: null, progress, late_progress: late, raised };
  }
}

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function expect(command) {
  const { value } = await lines.next();
  if (value !== command) throw new Error(`expected ${command} on stdin, got ${value}`);
}

async function calls(client) {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const results = {};
  for (const [name, callArgs] of Object.entries(plan)) results[name] = await call(client, callArgs);
  emit({ tools, calls: results });
}

async function cancel(client) {
  const controller = new AbortController();
  let finished = null;
  const pending = call(client, plan.run, { signal: controller.signal }).then((r) => {
    if (!controller.signal.aborted) finished = r;
    return r;
  });
  emit({ event: 'calling' });
  await expect('cancel');
  controller.abort('cancelled by the test');
  const aborted = await pending;
  emit({ event: 'cancelled', finished, raised: aborted.raised });
  await expect('after');
  emit({ event: 'after', ...(await call(client, plan.after)) });
}

(async () => {
  const client = new Client({ name: 'pytest-mcp-client-matrix', version: '0' });
  client.onerror = onerror;
  await client.connect(transport());
  await { calls, cancel }[scenario](client);
  await client.close();
  lines.return();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
