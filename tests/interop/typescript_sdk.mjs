// Interop check: the official TypeScript SDK's Client (@modelcontextprotocol/sdk 1.x) drives
// agentteams-mcp over stdio (StdioClientTransport) and Streamable HTTP
// (StreamableHTTPClientTransport): initialize, tools, resources and templates, prompts with
// embedded resources, completion, and server-to-client requests the TS client answers.
//
// Usage: node typescript_sdk.mjs SDK_DIR SERVER ROOT TARGET...
//   SDK_DIR  the npm prefix holding node_modules/@modelcontextprotocol/sdk
//   SERVER   gitread (ROOT: the fixture repository of fixture_repo.sh), recall (ROOT: a project
//            whose indexes hold the one sprocket note of typescript.sh), or conformance (ROOT
//            unused: the fixture's elicitation, sampling and roots tools)
//   TARGET   stdio:BINARY (the script starts BINARY --serve-mcp SERVER [--root ROOT]) or the
//            http:// URL of the same server already running
// Exit 0 when every check passes; otherwise the first failed check is printed and the exit is 1.
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, server, root, ...targets] = process.argv.slice(2);
if (!sdkDir || !["gitread", "recall", "conformance"].includes(server) || targets.length === 0) {
  console.error("usage: node typescript_sdk.mjs SDK_DIR gitread|recall|conformance ROOT TARGET...");
  process.exit(2);
}
const sdk = (file) =>
  import(pathToFileURL(path.join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", file)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } = await sdk("types.js");

/// What the TS client offers as its roots; test_roots must hand exactly these back.
const ROOTS = [
  { uri: "file:///srv/interop/one", name: "one" },
  { uri: "file:///srv/interop/two" },
];

const textOf = (contents) => contents.map((c) => c.text ?? "").join("");
const toolText = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function gitread(client, where) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const tool of ["git_blame", "git_diff", "git_file", "git_grep", "git_log", "git_refs", "git_show", "git_status"]) {
    assert.ok(names.includes(tool), `${where}: ${tool} not in ${names}`);
  }
  const log = await client.callTool({ name: "git_log", arguments: { n: 2 } });
  assert.equal(log.isError ?? false, false, `${where}: git_log failed: ${toolText(log)}`);
  assert.match(toolText(log), /big file[\s\S]*interop fixture commit/, `${where}: git_log`);
  const file = await client.callTool({ name: "git_file", arguments: { path: "a.txt", rev: "v1.0" } });
  assert.match(toolText(file), /a\.txt at v1\.0: 4 bytes, 1 line/, `${where}: git_file`);

  const { resourceTemplates } = await client.listResourceTemplates();
  const templates = resourceTemplates.map((t) => t.uriTemplate);
  for (const template of ["gitread://file/{rev}/{+path}", "gitread://commit/{rev}", "gitread://diff/{base}/{head}"]) {
    assert.ok(templates.includes(template), `${where}: ${template} not in ${templates}`);
  }
  const { resources } = await client.listResources();
  assert.ok(Array.isArray(resources), `${where}: resources/list gave no list`);
  // a.txt at the tag (a revision) and at the first commit's id (a commit).
  const atTag = await client.readResource({ uri: "gitread://file/v1.0/a.txt" });
  assert.equal(textOf(atTag.contents), "one\n", `${where}: file at v1.0`);
  const commit = await client.readResource({ uri: "gitread://commit/HEAD~1" });
  const commitText = textOf(commit.contents);
  assert.match(commitText, /interop fixture commit/, `${where}: commit resource`);
  const firstId = commitText.match(/\b([0-9a-f]{40})\b/)?.[1];
  assert.ok(firstId, `${where}: no commit id in ${commitText.slice(0, 200)}`);
  const atCommit = await client.readResource({ uri: `gitread://file/${firstId}/a.txt` });
  assert.equal(textOf(atCommit.contents), "one\n", `${where}: file at ${firstId}`);

  const { prompts } = await client.listPrompts();
  const promptNames = prompts.map((p) => p.name);
  for (const prompt of ["explain_commit", "review_diff"]) {
    assert.ok(promptNames.includes(prompt), `${where}: ${prompt} not in ${promptNames}`);
  }
  const explained = await client.getPrompt({ name: "explain_commit", arguments: { rev: "HEAD" } });
  const embedded = explained.messages.filter((m) => m.content.type === "resource").map((m) => m.content.resource);
  assert.ok(embedded.length > 0, `${where}: explain_commit embeds no resource`);
  assert.match(embedded[0].text, /big file/, `${where}: explain_commit's resource`);
  assert.match(embedded[0].uri, /^gitread:\/\/commit\//, `${where}: explain_commit's resource uri`);

  const fileRef = { type: "ref/resource", uri: "gitread://file/{rev}/{+path}" };
  const revs = (await client.complete({ ref: fileRef, argument: { name: "rev", value: "v" } })).completion.values;
  assert.deepEqual(revs, ["v1.0"], `${where}: rev completion`);
  const paths = (await client.complete({
    ref: fileRef, argument: { name: "path", value: "b" }, context: { arguments: { rev: "HEAD" } },
  })).completion.values;
  assert.deepEqual(paths, ["big.txt"], `${where}: path completion at HEAD`);
  // At the tag only a.txt exists: the context must change the answer.
  const oldPaths = (await client.complete({
    ref: fileRef, argument: { name: "path", value: "" }, context: { arguments: { rev: "v1.0" } },
  })).completion.values;
  assert.deepEqual(oldPaths, ["a.txt"], `${where}: path completion at v1.0`);
  const heads = (await client.complete({
    ref: { type: "ref/prompt", name: "review_diff" }, argument: { name: "head", value: "ma" },
  })).completion.values;
  assert.deepEqual(heads, ["main"], `${where}: prompt argument completion`);
}

async function recall(client, where) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names.filter((n) => n.startsWith("query_")), ["query_code", "query_index"], `${where}: tools`);
  const hits = await client.callTool({ name: "query_index", arguments: { query: "sprocket sizing" } });
  assert.equal(hits.isError ?? false, false, `${where}: query_index failed: ${toolText(hits)}`);
  assert.match(toolText(hits), /references\/plans\/sprocket\.md/, `${where}: query_index`);

  const { resourceTemplates } = await client.listResourceTemplates();
  assert.ok(resourceTemplates.some((t) => t.uriTemplate === "recall://memory/{id}"), `${where}: templates`);
  const { resources } = await client.listResources();
  // Memory documents are reached through the template (their ids come from query_index), not listed.
  assert.deepEqual(resources, [], `${where}: resources/list`);
  const note = textOf((await client.readResource({ uri: "recall://memory/0" })).contents);
  assert.ok(note.startsWith("Sprocket plan\npath: references/plans/sprocket.md"), `${where}: memory 0: ${note.slice(0, 120)}`);

  const asked = await client.getPrompt({ name: "ask_team", arguments: { question: "sprocket sizing" } });
  const embedded = asked.messages.filter((m) => m.content.type === "resource").map((m) => m.content.resource);
  assert.ok(embedded.length > 0, `${where}: ask_team embeds no resource`);
  assert.equal(embedded[0].uri, "recall://memory/0", `${where}: ask_team's resource`);
  assert.match(embedded[0].text, /sprocket wear/, `${where}: ask_team's resource text`);

  const ids = (await client.complete({
    ref: { type: "ref/resource", uri: "recall://memory/{id}" }, argument: { name: "id", value: "" },
  })).completion.values;
  assert.deepEqual(ids, ["0-sprocket-plan"], `${where}: id completion`);
}

async function conformance(client, where) {
  // The form's defaults are filled in by the TS client itself (applyDefaults), which also checks
  // the accepted content against the requested schema.
  const defaults = toolText(await client.callTool({ name: "test_elicitation_sep1034_defaults", arguments: {} }));
  const [label, content] = defaults.split(", content=");
  assert.equal(label, "Elicitation completed: action=accept", `${where}: elicitation: ${defaults}`);
  assert.deepEqual(JSON.parse(content),
    { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true }, `${where}: elicitation defaults`);
  const given = toolText(await client.callTool({ name: "test_elicitation", arguments: { message: "who are you?" } }));
  assert.equal(given, 'User response: action=accept, content={"username":"ts-interop","email":"ts@example.invalid"}',
    `${where}: elicitation`);
  const sampled = toolText(await client.callTool({ name: "test_sampling", arguments: { prompt: "two words" } }));
  assert.equal(sampled, "LLM response: ts model heard: two words", `${where}: sampling`);
  const roots = toolText(await client.callTool({ name: "test_roots", arguments: {} }));
  assert.ok(roots.startsWith("Roots: "), `${where}: roots: ${roots}`);
  assert.deepEqual(JSON.parse(roots.slice("Roots: ".length)), ROOTS, `${where}: roots`);
}

/// A TS client that answers elicitation (the message's own answer, else the schema's defaults),
/// sampling and roots.
function newClient() {
  const client = new Client(
    { name: "agentteams-ts-interop", version: "1.0.0" },
    { capabilities: { elicitation: { form: { applyDefaults: true } }, sampling: {}, roots: { listChanged: false } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) =>
    request.params.message === "who are you?"
      ? { action: "accept", content: { username: "ts-interop", email: "ts@example.invalid" } }
      : { action: "accept", content: {} });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: "assistant", model: "ts-interop",
    content: { type: "text", text: `ts model heard: ${request.params.messages[0].content.text}` },
  }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: ROOTS }));
  return client;
}

const checks = { gitread, recall, conformance };
for (const target of targets) {
  const stdio = target.startsWith("stdio:");
  const transport = stdio
    ? new StdioClientTransport({
      command: target.slice("stdio:".length),
      args: ["--serve-mcp", server, ...(server === "conformance" ? [] : ["--root", root])],
      stderr: "ignore",
    })
    : new StreamableHTTPClientTransport(new URL(target));
  const where = `${server} over ${stdio ? "stdio" : "HTTP"}`;
  const client = newClient();
  const timer = setTimeout(() => { console.error(`FAIL: ${where}: no answer within 60 s`); process.exit(1); }, 60_000);
  try {
    await client.connect(transport);
    const version = client.getServerVersion();
    assert.equal(version.name, `agentteams-${server}`, `${where}: serverInfo`);
    await checks[server](client, where);
    if (!stdio) {
      assert.ok(transport.sessionId, `${where}: no session id`);
      await transport.terminateSession();
    }
    await client.close();
  } catch (error) {
    console.error(`FAIL: ${error.message}`);
    process.exit(1);
  }
  clearTimeout(timer);
  console.log(`ok: TypeScript SDK, ${where}`);
}
