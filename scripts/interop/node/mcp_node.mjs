// The Node peers against `benchaudit mcp` (stdio) and `benchaudit serve` (streamable HTTP), on
// 127.0.0.1 only; run by scripts/interop/mcp_node.sh after `npm install` in this folder.
//
// * The official TypeScript SDK's `Client` (default options): a full episode over stdio, over
//   an `/mcp?task_id=&seed=` session and over a per-episode URL — get_task_info, fetch_page
//   until every page is in, submit_results, the reward read back — and append_results refused
//   as an unknown tool outside the chunked protocol.
// * Ajv's draft 2020-12 compiler, with default options and with `strict: true`, compiles every
//   tool schema, and agrees with the server on every argument of ../arguments.json.
// * The MCP Inspector's CLI: one tool call over stdio and one over HTTP, and its strict schema
//   portability check of the tool list.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BENCHAUDIT ?? 'target/debug/benchaudit';
const PORT = Number(process.env.PORT ?? 18386);
const BASE = `http://127.0.0.1:${PORT}`;
const INSPECTOR = join(HERE, 'node_modules', '.bin', 'mcp-inspector');
const THREE = ['get_task_info', 'fetch_page', 'submit_results'];

function assert(cond, ...what) {
  if (!cond) throw new Error(`assertion failed: ${what.map((w) => (typeof w === 'string' ? w : JSON.stringify(w))).join(' ')}`);
}

function version(pkg) {
  return JSON.parse(readFileSync(join(HERE, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

function structured(result) {
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

/** The oracle through any client: every page fetched, faults retried, duplicates and totals
 * dropped; returns submit_results' arguments (as scripts/interop/serve.py does). */
async function oracleSubmission(info, fetch) {
  const c = info.constraints;
  const pages = Math.ceil(c.total_rows / c.page_size);
  const records = new Map();
  const log = [];
  for (let page = 1; page <= pages; page++) {
    for (;;) {
      const [body, isError] = await fetch(page);
      if (isError) {
        assert(body.retry === true && [429, 500].includes(body.status), body);
        log.push(`page=${page} status ${body.status} retrying with exponential backoff`);
        continue;
      }
      for (const row of body.rows) if (!row.is_total) records.set(row.record_id, row);
      log.push(`page=${page} ok`);
      break;
    }
  }
  const schema = ['year', 'reporter', 'partner', 'flow', 'hs', 'cmdCode', 'tradeValue', 'netWeight', 'qty', 'record_id'];
  const meta = { task_id: info.task_id, query: info.query, row_count: records.size, schema,
    dedup_key: ['year', 'reporter', 'partner', 'flow', 'hs', 'record_id'] };
  return {
    data_jsonl: [...records.values()].map((r) => `${JSON.stringify(r)}\n`).join(''),
    metadata_json: JSON.stringify(meta),
    run_log: log.join('\n'),
  };
}

async function episode(transport, label) {
  const client = new Client({ name: 'benchaudit-interop', version: '1' });
  await client.connect(transport);
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert(JSON.stringify(names) === JSON.stringify(THREE), label, names);
  const info = structured(await client.callTool({ name: 'get_task_info', arguments: {} }));
  const args = await oracleSubmission(info, async (page) => {
    const r = await client.callTool({ name: 'fetch_page', arguments: { page } });
    return [structured(r), r.isError === true];
  });
  const answer = structured(await client.callTool({ name: 'submit_results', arguments: args }));
  assert(answer.done === true && answer.reward === 1 && answer.scores.f1 === 1, label, answer);
  assert(typeof answer.score === 'number' && typeof answer.breakdown === 'object', label, answer);
  let refused;
  try {
    await client.callTool({ name: 'append_results', arguments: { data_jsonl: '' } });
  } catch (e) {
    refused = e;
  }
  assert(refused && String(refused.message).includes('unknown tool `append_results` (tools: get_task_info, fetch_page, submit_results)'),
    label, String(refused));
  console.log(`ok: TypeScript SDK Client over ${label}: ${info.task_id} reward ${answer.reward}, append_results not callable`);
  await client.close();
}

async function toolSchemas() {
  const client = new Client({ name: 'benchaudit-interop', version: '1' });
  await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp', '--task', 'T2_multi_page', '--seed', '1', '--submission', 'chunked'] }));
  const { tools } = await client.listTools();
  await client.close();
  return Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
}

function checkAjv(schemas) {
  assert(Object.keys(schemas).sort().join() === [...THREE, 'append_results'].sort().join(), Object.keys(schemas));
  const compiled = {};
  for (const [label, options] of [['defaults', {}], ['strict', { strict: true }]]) {
    const ajv = new Ajv2020(options);
    for (const [name, schema] of Object.entries(schemas)) {
      compiled[`${label}/${name}`] = ajv.compile(schema); // throws on anything it refuses
    }
  }
  const cases = JSON.parse(readFileSync(join(HERE, '..', 'arguments.json'), 'utf8')).cases;
  for (const c of cases) {
    for (const label of ['defaults', 'strict']) {
      const valid = compiled[`${label}/${c.tool}`](c.args);
      assert(valid === c.reads, `Ajv (${label}) disagrees with the server`, c);
    }
  }
  console.log(`ok: Ajv ${version('ajv')} (draft 2020-12, defaults and strict) compiles the ${Object.keys(schemas).length} `
    + `tool schemas and agrees with the server on ${cases.length} argument sets`);
}

function inspector(args) {
  const r = spawnSync(INSPECTOR, ['--cli', ...args], { encoding: 'utf8', timeout: 120000 });
  assert(r.status === 0, `inspector ${args.join(' ')} exited ${r.status}`, r.stderr ?? '', r.error ? String(r.error) : '');
  return r;
}

function checkInspector() {
  const call = ['--method', 'tools/call', '--tool-name', 'fetch_page', '--tool-arg', 'page=1'];
  for (const [target, label] of [
    [[BIN, 'mcp', '--task', 'T3_duplicates', '--seed', '1'], 'stdio'],
    [[`${BASE}/mcp?task_id=T3_duplicates&seed=1`], 'streamable HTTP /mcp session'],
  ]) {
    const out = JSON.parse(inspector([...target, ...call]).stdout);
    assert(out.isError !== true && out.structuredContent.page === 1 && out.structuredContent.rows.length > 0, label, out);
    console.log(`ok: MCP Inspector ${version('@modelcontextprotocol/inspector')} --cli over ${label}: fetch_page(page=1) `
      + `served ${out.structuredContent.rows.length} rows`);
  }
  const list = inspector([BIN, 'mcp', '--task', 'T2_multi_page', '--seed', '1', '--submission', 'chunked',
    '--method', 'tools/list', '--strict']);
  // Silent when clean; otherwise one block per problem and "N errors, M warnings across …".
  assert(list.stderr.trim() === '', 'inspector --strict found portability problems', list.stderr);
  console.log('ok: MCP Inspector --strict: no portability error or warning in the tool schemas');
}

async function startServer() {
  const server = spawn(BIN, ['serve', '--addr', `127.0.0.1:${PORT}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  for (let i = 0; i < 200; i++) {
    if (server.exitCode !== null) throw new Error(`server exited ${server.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${BASE}/healthz`)).ok) return { server, stderr: () => stderr };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  server.kill();
  throw new Error('server did not start');
}

async function main() {
  console.log(`TypeScript SDK ${version('@modelcontextprotocol/sdk')}`);
  await episode(new StdioClientTransport({ command: BIN, args: ['mcp', '--task', 'T8_mixed_faults', '--seed', '3'] }), 'stdio');
  checkAjv(await toolSchemas());
  const { server, stderr } = await startServer();
  try {
    await episode(new StreamableHTTPClientTransport(new URL(`${BASE}/mcp?task_id=T7_totals_trap&seed=4`)),
      'streamable HTTP /mcp session');
    const created = await (await fetch(`${BASE}/v1/episodes`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task_id: 'T4_rate_limit_429', seed: 2 }),
    })).json();
    await episode(new StreamableHTTPClientTransport(new URL(BASE + created.mcp_url)), 'streamable HTTP /v1/episodes/{id}/mcp');
    checkInspector();
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    if (stderr().includes('panicked')) throw new Error(`the server panicked: ${stderr()}`);
  }
  console.log('PASS');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
