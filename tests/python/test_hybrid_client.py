"""Hybrid compute through the official `openai` Python client.

Run by `cargo test -p lily-server --test hybrid official_openai_python_client_through_the_gate`,
which starts a recording upstream (an echo: "You said: <last user message>") and a Lily server
in front of it, and passes the server in LILY_BASE_URL, the local model in LILY_MODEL and the
upstream model in LILY_UPSTREAM_MODEL. Needs only `pip install openai`.
"""

import os
import unittest

import openai

BASE_URL = os.environ["LILY_BASE_URL"]
MODEL = os.environ["LILY_MODEL"]
UPSTREAM = os.environ["LILY_UPSTREAM_MODEL"]
EMAIL = "maria.gonzalez@acme.io"
MASKED = f"Please write to {EMAIL} and call +1 415 555 0134 about the delivery."


def client():
    return openai.OpenAI(base_url=BASE_URL + "/v1", api_key="unused", max_retries=0)


def ask(text):
    return [{"role": "user", "content": text}]


class Hybrid(unittest.TestCase):
    def test_models_lists_local_auto_and_upstream(self):
        ids = [m.id for m in client().models.list()]
        self.assertEqual(ids, [MODEL, "auto", UPSTREAM])

    def test_masked_reply_is_restored(self):
        raw = client().chat.completions.with_raw_response.create(model="auto", messages=ask(MASKED), max_tokens=8)
        self.assertEqual(raw.headers["x-lily-route"], "cloud-masked")
        reply = raw.parse()
        self.assertEqual(reply.model, UPSTREAM)
        self.assertEqual(reply.choices[0].message.content, "You said: " + MASKED)

    def test_masked_stream_is_restored(self):
        stream = client().chat.completions.create(model=UPSTREAM, messages=ask(MASKED), max_tokens=8, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        self.assertEqual(text, "You said: " + MASKED)

    def test_local_route(self):
        raw = client().chat.completions.with_raw_response.create(
            model="auto", messages=ask("What is the capital of France?"), max_tokens=4, extra_headers={"x-lily-route": "local"}
        )
        self.assertEqual(raw.headers["x-lily-route"], "local")
        self.assertEqual(raw.parse().model, MODEL)

    def test_refusal_names_the_category_not_the_value(self):
        secret = "sk-proj-4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e"
        with self.assertRaises(openai.PermissionDeniedError) as caught:
            client().chat.completions.create(model="auto", messages=ask(f"why does api_key={secret} fail?"), max_tokens=4)
        error = caught.exception.body
        self.assertEqual(error["code"], "sensitive_content_refused")
        self.assertIn("secret", error["message"])
        self.assertNotIn(secret, str(error))

    def test_consent_round_trip(self):
        messages = ask(
            "My salary is 85,000 a year and I have 12,000 of credit card debt and a personal loan; "
            f"should I consolidate my debt? Reply to {EMAIL}"
        )
        with self.assertRaises(openai.PermissionDeniedError) as caught:
            client().chat.completions.create(model="auto", messages=messages, max_tokens=4)
        error = caught.exception.body
        self.assertEqual(error["code"], "consent_required")
        self.assertIn("finances", error["categories"])
        self.assertNotIn(EMAIL, str(error["masked_preview"]))
        reply = client().chat.completions.create(
            model="auto", messages=messages, max_tokens=4, extra_headers={"x-lily-consent": error["consent_id"]}
        )
        self.assertIn(EMAIL, reply.choices[0].message.content)
        with self.assertRaises(openai.PermissionDeniedError) as again:
            client().chat.completions.create(
                model="auto", messages=messages, max_tokens=4, extra_headers={"x-lily-consent": error["consent_id"]}
            )
        self.assertEqual(again.exception.body["code"], "consent_invalid")


if __name__ == "__main__":
    unittest.main(verbosity=2)
