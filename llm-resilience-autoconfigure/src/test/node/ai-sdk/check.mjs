// The Vercel AI SDK's default OpenAI provider (createOpenAI(...)(model) calls POST {baseURL}/responses)
// against the gateway. Run by AiSdkResponsesTests with LLM_BASE_URL, LLM_CLIENT_KEY and LLM_MODEL set;
// prints one JSON line per check for the test to assert on.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool, jsonSchema, stepCountIs } from 'ai';

const openai = createOpenAI({ baseURL: process.env.LLM_BASE_URL, apiKey: process.env.LLM_CLIENT_KEY });
const model = openai(process.env.LLM_MODEL);
const print = (name, value) => console.log(JSON.stringify({ check: name, ...value }));

const generated = await generateText({ model, prompt: 'Say hello' });
print('generateText', { text: generated.text, finishReason: generated.finishReason,
  inputTokens: generated.usage.inputTokens, outputTokens: generated.usage.outputTokens });

const streamed = streamText({ model, prompt: 'Say hello slowly' });
let text = '';
for await (const delta of streamed.textStream) {
  text += delta;
}
print('streamText', { text, finishReason: await streamed.finishReason });

// a tool round trip: the SDK runs the tool and sends its result back; the gateway keeps no
// responses, so the SDK is told to send whole items rather than references to stored ones
const weather = tool({
  description: 'The weather in a city',
  inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }) => `sunny in ${city}`,
});
const round = await generateText({
  model,
  prompt: 'What is the weather in Paris?',
  tools: { weather },
  stopWhen: stepCountIs(2),
  providerOptions: { openai: { store: false } },
});
print('toolRoundTrip', { text: round.text, steps: round.steps.length,
  toolResults: round.steps.flatMap((step) => step.toolResults.map((result) => result.output)) });
