// The official openai SDK (pinned in package-lock.json) against the
// router-proxy's POST /v1/responses, as cmd/router-proxy/responses_sdk_test.go
// runs it:
//   node responses.mjs DIR BASE_URL TOKEN MODEL SSN_MODEL [HEADER:VALUE]
// DIR is where `make mcp-js` installed the SDK; SSN_MODEL is the model the
// call with an SSN in a tool output asks for (one its rule sends to the
// cloud); HEADER:VALUE, when given, is sent with every call but that one
// (a header a rule of the test's router matches). Prints one JSON object:
// what the SDK parsed of each call, or the error it raised.
import { createRequire } from 'node:module';

const [dir, baseURL, token, model, ssnModel, route] = process.argv.slice(2);
const require = createRequire(dir + '/');
const { default: OpenAI } = require('openai');

const client = (apiKey, headers = {}) => new OpenAI({ apiKey, baseURL, maxRetries: 0, defaultHeaders: headers });
const routed = {};
if (route) {
  const [name, value] = route.split(':');
  routed[name] = value;
}
const ok = client(token, routed);
const tools = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

const failure = (e) => ({ status: e.status, type: e.error?.type ?? e.type, code: e.code, message: e.message });
const out = {};

// A plain call.
const plain = await ok.responses.create({ model, instructions: 'Be brief.', input: 'Say hello', store: false, max_output_tokens: 64 });
out.plain = { id: plain.id, status: plain.status, text: plain.output_text, usage: plain.usage };

// A streamed call through the SDK's stream helper, which checks each
// event against the response it accumulates.
const stream = ok.responses.stream({ model, input: 'Say hello', store: false });
const types = [];
let deltas = '';
for await (const ev of stream) {
  types.push(ev.type);
  if (ev.type === 'response.output_text.delta') deltas += ev.delta;
}
const final = await stream.finalResponse();
out.stream = { types, deltas, text: final.output_text, usage: final.usage };

// A function-call round trip: the model calls the tool, the output goes back
// with its call id.
const first = await ok.responses.create({ model, input: 'Weather in Paris?', tools, store: false });
const call = first.output.find((i) => i.type === 'function_call');
const second = await ok.responses.create({ model, tools, store: false,
  input: ['Weather in Paris?', call, { type: 'function_call_output', call_id: call.call_id, output: '18C and sunny' }]
    .map((i) => (typeof i === 'string' ? { role: 'user', content: i } : i)) });
out.tools = { call_id: call.call_id, name: call.name, arguments: call.arguments, text: second.output_text };

// A custom (freeform) tool, as Codex declares apply_patch, streamed
// (RESPONSES_CUSTOM_TOOL=1: the run whose backend is asked for one).
if (process.env.RESPONSES_CUSTOM_TOOL === '1') {
  const patch = ok.responses.stream({ model, input: 'Fix the typo.', store: false,
    tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: patch' } }] });
  const ctypes = [];
  for await (const ev of patch) ctypes.push(ev.type);
  const item = (await patch.finalResponse()).output.find((i) => i.type === 'custom_tool_call');
  out.custom = { types: ctypes, call_id: item?.call_id, name: item?.name, input: item?.input };
}

// An SSN in a tool output: the call is served, by whichever backend the
// router's rules chose (the test reads the audit).
const ssn = await client(token).responses.create({ model: ssnModel, store: false, tools,
  input: [{ role: 'user', content: 'Look the customer up.' }, call,
    { type: 'function_call_output', call_id: call.call_id, output: 'customer SSN 536-22-8410' }] });
out.ssn = { text: ssn.output_text };

// Without a token: 401 in OpenAI's error shape.
try {
  await client('not-a-token').responses.create({ model, input: 'hi' });
  out.noToken = { status: 200 };
} catch (e) {
  out.noToken = failure(e);
}

// Over budget: the metered rule's budget holds one call (across runs).
const metered = client(token, { ...routed, 'x-budget-test': 'on' });
out.overBudget = { served: 0 };
for (let i = 0; i < 3 && !out.overBudget.status; i++) {
  try {
    await metered.responses.create({ model, input: 'hi', store: false });
    out.overBudget.served++;
  } catch (e) {
    out.overBudget = { served: out.overBudget.served, ...failure(e) };
  }
}

process.stdout.write(JSON.stringify(out) + '\n');
