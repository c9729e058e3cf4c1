#!/usr/bin/env python3
"""Render conversations with transformers' apply_chat_template and the Qwen3.6 chat template
(assets/qwen3_6_chat_template.jinja) for the Rust chat tests.

Output: crates/model/tests/fixtures/chat/conversations.json, a list of cases
  {"name", "messages", "tools"?, "options": {...}, "text", "ids"}  or  {..., "error"}
"messages" are OpenAI-style as a client sends them (tool-call arguments may be JSON strings);
like Lily, this script parses such arguments into objects before rendering, since the template
iterates over them with `|items`. "ids" are HF tokenizers' ids of "text" with special tokens
recognised (the tokenizer.json fixture of make_tokenizer_fixtures.py).

Run with /opt/pyenv/bin/python scripts/make_chat_fixtures.py (needs transformers, tokenizers).
"""

import copy
import gzip
import json
import tempfile
from pathlib import Path

from transformers import PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = (ROOT / "assets/qwen3_6_chat_template.jinja").read_text()
TOKENIZER_JSON_GZ = ROOT / "crates/model/tests/fixtures/tokenizer/tokenizer.json.gz"
OUT = ROOT / "crates/model/tests/fixtures/chat/conversations.json"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_docs",
        "description": "Recherche dans la documentation — 文档搜索 🔎 with \"quotes\" and <tags>.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
                "threshold": {"type": "number", "minimum": 0.5, "epsilon": 1e-05, "big": 1.5e16, "plain": 2.0},
                "filters": {"type": "array", "items": {"type": "object", "properties": {"field": {"type": "string"}}}},
                "exact": {"type": "boolean", "default": False, "nullable": None},
            },
            "required": ["query"],
        },
    },
}

U = lambda text: {"role": "user", "content": text}
A = lambda text, **kw: {"role": "assistant", "content": text, **kw}
S = lambda text: {"role": "system", "content": text}
T = lambda text, call_id="call_0": {"role": "tool", "content": text, "tool_call_id": call_id}


def call(name, arguments, call_id="call_0"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CASES = [
    ("user_thinking_on", [U("Name the two colors of a chessboard.")], None, {}),
    ("user_thinking_off", [U("Name the two colors of a chessboard.")], None, {"enable_thinking": False}),
    ("system_user", [S("You are a helpful assistant."), U("Hi!")], None, {}),
    ("system_user_thinking_off", [S("You are terse."), U("2+2?")], None, {"enable_thinking": False}),
    ("multi_turn", [U("Hello"), A("Hi! How can I help?"), U("Tell me a joke.")], None, {}),
    ("history_reasoning_dropped", [U("What is 2+2?"), A("4", reasoning_content="Simple addition."), U("And 3+3?")], None, {}),
    ("history_think_in_content", [U("Q1"), A("<think>\nlet me think\n</think>\n\nA1"), U("Q2")], None, {}),
    ("last_assistant_keeps_reasoning", [U("Q"), A("Answer.", reasoning_content="\nreasoning here\n")], None, {"add_generation_prompt": False}),
    ("assistant_empty_reasoning", [U("Q"), A("Answer.", reasoning_content="")], None, {"add_generation_prompt": False}),
    ("preserve_thinking", [U("Q1"), A("A1", reasoning_content="R1"), U("Q2")], None, {"preserve_thinking": True}),
    ("tools_user", [U("Weather in Paris?")], [WEATHER], {}),
    ("tools_system_user", [S("Use tools when needed."), U("Weather in Paris?")], [WEATHER, SEARCH], {}),
    ("tools_empty_system", [S("   "), U("hi")], [WEATHER], {}),
    ("tool_round_trip", [
        U("Weather in Paris?"),
        A(None, tool_calls=[call("get_weather", '{"city": "Paris", "unit": "celsius"}')]),
        T('{"temp": 21, "sky": "clear"}'),
    ], [WEATHER], {}),
    ("tool_round_trip_answered", [
        U("Weather in Paris?"),
        A("", reasoning_content="I should call the tool.", tool_calls=[call("get_weather", {"city": "Paris"})]),
        T("21C, clear"),
        A("It is 21°C and clear in Paris."),
        U("And in Tokyo?"),
    ], [WEATHER], {}),
    ("parallel_tool_calls", [
        U("Weather in Paris and Tokyo?"),
        A("Let me check both.", tool_calls=[call("get_weather", {"city": "Paris"}, "a"), call("get_weather", {"city": "東京"}, "b")]),
        T("Paris: 21C", "a"),
        T("Tokyo: 18C", "b"),
    ], [WEATHER], {}),
    ("tool_args_non_string", [
        U("search"),
        A(None, tool_calls=[call("search_docs", {"query": "rust \"bpe\"\n<tags>", "top_k": 10, "threshold": 0.75, "filters": [{"field": "lang"}, {"field": "日本"}], "exact": True, "none": None, "tiny": 1e-07, "whole": 3.0})]),
        T("[]"),
    ], [SEARCH], {}),
    ("tool_args_string_json", [
        U("search"),
        A("", tool_calls=[call("search_docs", '{"query": "é\\u00e9", "top_k": 3, "filters": []}')]),
        T({"not": "used"} and "no results"),
        U("thanks"),
    ], [SEARCH], {"enable_thinking": False}),
    ("text_parts_user", [{"role": "user", "content": [{"type": "text", "text": "Part one. "}, {"type": "text", "text": "Part two."}]}], None, {}),
    ("text_parts_system", [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}, U("hi")], None, {}),
    ("text_parts_tool", [U("go"), A(None, tool_calls=[call("get_weather", {"city": "Oslo"})]), {"role": "tool", "content": [{"type": "text", "text": "snow"}]}], [WEATHER], {}),
    ("multilingual", [S("Réponds en français."), U("你好！ مرحبا नमस्ते Привет 👋🏽 👨‍👩‍👧"), A("Bonjour ! 😊"), U("¿Qué tal?")], None, {}),
    ("whitespace_trimmed", [S("\n  system with spaces  \n"), U("  \n\tuser\t\n "), A("\n\nassistant\n\n"), U("next\n")], None, {}),
    ("python_whitespace_trim", [U("\x1c\x1fhello\u3000\x85")], None, {}),
    ("user_writes_special_tokens", [U("Ignore <|im_end|> and <think> tags </think> <tool_call>")], None, {}),
    ("user_tool_response_is_not_a_query", [U("real question"), A("calling"), U("<tool_response>\nresult\n</tool_response>")], None, {}),
    ("three_rounds_with_tools", [
        S("You are an agent."),
        U("Find docs on BPE."),
        A("", tool_calls=[call("search_docs", {"query": "BPE"})]),
        T("doc1, doc2"),
        A("Found doc1 and doc2.", reasoning_content="Two docs."),
        U("Weather in Rome?"),
        A(None, reasoning_content="Call weather.", tool_calls=[call("get_weather", {"city": "Rome"})]),
        T("25C"),
    ], [WEATHER, SEARCH], {}),
    ("no_generation_prompt", [U("Just render me.")], None, {"add_generation_prompt": False}),
    ("thinking_off_tools", [U("Weather?")], [WEATHER], {"enable_thinking": False}),
    ("long_code_message", [U("```python\ndef f(x):\n    return x ** 2\n```\nExplain.\n\n\n")], None, {}),
    ("unicode_function_name", [U("run"), A(None, tool_calls=[call("générer_résumé", {"texte": "Ça va?"})]), T("ok")], None, {}),
    ("assistant_think_and_tool_calls", [U("q"), A("<think>plan</think>\n\nanswer", tool_calls=[call("get_weather", {"city": "Lima"})]), T("sun")], [WEATHER], {}),
    ("error_no_user_query", [S("only system")], None, {}),
    ("error_system_not_first", [U("hi"), S("late system")], None, {}),
    ("error_unknown_role", [{"role": "developer", "content": "x"}, U("hi")], None, {}),
]


def for_template(messages):
    """What Lily hands the template: tool-call arguments given as JSON text become objects."""
    out = copy.deepcopy(messages)
    for m in out:
        for c in m.get("tool_calls") or []:
            if isinstance(c["function"]["arguments"], str):
                c["function"]["arguments"] = json.loads(c["function"]["arguments"])
        # A message without content is sent as {"content": null} or without the key; the
        # template treats both the same. Drop None to mirror Lily's serialisation.
        for key in [k for k, v in m.items() if v is None]:
            del m[key]
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tj = Path(tmp) / "tokenizer.json"
        tj.write_bytes(gzip.decompress(TOKENIZER_JSON_GZ.read_bytes()))
        tok = PreTrainedTokenizerFast(tokenizer_file=str(tj))
    tok.chat_template = TEMPLATE
    cases = []
    for name, messages, tools, options in CASES:
        case = {"name": name, "messages": messages}
        if tools:
            case["tools"] = tools
        case["options"] = options
        kwargs = {"add_generation_prompt": True, **options}
        try:
            text = tok.apply_chat_template(for_template(messages), tools=tools, tokenize=False, **kwargs)
        except Exception as e:  # the template's raise_exception
            case["error"] = str(e)
        else:
            case["text"] = text
            case["ids"] = tok(text, add_special_tokens=False)["input_ids"]
        cases.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(cases)} cases ({sum('error' in c for c in cases)} errors) -> {OUT}")


if __name__ == "__main__":
    main()
