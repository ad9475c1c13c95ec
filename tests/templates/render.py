"""Render a chat template the way Hugging Face transformers does (jinja2), for comparison.

Reads one JSON object from stdin: {"template", "messages", "tools", "add_generation_prompt",
"bos_token", "eos_token"} and prints the rendered prompt to stdout, nothing else.
The environment mirrors transformers' apply_chat_template: an immutable sandbox with
trim_blocks, lstrip_blocks and loop controls, its own tojson, raise_exception and
strftime_now.
"""
import json
import sys
from datetime import datetime

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def main():
    req = json.load(sys.stdin)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    out = env.from_string(req["template"]).render(
        messages=req["messages"],
        tools=req.get("tools"),
        add_generation_prompt=req["add_generation_prompt"],
        bos_token=req.get("bos_token", ""),
        eos_token=req.get("eos_token", ""),
    )
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
