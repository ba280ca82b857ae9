// The official TypeScript SDK's client against the router-proxy's /mcp:
// lists the tools and calls one with a bearer token, then prints what it
// got as one JSON object (cmd/router-proxy's TestMCPTypeScriptClient reads
// it). Usage: node client.mjs URL TOKEN TOOL PROMPT
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, prompt] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "llmkube-ts-client", version: "0.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({
  name: tool,
  arguments: { messages: [{ role: "user", content: prompt }], max_tokens: 16 },
});
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  result,
}));
await client.close();
