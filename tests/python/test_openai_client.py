"""Lily's server through the official `openai` Python client.

Run by `cargo test -p lily-server --test openai_python`, which starts two servers over the
scripted test model (see crates/server/tests/support/mod.rs: the model writes the text after
`say:` in the prompt, or "ab" forever without one; `[slow]` makes each step take 20 ms) and
passes their addresses in LILY_BASE_URL and LILY_SMALL_QUEUE_URL (a queue of one).
Needs only the standard library and `pip install openai`.
"""

import json
import os
import threading
import time
import unittest
import urllib.request

import openai

BASE_URL = os.environ["LILY_BASE_URL"]
SMALL_QUEUE_URL = os.environ["LILY_SMALL_QUEUE_URL"]
MODEL = os.environ["LILY_MODEL"]


def client(base_url=BASE_URL, **kw):
    return openai.OpenAI(base_url=base_url + "/v1", api_key="unused", max_retries=0, **kw)


def say(text, thinking=False, **kw):
    """A chat request whose scripted answer is `text`."""
    body = dict(model=MODEL, messages=[{"role": "user", "content": "say:" + text}], temperature=0)
    if not thinking:
        body["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
    body.update(kw)
    return body


def metric(base_url, name):
    """A series' value: `name` alone, or with its labels (vLLM's series carry `model_name`)."""
    text = urllib.request.urlopen(base_url + "/metrics").read().decode()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics")


class ChatCompletions(unittest.TestCase):
    def setUp(self):
        self.c = client()

    def test_models(self):
        ids = [m.id for m in self.c.models.list()]
        self.assertEqual(ids, [MODEL])

    def test_non_streaming_with_reasoning(self):
        r = self.c.chat.completions.create(**say("Let me think.</think>\n\nParis.", thinking=True))
        msg = r.choices[0].message
        self.assertEqual(msg.content, "Paris.")
        self.assertEqual(msg.model_extra["reasoning_content"], "Let me think.")
        self.assertEqual(r.choices[0].finish_reason, "stop")
        self.assertGreater(r.usage.prompt_tokens, 0)
        self.assertEqual(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens)
        self.assertIsInstance(r.usage.prompt_tokens_details.cached_tokens, int)

    def test_streaming_with_usage(self):
        stream = self.c.chat.completions.create(
            **say("Hmm.</think>\n\nStreamed words.", thinking=True), stream=True, stream_options={"include_usage": True}
        )
        reasoning, content, finish, usage = "", "", None, None
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                content += choice.delta.content or ""
                reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
                finish = choice.finish_reason or finish
        self.assertEqual((reasoning, content, finish), ("Hmm.", "Streamed words.", "stop"))
        self.assertIsNotNone(usage)
        self.assertGreater(usage.completion_tokens, 10)

    def test_stop_string_is_not_emitted(self):
        r = self.c.chat.completions.create(**say("alpha beta gamma"), stop=["beta"])
        self.assertEqual(r.choices[0].message.content, "alpha ")
        stream = self.c.chat.completions.create(**say("alpha beta gamma"), stop="ta g", stream=True)
        self.assertEqual("".join(c.choices[0].delta.content or "" for c in stream if c.choices), "alpha be")

    def test_max_tokens(self):
        r = self.c.chat.completions.create(**say("abcdefgh"), max_completion_tokens=3)
        self.assertEqual((r.choices[0].message.content, r.choices[0].finish_reason), ("abc", "length"))

    def test_seed_determinism(self):
        def sample(seed):
            r = self.c.chat.completions.create(
                **say("the quick brown fox", temperature=1.5, top_p=0.95, seed=seed, max_tokens=30)
            )
            return r.choices[0].message.content

        self.assertEqual(sample(7), sample(7))
        self.assertNotEqual(sample(7), sample(8))

    def test_logprobs(self):
        r = self.c.chat.completions.create(**say("yes"), logprobs=True, top_logprobs=2)
        entries = r.choices[0].logprobs.content
        self.assertEqual([e.token for e in entries], ["y", "e", "s"])
        for e in entries:
            self.assertLessEqual(e.logprob, 0.0)
            self.assertEqual(len(e.top_logprobs), 2)
            self.assertEqual(e.top_logprobs[0].token, e.token)

    def test_tool_calls(self):
        call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
        r = self.c.chat.completions.create(**say(call), tools=tools)
        choice = r.choices[0]
        self.assertEqual(choice.finish_reason, "tool_calls")
        self.assertEqual(choice.message.tool_calls[0].function.name, "get_weather")
        self.assertEqual(json.loads(choice.message.tool_calls[0].function.arguments), {"city": "Oslo"})
        # The call goes back into the conversation with the tool's answer.
        follow = self.c.chat.completions.create(
            model=MODEL, temperature=0, tools=tools,
            messages=[
                {"role": "user", "content": "weather?"},
                choice.message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": choice.message.tool_calls[0].id, "content": "sunny"},
                {"role": "user", "content": "say:</think>It is sunny."},
            ],
        )
        self.assertEqual(follow.choices[0].message.content, "It is sunny.")
        stream = self.c.chat.completions.create(**say(call), tools=tools, stream=True)
        deltas = [tc for c in stream if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
        # The first entry names the call; the arguments follow in pieces.
        self.assertEqual([d.function.name for d in deltas if d.function.name], ["get_weather"])
        self.assertEqual(json.loads("".join(d.function.arguments or "" for d in deltas)), {"city": "Oslo"})

    def test_tool_choice_forces_a_call(self):
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}}}}]
        self.assertEqual(self.c.chat.completions.create(**say("Sunny."), tools=tools).choices[0].message.content, "Sunny.")
        for choice in ["required", {"type": "function", "function": {"name": "get_weather"}}]:
            r = self.c.chat.completions.create(**say("Sunny."), tools=tools, tool_choice=choice)
            self.assertEqual(r.choices[0].finish_reason, "tool_calls")
            self.assertEqual(r.choices[0].message.tool_calls[0].function.name, "get_weather")
            stream = self.c.chat.completions.create(**say("Sunny."), tools=tools, tool_choice=choice, stream=True)
            deltas = [tc for c in stream if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
            self.assertEqual([d.function.name for d in deltas if d.function.name], ["get_weather"])
        with self.assertRaises(openai.BadRequestError) as e:
            self.c.chat.completions.create(**say("x"), tools=tools, tool_choice={"type": "function", "function": {"name": "nope"}})
        self.assertEqual(e.exception.body["param"], "tool_choice")

    def test_json_schema(self):
        schema = {"type": "object", "properties": {"city": {"type": "string"}, "rank": {"type": "integer"}},
                  "required": ["city", "rank"], "additionalProperties": False}
        r = self.c.chat.completions.create(
            **say('{"city": "Oslo", "rank": 1, "note": "x"}'), max_tokens=200,
            response_format={"type": "json_schema", "json_schema": {"name": "city", "schema": schema, "strict": True}},
        )
        data = json.loads(r.choices[0].message.content)
        self.assertEqual(data["city"], "Oslo")
        self.assertIsInstance(data["rank"], int)
        self.assertEqual(set(data), {"city", "rank"})

    def test_n_choices_and_logit_bias(self):
        r = self.c.chat.completions.create(**say("abc", temperature=1.5, seed=3, max_tokens=8), n=2)
        self.assertEqual([c.index for c in r.choices], [0, 1])
        biased = self.c.chat.completions.create(**say("abc", max_tokens=3), logit_bias={str(ord("x")): 100})
        self.assertEqual(biased.choices[0].message.content, "xxx")

    def test_completions_endpoint(self):
        r = self.c.completions.create(model=MODEL, prompt="say:plain text", temperature=0, max_tokens=20)
        self.assertEqual((r.choices[0].text, r.choices[0].finish_reason), ("plain text", "stop"))

    def test_errors(self):
        with self.assertRaises(openai.NotFoundError):
            self.c.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
        with self.assertRaises(openai.BadRequestError) as e:
            self.c.chat.completions.create(**say("x"), n=0)
        self.assertEqual(e.exception.body["param"], "n")
        with self.assertRaises(openai.BadRequestError):
            self.c.chat.completions.create(model=MODEL, messages=[])
        with self.assertRaises(openai.BadRequestError):
            self.c.chat.completions.create(model=MODEL, messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}])
        with self.assertRaises(openai.BadRequestError):
            self.c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "x " * 600}])

    def test_cancellation_when_the_client_closes_the_stream(self):
        before = metric(BASE_URL, "lily_cancelled_requests_total")
        stream = self.c.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "[slow]"}], stream=True, temperature=0)
        for i, _ in enumerate(stream):
            if i == 3:
                break
        stream.close()
        deadline = time.time() + 5
        while metric(BASE_URL, "lily_cancelled_requests_total") == before:
            self.assertLess(time.time(), deadline, "generation was not cancelled")
            time.sleep(0.02)


class QueueFull(unittest.TestCase):
    def test_429_with_retry_after(self):
        c = client(SMALL_QUEUE_URL)
        slow = dict(model=MODEL, messages=[{"role": "user", "content": "[slow]"}], max_tokens=100, temperature=0)
        threads = [threading.Thread(target=lambda: c.chat.completions.create(**slow)) for _ in range(2)]

        def wait_until(ok, what):
            deadline = time.time() + 10
            while not ok():
                self.assertLess(time.time(), deadline, what)
                time.sleep(0.01)

        threads[0].start()  # runs: it has produced a token
        wait_until(lambda: metric(SMALL_QUEUE_URL, "vllm:time_to_first_token_seconds_count") >= 1, "first request running")
        threads[1].start()  # waits in the queue of one
        health = lambda: json.load(urllib.request.urlopen(SMALL_QUEUE_URL + "/health"))
        wait_until(lambda: health()["queue_depth"] == 1, "second request queued")
        with self.assertRaises(openai.RateLimitError) as e:
            c.chat.completions.create(**say("no room"))
        self.assertGreaterEqual(int(e.exception.response.headers["retry-after"]), 1)
        for t in threads:
            t.join()


if __name__ == "__main__":
    unittest.main(verbosity=2)
