// The official Anthropic TypeScript SDK (@anthropic-ai/sdk) against the
// router-proxy's /v1/messages: each step is a call an SDK user makes, its
// outcome one member of the JSON printed on stdout, judged by
// cmd/router-proxy/messages_sdk_test.go.
//   node anthropic.mjs BASE_URL TOKEN MODEL LOCAL_MODEL
// MODEL is served by an Anthropic backend, LOCAL_MODEL by an
// OpenAI-compatible one (translated).
import Anthropic from '@anthropic-ai/sdk';

const [baseURL, token, model, localModel] = process.argv.slice(2);
// ANTHROPIC_AUTH_TOKEN's way: the router's JWT as a bearer token.
const client = new Anthropic({ baseURL, authToken: token, apiKey: null, maxRetries: 0 });
const out = {};

// An SDK error as the test reads it: the status and the error's type.
const failure = (e) => ({ status: e.status ?? null, type: e.error?.error?.type ?? e.constructor.name, message: e.error?.error?.message ?? String(e) });
async function step(name, f) {
  try {
    out[name] = await f();
  } catch (e) {
    out[name] = { error: failure(e) };
  }
}

const tools = [{ name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

await step('plain', () => client.messages.create({ model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi.' }] }));

await step('stream', async () => {
  const events = [];
  const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hi.' }] });
  stream.on('streamEvent', (ev) => events.push(ev.type));
  const message = await stream.finalMessage();
  return { events, message };
});

await step('tools', async () => {
  const q = { role: 'user', content: 'Weather in Paris?' };
  const first = await client.messages.create({ model, max_tokens: 64, tools, messages: [q] });
  const use = first.content.find((b) => b.type === 'tool_use');
  if (!use) return { first };
  const second = await client.messages.create({
    model, max_tokens: 64, tools,
    messages: [q, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C and sunny' }] }],
  });
  return { first, second };
});

// The same calls to the translated backend.
await step('local', async () => {
  const q = { role: 'user', content: 'Weather in Paris?' };
  const first = await client.messages.create({ model: localModel, max_tokens: 64, tools, messages: [q] });
  const use = first.content.find((b) => b.type === 'tool_use');
  const second = await client.messages.create({
    model: localModel, max_tokens: 64, tools,
    messages: [q, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C and sunny' }] }],
  });
  const events = [];
  const stream = client.messages.stream({ model: localModel, max_tokens: 64, tools, messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
  stream.on('streamEvent', (ev) => events.push(ev.type));
  const message = await stream.finalMessage();
  return { tools: { first, second }, stream: { events, message } };
});

await step('sensitive', () => client.messages.create({
  model, max_tokens: 64, tools,
  messages: [
    { role: 'user', content: 'Look up the customer.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'x' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'Customer SSN 536-22-8410' }] }] },
  ],
}));

await step('countTokens', () => client.messages.countTokens({ model, messages: [{ role: 'user', content: 'Say hi.' }] }));

await step('noToken', () => new Anthropic({ baseURL, apiKey: null, authToken: null, defaultHeaders: { Authorization: null }, maxRetries: 0 }).messages.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));

// Spend the team's budget: the first call that finds it exhausted is 429.
await step('overBudget', async () => {
  for (let i = 0; i < 50; i++) {
    await client.messages.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
  }
  return { spent: 'never refused' };
});

process.stdout.write(JSON.stringify(out));
